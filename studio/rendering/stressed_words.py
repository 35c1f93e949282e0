"""Stressed words at render time: where they are in a sentence's ids, and a word when the
preset cannot say them (:mod:`studio.engine.emphasis` says how they are heard).

Why in the render loop and not in the engine: the engine is given ids, the render loop
has the text; it asks the engine's own front end (through any wrapper: streams, the
model process) where the words are, and hands the spans over in the settings.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from studio.engine.emphasis import HEARD_ON, word_spans
from studio.stack.build import effective_preset

if TYPE_CHECKING:
    from studio.core.lexicon import Lexicon
    from studio.engine.base import Engine, SynthesisSettings
    from studio.project.settings import ProjectSettings

log = logging.getLogger(__name__)


def stressed_ids(engine: Engine, sentence_id: int, text: str, language: str, lexicon: Lexicon,
                 words: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """The id spans of ``words`` of ``text``; none (logged) when the front end cannot place them
    (a recorded front end knows whole sentences only): the sentence is then said plainly."""
    try:
        return word_spans(lambda t: engine.text_to_ids(t, language, lexicon or None), text, words)
    except Exception as exc:  # noqa: BLE001 - emphasis is direction, never a reason to fail the sentence
        log.warning("sentence %d: stressed words not placed (%s); said plainly", sentence_id, exc)
        return ()


def unheard(settings: ProjectSettings) -> str | None:
    """What renders this project's stressed sentences plainly ("preset fp32-torch", "Triton
    servers"), or None when its engine says the stress (:data:`~studio.engine.emphasis.HEARD_ON`)."""
    if settings.triton is not None:
        return "Triton servers"
    preset = effective_preset(settings)
    return None if preset.name in HEARD_ON else f"preset {preset.name}"


def warn_unheard(settings: ProjectSettings, own: SynthesisSettings, sentences: int) -> None:
    """Say in the log when the project's engine renders stressed sentences plainly."""
    what = unheard(settings) if own.emphasis else None
    if what is not None:
        log.warning("emphasis is not realized with %s (it is on %s): %d stressed sentence(s) rendered plainly",
                    what, ", ".join(HEARD_ON), sentences)
