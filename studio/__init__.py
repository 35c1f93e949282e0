"""Audiobook studio: manuscript in, spoken chapters out, on the producer's own machine.

Layers import only downwards: ``core`` -> ``text`` -> ``engine``/``audio`` -> ``project``
-> ``proof`` -> ``stack`` -> ``rendering`` -> ``delivery`` -> ``measure`` -> ``cli`` ->
``desktop`` -> ``ui`` (pyproject.toml's import contracts). Nothing below the UI imports PySide6.
"""

__version__ = "0.1.0"
