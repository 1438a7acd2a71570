"""The measuring engine every command times with: a session's runs (runs, timing), their
statistics (stats, noise), and models timed in alternation in processes of their own (serve,
alternate, pairs)."""
