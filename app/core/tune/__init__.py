"""Auto-tuning session settings: the settings a tuner may try, and the noise-aware race between them."""
