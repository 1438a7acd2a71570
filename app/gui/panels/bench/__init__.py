"""The Benchmark tab: live latency of one model, and the Sweep page over a grid."""
