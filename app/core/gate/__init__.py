"""The gate: a new model against an old one, in alternation on one machine in one run, judged
on speed (the whole 95 % interval of the slowdown against a limit), outputs (per-output
tolerances, accuracy on labelled data, the first drifting node), and peak memory; with the
files a CI system reads (JUnit, Markdown, GitHub annotations)."""
