"""The Compare tab: several models or variants with the same session and inputs, side by side."""
