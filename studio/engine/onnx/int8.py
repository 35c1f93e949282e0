"""INT8 Piper voices for the CPU: static quantization only where it does not hurt.

Why the default recipe looks the way it does (the measurements behind each point:
docs/speed-notes.md, "The INT8 recipe, as measured"):

* The text encoder and the duration predictor stay FP32: they set the phoneme
  durations (``ceil`` of a continuous value), so any error there moves them; the
  alignment output stays bit-identical to the FP32 model.
* Quantized: the normalizing ``flow``, the decoder's ``conv_pre`` and the resblocks of
  decoder stages 0 and 1 (per-channel s8 weights, u8 asymmetric activations,
  percentile calibration at 99.95).
* Not quantized: the last decoder stage and ``conv_post`` (ORT's ``QLinearConv``
  requantizes its output to u8 before the residual add, and one 8-bit step there is as
  large as the detail that matters), and the upsamplers (ORT's CPU provider has no
  integer ``ConvTranspose``, so quantizing them only adds error).
* The decoder runs on 4-D tensors (:func:`decoder_to_4d`), so the FP32 stage that then
  dominates uses ORT's blocked NCHWc kernels.

Calibration feeds each sentence alone (``CalibStridedMinMax=1``): the histogram
collector cannot stack activations of different lengths. Sentences: a built-in set of
varied English narration, plus the project's own sentences and/or the file named by
``$CALIBRATION_DATA_PATH`` when given. Ranges are collected for every Conv and cached
separately, so a recipe that only picks other nodes rebuilds in seconds.

The quantized model is cached on disk under a key made of the source model's sha256,
the recipe, the calibration set and the onnxruntime version, and written atomically,
so a second render (or a second process) reuses it.

The rest lives in sibling modules, imported from where it is defined:
:mod:`~studio.engine.onnx.int8_recipe` (recipe and node
plan), :mod:`~studio.engine.onnx.layout` (decoder on 4-D tensors),
:mod:`~studio.engine.onnx.int8_calibration` (calibration sentences and reader) and
:mod:`~studio.engine.onnx.int8_build` (quantize, cache). This module keeps the engine.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Sequence

from studio.engine.base import PendingBuild
from studio.engine.onnx.int8_build import (
    Int8Build,
    _config_for,
    build_int8,
    cached_int8,
)
from studio.engine.onnx.int8_recipe import (
    DEFAULT_RECIPE,
    QuantRecipe,
)
from studio.engine.onnx.piper import OnnxPiperEngine

__all__ = [
    "Int8OnnxEngine",
]

#: builds found or made by this process (see Int8OnnxEngine.prepare)
_BUILDS: dict[tuple, Int8Build] = {}
_BUILDS_LOCK = threading.Lock()


# -------------------------------------------------------------------------- engine


class Int8OnnxEngine(OnnxPiperEngine):
    """:class:`OnnxPiperEngine` running the INT8 build of a Piper voice (CPU only).

    The INT8 model is built (or taken from the cache) on :meth:`load`, since a first
    build calibrates for a minute or so. Durations, and so the alignment output, are
    identical to the FP32 voice; see :meth:`describe` for what was quantized.
    """

    name = "onnx-int8"

    def __init__(
        self,
        model_path: str | Path,
        config_path: str | Path | None = None,
        *,
        threads: int | None = None,
        calibration_sentences: Sequence[str] | None = None,
        cache_dir: str | Path | None = None,
        recipe: QuantRecipe = DEFAULT_RECIPE,
        max_calibration_sentences: int | None = None,
    ) -> None:
        source = Path(model_path)
        super().__init__(source, _config_for(source, config_path), device="cpu", threads=threads)
        self.source_model_path = source
        self.recipe = recipe
        self._calibration_sentences = list(calibration_sentences) if calibration_sentences else None
        self._cache_dir = cache_dir
        self._max_calibration = max_calibration_sentences
        self.build: Int8Build | None = None
        self._build_lock = threading.Lock()

    def prepare(self) -> Int8Build:
        """Build or fetch the INT8 model without creating a session.

        Remembered per process: finding the cached build phonemizes the calibration
        set for its key (~0.3 s), which the second stream of a render need not repeat.
        """
        key = (str(self.source_model_path), tuple(self._calibration_sentences or ()), str(self._cache_dir),
               str(self.config_path), repr(self.recipe), self._max_calibration)
        with self._build_lock:
            if self.build is None:
                with _BUILDS_LOCK:
                    build = _BUILDS.get(key)
                    if build is None or not build.path.is_file():
                        build = build_int8(
                            self.source_model_path,
                            self._calibration_sentences,
                            self._cache_dir,
                            config_path=self.config_path,
                            recipe=self.recipe,
                            max_calibration_sentences=self._max_calibration,
                        )
                        _BUILDS[key] = build
                self.build = build
                self.model_path = self.build.path
            return self.build

    def load(self) -> None:
        self.prepare()
        super().load()

    def pending_build(self) -> PendingBuild | None:
        """The INT8 build (calibration and quantization, about a minute), then the cut of the built model."""
        if self.build is None:
            found = cached_int8(self.source_model_path, self._calibration_sentences, self._cache_dir,
                                config_path=self.config_path, recipe=self.recipe,
                                max_calibration_sentences=self._max_calibration)
            if found is None:
                return PendingBuild("the fast INT8 model (calibrated on real sentences)", "about a minute")
            if not self.window_frames or self._session is not None:
                return None
            from studio.engine.onnx.split import split_cached

            return None if split_cached(found, self._cache_dir) else PendingBuild(
                "the fast model cut for long sentences", "a few seconds")
        return super().pending_build()

    def describe(self) -> str:
        """What is INT8 and what stayed FP32 (and why), from the built model."""
        build = self.prepare()
        origin = "cached" if build.cache_hit else f"built in {build.build_seconds:.0f} s"
        head = (
            f"{self.source_model_path.name} -> {build.path.name} ({origin}); "
            f"{build.quantized_conv_nodes} Conv nodes run INT8 (per-channel s8 weights, "
            f"u8 activations, {self.recipe.calibrate_method} calibration on "
            f"{build.calibration_sentences} sentences; ONNX Runtime fuses them into its integer "
            "QLinearConv kernel)"
        )
        layout = (
            f"\nlayout: decoder on 4-D tensors ({build.decoder_4d_convs} convs as 2-D, "
            "ORT's blocked NCHWc FP32 kernels; same math)"
            if build.decoder_4d_convs
            else "\nlayout: decoder left 1-D"
        ) + ("; its layouts (blocked FP32, channels-last INT8) kept across the residual adds (built for this CPU)"
             if self._decoder_layouts_kept else "")
        smoothed = (
            f"\nlast stage's stream smoothed per channel before calibration (SmoothQuant, alpha "
            f"{self.recipe.smooth_alpha}; same FP32 math)"
            if self.recipe.smooth_alpha is not None
            else ""
        )
        return head + "\n" + build.plan.describe() + layout + smoothed
