"""Measuring latency: the one timing loop, statistics, live latency series, sweeps over a grid and comparisons of several models."""
