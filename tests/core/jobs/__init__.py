"""How work runs: the job protocol, the registry of every job, the child-process runner, and the errors a job can end with."""
