"""Running a job: in a child process of its own, connected by pipes, cancelled on request;
and how it ended, turned into what a user reads (a line, an exit code, a log)."""
