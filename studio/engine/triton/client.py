"""The Triton engine: the voice's front end here, synthesis on Triton servers.

How a call runs: the id sequences are sorted by length and cut into requests of
``target.batch`` sentences (neighbours in length, so little padding), ids padded
to a multiple of :data:`PAD_TO` (Triton's dynamic batcher only merges requests of
the same shape, so buckets let several clients' requests share a batch). Up to
``target.in_flight`` requests are in flight at once, spread over the servers in
rotation (:mod:`.servers`). Each answer carries every item's own audio length, so
item ``i`` gets exactly its own audio, as with the local engine.

Failures, and why they are treated differently:

* the server refuses the request itself (bad input): no retry, the sentences fail
  with the server's reason;
* the server is unreachable (refused, reset, unavailable) or up without the model
  (a restarting server loads it after it starts answering): it leaves the rotation
  and the request goes to another server at once; while no server answers, the
  render *pauses* (a warning says so) and resumes when one is back, for up to
  ``target.outage_s``; after that its sentences fail, and later requests fail fast
  until a server answers a probe again;
* the server answered with an error or did not answer in ``timeout_s``: retried
  ``target.retries`` times (on the next server in rotation), then the sentences fail
  with the last reason.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import EngineError
from studio.core.lexicon import Lexicon
from studio.engine.base import Engine, SynthesisSettings
from studio.engine.triton.config import INPUT_IDS, INPUT_LENGTHS, INPUT_SCALES, OUTPUT_AUDIO, OUTPUT_LENGTHS
from studio.engine.triton.model import crop
from studio.core.triton_target import TritonTarget
from studio.engine.triton.servers import Rotation, Server
from studio.engine.voice.config import VoiceConfig
from studio.engine.voice.phonemize import PiperFrontEnd

log = logging.getLogger(__name__)

#: ids are padded to a multiple of this, so requests of similar length share a shape
PAD_TO = 16
#: tritonclient statuses (gRPC codes, HTTP statuses) that mean "the request itself is wrong"
REQUEST_FAULTS = ("StatusCode.INVALID_ARGUMENT", "400")
#: ... those that mean "the server is up but not serving the model (yet)": a restarting
#: server answers before its model is loaded; treated like an unreachable server
NOT_SERVING = ("NOT_FOUND", "unknown model", "no available versions", "is not ready", "not ready")
#: ... and those that mean "the server did not answer in time"
TIMEOUTS = ("DEADLINE_EXCEEDED", "timed out", "timeout", "Timeout")


class TritonUnavailable(EngineError):
    """No Triton server answered for the project's outage limit."""


