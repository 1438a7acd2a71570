"""Generation: a decoder with a KV cache run as it generates text — the prompt (prefill,
the time to the first token), then token by token (decode), each step's `present` fed back
as the next step's `past` — with the figures a user of one asks for: time to first token,
per-token latency and how it grows with the context, tokens per second, the cache's bytes."""
