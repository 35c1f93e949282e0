"""IsolatedEngine with the real bundled voice in real child processes: crashes cost
one sentence (or nothing, after one retry), never the parent; children are recycled
and never left behind."""

from __future__ import annotations

import os
import pickle
import signal
import threading
import time
from dataclasses import replace

import numpy as np
import psutil
import pytest

from studio.core.errors import EngineError
from studio.engine.presets import open_preset
from studio.engine.voice.catalog import get_voice
from studio.stack.build import engine_spec, plan_engine
from studio.stack.isolation.child import FAULT_ENV
from studio.stack.isolation.engine import IsolatedEngine
from studio.stack.isolation.reports import ChildMemory, InferenceCrashed

pytestmark = pytest.mark.timeout(120)

# noise 0: deterministic audio, so "correct" means bit-identical to a direct render
from support.voice import DETERMINISTIC as QUIET
SPEC = engine_spec(plan_engine("fp32-cpu", streams=1))

SENTENCES = [
    "The rain had stopped by the time the last train pulled into the station.",
    "She folded the letter twice and slipped it into the pocket of her coat.",
    "Nobody in the village remembered who had planted the old oak by the river.",
    "The kettle whistled on the stove while the cat watched from the windowsill.",
    "For a moment the house was perfectly quiet, and then the clock struck nine.",
    "They argued about the map until the sun slipped behind the mountains.",
]
POISON = "kettle"  # the fault switch's substring: only SENTENCES[3] contains it


@pytest.fixture(scope="module")
def direct():
    """The same voice in this process: the reference for every comparison."""
    engine = open_preset("fp32-cpu", get_voice(None), threads=1)
    engine.load()
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def ids(direct):
    return [direct.text_to_ids(s, "en") for s in SENTENCES]


def _reference(direct, ids_list):
    """One item at a time: exact output length by construction."""
    return [direct.synthesize_batch([seq], QUIET)[0] for seq in ids_list]


