"""text layer."""
