"""The Optimize tab."""
