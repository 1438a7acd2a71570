"""The History tab: stored results, re-opened and re-run."""
