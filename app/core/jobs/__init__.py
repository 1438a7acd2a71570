"""What a job is: its entry (function, typed parameters, where it runs, what history keeps),
the protocol it reports through (progress, logs, data, cancel), the errors it can end with,
its memory budget and disk checks. Starting one is app.core.launch; running it in a child
process is app.core.runner."""
