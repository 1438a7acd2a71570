"""Targets: the machines that run ORTune's job children. This machine by default, or a
remote host reached over SSH, where `ortune worker` runs each job and streams its events
back (see app.core.targets.handle). Ratios are only ever formed on one machine: a
comparison sent to a target runs all its members there."""
