"""The model as a graph: what each node costs (MACs, FLOPs, parameters, activation memory)
and how two models differ, node by node."""
