"""Rendering with the model in a child process, per-sentence failures, the request
length cap, and what ``studio render`` tells the user when sentences fail.

The end-to-end test runs the real CLI with the real voice in a real model process and
crashes that process for real (SIGSEGV) through the test-only fault switch
``STUDIO_FAULT_CRASH_ON`` (see :mod:`studio.stack.isolation.child`).
"""

from __future__ import annotations

import os
import wave
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from studio.cli import build_parser
from studio.cli.common import RETRY_MESSAGE
from studio.cli.render import isolation_from_args as _isolation
from studio.core.errors import EngineError, StudioError
from studio.engine.base import MAX_IDS_PER_SENTENCE, DelegatingEngine, Engine, SentenceTooLong, SynthesisSettings
from studio.engine.voice.catalog import get_voice
from studio.stack.isolation.child import FAULT_ENV
from studio.stack.isolation.engine import IsolatedEngine
from studio.rendering.render import render_project
from studio.stack.build import Isolation, build_engine, plan_engine
from studio.project.opening import new_project_settings
from studio.project.store import Project
from support.cli import db_rows, done_snapshot, write_manuscript
from support.render import CountingEngine, make_book, real_engine, studio_cmd

LONG = " ".join(["The harbour was quiet that morning, and the boats rocked gently against the old stone wall"] * 40)


# ------------------------------------------------------------------ end to end


