"""torchvits."""
