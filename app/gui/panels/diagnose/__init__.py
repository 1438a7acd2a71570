"""The Diagnose tab: findings on why the current model is slow."""
