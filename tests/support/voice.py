"""The real bundled voice, loaded once per test process (loading takes seconds).

Plain Python, no Qt and no torch, so every test module can use it on an ONNX-only
install: :func:`bundled_engine` for helpers, the ``onnx_engine`` fixture
(``support.fixtures``) for tests. Borrowers must not close it.
"""

from __future__ import annotations

import functools

from studio.engine.base import Engine, SynthesisSettings

#: no sampling noise: the same text gives the same audio, the settings every exactness test uses
DETERMINISTIC = SynthesisSettings(noise_scale=0.0, length_scale=1.0, noise_w=0.0)


@functools.lru_cache(maxsize=1)
def bundled_engine() -> Engine:
    from studio.engine.presets import open_preset
    from studio.engine.voice.catalog import get_voice

    engine = open_preset("fp32-cpu", get_voice(None))
    engine.load()
    return engine
