"""An ONNX Runtime session as the user sets it up: the preset, the execution providers that really start, the inputs fed to it, node placement, and the machine it runs on."""