class TritonEngine(Engine):
    """A Piper voice served by Triton (see the module docstring)."""

    name = "triton"

    def __init__(self, config_path: str | Path, target: TritonTarget, model: str) -> None:
        self.config_path = Path(config_path)
        self.target = target
        self.model = model
        self.config = VoiceConfig.from_file(self.config_path)
        self.front_end = PiperFrontEnd(self.config)
        self.rotation = Rotation(target)
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self.requests = 0
        self._loaded = False
        #: sentences per request: the target's, capped by the servers' max_batch_size on load
        self.batch = target.batch

    @property
    def sample_rate(self) -> int:
        return self.config.sample_rate

    def load(self) -> None:
        """Start the request threads and say which servers answer (none answering is
        not an error here: the render waits for them)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.target.in_flight, thread_name_prefix="triton")
            if self._loaded:
                return
            self._loaded = True
        statuses = [probe(s, self.model, timeout_s=min(5.0, self.target.timeout_s)) for s in self.rotation.servers]
        for st in statuses:
            (log.info if st.ready else log.warning)("Triton %s: %s", st.url, st.message)
            if st.max_batch:  # a request may not hold more than the server's batch
                self.batch = min(self.batch, st.max_batch)
        if statuses and all(st.live and not st.ready for st in statuses):
            # every server answers and none has the model: a wrong name, not an outage
            with self._lock:
                self._loaded = False
            raise EngineError(f"no Triton server has model {self.model!r}: "
                              + "; ".join(f"{st.url}: {st.message}" for st in statuses))

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        return self.front_end.text_to_ids(text, language, lexicon)

    def describe(self) -> str:
        return (f"Triton model {self.model} on {len(self.rotation.servers)} server(s) "
                f"({', '.join(self.target.servers)}): requests of up to {self.batch} sentences, "
                f"{self.target.in_flight} in flight, length-sorted")

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
            self._loaded = False
        if pool is not None:
            pool.shutdown(wait=True)
        for s in self.rotation.servers:
            s.drop_clients()

    def synthesize_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        if not ids:
            return []
        if settings.speaker_id not in (None, 0):
            raise EngineError("multi-speaker voices are not served by Triton yet")
        self.load()
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        chunks = [order[k: k + self.batch] for k in range(0, len(order), self.batch)]
        pool = self._pool
        if pool is None:
            raise EngineError("engine is closed")
        futures = [pool.submit(self._request, [ids[i] for i in chunk], settings) for chunk in chunks]
        out: list[np.ndarray | None] = [None] * len(ids)
        for chunk, fut in zip(chunks, futures):
            for i, audio in zip(chunk, fut.result()):
                out[i] = audio
        return [a if a is not None else np.zeros(0, np.float32) for a in out]

    # -------------------------------------------------------------- one request

    def _inputs(self, batch: Sequence[Sequence[int]], settings: SynthesisSettings) -> dict[str, np.ndarray]:
        lengths = np.array([[len(s)] for s in batch], dtype=np.int64)
        width = max(PAD_TO, -(-int(lengths.max()) // PAD_TO) * PAD_TO)
        pad_id = self.config.phoneme_id_map["_"][0]
        padded = np.full((len(batch), width), pad_id, dtype=np.int64)
        for row, seq in enumerate(batch):
            padded[row, : len(seq)] = np.asarray(seq, dtype=np.int64)
        scales = np.tile(np.array([settings.noise_scale, settings.length_scale, settings.noise_w], np.float32),
                         (len(batch), 1))
        return {INPUT_IDS: padded, INPUT_LENGTHS: lengths, INPUT_SCALES: scales}

    def _request(self, batch: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        empty = [i for i, s in enumerate(batch) if len(s) == 0]
        if empty:
            raise EngineError("an empty id sequence cannot be synthesized")
        feeds = self._inputs(batch, settings)
        tries = 0
        paused_at: float | None = None
        while True:
            server = self.rotation.pick()
            if server is None:
                paused_at = self._wait_for_a_server(paused_at, len(batch))
                continue
            try:
                audio, lengths = infer(server, self.model, feeds, self.target.timeout_s)
            except Exception as exc:
                text = _reason(exc)
                not_serving = any(code in text for code in NOT_SERVING)
                if not not_serving and _status(exc) in REQUEST_FAULTS:
                    raise EngineError(f"Triton server {server.url} refused the request: {text}") from exc
                answered = _answered(exc) and not not_serving
                timed_out = any(t in text for t in TIMEOUTS)
                if not answered or timed_out:  # no answer: the other servers take over
                    self.rotation.take_out(server, text)
                if answered or timed_out:
                    tries += 1
                    if tries > self.target.retries:
                        raise EngineError(f"Triton request failed after {tries} tries: {text}") from exc
                    log.info("Triton server %s: %s; retrying (%d of %d)", server.url, text, tries, self.target.retries)
                continue
            self.rotation.answered(server)
            outage = self.rotation.resume()
            if outage is not None:
                log.warning("render resumed on Triton server %s after %.0f s", server.url, outage)
            self.requests += 1
            return crop(audio, lengths)

    def _wait_for_a_server(self, paused_at: float | None, n: int) -> float:
        """Every server is out: wait for the next probe, up to the outage limit."""
        now = time.monotonic()
        if paused_at is None:
            paused_at = now
            if self.rotation.pause() and not self.rotation.gave_up:  # said once per outage
                log.warning("render paused: no Triton server answers (%s); waiting up to %.0f s for one to "
                            "come back", self.rotation.reasons(), self.target.outage_s)
        limit = 0.0 if self.rotation.gave_up else self.target.outage_s
        if now - paused_at >= limit:
            self.rotation.gave_up = True
            raise TritonUnavailable(
                f"no Triton server answered for {now - paused_at:.0f} s ({self.rotation.reasons()}); "
                f"{n} sentence(s) not rendered -- start a server and render again")
        time.sleep(max(0.05, min(self.rotation.next_probe_in(), limit - (now - paused_at), 1.0)))
        return paused_at


# ------------------------------------------------------------------ protocol


def infer(server: Server, model: str, feeds: dict[str, np.ndarray], timeout_s: float) -> tuple[np.ndarray, np.ndarray]:
    """One inference request; returns (padded audio, audio lengths)."""
    client = server.client()
    if server.protocol == "grpc":
        import tritonclient.grpc as tc
    else:
        import tritonclient.http as tc  # type: ignore[no-redef]
    inputs = []
    for name, arr in feeds.items():
        inp = tc.InferInput(name, list(arr.shape), "INT64" if arr.dtype == np.int64 else "FP32")
        inp.set_data_from_numpy(arr)
        inputs.append(inp)
    outputs = [tc.InferRequestedOutput(OUTPUT_AUDIO), tc.InferRequestedOutput(OUTPUT_LENGTHS)]
    if server.protocol == "grpc":
        result = client.infer(model, inputs, outputs=outputs, client_timeout=timeout_s)
    else:
        result = client.infer(model, inputs, outputs=outputs)
    audio, lengths = result.as_numpy(OUTPUT_AUDIO), result.as_numpy(OUTPUT_LENGTHS)
    if audio is None or lengths is None:
        raise EngineError(f"Triton server {server.url} sent no audio for model {model}")
    return audio, lengths


class Status:
    """What a probe found: ``ready`` (the model answers), a sentence for people, and the
    model's ``max_batch_size`` on that server (0: unknown)."""

    def __init__(self, url: str, ready: bool, message: str, max_batch: int = 0, live: bool = False) -> None:
        self.url, self.ready, self.message, self.max_batch = url, ready, message, max_batch
        self.live = live or ready

    def __repr__(self) -> str:
        return f"Status({self.url!r}, ready={self.ready}, {self.message!r})"


