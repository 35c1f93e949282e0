"""What the CPU the suite runs on can do: markers for tests that need a CPU feature.

Why: the suite must pass on every CPU a contributor or a CI machine has (an AMD EPYC with
AVX2 only, an Intel Xeon with AVX-512 and AMX). A test that needs BF16, VNNI, AVX-512 or
AMX asks for it with a marker (``needs_bf16``) and skips with the reason elsewhere; a test of
a refusal expects the message for the CPU it runs on (``preset_refusal``).
"""

from __future__ import annotations

import pytest

from studio.engine import cpu_features
from studio.engine.presets import availability

HAS_BF16, WHY_NO_BF16 = cpu_features.bf16_support()
needs_bf16 = pytest.mark.skipif(not HAS_BF16, reason=f"bf16-cpu cannot run here: {WHY_NO_BF16}")


def preset_refusal(preset: str, voice_refusal: str) -> str:
    """What opening ``preset`` for a voice that cannot run it says here: the machine's reason
    first where the preset cannot run on this machine at all (a CPU without BF16), else the voice's."""
    ok, why, _missing = availability(preset)
    return voice_refusal if ok else f"preset {preset} is unavailable: {why}"
