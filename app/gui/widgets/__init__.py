"""Widgets every panel shares: tables, charts, live latency plots, the profile timeline and theme colours."""
