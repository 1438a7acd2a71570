"""The window around the panels: main window, model list, Jobs and Log docks, dialogs, and the Qt bridge to core jobs."""
