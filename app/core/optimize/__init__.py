"""Optimize: one job that takes a model to the fastest variant and session settings that stay
faithful, composed of the other jobs (convert with its check and speed, the repair loop,
tune), and writes a folder to ship."""
