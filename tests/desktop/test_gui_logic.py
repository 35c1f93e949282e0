"""The GUI's thread-facing logic without widgets: queue, player, play lists, rates, bench file."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import support.gui  # noqa: F401 - binding guard
from studio.audio.assemble import Pauses
from studio.desktop.facts import parse_bench, read_bench
from studio.desktop.jobqueue import JobQueue
from studio.desktop.messages import JobSpec, PreviewRequest
from studio.desktop.monitor import RenderStats
from studio.desktop.playback import PlayList, Player, Segment
from studio.project.direction import Direction
from studio.desktop.preview import build_playlist
from studio.desktop.scrub import FADE_S, GRAIN_S, Grain, cut_grain, grain_key, parse_grain_key
from studio.desktop.sinks import AudioUnavailable, NullSink, SoundDeviceSink, output_device_problem
from studio.desktop.snapshot import SentenceNode

RATE = 8000


def wait_for(cond, timeout: float = 10.0) -> None:  # noqa: ANN001
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not met in time"
        time.sleep(0.01)


# ------------------------------------------------------------------ queue


def test_queue_order_pause_cancel_and_reorder() -> None:
    q = JobQueue()
    a = q.submit(JobSpec("chapters", "A", (0,), sentences_hint=10))
    b = q.submit(JobSpec("chapters", "B", (1,), sentences_hint=20))
    c = q.submit(JobSpec("chapters", "C", (2,), sentences_hint=30))
    assert q.move(c, -1) and [j.spec.label for j in q.snapshot().jobs] == ["A", "C", "B"]
    assert not q.move(a, -1)  # already first
    q.pause()
    assert q.next_job() is None  # paused: nothing starts
    q.resume()
    running = q.next_job()
    assert running is not None and running.spec.label == "A" and q.control(a) == "run"
    assert not q.move(a, 1)  # the running job stays where it is
    q.pause()
    assert q.control(a) == "pause" and q.snapshot().jobs[0].status == "pausing"  # sentence in flight
    q.hold(a)  # the worker finished it and waits
    assert q.snapshot().jobs[0].status == "paused"
    q.hold(None)
    q.resume()
    assert q.cancel(b) and q.snapshot().job(b).status == "cancelled"
    assert q.cancel(a) and q.control(a) == "stop"  # running: stops after its sentence
    assert q.finish(a, "done").status == "cancelled"
    nxt = q.next_job()
    assert nxt is not None and nxt.spec.label == "C"


def test_queue_overall_eta_adds_waiting_jobs() -> None:
    q = JobQueue()
    a = q.submit(JobSpec("chapters", "A", (0,), sentences_hint=4))
    q.submit(JobSpec("chapters", "B", (1,), sentences_hint=10))
    q.next_job()
    q.update(a, done=2, total=4, eta=3.0)
    snap = q.snapshot(seconds_per_sentence=0.5)
    assert snap.overall_done == 2 and snap.overall_total == 14
    assert snap.overall_eta == pytest.approx(3.0 + 10 * 0.5)
    assert q.snapshot(None).overall_eta is None  # waiting work, no measurement yet


def test_preview_slot_keeps_only_the_latest_request() -> None:
    q = JobQueue()
    q.set_preview(PreviewRequest(1, ()))
    q.set_preview(PreviewRequest(2, ()))
    assert q.take_preview().request_id == 2 and q.take_preview() is None
    assert q.preview_wanted(2) and not q.preview_wanted(1)


# ------------------------------------------------------------------ player


def _tone(seconds: float, value: float) -> np.ndarray:
    return np.full(int(seconds * RATE), value, np.float32)


def make_player(cache: dict[str, np.ndarray], speed: float = 4.0) -> Player:
    return Player(lambda key: (cache[key], RATE) if key in cache else None, lambda: NullSink(speed=speed), rate=RATE)


def test_player_plays_cached_sentences_in_order_and_reports_each() -> None:
    cache = {"k1": _tone(0.3, 0.1), "k2": _tone(0.3, 0.2)}
    player = make_player(cache)
    heard: list[int | None] = []
    assert player.play(PlayList(1, (Segment((11,), cache_key="k1"), Segment((12,), cache_key="k2")), "two"))
    while player.position().state not in ("finished",):
        pos = player.position()
        if pos.state == "playing" and (not heard or heard[-1] != pos.sentence_id):
            heard.append(pos.sentence_id)
        time.sleep(0.005)
    player.close()
    assert heard == [11, 12]


def test_latest_request_wins_and_stale_chunks_are_refused() -> None:
    cache = {"long": _tone(5.0, 0.1), "short": _tone(0.2, 0.3)}
    player = make_player(cache, speed=1.0)
    player.play(PlayList(1, (Segment((1,), cache_key="long"),), "first"))
    wait_for(lambda: player.position().state == "playing")
    # a streamed passage for request 2 ...
    player.play(PlayList(2, (Segment((2, 3), passage=0, offsets=(0, 10)), Segment((4,), cache_key="short")), "second"))
    assert not player.deliver(1, 0, _tone(0.1, 0.5), RATE, (0, 5), True)  # request 1 is gone
    assert player.wants_more(2) and not player.wants_more(1)
    assert player.deliver(2, 0, _tone(0.4, 0.2), RATE, (0, 20), True)  # covers sentences 2 and 3
    seen = []
    while player.position().state != "finished":
        pos = player.position()
        assert pos.request_id == 2
        if pos.state == "playing" and (not seen or seen[-1] != pos.sentence_id):
            seen.append(pos.sentence_id)
        time.sleep(0.002)
    player.close()
    assert seen == [2, 3, 4] and 1 not in seen


def test_pause_holds_the_position() -> None:
    player = make_player({"k": _tone(2.0, 0.1)}, speed=1.0)
    player.play(PlayList(1, (Segment((1,), cache_key="k"),)))
    wait_for(lambda: player.position().played_s > 0.1)
    assert player.toggle() is True
    held = player.position().played_s
    time.sleep(0.3)
    assert player.position().state == "paused" and player.position().played_s == pytest.approx(held, abs=0.05)
    player.resume()
    wait_for(lambda: player.position().played_s > held + 0.1)
    player.close()


def test_failed_passage_is_skipped_with_its_reason() -> None:
    player = make_player({"k": _tone(0.2, 0.1)})
    player.play(PlayList(1, (Segment((1,), passage=0), Segment((2,), cache_key="k"))))
    player.fail(1, 0, "the voice could not say it")
    wait_for(lambda: player.position().state == "finished")
    assert "could not say it" in player.position().message
    player.close()


def test_no_output_device_gives_a_clear_reason() -> None:
    problem = output_device_problem()
    if problem is None:
        pytest.skip("this machine has an audio output device")
    assert problem.startswith("No sound output") and "querying device" not in problem  # a producer's words
    with pytest.raises(AudioUnavailable, match="No sound output"):
        SoundDeviceSink().start(22050, lambda n: np.zeros(n, np.float32))
    player = Player(lambda key: None, SoundDeviceSink)
    assert player.play(PlayList(1, (Segment((1,), cache_key="x"),))) is False
    assert player.position().state == "error" and "No sound output" in (player.problem or "")


def test_playlist_groups_unrendered_runs_by_paragraph_and_language() -> None:
    def node(i: int, para: int, lang: str = "en", done: bool = False) -> SentenceNode:
        key = f"{i:064x}"
        return SentenceNode(i, 0, para, i, f"Sentence {i}.", lang, False, "done" if done else "pending", None,
                            key if done else None, key, 1.0 if done else None, int(done))

    nodes = [node(1, 0, done=True), node(2, 0), node(3, 0), node(4, 1), node(5, 1, "fr"), node(6, 1, done=True)]
    playlist, passages = build_playlist(7, nodes, lambda lang: f"voice-{lang}", Pauses(0.1, 0.5, 1.0))
    kinds = [(s.sentence_ids, s.cache_key is not None) for s in playlist.segments]
    assert kinds == [((1,), True), ((2, 3), False), ((4,), False), ((5,), False), ((6,), True)]
    assert [p.text for p in passages] == ["Sentence 2. Sentence 3.", "Sentence 4.", "Sentence 5."]
    assert [p.voice_id for p in passages] == ["voice-en", "voice-en", "voice-fr"]
    assert playlist.segments[1].offsets == (0, 12)
    assert [s.pause_after for s in playlist.segments] == [0.1, 0.5, 0.1, 0.1, 0.0]


def test_playlist_speaks_each_run_at_its_own_rate_with_the_producers_pauses() -> None:
    """A preview sounds like the export: a directed rate is its own passage (spoken at that
    rate), a pause after one sentence replaces the project's, a pause before is added."""
    def node(i: int, rate: float | None = None, after: float | None = None, before: float | None = None) -> SentenceNode:
        return SentenceNode(i, 0, 0, i, f"Sentence {i}.", "en", False, "pending", None, None, f"{i:064x}", None, 0,
                            pause_after=after, direction=Direction(rate, before))

    nodes = [node(1), node(2), node(3, rate=0.8), node(4, rate=0.8), node(5, after=1.5), node(6, before=0.4), node(7)]
    playlist, passages = build_playlist(1, nodes, lambda lang: "voice", Pauses(0.1, 0.5, 1.0))
    assert [s.sentence_ids for s in playlist.segments] == [(1, 2), (3, 4), (5,), (6, 7)]
    assert [p.rate for p in passages] == [None, 0.8, None, None]
    assert [s.pause_after for s in playlist.segments] == [0.1, 0.1, pytest.approx(1.9), 0.0]


