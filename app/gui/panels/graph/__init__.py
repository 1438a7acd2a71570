"""Graph tab: the current model drawn, with measurements laid on it."""
