"""The model file itself: reading it safely (intake), its structure without weights, what is inside it, .ort files, and writing new model files."""
