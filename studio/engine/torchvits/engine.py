"""Piper voices on torch, as a real coqui-tts ``Vits`` model: the torch presets' backend.

Why coqui's model instead of ONNX Runtime: the torch presets (dynamic int8
quantization, FP16 on CUDA, TensorRT export) need an ``nn.Module``. The weights
come straight from the voice's ``.onnx`` (see :mod:`studio.engine.torchvits.weights`),
so the torch engine speaks with exactly the voice the ONNX engine uses: with all
noise scales 0 both produce the same audio (same length, correlation ~1).

Why our own forward (:meth:`TorchVitsEngine.forward_infer`, the recipe of
:mod:`studio.engine.torchvits.infer`) instead of coqui's ``Vits.inference``: it mirrors Piper's exported ``infer`` (``scales = (noise_scale,
length_scale, noise_w)``: noise_scale for ``z_p``, noise_w for the stochastic
duration predictor) without touching the model's attributes, and it returns every
item's true length (``sum(ceil(durations)) * hop``) so batched items can be cropped
to exactly their own audio. It runs coqui's own submodules (``text_encoder``,
``duration_predictor``, ``flow``, ``waveform_decoder``).

torch and coqui-tts are optional: nothing heavy is imported until :meth:`load`.
"""

from __future__ import annotations

import gc
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from studio.core.errors import EngineError, StudioError
from studio.core.lexicon import Lexicon
from studio.engine.base import Engine, SynthesisSettings
from studio.engine.noise import batch_seed
from studio.engine.torchvits.infer import piper_vits_infer
from studio.engine.voice.phonemize import PiperFrontEnd, RecordedFrontEnd
from studio.engine.voice.config import VoiceConfig
from studio.engine.waveform import limited

if TYPE_CHECKING:  # pragma: no cover
    import torch
    from TTS.tts.models.vits import Vits

    from studio.engine.torchvits.weights import WeightsReport
    from studio.engine.voice.info import VoiceInfo

_LOGGER = logging.getLogger(__name__)

#: the submodules inference runs, in order
_SUBMODULES = ("text_encoder", "duration_predictor", "flow", "waveform_decoder")

_DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16",
           "half": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16"}


def _resolve_paths(voice: Any) -> tuple[Path, Path, str]:
    """(model .onnx, config .onnx.json, display id) from a VoiceInfo or a path."""
    if isinstance(voice, (str, Path)):
        model = Path(voice)
        if model.suffix == ".safetensors":  # compact weights: <voice>.safetensors + <voice>.onnx.json
            return model, model.with_suffix(".onnx.json"), model.stem
        return model, Path(f"{model}.json"), model.name.removesuffix(".onnx")
    family = getattr(voice, "family", "piper")
    if family != "piper":
        raise EngineError(
            f"voice {getattr(voice, 'id', voice)!r} is a {family} voice; the torch engine "
            "loads Piper voices (.onnx + .onnx.json) into coqui's Vits"
        )
    return Path(voice.model_path), Path(voice.config_path), str(getattr(voice, "id", voice.model_path))


