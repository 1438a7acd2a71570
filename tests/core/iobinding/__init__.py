"""IO binding and device tensors: the same model fed several ways, and where the copies between host and device go."""
