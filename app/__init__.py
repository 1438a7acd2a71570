"""ORTune: a desktop workbench for making ONNX models run fast on ONNX Runtime."""

__version__ = "0.1.0"
APP_NAME = "ORTune"
APP_ID = "ortune"
