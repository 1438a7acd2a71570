"""One folder per tab of the window, named like the core package whose jobs it starts."""
