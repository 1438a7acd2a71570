"""What ORTune keeps on disk: the results history, the user's settings, and where those files live."""
