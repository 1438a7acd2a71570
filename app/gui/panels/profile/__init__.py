"""The Profile tab: run with ONNX Runtime's profiler or open a trace, and read or compare it."""
