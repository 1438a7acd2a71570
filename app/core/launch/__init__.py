"""Launching jobs: the registry of every job entry (registry), the one function that starts
an entry here, on a target or over a cluster and keeps its result in the history (start),
and the worker server that runs the jobs another machine sends (worker, behind `ortune
worker`). The window and the command line only collect parameters and present what comes
back; everything between a click or a command and a job's function passes through here."""
