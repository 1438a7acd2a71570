"""Qt-free core of ORTune: every job a user can run, as plain functions and dataclasses."""
