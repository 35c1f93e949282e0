"""The synthesizer seam: a list of sentence requests in, one audio array or exception per
request out.

Why one seam: the render loop (:mod:`studio.rendering.render`), the benchmark and
proof-listening's re-renders all speak through :func:`each_synthesizer`, which hands the
engine ``batch_size`` sentences at a time (the engine plan's, see :mod:`studio.stack.build`)
yet fails only the sentence at fault. The desktop worker wraps the same synthesizer
(``make_synthesizer``) to watch it, never to replace it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from studio.core.errors import ProjectError
from studio.core.lexicon import Lexicon
from studio.engine.base import Engine, SynthesisSettings, check_ids_length
from studio.rendering.stressed_words import stressed_ids

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SynthRequest:
    """One sentence to speak: what the synthesizer seam receives.

    ``lexicon`` holds the pronunciation entries that occur in this sentence (the
    same ones its cache key carries); the engine's front end applies them.
    """

    sentence_id: int
    text: str
    language: str
    lexicon: Lexicon = Lexicon()
    #: the noise draw (:attr:`~studio.engine.base.SynthesisSettings.take`): 0, or a new take's
    take: int = 0


#: Requests in, one result per request out: float32 audio, or the exception that
#: sentence raised (so one bad sentence never sinks its neighbours).
BatchSynthesizer = Callable[[Sequence[SynthRequest]], "list[np.ndarray | Exception]"]
SynthesizerFactory = Callable[[Engine, SynthesisSettings], BatchSynthesizer]
def each_synthesizer(engine: Engine, settings: SynthesisSettings) -> BatchSynthesizer:
    """Whole batches through the model, yet one result per sentence.

    Ids are made per request, so a front-end error or an over-long sentence fails
    just that request. The rest go to the engine in one
    :meth:`~studio.engine.base.Engine.synthesize_each` call (in a model process, a
    batch that kills it twice is retried item by item, so only the poisonous sentence
    gets :class:`~studio.stack.isolation.reports.InferenceCrashed`); if that call raises,
    each item is tried alone, so one bad sentence never sinks its neighbours.
    """

    def one_call(ids_list: list[list[int]], take: int = 0, stressed: tuple = ()) -> list[np.ndarray | Exception]:
        same = (take, stressed) == (settings.take, ())
        drawn = settings if same else replace(settings, take=take, emphasis_ids=stressed)
        results = list(engine.synthesize_each(ids_list, drawn))
        if len(results) != len(ids_list):
            raise ProjectError(f"engine returned {len(results)} results for {len(ids_list)} sentences")
        return results

    def run(requests: Sequence[SynthRequest]) -> list[np.ndarray | Exception]:
        """One engine call per noise draw: new takes are rare and go apart."""
        out: list[np.ndarray | Exception | None] = [None] * len(requests)
        for take in sorted({req.take for req in requests}):
            where = [i for i, req in enumerate(requests) if req.take == take]
            for i, result in zip(where, draw([requests[i] for i in where], take)):
                out[i] = result
        return out  # type: ignore[return-value] - every slot is filled

    def draw(requests: Sequence[SynthRequest], take: int) -> list[np.ndarray | Exception]:
        out: list[np.ndarray | Exception | None] = [None] * len(requests)
        ids_list: list[list[int]] = []
        where: list[int] = []
        for i, req in enumerate(requests):
            try:
                # no entries -> the plain call, so engines and wrappers see exactly
                # what they saw before lexicons existed
                ids = (engine.text_to_ids(req.text, req.language, req.lexicon) if req.lexicon
                       else engine.text_to_ids(req.text, req.language))
                check_ids_length(ids)
            except Exception as exc:  # noqa: BLE001 - recorded as the sentence's failure
                out[i] = exc
                continue
            ids_list.append(ids)
            where.append(i)
        if settings.emphasis:  # the stressed words' ids differ per sentence: one call each
            for i, ids in zip(where, ids_list):
                r = requests[i]
                try:
                    out[i] = one_call([ids], take, stressed_ids(engine, r.sentence_id, r.text, r.language, r.lexicon,
                                                                settings.emphasis))[0]
                except Exception as exc:  # noqa: BLE001 - recorded as the sentence's failure
                    out[i] = exc
            return out  # type: ignore[return-value] - every slot is filled
        if ids_list:
            try:
                results = one_call(ids_list, take)
            except Exception as exc:  # noqa: BLE001 - retried one by one below
                if len(ids_list) == 1:
                    results = [exc]
                else:
                    log.warning("batch of %d failed (%s); trying its sentences one by one", len(ids_list), describe_error(exc))
                    results = []
                    for ids in ids_list:
                        try:
                            results.extend(one_call([ids], take))
                        except Exception as single:  # noqa: BLE001
                            results.append(single)
            for i, result in zip(where, results):
                out[i] = result
        return out  # type: ignore[return-value] - every slot is filled

    return run


def describe_error(exc: BaseException) -> str:
    """``"Type: first line of the message"``: a failure in one line."""
    msg = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {msg[0]}" if msg else type(exc).__name__
