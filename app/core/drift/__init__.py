"""Where accuracy is lost: a model and its variant run on the same inputs with every
intermediate tensor exposed, compared tensor by tensor in the source's order, naming the
node where drift starts and the one where values first go non-finite."""