def test_a_scrub_grain_is_the_cached_audio_at_that_time_faded_at_its_ends() -> None:
    rate = 22050
    audio = np.linspace(-0.5, 0.5, rate, dtype=np.float32)  # one second
    grain = Grain("ab" * 32, 1 / 3)
    assert parse_grain_key(grain_key(grain)) == grain and parse_grain_key("ab" * 32) is None
    out = cut_grain(audio, rate, grain.offset_s)
    start, fade = round(rate / 3), int(FADE_S * rate)
    assert out.size == round(GRAIN_S * rate)
    assert np.array_equal(out[fade:-fade], audio[start + fade:start + out.size - fade])  # untouched between fades
    assert abs(out[0]) < 1e-6 and abs(out[-1]) < abs(audio[start + out.size - 1]) * 0.01  # no click at the cuts
    assert cut_grain(audio, rate, 0.99).size == rate - round(0.99 * rate)  # clipped at the end


# ------------------------------------------------------------------ rates and bench


def test_render_stats_rates_over_the_window() -> None:
    stats = RenderStats(window=30)
    stats.set_rendering(True)
    stats.record(audio_s=4.0, synth_s=1.0, sentences=2)
    stats.record(audio_s=2.0, synth_s=1.0, sentences=1)
    speed, _sps = stats.rates()
    assert speed == pytest.approx(3.0) and stats.seconds_per_sentence() == pytest.approx(2 / 3)
    later = time.monotonic() + 60
    assert stats.rates(later) == (0.0, 0.0)  # nothing in the window any more


