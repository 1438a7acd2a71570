"""The Convert tab: make a variant of the current model and show how faithful it is."""
