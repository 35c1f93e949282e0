"""Rendering a *selection* of sentences with the jobs layer's own render loop.

Why this module exists: :func:`studio.jobs.render.render_project` renders whole
chapters, but the studio also needs "just these sentences" (a selection, the one
sentence whose text was edited, a new take of one sentence). Until the jobs layer
takes a ``sentence_ids`` argument (requested; used automatically once it does),
this drives the same ``_Renderer`` loop with the same lock, voice fingerprints and
cache checks as ``render_project`` -- nothing about rendering is reimplemented
here, only the row filter differs.

Also here: the batch synthesizer the worker uses when the engine batches (CUDA):
it hands a run of sentences to ``Engine.synthesize_batch`` in one call and falls
back to one at a time if the batch fails, so one bad sentence fails alone.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from studio.engine.base import Engine, SynthesisSettings
from studio.jobs import render as render_mod
from studio.jobs.render import BatchSynthesizer, RenderProgress, SynthRequest, render_project
from studio.project.store import Project

log = logging.getLogger(__name__)


def render_supports_selection() -> bool:
    """Whether ``render_project`` takes ``sentence_ids`` itself (the requested API)."""
    return "sentence_ids" in inspect.signature(render_project).parameters


def render_sentences(
    project: Project,
    engine: Engine,
    sentence_ids: Iterable[int],
    *,
    progress: Callable[[RenderProgress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    engine_for: Callable[[str], Engine] | None = None,
    make_synthesizer: Callable[[Engine, SynthesisSettings], BatchSynthesizer] = render_mod.sequential_synthesizer,
    batch_size: int = 1,
) -> RenderProgress:
    """Render the pending ones among ``sentence_ids`` (others are left alone)."""
    wanted = set(sentence_ids)
    kwargs: dict[str, Any] = dict(
        progress=progress, should_stop=should_stop, engine_for=engine_for,
        make_synthesizer=make_synthesizer, batch_size=batch_size,
    )
    if render_supports_selection():
        return render_project(project, engine, sentence_ids=wanted, **kwargs)  # type: ignore[call-arg]
    with render_mod.render_lock(project):
        settings = project.settings()
        chapters = {r.chapter for r in project.sentences() if r.id in wanted}

        def rows() -> list:
            return [r for r in project.sentences(chapters) if r.id in wanted]

        selected = rows()
        needed = {project.voice_for(r.language, settings) for r in selected} | {settings.voice_id}
        render_mod.prepare_voices(project, needed)
        selected = rows()
        if render_mod.verify_present(project, selected):
            selected = rows()
        renderer = render_mod._Renderer(project, engine, settings, engine_for, make_synthesizer, progress)
        return renderer.run(selected, should_stop, max(1, batch_size))


def batch_synthesizer(engine: Engine, settings: SynthesisSettings) -> BatchSynthesizer:
    """Requests -> one ``synthesize_batch`` call; per-sentence retry if the batch raises."""

    def run(requests: Sequence[SynthRequest]) -> list[np.ndarray | Exception]:
        ids: list[list[int] | Exception] = []
        for req in requests:
            try:
                ids.append(engine.text_to_ids(req.text, req.language))
            except Exception as exc:  # noqa: BLE001 - that sentence fails, not the batch
                ids.append(exc)
        good = [i for i, x in enumerate(ids) if not isinstance(x, Exception)]
        out: list[np.ndarray | Exception] = [x if isinstance(x, Exception) else np.zeros(0) for x in ids]
        if not good:
            return out
        try:
            audios = engine.synthesize_batch([ids[i] for i in good], settings)  # type: ignore[misc]
            for i, audio in zip(good, audios):
                out[i] = audio
        except Exception as exc:  # noqa: BLE001
            log.warning("batch of %d failed (%s); retrying one by one", len(good), exc)
            for i in good:
                try:
                    out[i] = engine.synthesize_batch([ids[i]], settings)[0]  # type: ignore[list-item]
                except Exception as one:  # noqa: BLE001
                    out[i] = one
        return out

    return run
