"""The ORTune window: PySide6 widgets over app.core jobs."""