def probe(server: Server, model: str, timeout_s: float = 5.0) -> Status:
    """Is the server live, and is ``model`` ready on it? (the settings' connection test)"""
    try:
        client = server.client()
        kwargs: dict[str, Any] = {"client_timeout": timeout_s} if server.protocol == "grpc" else {}
        if not client.is_server_live(**kwargs):
            return Status(server.url, False, "server is up but not live")
        if not client.is_model_ready(model, **kwargs):
            return Status(server.url, False, f"server answers, but model {model!r} is not ready there", live=True)
        config = client.get_model_config(model, **kwargs) if server.protocol == "http" else \
            client.get_model_config(model, as_json=True, **kwargs)
        config = config.get("config", config)
        max_batch = int(config.get("max_batch_size", 0) or config.get("maxBatchSize", 0) or 0)
        return Status(server.url, True, f"model {model!r} is ready (max batch size {max_batch})", max_batch)
    except Exception as exc:  # noqa: BLE001 - the reason is the answer
        server.drop_clients()
        return Status(server.url, False, f"not reachable: {_reason(exc)}")


def check_servers(target: TritonTarget, model: str, timeout_s: float = 5.0) -> list[Status]:
    """One :func:`probe` per server of ``target``."""
    return [probe(s, model, timeout_s) for s in Rotation(target).servers]


def _status(exc: BaseException) -> str:
    """The gRPC code or HTTP status tritonclient gave, "" for other errors.

    Read from the exception, never from its text: a text holds the server's address, and a
    port such as 40079 would read as an HTTP 400.
    """
    status = getattr(exc, "status", None)
    code = status() if callable(status) else None
    return str(code) if code else ""


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    code = _status(exc)
    if code and code not in text:
        text = f"[{code}] {text}"
    return text[:300]


def _answered(exc: BaseException) -> bool:
    """Whether the server itself answered with an error (vs. no answer at all)."""
    code = _status(exc)
    if not code or "UNAVAILABLE" in code or "CANCELLED" in code or "DEADLINE" in code:
        return False
    return code.isdigit() or code.startswith("StatusCode.")
