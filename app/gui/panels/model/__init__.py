"""The Overview tab: what is inside the current model."""
