"""tensorrt."""
