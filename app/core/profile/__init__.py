"""Running a model with ONNX Runtime's profiler and reading its traces: per operator type, node, provider and run, and the diff of two."""
