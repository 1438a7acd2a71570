"""The `ortune` command line: thin sub-commands over app.core jobs."""
