"""The Session tab: every session setting, the providers, the inputs, presets and node placement."""
