"""Counts in words: "1 sentence", "2 sentences" (never "1 sentences" or "sentence(s)")."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str = "") -> str:
    """``n`` and the noun, singular for one: ``counted(3, "child process", "child processes")``."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
