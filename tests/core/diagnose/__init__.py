"""Why a model is slow here: evidence gathered from the model and quick experiments, turned into findings with fixes."""
