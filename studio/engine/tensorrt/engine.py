"""The ``tensorrt-int8`` preset: the VITS voice as a TensorRT engine on an NVIDIA GPU.

Pipeline (all on the user's machine, cached):

1. **Export** the torch VITS (:mod:`studio.engine.torchvits.export`) to ONNX: by
   default the ``flow_decoder`` graph (reverse flow + HiFi-GAN, ~90% of the FLOPs,
   shapes a plain function of the input's), with the text encoder and duration
   predictor kept in torch, FP32, on the same GPU. The ``full`` graph (data-dependent
   output shapes, a known TensorRT failure) is built only when asked for
   (``variants=("full", "flow_decoder")``).
2. **Calibrate** with real sentences (:mod:`studio.engine.calibration`: the built-in
   set, plus the project's sentences, plus ``$CALIBRATION_DATA_PATH``),
   run through the voice's own front end and batched at the profile's *opt* shape.
3. **Build** (:mod:`studio.engine.tensorrt.build`) with an optimization profile from the
   sentence-length distribution and a precision policy that keeps what decides the
   durations FP32 and what writes the waveform at most FP16: implicit INT8 (flags +
   calibrator) on TensorRT <= 10, explicit Q/DQ on TensorRT >= 11.
4. **Cache** (:mod:`studio.engine.tensorrt.cache`) the serialized engine under
   ``$STUDIO_CACHE_DIR/tensorrt/<sha256>.plan``, keyed by everything it depends on.
5. **Run** (:mod:`studio.engine.tensorrt.runtime`) with torch CUDA tensors as every
   input/output buffer. An item longer than the profile allows runs on torch FP32;
   how many did is counted (``stats``) and said in :meth:`TensorRTEngine.describe`.

Import those modules' names from where they are defined; this module keeps the engine.

``tensorrt`` is imported lazily inside; importing this module needs neither
TensorRT nor CUDA, and everything that does not talk to TensorRT (cache key,
profile shapes, precision policy, calibration feeding, fallback and cache logic)
is plain Python.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from studio.core import paths
from studio.core.errors import EngineError
from studio.core.lexicon import Lexicon
from studio.engine.base import Engine, PendingBuild, SynthesisSettings
from studio.engine.calibration import (
    CALIBRATION_DATA_ENV,
    gather_calibration_sentences,
    sentences_to_ids,
    spread_by_length,
)
from studio.engine.tensorrt.build import (
    DEFAULT_BATCH,
    DEFAULT_VARIANTS,
    VARIANT_ORDER,
    BuildInfo,
    build_plan,
    calibration_feeder,
    encoder_latents,
    first_that_builds,
    int8_mode,
    make_profile,
)
from studio.engine.tensorrt.cache import (
    PRECISIONS,
    engine_cache_key,
    engine_cache_path,
    exported_onnx,
    exported_onnx_path,
    ids_digest,
    load_or_build,
    raise_if_failed_before,
    remember_failure,
    timing_cache_path,
)
from studio.engine.tensorrt.profile import ShapeProfile, make_batches
from studio.engine.tensorrt.runtime import TrtRunner, gpu_token, require_tensorrt_and_cuda, tensorrt_version
from studio.engine.waveform import limited

_LOGGER = logging.getLogger(__name__)


def _scales(settings: SynthesisSettings) -> tuple[float, float, float]:
    """The ``(noise_scale, length_scale, noise_w)`` order every VITS graph takes them in."""
    return (settings.noise_scale, settings.length_scale, settings.noise_w)


class TensorRTEngine(Engine):
    """A Piper voice as a TensorRT engine (INT8 + FP16 by default) on CUDA.

    ``voice``: a VoiceInfo (Piper) or a Piper ``.onnx`` path. ``precision``:
    ``int8`` (default), ``fp16`` or ``fp32``. ``calibration_sentences``: the
    project's sentences (``$CALIBRATION_DATA_PATH`` wins, the built-in set is the
    last resort). ``variants``: graphs to try in order. ``language``: the language
    passed to the front end for calibration sentences (default: the voice's).
    """

    name = "tensorrt"

    def __init__(
        self,
        voice,
        *,
        device: str = "cuda",
        precision: str = "int8",
        calibration_sentences: Sequence[str] | None = None,
        cache_dir: str | Path | None = None,
        variants: Sequence[str] = DEFAULT_VARIANTS,
        batch_profile: ShapeProfile = DEFAULT_BATCH,
        max_calibration_sentences: int = 64,
        calibration_batch: int | None = None,
        language: str | None = None,
        workspace_gib: float = 4.0,
        threads: int | None = None,
    ) -> None:
        if precision not in PRECISIONS:
            raise EngineError(f"unknown TensorRT precision {precision!r}; choose one of {PRECISIONS}")
        if not str(device).startswith("cuda"):
            raise EngineError("TensorRT runs on CUDA devices only")
        bad = [v for v in variants if v not in VARIANT_ORDER]
        if bad or not variants:
            raise EngineError(f"unknown TensorRT graph variant(s) {bad}; choose from {VARIANT_ORDER}")
        from studio.engine.torchvits.engine import TorchVitsEngine

        # fp32 torch model: front end, export source, and the encoder half of flow_decoder
        self.torch_engine = TorchVitsEngine(voice, device=str(device), dtype="float32", threads=threads)
        self.device = str(device)
        self.precision = precision
        self.variants = tuple(variants)
        self.batch_profile = batch_profile
        self.cache_dir = Path(cache_dir) if cache_dir is not None else paths.cache_dir()
        self._calibration_input = list(calibration_sentences) if calibration_sentences else None
        self.max_calibration_sentences = max_calibration_sentences
        self.calibration_batch = calibration_batch
        self.language = language or self.torch_engine.config.language_family or "en"
        self.workspace_bytes = int(workspace_gib * (1 << 30))
        self.build_info: BuildInfo | None = None
        #: ``torch_fallback_items``: items longer than the profile, spoken by torch FP32
        self.stats = {"batches": 0, "items": 0, "torch_fallback_items": 0}
        #: device memory TensorRT reserved for activations (None until loaded)
        self.activation_bytes: int | None = None
        self._runner: TrtRunner | None = None
        self._lock = threading.RLock()

    # ------------------------------------------------------------- interface

    @property
    def sample_rate(self) -> int:
        return self.torch_engine.sample_rate

    @property
    def default_settings(self) -> SynthesisSettings:
        return self.torch_engine.default_settings

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        return self.torch_engine.text_to_ids(text, language, lexicon)

    def load(self) -> None:
        with self._lock:
            if self._runner is not None:
                return
            trt, torch = require_tensorrt_and_cuda()
            self.torch_engine.load()
            self._runner = self._prepare(trt, torch)
            self.activation_bytes = self._runner.activation_bytes

    def pending_build(self) -> PendingBuild | None:
        """Export and engine build, when this voice's graph was never exported here or no engine is cached.

        A cheap look, not the full cache key (that needs the model on the GPU for the
        profile): a build for another profile of an exported voice is not announced.
        """
        if self._runner is not None:
            return None
        import torch

        from studio.core.files import sha256_file

        export = exported_onnx_path(self.cache_dir, self.variants[0], sha256_file(self.torch_engine.model_path),
                                    torch.__version__)
        if export.is_file() and any((self.cache_dir / "tensorrt").glob("*.plan")):
            return None
        return PendingBuild("the TensorRT engine for this GPU (export, calibration, kernel tuning)",
                            "a few minutes")

    def synthesize_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        if not ids:
            return []
        self.load()
        assert self.build_info is not None
        results: list[np.ndarray | None] = [None] * len(ids)
        prof = self.build_info.profile
        fits, too_long = [], []
        for i, seq in enumerate(ids):
            if len(seq) == 0:
                results[i] = np.zeros(0, dtype=np.float32)
            elif self.build_info.variant == "full" and len(seq) > prof.phonemes.max:
                too_long.append(i)
            else:
                fits.append(i)
        step = prof.batch.max
        for start in range(0, len(fits), step):
            chunk = fits[start : start + step]
            for i, audio in zip(chunk, self._run([ids[i] for i in chunk], settings)):
                results[i] = audio
        if too_long:  # longer than the profile allows: the torch engine speaks them
            self.stats["torch_fallback_items"] += len(too_long)
            for i, audio in zip(too_long, self.torch_engine.synthesize_batch([ids[i] for i in too_long], settings)):
                results[i] = audio
        self.stats["items"] += len(ids)
        return [r for r in results if r is not None]

    def close(self) -> None:
        with self._lock:
            if self._runner is not None:
                self._runner.close()
                self._runner = None
            self.torch_engine.close()
            from studio.engine.cuda_info import release_cuda_cache

            release_cuda_cache("tensorrt engine closed")

    def describe(self) -> str:
        info = self.build_info
        if info is None:
            return f"TensorRT {self.precision} (not built yet; load() builds or loads the cached engine)"
        origin = "cached engine" if info.cache_hit else f"built in {info.seconds:.0f} s"
        graph = (
            "whole VITS graph in TensorRT"
            if info.variant == "full"
            else "flow + decoder in TensorRT, text encoder + duration predictor in torch (CUDA, FP32)"
        )
        text = (
            f"TensorRT {tensorrt_version()} {info.precision} ({info.int8_mode} INT8), {graph}; {origin}; "
            f"profile {info.profile.token()}; calibrated on {info.calibration_sentences} sentences "
            f"({info.calibration_origin})"
        )
        if info.layer_counts:
            c = info.layer_counts
            text += f"; conv/matmul layers: {c.get('int8', 0)} may run INT8, {c.get('fp16', 0)} FP16, {c.get('fp32', 0)} FP32"
        for variant, reason in info.failures.items():
            text += f"; {variant} graph failed: {reason}"
        for note in info.notes:
            text += f"; {note}"
        if self.activation_bytes:
            text += f"; {self.activation_bytes / 2**20:.0f} MiB of activation memory (TensorRT's own)"
        n, total = self.stats["torch_fallback_items"], self.stats["items"]
        text += f"; {n} of {total} items longer than the profile ran on torch FP32"
        return text

    # -------------------------------------------------------------- building

    def _calibration(self) -> tuple[str, list[list[int]]]:
        """(origin, ids of the selected sentences)."""
        sentences = gather_calibration_sentences(self._calibration_input)
        chosen = spread_by_length(sentences, self.max_calibration_sentences)
        ids = sentences_to_ids(chosen, self.torch_engine.text_to_ids, self.language)
        if not ids:
            raise EngineError("no calibration sentence produced phoneme ids")
        origin = "built-in" + (" + project" if self._calibration_input else "") + (
            f" + {CALIBRATION_DATA_ENV}" if os.environ.get(CALIBRATION_DATA_ENV) else "")
        return origin, ids

    def _prepare(self, trt, torch) -> TrtRunner:
        from studio.core.files import sha256_file

        logger = trt.Logger(trt.Logger.WARNING)
        mode = int8_mode(trt) if self.precision == "int8" else "none"
        origin, cal_ids = self._calibration()
        scales = _scales(self.default_settings)
        cal_batch = self.calibration_batch or min(self.batch_profile.opt, max(1, len(cal_ids)))
        id_lengths = [len(s) for s in cal_ids]
        # frame lengths of the calibration set at the voice's own settings
        frame_lengths: list[int] = []
        channels = 0
        for b in make_batches(cal_ids, cal_batch, fill_last=False):
            z_p, _, y_lengths = encoder_latents(torch, self.torch_engine, b, scales)
            frame_lengths.extend(int(n) for n in y_lengths)
            channels = int(z_p.shape[1])
        profile = make_profile(id_lengths, frame_lengths, batch=self.batch_profile, channels=channels)
        source_hash = sha256_file(self.torch_engine.model_path)
        dec = self.torch_engine.model.waveform_decoder
        last_stage = tuple(range((dec.num_upsamples - 1) * dec.num_kernels, dec.num_upsamples * dec.num_kernels))
        gpu = gpu_token(torch, self.device)
        timing_cache = timing_cache_path(self.cache_dir, tensorrt_version() or "?", gpu)

        def attempt(variant: str) -> tuple[bytes, BuildInfo]:
            shapes = profile.input_shapes(variant)
            key = engine_cache_key(
                source_hash, tensorrt_version() or "?", gpu, self.precision, shapes,
                variant=variant, extra=f"{mode};cal={ids_digest(cal_ids)};scales={scales}",
            )
            plan_path = engine_cache_path(self.cache_dir, key)
            counts: dict[str, int] = {}
            notes: list[str] = []
            start = time.perf_counter()

            def build() -> bytes:
                onnx_path = exported_onnx(self.torch_engine, self.cache_dir, variant, source_hash)
                feeder = (
                    calibration_feeder(torch, self.torch_engine, variant, cal_ids, profile, scales)
                    if self.precision == "int8"
                    else None
                )
                return build_plan(
                    trt, logger, onnx_path, shapes, variant=variant, precision=self.precision, mode=mode,
                    feeder=feeder, last_stage=last_stage, workspace_bytes=self.workspace_bytes,
                    calib_cache=plan_path.with_suffix(".calib"), calib_device=self.device,
                    counts=counts, notes=notes, timing_cache=timing_cache,
                )

            raise_if_failed_before(plan_path)
            try:
                plan, hit = load_or_build(plan_path, build)
            except EngineError as exc:  # parser/builder said no: remember, do not rebuild every time
                remember_failure(plan_path, exc)
                raise
            info = BuildInfo(
                variant=variant, precision=self.precision, int8_mode=mode, key=key, path=plan_path,
                cache_hit=hit, seconds=time.perf_counter() - start, profile=profile,
                calibration_origin=origin, calibration_sentences=len(cal_ids), layer_counts=counts,
                notes=notes,
            )
            return plan, info

        def attempt_and_load(variant: str):
            plan, info = attempt(variant)
            runner = TrtRunner(trt, torch, plan, logger, self.device)
            if info.cache_hit:  # verified when it was built (a failed check leaves a .failed marker)
                return runner, info
            try:
                info.notes.append(self._verify(runner, info, cal_ids))
            except EngineError as exc:  # built but wrong: remember, and try the next graph
                runner.close()
                remember_failure(info.path, exc)
                raise
            return runner, info

        _, (runner, info), failures = first_that_builds(self.variants, attempt_and_load)
        info.failures = failures
        self.build_info = info
        _LOGGER.info("TensorRT ready: %s", self.describe())
        return runner

    # -------------------------------------------------------------- running

    def _run(self, batch: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        runner, info = self._runner, self.build_info
        if runner is None or info is None:
            raise EngineError("engine is closed")
        self.stats["batches"] += 1
        return self._run_with(runner, info, batch, settings)

    def _device_ids(self, torch, batch: Sequence[Sequence[int]], min_length: int = 0):
        """Padded ids and lengths on the model's device; padded up to ``min_length`` when
        shorter, because the full graph's profile rejects anything below its minimum
        (the pad is masked by the lengths)."""
        from studio.engine.torchvits.export import pad_ids

        pad_id = self.torch_engine.config.phoneme_id_map["_"][0]
        ids, lengths = pad_ids(batch, pad_id)
        if ids.shape[1] < min_length:
            ids = np.pad(ids, ((0, 0), (0, min_length - ids.shape[1])), constant_values=pad_id)
        dev = self.torch_engine.torch_device
        return torch.from_numpy(ids).to(dev), torch.from_numpy(lengths).to(dev)

    def _run_with(
        self, runner, info: BuildInfo, batch: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> list[np.ndarray]:
        """One batch (within the profile's batch size) through ``runner``; each item's own audio."""
        import torch

        from studio.engine.torchvits.infer import flow_decode, split_infer

        prof = info.profile
        x, xl = self._device_ids(torch, batch, prof.phonemes.min if info.variant == "full" else 0)
        dev = self.torch_engine.torch_device
        scales = _scales(settings)
        try:
            with torch.inference_mode():
                if info.variant == "full":
                    out = runner({
                        "input": x, "input_lengths": xl,
                        "scales": torch.tensor(scales, dtype=torch.float32, device=dev),
                    })
                    audio, audio_lengths = out["output"][:, 0, :], out["output_lengths"]
                else:
                    model = self.torch_engine.model

                    def trt_decode(z_p, y_mask):
                        frames = z_p.shape[2]
                        if frames < prof.frames.min:  # below it: zero frames, masked, cropped after
                            pad = prof.frames.min - frames
                            z_p = torch.nn.functional.pad(z_p, (0, pad))
                            y_mask = torch.nn.functional.pad(y_mask, (0, pad))
                        return runner({"z_p": z_p.float(), "y_mask": y_mask.float()})["output"]

                    def decode(z_p, y_mask):
                        if z_p.shape[2] <= prof.frames.max:
                            return trt_decode(z_p, y_mask)
                        # beyond the profile: only the items that do not fit go to torch
                        frames = y_mask.sum(dim=(1, 2)).long()
                        over = frames > prof.frames.max
                        self.stats["torch_fallback_items"] += int(over.sum())
                        out = torch.zeros(z_p.shape[0], 1, z_p.shape[2] * self.torch_engine.hop_length,
                                          device=z_p.device, dtype=torch.float32)
                        out[over] = flow_decode(model, z_p[over], y_mask[over]).float()
                        keep = ~over
                        if bool(keep.any()):
                            width = int(frames[keep].max())
                            part = trt_decode(z_p[keep][:, :, :width], y_mask[keep][:, :, :width]).float()
                            out[keep, :, : part.shape[2]] = part
                        return out

                    audio, audio_lengths = split_infer(
                        model, decode, x, xl, *scales, self.torch_engine.hop_length
                    )
                audio = audio.float().cpu().numpy()
                audio_lengths = audio_lengths.cpu().numpy()
        except EngineError:
            raise
        except RuntimeError as exc:
            raise EngineError(f"TensorRT synthesis failed: {exc}") from exc
        return [
            limited(audio[b, : int(audio_lengths[b])]) for b in range(len(batch))
        ]

    def _verify(self, runner, info: BuildInfo, cal_ids: Sequence[Sequence[int]]) -> str:
        """Run two calibration sentences with noise off through the engine and through
        torch; EngineError if lengths or waveforms disagree (a graph that built but
        computes something else must not be used). Returns a one-line result."""
        import torch

        from studio.engine.torchvits.infer import encode_latents, piper_vits_infer

        ordered = sorted(cal_ids, key=len)
        sample = [ordered[0], ordered[len(ordered) // 2]][: info.profile.batch.max]
        settings = SynthesisSettings(0.0, 1.0, 0.0)
        noise_off = _scales(settings)
        got = self._run_with(runner, info, sample, settings)
        x, xl = self._device_ids(torch, sample)
        hop = self.torch_engine.hop_length
        model = self.torch_engine.model
        with torch.inference_mode():  # lengths first: cheap, and the commonest way to be wrong
            want_lengths = (encode_latents(model, x, xl, *noise_off).y_lengths * hop).tolist()
            for g, n in zip(got, want_lengths):
                if abs(len(g) - int(n)) > 2 * hop:
                    raise EngineError(f"{info.variant} engine output length {len(g)} != torch {int(n)}")
            audio, alens = piper_vits_infer(model, x, xl, *noise_off, hop)
        worst = 1.0
        for b, g in enumerate(got):
            w = limited(audio[b, : int(alens[b])].float().cpu().numpy())
            n = min(len(g), len(w))
            corr = float(np.corrcoef(g[:n], w[:n])[0, 1]) if n > 1 and g[:n].std() > 0 and w[:n].std() > 0 else 0.0
            worst = min(worst, corr)
        floor = 0.9 if info.precision == "int8" else 0.98
        if not worst >= floor:
            raise EngineError(f"{info.variant} engine output does not match torch (correlation {worst:.3f} < {floor})")
        return f"verified against torch (noise off): correlation >= {worst:.4f}"


__all__ = [
    "TensorRTEngine",
]
