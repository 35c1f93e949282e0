"""Chunked streaming: spans cover the passage, the first chunk is short, audio is real.

No timing here (time-to-first-audio is measured by bench/streaming.py).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings as hsettings, strategies as st

from support.fakes import FakeEngine
from studio.engine.serving.buffers import BufferPool
from studio.engine.serving.streaming import AudioChunk, plan_chunks, stream_passage
from studio.text.segment import sentence_bounds, split_spans

from support.voice import DETERMINISTIC

PASSAGE = (
    "The old lighthouse keeper climbed the spiral stairs every evening, counting each "
    "of the one hundred and twelve steps as his father had taught him. At the top he "
    "lit the lamp. Mr. Hale, his neighbour, said the light could be seen from the "
    "far side of the bay! Was that true? Nobody in the village knew."
)


def _covers(text: str, chunks) -> None:
    spans = [c.span if isinstance(c, AudioChunk) else c for c in chunks]
    assert spans, "no chunks"
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (a, b), (c, _) in zip(spans, spans[1:]):
        assert b == c and a < b
    assert "".join(text[a:b] for a, b in spans) == text


def _flat(plan):
    return [(c[0][0], c[-1][1]) for c in plan]


# ------------------------------------------------------------------ planning


def test_streaming_cuts_where_the_book_is_cut():
    """Preview chunks start at the text layer's sentence boundaries (one splitter)."""
    text = 'Mr. Smith met J. R. Tolkien in the U.S. on Monday. "Really?" she asked! It was late. Fine'
    parts = [text[a:b] for a, b in sentence_bounds(text)]
    assert parts == [
        "Mr. Smith met J. R. Tolkien in the U.S. on Monday. ",
        '"Really?" she asked! ',
        "It was late. ",
        "Fine",
    ]
    assert [p.strip() for p in parts] == [s.text for s in split_spans(text)]
    starts = {a for a, _ in sentence_bounds(text)}
    assert {c[0][0] for c in plan_chunks(text, first_chunk_chars=60, chunk_chars=60, growth=1.0)} <= starts


def test_first_chunk_is_short_and_ends_at_a_clause():
    plan = plan_chunks(PASSAGE, first_chunk_chars=100, chunk_chars=300)
    spans = _flat(plan)
    _covers(PASSAGE, spans)
    first = PASSAGE[spans[0][0] : spans[0][1]]
    assert 24 <= len(first.strip()) <= 100
    assert first.rstrip().endswith(",")  # the first sentence is longer: cut at its comma
    # the rest of that sentence leads the next chunk; later chunks respect chunk_chars
    assert PASSAGE[spans[1][0] :].startswith("counting each")
    assert all(len(PASSAGE[a:b].strip()) <= 300 for a, b in spans)


def test_chunk_sizes_ramp_up_to_chunk_chars():
    text = PASSAGE * 4
    spans = _flat(plan_chunks(text, first_chunk_chars=100, chunk_chars=300))
    _covers(text, spans)
    sizes = [len(text[a:b].strip()) for a, b in spans]
    for k, size in enumerate(sizes[1:], start=1):
        assert size <= min(300, sizes[0] * 2**k)
    assert sizes[1] < 2 * sizes[0] + 1 and max(sizes) > 200  # small start, full size later
    flat = [len(text[a:b].strip()) for a, b in _flat(plan_chunks(text, 100, 300, growth=1.0))]
    assert flat[1] > sizes[1]  # no ramp: the second chunk is a full one


def test_short_first_sentence_is_kept_whole():
    text = "Chapter one. " + PASSAGE
    plan = plan_chunks(text)
    assert text[plan[0][0][0] : plan[0][-1][1]] == "Chapter one. "


def test_long_sentence_without_commas_cut_at_spaces():
    text = " ".join(["word"] * 200) + "."
    spans = _flat(plan_chunks(text, first_chunk_chars=50, chunk_chars=120))
    _covers(text, spans)
    assert len(text[spans[0][0] : spans[0][1]].strip()) <= 50
    for a, b in spans:
        piece = text[a:b].strip()
        assert len(piece) <= 120
        assert piece.split(" ")[0] == "word"  # never cut mid-word


