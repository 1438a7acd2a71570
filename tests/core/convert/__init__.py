"""Making variants of a model (fp16, mixed, int8, int4, ORT format, optimised, transformer-fused) and proving they still give the source's answers."""
