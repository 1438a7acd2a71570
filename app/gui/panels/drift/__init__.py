"""The Drift tab: where a variant parts from its source, and the repair."""
