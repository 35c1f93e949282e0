"""The producer's speaking speed ("1.1x") and the voice's length scale it stands for.

Why a module of its own, in core: the command line's help, the Speed & pauses
dialog and the duration estimate all speak of it, and ``studio --help`` must not
import the project layer (numpy) to print the range.
"""

from __future__ import annotations

#: the speeds offered to producers ("1.1x"): the length scale is their inverse
SPEED_RANGE = (0.8, 1.3)


def speed_of(length_scale: float) -> float:
    """The plain "1.1x" for a length scale (a longer scale is slower speech)."""
    return 1.0 / length_scale if length_scale > 0 else 1.0


def length_scale_of(speed: float) -> float:
    """Rounded, so one speed always gives one cache key (1.0x keeps the default key)."""
    if not SPEED_RANGE[0] <= speed <= SPEED_RANGE[1]:
        raise ValueError(f"speed {speed:g}x is outside {SPEED_RANGE[0]:g}x-{SPEED_RANGE[1]:g}x")
    return round(1.0 / speed, 4)