class TorchVitsEngine(Engine):
    """A Piper voice run as coqui-tts ``Vits`` on torch.

    ``voice`` is a :class:`~studio.engine.voice.info.VoiceInfo` (Piper family) or the
    path of a Piper ``.onnx`` (its ``.onnx.json`` next to it). ``device`` is any torch
    device string (``"cpu"``, ``"cuda"``, ``"cuda:1"``); ``dtype`` a ``torch.dtype`` or
    ``"float32"``/``"float16"``/``"bfloat16"`` (None = float32). ``threads`` sets
    torch's intra-op threads at load (process-wide, as torch has no per-model setting).

    A low-precision ``dtype`` applies only to ``low_precision_modules`` (default: the
    flow and the HiFi-GAN decoder, ~90 % of the compute). The text encoder and the
    stochastic duration predictor stay float32: in bfloat16 the predicted durations
    drift, ``ceil`` turns that into different lengths and the audio decorrelates
    (measured on the bundled voice vs float32: whole model in bf16 -> corr 0.68,
    fp16 -> 0.92; flow + decoder in fp16 -> 0.99998, same lengths; decoder alone in
    bf16 -> 0.99995). Pass all four names to cast everything anyway.
    """

    name = "torch"

    def __init__(
        self,
        voice: "VoiceInfo | str | Path",
        device: str = "cpu",
        dtype: "torch.dtype | str | None" = None,
        *,
        threads: int | None = None,
        low_precision_modules: Sequence[str] = ("flow", "waveform_decoder"),
    ) -> None:
        self.model_path, self.config_path, self.voice_id = _resolve_paths(voice)
        if threads is not None and threads < 1:
            raise EngineError(f"threads must be >= 1, got {threads}")
        self.device = str(device)
        self._dtype_spec = dtype
        self.threads = threads
        unknown = set(low_precision_modules) - set(_SUBMODULES)
        if unknown:
            raise EngineError(f"unknown Vits submodules {sorted(unknown)}; choose from {_SUBMODULES}")
        self.low_precision_modules = tuple(low_precision_modules)
        self.config: VoiceConfig = VoiceConfig.from_file(self.config_path)
        recorded = getattr(voice, "phoneme_ids", None)
        self.front_end: PiperFrontEnd | RecordedFrontEnd = (
            RecordedFrontEnd.from_file(recorded) if recorded else PiperFrontEnd(self.config)
        )
        self._model: Vits | None = None
        self._torch_device = None
        self._torch_dtype = None
        self.weights_report: WeightsReport | None = None
        self.hop_length: int = self.config.hop_length
        self._lock = threading.RLock()

    # ------------------------------------------------------------- interface

    def describe(self) -> str:
        import torch

        device = self.torch_device
        where = (f"{device} ({torch.cuda.get_device_name(device)})" if device.type == "cuda"
                 else f"CPU ({torch.get_num_threads()} threads)")
        precision = str(self.dtype).removeprefix("torch.")
        params = list(self.model.parameters())
        n_params = sum(p.numel() for p in params)
        n_low = sum(p.numel() for p in params if p.dtype == self.dtype)
        text = (f"coqui Vits on PyTorch {torch.__version__}, {where}, {precision} "
                f"({n_low if precision != 'float32' else n_params:,} of {n_params:,} parameters in {precision})")
        if self.weights_report is not None:
            text += f"; weights: {self.weights_report.summary()}"
        return text

    @property
    def sample_rate(self) -> int:
        return self.config.sample_rate

    @property
    def default_settings(self) -> SynthesisSettings:
        """The voice's own recommended scales."""
        return self.config.default_settings

    @property
    def model(self) -> "Vits":
        """The coqui-tts ``Vits`` (loads on first access)."""
        self.load()
        assert self._model is not None
        return self._model

    @property
    def dtype(self) -> "torch.dtype":
        self.load()
        return self._torch_dtype

    @property
    def torch_device(self) -> "torch.device":
        self.load()
        return self._torch_device

    def load(self) -> None:
        """Build coqui's Vits from the voice's ONNX weights (or its compact float16
        ``.safetensors``, :mod:`studio.engine.torchvits.compact`). Idempotent, thread-safe."""
        if self._model is not None:
            return
        with self._lock:
            if self._model is not None:
                return
            try:
                import torch
            except ImportError as exc:
                raise EngineError(f"the torch backend needs torch and coqui-tts ({exc})") from exc
            from studio.engine.torchvits.compact import is_compact, load_compact
            from studio.engine.torchvits.weights import build_coqui_vits

            device = torch.device(self.device)
            if device.type == "cuda" and not torch.cuda.is_available():
                raise EngineError(f"device {self.device!r} requested but torch sees no CUDA GPU")
            dtype = self._resolve_dtype(torch)
            if self.threads is not None:
                torch.set_num_threads(self.threads)
            if not self.model_path.is_file():
                raise EngineError(f"{self.model_path}: voice model not found")
            try:
                build = load_compact if is_compact(self.model_path) else build_coqui_vits
                model, report = build(self.config_path, self.model_path)
            except ImportError as exc:
                raise EngineError(f"the torch backend needs coqui-tts ({exc})") from exc
            except (ValueError, NotImplementedError, OSError) as exc:
                raise EngineError(f"{self.model_path.name}: cannot load into coqui Vits ({exc})") from exc
            if report.arch.sample_rate != self.config.sample_rate:
                raise EngineError("sample rate mismatch between model build and voice config")
            model.eval().requires_grad_(False)
            model.to(device=device)
            if dtype != torch.float32:
                for name in self.low_precision_modules:
                    getattr(model, name).to(dtype=dtype)
            self.hop_length = report.arch.hop_length
            self.weights_report = report
            self._torch_device, self._torch_dtype = device, dtype
            self._model = model
            _LOGGER.info(
                "loaded %s on torch (%s, %s): %s", self.voice_id, device, dtype, report.summary()
            )

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        return self.front_end.text_to_ids(text, language, lexicon)

    def synthesize_batch(
        self, ids: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> list[np.ndarray]:
        if not ids:
            return []
        self.load()
        try:
            self.config.resolve_speaker(settings.speaker_id)  # single speaker -> None
        except ValueError as exc:
            raise EngineError(str(exc)) from exc
        results: list[np.ndarray | None] = [None] * len(ids)
        todo = [i for i, seq in enumerate(ids) if len(seq) > 0]
        for i, seq in enumerate(ids):
            if len(seq) == 0:
                results[i] = np.zeros(0, dtype=np.float32)
        if todo:
            outs = self._run([ids[i] for i in todo], settings)
            for i, out in zip(todo, outs):
                results[i] = out
        return [r for r in results if r is not None]

    def close(self) -> None:
        """Drop the model (and CUDA cache). Idempotent."""
        with self._lock:
            if self._model is None:
                return
            on_cuda = self._torch_device is not None and self._torch_device.type == "cuda"
            self._model = None
            gc.collect()
            if on_cuda:
                import torch

                torch.cuda.empty_cache()

    # ------------------------------------------------------- torch-level API

    def forward_infer(
        self,
        x: "torch.Tensor",
        x_lengths: "torch.Tensor",
        noise_scale: float = 0.667,
        length_scale: float = 1.0,
        noise_w: float = 0.8,
    ) -> tuple["torch.Tensor", "torch.Tensor"]:
        """Piper's ``infer`` over coqui's submodules, batch-aware.

        ``x`` [B, T] int64 padded ids, ``x_lengths`` [B]. Returns ``(audio [B, T_wav]``
        in the model dtype, ``audio_lengths [B]`` int64): item ``b`` is
        ``audio[b, :audio_lengths[b]]``. Call under ``torch.inference_mode()``.
        """
        return piper_vits_infer(self.model, x, x_lengths, noise_scale, length_scale, noise_w, self.hop_length)

    def infer_module(self) -> "torch.nn.Module":
        """An ``nn.Module`` with Piper's ONNX signature for export work.

        ``forward(input [B, T] int64, input_lengths [B] int64, scales [3] float)``
        returns ``(audio [B, 1, T_wav], audio_lengths [B])``; it shares the engine's
        model (no copy).
        """
        return infer_module_class()(self.model, self.hop_length)

    # -------------------------------------------------------------- internals

    def _resolve_dtype(self, torch) -> "torch.dtype":
        spec = self._dtype_spec
        if spec is None:
            return torch.float32
        if isinstance(spec, torch.dtype):
            dtype = spec
        else:
            key = _DTYPES.get(str(spec).lower().removeprefix("torch."))
            if key is None:
                raise EngineError(f"unsupported dtype {spec!r} (float32, float16 or bfloat16)")
            dtype = getattr(torch, key)
        if dtype not in (torch.float32, torch.float16, torch.bfloat16):
            raise EngineError(f"unsupported dtype {dtype} (float32, float16 or bfloat16)")
        return dtype

    def _run(self, batch: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        import torch

        model = self._model
        if model is None:
            raise EngineError("engine is closed")
        lengths = [len(seq) for seq in batch]
        pad_id = self.config.phoneme_id_map["_"][0]
        padded = np.full((len(batch), max(lengths)), pad_id, dtype=np.int64)
        for row, seq in enumerate(batch):
            padded[row, : len(seq)] = np.asarray(seq, dtype=np.int64)
        n_vocab = model.text_encoder.emb.num_embeddings
        if padded.min() < 0 or padded.max() >= n_vocab:
            raise EngineError(f"phoneme id out of range 0..{n_vocab - 1}")
        device = self._torch_device
        try:
            # seeded noise (studio.engine.noise), without touching the caller's generators
            with torch.random.fork_rng(devices=[device.index or 0] if device.type == "cuda" else []), torch.inference_mode():
                torch.manual_seed(batch_seed(batch, settings) >> 1)  # torch takes < 2**63
                x = torch.from_numpy(padded).to(self._torch_device)
                x_lengths = torch.tensor(lengths, dtype=torch.long, device=self._torch_device)
                audio, audio_lengths = piper_vits_infer(
                    model, x, x_lengths,
                    settings.noise_scale, settings.length_scale, settings.noise_w,
                    self.hop_length,
                )
                audio = audio.float().cpu().numpy()
                audio_lengths = audio_lengths.cpu().numpy()
        except StudioError:
            raise
        except RuntimeError as exc:  # CUDA OOM, shape errors, ...
            raise EngineError(f"torch synthesis failed for {self.voice_id}: {exc}") from exc
        out = []
        for row in range(len(batch)):
            n = int(audio_lengths[row])
            out.append(limited(audio[row, :n]))
        return out


_INFER_CLASS = None


def infer_module_class():
    """Defined lazily so importing this module never imports torch."""
    global _INFER_CLASS
    if _INFER_CLASS is None:
        import torch

        class PiperVitsInfer(torch.nn.Module):
            """Piper's ONNX signature over a coqui ``Vits``: (ids, lengths, scales) -> audio."""

            def __init__(self, vits, hop_length: int) -> None:
                super().__init__()
                self.vits = vits
                self.hop_length = int(hop_length)

            def forward(self, input, input_lengths, scales):  # noqa: A002 - Piper's input name
                audio, lengths = piper_vits_infer(
                    self.vits, input, input_lengths, scales[0], scales[1], scales[2], self.hop_length
                )
                return audio.unsqueeze(1), lengths

        _INFER_CLASS = PiperVitsInfer
    return _INFER_CLASS


__all__ = ["TorchVitsEngine"]
