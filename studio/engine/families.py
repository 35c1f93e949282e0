"""The voice families, one line each: what the catalogue lists, what opens an engine,
what ``studio voices add`` downloads (:class:`~studio.engine.family.VoiceFamily`).

Adding a family is one package under ``studio/engine/`` exporting ``FAMILY`` and one
line below (docs/architecture.md, "Adding a voice family"). The order is the listing's
order; the first family's default voice is the studio's default voice.

A family outside the studio (a plugin, the tests' tone family) is added by naming it in
``$STUDIO_VOICE_FAMILIES`` (``package.module:OBJECT``, several separated by commas):
the same line, read from the environment, so a render's model process sees it too.
"""

from __future__ import annotations

import importlib
import logging
import os
from functools import lru_cache
from typing import TYPE_CHECKING

from studio.core.errors import VoiceError

if TYPE_CHECKING:
    from studio.engine.family import VoiceFamily
    from studio.engine.voice.info import VoiceInfo

_LOGGER = logging.getLogger(__name__)

FAMILIES = (
    "studio.engine.piper:FAMILY",
    "studio.engine.kokoro:FAMILY",
    "studio.engine.coqui:FAMILY",
)
#: more families, ``module:OBJECT`` separated by commas, after the studio's own
EXTRA_ENV = "STUDIO_VOICE_FAMILIES"


def families() -> tuple[VoiceFamily, ...]:
    """Every registered family, in listing order."""
    extra = tuple(x.strip() for x in os.environ.get(EXTRA_ENV, "").split(",") if x.strip())
    return _load(FAMILIES, extra)


@lru_cache(maxsize=4)
def _load(own: tuple[str, ...], extra: tuple[str, ...]) -> tuple[VoiceFamily, ...]:
    """The families the lines name. One of the studio's own that cannot load is an install to
    repair (VoiceError); another one is skipped with a warning: it must not hide the other voices."""
    out = []
    for line in (*own, *extra):
        module, _, attr = line.partition(":")
        try:
            out.append(getattr(importlib.import_module(module), attr or "FAMILY"))
        except (ImportError, AttributeError) as exc:
            if line in own:
                raise VoiceError(f"voice family {line!r} cannot be loaded ({exc}); reinstall the studio") from exc
            _LOGGER.warning("skipping voice family %r from $%s: %s", line, EXTRA_ENV, exc)
    return tuple(out)


def family_of(voice: VoiceInfo) -> VoiceFamily:
    """The family that listed ``voice``."""
    for family in families():
        if family.name == voice.family:
            return family
    raise VoiceError(f"voice {voice.id}: no voice family {voice.family!r} is registered")


def fetcher(name: str) -> VoiceFamily:
    """The family that downloads ``name`` (``studio voices add NAME``); VoiceError when none does."""
    for family in families():
        if family.fetches(name):
            return family
    examples = ", ".join(f.fetch_example for f in families() if f.fetch_example)
    raise VoiceError(f"no voice family downloads {name!r} (names look like {examples})")