def test_degenerate_texts():
    assert plan_chunks("") == []
    assert _flat(plan_chunks("   \n ")) == [(0, 5)]
    text = "... Then it began."
    spans = _flat(plan_chunks(text))
    _covers(text, spans)
    assert len(spans) == 1  # leading punctuation rides along


TEXT_ALPHABET = st.sampled_from(list("abcdefg hij KLM,.;!?—'\"\n") + ["Mr. ", "e.g. ", "  "])


@hsettings(max_examples=150, deadline=None)
@given(
    text=st.lists(TEXT_ALPHABET, max_size=600).map("".join),
    first=st.integers(10, 120),
    size=st.integers(20, 400),
)
def test_plan_always_covers_the_text(text, first, size):
    plan = plan_chunks(text, first_chunk_chars=first, chunk_chars=size)
    if not text:
        assert plan == []
        return
    pieces = [p for chunk in plan for p in chunk]
    _covers(text, pieces)  # pieces are contiguous too
    _covers(text, _flat(plan))
    for k, (a, b) in enumerate(_flat(plan)):
        spoken = sum(ch.isalnum() for ch in text[a:b])
        assert spoken <= (first if k == 0 else max(first, size))


# ------------------------------------------------------------------ engines


def test_stream_real_voice(onnx_engine):
    chunks = list(stream_passage(onnx_engine, PASSAGE, "en", DETERMINISTIC,
                                 first_chunk_chars=80, chunk_chars=150))
    _covers(PASSAGE, chunks)
    assert len(chunks) >= 3
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert [c.is_last for c in chunks] == [False] * (len(chunks) - 1) + [True]
    assert len(chunks[0].text.strip()) <= 80
    for c in chunks:
        assert c.sample_rate == onnx_engine.sample_rate
        assert c.samples.dtype == np.float32 and c.samples.ndim == 1
        assert not c.samples.flags.writeable
        assert c.duration_s > 0.3  # every chunk speaks
        assert np.abs(c.samples).max() > 0.05
        assert np.abs(c.samples).max() <= 1.0
    # the first chunk is exactly the solo render of its text
    solo = onnx_engine.synthesize(chunks[0].text.strip(), "en", DETERMINISTIC)
    assert len(solo) == len(chunks[0].samples)
    assert np.corrcoef(solo, chunks[0].samples)[0, 1] >= 0.999


def test_pooled_stream_recycles_buffers_and_matches_unpooled():
    text = PASSAGE * 3
    engine = FakeEngine(scale=0.001)
    plain = [np.array(c.samples) for c in stream_passage(engine, text, "en", DETERMINISTIC, chunk_chars=120)]
    pool = BufferPool()
    pooled = []
    for c in stream_passage(engine, text, "en", DETERMINISTIC, chunk_chars=120, pool=pool):
        assert pool.owns(c.samples)
        pooled.append(np.array(c.samples))  # copy: the view is recycled on next()
    assert len(pooled) == len(plain) > 3
    for a, b in zip(pooled, plain):
        np.testing.assert_array_equal(a, b)
    st_ = pool.stats()
    assert st_.buffers_in_use == 0 and st_.hits >= len(pooled) - 3


def test_early_close_releases_the_buffer():
    pool = BufferPool()
    it = stream_passage(FakeEngine(scale=0.001), PASSAGE, "en", DETERMINISTIC, pool=pool)
    next(it)
    assert pool.stats().buffers_in_use == 1
    it.close()
    assert pool.stats().buffers_in_use == 0


def test_sentence_pause_and_batching_choice():
    engine = FakeEngine(scale=0.001)
    text = "One two. Three four. Five six."
    one = list(stream_passage(engine, text, "en", DETERMINISTIC, first_chunk_chars=10))
    # first chunk: "One two."; second: the other two sentences, one engine call each on CPU
    assert [len(b) for b in engine.batches] == [1, 1, 1]
    engine.batches.clear()
    paused = list(stream_passage(engine, text, "en", DETERMINISTIC, first_chunk_chars=10,
                                 sentence_pause_s=0.1, batch_sentences=True))
    assert [len(b) for b in engine.batches] == [1, 2]
    assert len(paused[1].samples) == len(one[1].samples) + 100
    assert not paused[1].samples[len("Three four."):][:100].any()
