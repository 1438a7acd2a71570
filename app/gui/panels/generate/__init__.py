"""The Generate tab: a decoder with a KV cache timed as it generates."""