def test_bench_file_shapes_and_lookup_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    figures = parse_bench({"presets": {"fp32-cpu": {"rtf": 0.1, "mel_correlation": 0.999}}})
    assert figures["fp32-cpu"].x_real_time == pytest.approx(10.0) and "mel corr. 0.999" in figures["fp32-cpu"].summary()
    listed = parse_bench({"results": [{"preset": "int8-cpu", "x_real_time": 14.2, "noise_floor_dbfs": -80}]})
    assert listed["int8-cpu"].rtf == pytest.approx(1 / 14.2)
    with pytest.raises(ValueError):
        parse_bench({"nothing": 1})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("STUDIO_CACHE_DIR", raising=False)
    assert read_bench(tmp_path / "project")[0] == {}
    (tmp_path / "cache" / "studio").mkdir(parents=True)
    (tmp_path / "cache" / "studio" / "bench.json").write_text(json.dumps({"presets": {"fp32-cpu": {"rtf": 0.2}}}))
    assert read_bench(tmp_path / "project")[0]["fp32-cpu"].x_real_time == pytest.approx(5.0)
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "bench.json").write_text("{broken")
    figures, path, note = read_bench(tmp_path / "project")
    assert figures == {} and path.endswith("project/bench.json") and "unreadable" in note


def test_binding_guard_survives_many_void_calls() -> None:
    from PySide6.QtCore import QObject

    probe = QObject()
    for _ in range(20000):  # would abort the interpreter on PySide6 6.12.0 / Python 3.11 unguarded
        probe.setObjectName("x")
    assert sys.getrefcount(None) > 1000