@pytest.mark.slow
def test_model_crash_fails_one_sentence_then_rerun_retries_it_and_repairs_damaged_audio(tmp_path: Path) -> None:
    # 8 sentences in 2 chapters; "pencil" is in exactly one, in chapter 2
    ms = write_manuscript(tmp_path / "crash.md", sentences=8, chapters=2)
    out = tmp_path / "out"
    project = out / "crash.studio"
    db = project / "project.sqlite"

    run1 = studio_cmd("render", str(ms), "-o", str(out), "--format", "wav",
                      env={**os.environ, FAULT_ENV: "pencil"}, timeout=300)
    assert run1.returncode == 3, run1.stderr
    assert "Traceback" not in run1.stderr
    rows = db_rows(db, "SELECT text, state, reason, synth_count FROM sentences ORDER BY ord")
    failed = [r for r in rows if r[1] != "done"]
    assert [(r[0], r[1], r[2]) for r in failed] == [
        ("The pencil was quiet today.", "failed", "InferenceCrashed: model process killed by SIGSEGV")
    ]
    assert all(count == 1 for _t, state, _r, count in rows if state == "done")
    assert len(rows) - len(failed) == 9  # 2 chapter titles + the 7 other sentences, all done
    # the complete chapter is exported, the incomplete one is named, with the reason
    assert sorted(f.name for f in out.glob("*.wav")) == ["01 - Part 1.wav"]
    assert "1 failed" in run1.stdout and str(out / "01 - Part 1.wav") in run1.stdout
    err = run1.stderr
    assert 'chapter 2 "Part 2"' in err and '"The pencil was quiet today."' in err
    assert "InferenceCrashed: model process killed by SIGSEGV" in err
    assert 'not exported (incomplete): chapter 2 "Part 2"' in err and RETRY_MESSAGE in err
    assert not list(out.glob(".*.wav")), "a temp file was left behind"

    # damage two finished sentences of chapter 1: one truncated, one bit-flipped
    damaged = db_rows(db, "SELECT s.id, s.cache_key FROM sentences s JOIN chapters c ON c.id = s.chapter_id"
                          " WHERE c.idx = 0 AND s.paragraph_id IS NOT NULL ORDER BY s.ord LIMIT 2")
    (cut_id, cut_key), (flip_id, flip_key) = damaged
    cut = project / "cache" / cut_key[:2] / f"{cut_key}.wav"
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
    flip = project / "cache" / flip_key[:2] / f"{flip_key}.wav"
    data = bytearray(flip.read_bytes())
    data[len(data) // 2] ^= 0x40  # same size: only the checksum can tell
    flip.write_bytes(bytes(data))

    # rerun without the fault, in-process: failed + damaged sentences render again, nothing else
    run2 = studio_cmd("render", str(ms), "-o", str(out), "--format", "wav", "--in-process", timeout=300)
    assert run2.returncode == 0, run2.stderr
    assert "corrupt" in run2.stderr and "Traceback" not in run2.stderr
    counts = dict(db_rows(db, "SELECT id, synth_count FROM sentences"))
    states = {s for (s,) in db_rows(db, "SELECT state FROM sentences")}
    assert states == {"done"}
    assert counts[cut_id] == 2 and counts[flip_id] == 2
    assert sorted(c for sid, c in counts.items() if sid not in (cut_id, flip_id)) == [1] * 8
    done_snapshot(project)  # every cache file matches its recorded checksum
    assert sorted(f.name for f in out.glob("*.wav")) == ["01 - Part 1.wav", "02 - Part 2.wav"]
    # chapter 1 was exported from the repaired audio: its length is what the rows add up to
    durations = [d for (d,) in db_rows(db, "SELECT s.duration FROM sentences s JOIN chapters c ON c.id = s.chapter_id"
                                           " WHERE c.idx = 0 ORDER BY s.ord")]
    with wave.open(str(out / "01 - Part 1.wav")) as w:
        seconds = w.getnframes() / w.getframerate()
    assert seconds > sum(durations) + 1.0  # speech plus the title and sentence pauses


# ------------------------------------------------------------------ options


def test_render_options_configure_the_model_process(monkeypatch: pytest.MonkeyPatch) -> None:
    parse = build_parser().parse_args
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    base = ["render", "book.md", "-o", "out"]

    iso = _isolation(parse(base))
    assert iso == Isolation(recycle_after=1000, cuda_alloc_conf="expandable_segments:True")
    iso = _isolation(parse(base + ["--recycle-after", "50", "--cuda-alloc-conf", "max_split_size_mb:64"]))
    engine = build_engine(plan_engine("fp32-cpu", isolation=iso))
    try:  # constructed only: no model process is started until the first sentence
        assert isinstance(engine, IsolatedEngine) and engine.child_pid is None
        assert engine.recycle_after == 50
        assert engine.spec.child_env()["PYTORCH_CUDA_ALLOC_CONF"] == "max_split_size_mb:64"
    finally:
        engine.close()
    assert _isolation(parse(base + ["--recycle-after", "0"])).recycle_after == 0  # never
    assert build_engine(plan_engine("fp32-cpu", isolation=Isolation(recycle_after=0))).recycle_after is None

    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "garbage_collection_threshold:0.6")
    assert _isolation(parse(base)).cuda_alloc_conf is None  # inherit the environment's

    assert _isolation(parse(base + ["--in-process", "--cuda-alloc-conf", "expandable_segments:False"])) is None
    assert os.environ["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:False"
    assert not isinstance(build_engine(plan_engine("fp32-cpu", isolation=None)), IsolatedEngine)
    with pytest.raises(StudioError, match="--recycle-after"):
        _isolation(parse(base + ["--recycle-after", "-1"]))


# ------------------------------------------------------------------ per-sentence failures


class BatchPoisonEngine(DelegatingEngine):
    """The real voice, but any batch holding the poisonous sentence raises (as a
    model crash would); records the size of every batch it is given."""

    name = "onnx"

    def __init__(self, inner: Engine, poison: str) -> None:
        super().__init__(inner)
        self.name = "onnx"
        self.poison_ids = inner.text_to_ids(poison, "en")
        self.batches: list[int] = []

    def synthesize_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        self.batches.append(len(ids))
        if any(list(seq) == self.poison_ids for seq in ids):
            raise EngineError("the model fell over")
        return self.inner.synthesize_batch(ids, settings)


@pytest.mark.slow
def test_batched_render_fails_only_the_bad_and_the_over_long_sentence(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p", make_book(), new_project_settings(get_voice(None))) as project:
        long_id = next(r.id for r in project.sentences() if r.text == "We slept.")
        project.edit_sentence(long_id, LONG)
        engine = BatchPoisonEngine(real_engine(), "Tea was hot.")
        result = render_project(project, engine, batch_size=4)
        failed = {r.text: r.reason for r in project.sentences() if r.state == "failed"}
        assert failed.keys() == {"Tea was hot.", LONG}
        assert failed["Tea was hot."] == "EngineError: the model fell over"
        assert failed[LONG].startswith("SentenceTooLong: sentence too long for the voice")
        assert (result.done, result.failed) == (8, 2)
        assert max(engine.batches) > 1, "sentences were not batched"
        assert 1 in engine.batches, "the failing batch was not retried sentence by sentence"


def test_engine_refuses_an_over_long_sentence_with_a_clear_message(tmp_path: Path) -> None:
    engine = real_engine()
    with pytest.raises(SentenceTooLong, match=r"sentence too long for the voice \(\d+ phoneme ids, the limit is 4000\)"):
        engine.synthesize(LONG, "en", SynthesisSettings())
    # the worst a sentence split at 500 characters gives (spelled-out numbers) still fits
    assert len(engine.text_to_ids(("1234567890 " * 50)[:500], "en")) < MAX_IDS_PER_SENTENCE

    # the one-at-a-time render path: that sentence fails with the reason, the rest render
    with Project.create(tmp_path / "p", make_book(), new_project_settings(get_voice(None))) as project:
        long_id = next(r.id for r in project.sentences() if r.text == "Birds sang.")
        project.edit_sentence(long_id, LONG)
        counting = CountingEngine(engine)
        result = render_project(project, counting, chapters={0})
        (row,) = [r for r in project.sentences([0]) if r.state != "done"]
        assert row.id == long_id and row.state == "failed" and "too long for the voice" in row.reason
        assert result.failed == 1 and result.done == 4
