"""Targets: the machines that run ORTune's job children. This machine by default, or a
remote host reached over SSH, where `ortune worker` (app.core.launch.worker) runs each job
and streams its events back (this machine's side: app.core.targets.handle), or a Ray
cluster (app.core.targets.cluster). Which place a run goes to is decided by the one start
function, app.core.launch.start. Ratios are only ever formed on one machine: a
comparison sent to a target runs all its members there."""
