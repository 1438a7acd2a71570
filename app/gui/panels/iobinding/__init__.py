"""The IO Binding tab: plain runs against IO binding with device tensors."""