def _assert_same(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert isinstance(a, np.ndarray) and a.dtype == np.float32
        assert a.shape == e.shape
        np.testing.assert_array_equal(a, e)


def _children_of_us() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


def _wait_busy(pid: int, timeout: float = 30.0) -> None:
    """Block until the child has burned CPU since now (i.e. it is synthesizing)."""
    proc = psutil.Process(pid)
    start = sum(proc.cpu_times()[:2])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sum(proc.cpu_times()[:2]) - start > 0.15:
            return
        time.sleep(0.01)
    raise AssertionError("the model process never got busy")


def test_front_end_and_audio_match_in_process_engine_fault_switch_off(direct, ids):
    with IsolatedEngine(SPEC) as engine:
        assert engine.sample_rate == direct.sample_rate
        assert engine.name == direct.name
        assert [engine.text_to_ids(s, "en") for s in SENTENCES] == ids
        _assert_same(engine.synthesize_batch(ids[:1], QUIET), _reference(direct, ids[:1]))
        mem = engine.memory
        assert isinstance(mem, ChildMemory)
        assert mem.pid == engine.child_pid != os.getpid()
        # a fresh interpreter started the way Windows and macOS start one (spawn): the engine's
        # spec reached it pickled, nothing else was inherited (tests/house/test_portable.py)
        assert "spawn_main" in " ".join(psutil.Process(engine.child_pid).cmdline())
        assert mem.rss_bytes > 50 * 2**20 and mem.sentences == 1
        assert mem.cuda_allocated_bytes is None  # CPU run
        now = engine.memory_now()
        assert now is not None and now.rss_bytes > 0

        # the fault switch is off unless set: the "poisonous" sentence is fine here
        assert FAULT_ENV not in os.environ
        _assert_same(engine.synthesize_each([ids[3]], QUIET), _reference(direct, [ids[3]]))
        assert engine.restarts == 0 and engine.stats().crashes == 0


def test_sigkill_mid_batch_restarts_and_retries_once(direct, ids):
    """(a) + (d): kill the busy child; the call still returns the right audio."""
    events = []
    engine = IsolatedEngine(SPEC, on_event=events.append)
    try:
        engine.load()
        first_pid = engine.child_pid
        batch = ids[:5]
        outcome: dict[str, object] = {}

        def render():
            try:
                outcome["audio"] = engine.synthesize_batch(batch, QUIET)
            except BaseException as exc:  # pragma: no cover - reported below
                outcome["error"] = exc

        worker = threading.Thread(target=render)
        worker.start()
        _wait_busy(first_pid)
        os.kill(first_pid, signal.SIGKILL)
        killed_at = time.monotonic()
        worker.join(60)
        assert not worker.is_alive()
        assert "error" not in outcome, outcome.get("error")

        # the same items rendered without any crash, as one batch in the same kind of child
        expected = direct.synthesize_batch(batch, QUIET)
        _assert_same(outcome["audio"], expected)
        assert engine.restarts == 1
        assert engine.child_pid not in (None, first_pid)
        assert not psutil.pid_exists(first_pid) or psutil.Process(first_pid).status() == psutil.STATUS_ZOMBIE

        crashed = [e for e in events if e.kind == "crashed"]
        started = [e for e in events if e.kind == "started"]
        assert len(crashed) == 1 and "SIGKILL" in crashed[0].reason
        detect_s = crashed[0].at - killed_at
        restart_s = started[-1].duration_s
        print(f"\n[isolation] death noticed {detect_s * 1000:.1f} ms after SIGKILL; "
              f"new model process ready in {restart_s:.2f} s")
        assert detect_s < 5.0  # poll step is 0.1 s; the real number is printed above
        assert started[-1].at - killed_at < 60
    finally:
        engine.close()


def test_fault_switch_fails_only_the_poisonous_sentence(direct, ids):
    """(b): crash for real (SIGSEGV) on one sentence of six; the others are exact."""
    spec = replace(SPEC, env=((FAULT_ENV, POISON),))
    parent_children_before = _children_of_us()
    with IsolatedEngine(spec) as engine:
        results = engine.synthesize_each([engine.text_to_ids(s, "en") for s in SENTENCES], QUIET)

        assert len(results) == len(SENTENCES)
        bad = [i for i, r in enumerate(results) if isinstance(r, InferenceCrashed)]
        assert bad == [3]
        err = results[3]
        assert err.reason == "model process killed by SIGSEGV"
        assert err.signal_name == "SIGSEGV" and err.exitcode == -signal.SIGSEGV
        assert isinstance(err, EngineError)
        clone = pickle.loads(pickle.dumps(err))
        assert type(clone) is InferenceCrashed and clone.reason == err.reason

        good = [i for i in range(len(SENTENCES)) if i != 3]
        _assert_same([results[i] for i in good], _reference(direct, [ids[i] for i in good]))

        # the batch died twice (one retry), then the poisonous item alone twice
        crashed = [e for e in engine.events if e.kind == "crashed"]
        assert [e.reason for e in crashed] == ["model process killed by SIGSEGV"] * 4
        assert engine.stats().crashes == 4

        # the parent is unaffected and the engine keeps working
        _assert_same(engine.synthesize_batch([ids[0]], QUIET), _reference(direct, [ids[0]]))
    assert _children_of_us() <= parent_children_before


def test_recycle_after_n_sentences_and_on_demand(direct, ids):
    """(c): a new child after 3 sentences; the audio does not change."""
    with IsolatedEngine(SPEC, recycle_after=3) as engine:
        expected = _reference(direct, ids)
        pids = []
        out = []
        for seq in ids[:4]:
            out.extend(engine.synthesize_batch([seq], QUIET))
            pids.append(engine.child_pid)
        assert pids[0] == pids[1] == pids[2] != pids[3]
        assert not psutil.pid_exists(pids[0]) or psutil.Process(pids[0]).status() == psutil.STATUS_ZOMBIE
        _assert_same(out, expected[:4])
        assert engine.memory.sentences == 1  # the fresh child has served one

        before = engine.child_pid
        engine.recycle()
        assert engine.child_pid != before
        _assert_same(engine.synthesize_batch([ids[4]], QUIET), expected[4:5])
        stats = engine.stats()
        assert stats.recycles == 2 and stats.restarts == 0 and stats.crashes == 0
        assert stats.sentences == 5


def test_closed_engine_leaves_no_child_process(ids):
    """(e): close() reaps the child, whether idle or in the middle of a batch."""
    engine = IsolatedEngine(SPEC)
    engine.load()
    pid = engine.child_pid
    assert pid in _children_of_us()
    engine.close()
    engine.close()  # idempotent
    assert pid not in _children_of_us()
    assert not psutil.pid_exists(pid)
    with pytest.raises(EngineError):
        engine.synthesize_batch(ids[:1], QUIET)

    # closing from another thread while a batch runs: the batch fails, nothing restarts
    engine = IsolatedEngine(SPEC)
    engine.load()
    pid = engine.child_pid
    outcome: dict[str, object] = {}

    def render():
        try:
            engine.synthesize_batch(ids, QUIET)
        except EngineError as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=render)
    worker.start()
    _wait_busy(pid)
    engine.close()
    worker.join(30)
    assert isinstance(outcome.get("error"), EngineError)
    assert not isinstance(outcome["error"], InferenceCrashed)
    assert engine.restarts == 0 and engine.child_pid is None
    assert not _children_of_us() & {pid}
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_engine_that_cannot_load_is_a_readable_error():
    engine = IsolatedEngine(engine_spec(plan_engine("fp32-cpu", streams=1, options=(("no_such_option", 1),))))
    with pytest.raises(EngineError, match="could not be started.*no_such_option"):
        engine.load()
    engine.close()


def test_hung_child_counts_as_dead_after_timeout(direct, ids):
    """A child that stops answering (here: SIGSTOP) is killed after ``timeout_s``."""
    with IsolatedEngine(SPEC, timeout_s=5.0) as engine:
        engine.load()
        stuck = engine.child_pid
        os.kill(stuck, signal.SIGSTOP)
        _assert_same(engine.synthesize_batch(ids[:1], QUIET), _reference(direct, ids[:1]))
        assert engine.restarts == 1 and engine.child_pid != stuck
        crashed = [e for e in engine.events if e.kind == "crashed"]
        assert crashed[0].reason == "model process did not answer within 5 s"
        assert not psutil.pid_exists(stuck)
