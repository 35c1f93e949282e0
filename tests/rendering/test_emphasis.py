"""Emphasis on chosen words: where a word's phoneme ids are, how the producer's word
indices reach the spoken form, and that a stressed word is heard -- longer and louder
in the rendered audio, with exactly the stressed sentence rendered again.

The real bundled voice (fp32-cpu, windowed ONNX), real project files and SQLite.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from studio.core.types import Book, Chapter
from studio.engine.emphasis import groups, space_id, word_spans
from studio.engine.voice.catalog import get_voice
from studio.rendering.render import render_project
from studio.project.opening import new_project_settings
from studio.project.store import Project
from studio.project.direction import directions
from studio.project.emphasis import emphases, set_emphasis, spoken_indices
from support.render import CountingEngine, para, real_engine

LINE = "I never said she stole my money."


def _phonemes(engine, ids: list[int]) -> str:
    names = {v[0]: k for k, v in engine.config.phoneme_id_map.items()}
    return "".join(names[i] for i in ids if i != 0)


def test_word_spans_find_each_word_and_words_espeak_joins(onnx_engine) -> None:
    to_ids = lambda text: onnx_engine.text_to_ids(text, "en")  # noqa: E731
    assert space_id(to_ids) == onnx_engine.config.phoneme_id_map[" "][0]
    ids = to_ids(LINE)
    spans = word_spans(to_ids, LINE, [2, 6])
    assert [_phonemes(onnx_engine, ids[a:b]) for a, b in spans] == ["sˈɛd", "mˈʌni."]
    # espeak says "was the" as one word: the groups no longer count the words; "best" is still found,
    # and "the" stresses the group it was joined to
    line = "It was the best of times, it was the worst of times."
    ids = to_ids(line)
    assert len(groups(ids, space_id(to_ids))) < len(line.split())
    best, the = word_spans(to_ids, line, [3]), word_spans(to_ids, line, [2])
    assert [_phonemes(onnx_engine, ids[a:b]) for a, b in best] == ["bˈɛst"]
    assert [_phonemes(onnx_engine, ids[a:b]) for a, b in the] == ["wʌzðə"]
    after_comma = word_spans(to_ids, line, [5, 6, 7])  # a clause ends at "times,": the words after keep their place
    assert [_phonemes(onnx_engine, ids[a:b]) for a, b in after_comma] == ["tˈaɪmz,", "ɪt", "wʌzðə"]
    again = "Well, well, well; who is there?"  # the same word three times: each by its place
    ids = to_ids(again)
    assert [_phonemes(onnx_engine, ids[a:b]) for a, b in word_spans(to_ids, again, [1, 3])] == ["wˈɛl,", "hˌuː"]
    assert word_spans(to_ids, line, [40]) == ()  # no such word: nothing stressed


def test_stressed_words_follow_the_spoken_form() -> None:
    assert spoken_indices(LINE, LINE, [2]) == (2,)
    assert spoken_indices("Dr. Smith came in 1851 by train.", "Doctor Smith came in eighteen fifty-one by train.",
                          [1, 4, 6]) == (1, 4, 5, 7)
    assert spoken_indices("A b c.", "A b c.", []) == ()


def _book() -> Book:
    return Book(title="Stress", author="A", language="en", chapters=(
        Chapter("One", (para(LINE, "She smiled at the door."), para("Nobody answered him."))),
    ), source="memory")


def _span(samples_per_id: np.ndarray, span: tuple[int, int]) -> tuple[int, int]:
    edges = np.concatenate([[0], np.cumsum(samples_per_id)])
    return int(edges[span[0]]), int(edges[span[1]])


def _rms(audio: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(audio, dtype=np.float64))))


@pytest.mark.slow
def test_a_stressed_word_is_heard_and_only_its_sentence_renders_again(tmp_path: Path) -> None:
    engine = real_engine()
    with Project.create(tmp_path / "p", _book(), new_project_settings(get_voice(None))) as project:
        render_project(project, CountingEngine(engine))
        before = {r.id: r for r in project.sentences()}
        target = next(r for r in before.values() if r.text == LINE)
        plain = project.cache.load(project.cache_entry(target.cache_key))

        set_emphasis(project.db, [target.id], [2])  # "said"
        assert emphases(project.db) == {target.id: (2,)} and directions(project.db)[target.id].emphasis == (2,)
        after = {r.id: r for r in project.sentences()}
        assert {i for i in after if after[i].expected_key != before[i].expected_key} == {target.id}
        counting = CountingEngine(engine)
        render_project(project, counting)
        assert counting.calls == [1]  # one synthesis: the stressed sentence
        again = {r.id: r for r in project.sentences()}
        assert all(again[i].synth_count == before[i].synth_count + (i == target.id) for i in again)
        row = again[target.id]
        stressed = project.cache.load(project.cache_entry(row.cache_key))

        # the same synthesis, asked of the engine directly, gives the alignment to measure on
        to_ids = lambda text: engine.text_to_ids(text, "en")  # noqa: E731
        ids, spans = to_ids(LINE), word_spans(to_ids, LINE, [2])
        settings = row.synthesis
        assert settings is not None and settings.emphasis == (2,)
        ((audio0, ids0),) = engine.synthesize_batch_with_alignments([ids], replace(settings, emphasis=()))
        ((audio1, ids1),) = engine.synthesize_batch_with_alignments([ids], replace(settings, emphasis_ids=spans))
        assert len(audio0) == len(plain) and np.abs(audio0 - plain).max() < 2e-3  # the render is this synthesis
        assert len(audio1) == len(stressed) and np.abs(audio1 - stressed).max() < 2e-3
        (a0, b0), (a1, b1) = _span(ids0, spans[0]), _span(ids1, spans[0])
        assert (b1 - a1) > 1.1 * (b0 - a0)  # said longer
        assert 20 * np.log10(_rms(audio1[a1:b1]) / _rms(audio0[a0:b0])) > 2.0  # and louder
        lead = a0 - 2048  # the words before it are as they were (the decoder looks a few frames ahead)
        assert np.abs(audio1[:lead] - audio0[:lead]).max() < 0.05
        assert len(stressed) - len(plain) == (b1 - a1) - (b0 - a0)  # only the word got longer

        set_emphasis(project.db, [target.id], [])  # cleared: the plain audio is found again, nothing renders
        assert emphases(project.db) == {}
        counting = CountingEngine(engine)
        render_project(project, counting)
        assert counting.calls == []
        assert next(r for r in project.sentences() if r.id == target.id).cache_key == target.cache_key


@pytest.mark.slow
def test_the_bf16_preset_stresses_the_word_too() -> None:
    """bf16-cpu's first half is the ONNX encoder: its stressed words are said longer and louder too."""
    from studio.engine.presets import availability, open_preset

    ok, why, _missing = availability("bf16-cpu")
    if not ok:
        pytest.skip(f"bf16-cpu cannot run here: {why}")
    engine = open_preset("bf16-cpu", get_voice(None))
    try:
        engine.load()
        to_ids = lambda text: engine.text_to_ids(text, "en")  # noqa: E731
        ids, spans = to_ids(LINE), word_spans(to_ids, LINE, [2])
        base = new_project_settings(get_voice(None)).synthesis
        ((audio0, ids0),) = engine.synthesize_batch_with_alignments([ids], base)
        ((audio1, ids1),) = engine.synthesize_batch_with_alignments([ids], replace(base, emphasis=(2,),
                                                                                   emphasis_ids=spans))
    finally:
        engine.close()
    (a0, b0), (a1, b1) = _span(ids0, spans[0]), _span(ids1, spans[0])
    assert (b1 - a1) > 1.1 * (b0 - a0) and 20 * np.log10(_rms(audio1[a1:b1]) / _rms(audio0[a0:b0])) > 2.0
    assert len(audio1) - len(audio0) == (b1 - a1) - (b0 - a0)


def test_an_edit_keeps_the_stress_on_the_same_word(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p", _book(), new_project_settings(get_voice(None))) as project:
        sid = next(r.id for r in project.sentences() if r.text == LINE)
        set_emphasis(project.db, [sid], [2, 6])  # "said", "money."
        project.edit_sentence(sid, "I never ever said she took my money.")
        assert emphases(project.db) == {sid: (3, 7)}
        project.edit_sentence(sid, "I never ever spoke.")  # the stressed words are gone: so is the stress
        assert emphases(project.db) == {}
        set_emphasis(project.db, [sid], [99])  # no such word: nothing stored
        assert emphases(project.db) == {}
