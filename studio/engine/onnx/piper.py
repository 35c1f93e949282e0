"""Piper voices on ONNX Runtime: the default, CPU-friendly backend.

Why the alignment patch: Piper models accept a dynamic batch, but the audio output
is padded to the longest item, and the padding region is *not* silent (the decoder
runs over it). To hand each item exactly its own audio we need each item's true
length. The model computes it internally (``y_lengths = sum(ceil(durations))``), so
we expose the per-phoneme-id durations tensor as an extra graph output (Piper's own
``add_alignment_output``, applied in memory) and crop item ``i`` to
``sum(durations_i) * hop_length`` samples. The same numbers give per-phoneme
alignments, which the quality metrics use to find pauses.

If a model cannot be patched (no single ``Ceil`` node), the engine still works by
running items one at a time, where the output length is exact by construction.

Why two sessions on the CPU: the graph is cut at the latent
(:mod:`studio.engine.onnx.split`) and the flow + decoder half runs over windows of
the latent (:mod:`studio.engine.decode_windows`): same samples, memory bounded by the
window instead of the longest sentence, and the streams can share one long
sentence. ``window_frames=0`` (and CUDA, where one big pass is what the GPU wants)
runs the graph whole.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from studio.core.errors import EngineError, VoiceError
from studio.core.lexicon import Lexicon
from studio.engine import emphasis
from studio.engine.base import Engine, PendingBuild, SynthesisSettings
from studio.engine.noise import DURATION_NOISE, PRIOR_NOISE, sentence_seed, standard_normal
from studio.engine.voice.phonemize import PiperFrontEnd
from studio.engine.voice.config import VoiceConfig
from studio.engine.decode_windows import OVERLAP_FRAMES, WINDOW_FRAMES, Latent, Window, decode_all, plan_windows
from studio.engine.waveform import limited

_LOGGER = logging.getLogger(__name__)

#: Per item: (float32 audio in [-1, 1], samples per phoneme id or None).
AlignedAudio = tuple[np.ndarray, "np.ndarray | None"]


def cuda_available() -> bool:
    """True when this onnxruntime build can run on an NVIDIA GPU."""
    try:
        import onnxruntime
    except ImportError:  # pragma: no cover - core dependency
        return False
    return "CUDAExecutionProvider" in onnxruntime.get_available_providers()


class OnnxPiperEngine(Engine):
    """A Piper ``.onnx`` voice run by ONNX Runtime.

    ``device`` is ``"cpu"`` or ``"cuda"``; CUDA falls back to CPU with a warning
    when this onnxruntime has no CUDA provider (check :attr:`providers` after
    :meth:`load`, or :func:`cuda_available` before). ``threads`` sets the
    intra-op thread count (None = onnxruntime's default, all cores); the render
    pool uses it to split cores between parallel engines. ``window_frames``: decode
    the latent in windows of this many frames (None: :data:`~studio.engine.decode_windows.WINDOW_FRAMES`
    on CPU, whole sentences on CUDA; 0: whole sentences). ``decoder_4d``: run a build
    of the voice whose decoder is rewritten onto 4-D tensors
    (:func:`~studio.engine.onnx.layout.build_fp32_layout_model`: same weights and
    math, ORT's blocked convolution kernels, ~11 % less CPU), made once and cached.
    ``encode_only``: windowed, but only the first half gets a session (text to
    latents, :meth:`encode_batch`): another runtime decodes the windows
    (:class:`~studio.engine.serving.split_engine.SplitEngine`).
    """

    name = "onnx"

    def __init__(
        self,
        model_path: str | Path,
        config_path: str | Path | None = None,
        *,
        device: str = "cpu",
        threads: int | None = None,
        window_frames: int | None = None,
        decoder_4d: bool = False,
        encode_only: bool = False,
    ) -> None:
        self.model_path = Path(model_path)
        self.decoder_4d = decoder_4d
        self.encode_only = encode_only
        self.config_path = Path(config_path) if config_path else Path(f"{self.model_path}.json")
        if device not in ("cpu", "cuda"):
            raise EngineError(f"unknown device {device!r} for the onnx engine (cpu or cuda)")
        if threads is not None and threads < 1:
            raise EngineError(f"threads must be >= 1, got {threads}")
        self.device = device
        self.threads = threads
        if window_frames is not None and window_frames < 0:
            raise EngineError(f"window_frames must be >= 0, got {window_frames}")
        #: latent frames per window; 0 after load() when the graph runs whole
        self.window_frames = (WINDOW_FRAMES if device == "cpu" else 0) if window_frames is None else window_frames
        self._decoder = None
        self._cut: tuple[str, str] = ("", "")
        self._noise = None  # split.PriorNoise of the first half (windowed decoding)
        self._shared = None  # (key, LoadedModel) while loaded
        #: where the cut graph is cached (None: the studio cache folder)
        self._cache_dir: str | Path | None = None
        #: the voice file the 4-D build was made from (None until load() made it)
        self._layout_source: Path | None = None
        self.config: VoiceConfig = VoiceConfig.from_file(self.config_path)
        self.front_end = PiperFrontEnd(self.config)
        self._session = None
        self._has_alignment = False
        #: the decoder runs the build with its layouts kept across residual adds (set by load())
        self._decoder_layouts_kept = False
        self._load_lock = threading.Lock()
        self.providers: list[str] = []

    # ------------------------------------------------------------- interface

    def describe(self) -> str:
        import onnxruntime

        self.load()
        providers = ", ".join(self.providers or ["CPUExecutionProvider"])
        return (
            f"{self.model_path.name} on ONNX Runtime {onnxruntime.__version__} "
            f"({providers}, {self.threads or 'default'} threads), float32, "
            f"{self._describe_layout()}{self._describe_windows()}"
        )

    def _describe_layout(self) -> str:
        if self.encode_only:
            return "text encoder and durations only"
        kept = (", its layouts kept across the residual adds (built for this CPU)"
                if self._decoder_layouts_kept else "")
        if self._layout_source is not None and self._layout_source != self.model_path:
            return f"the voice's weights and math, decoder on 4-D tensors (ORT's blocked kernels{kept})"
        return f"unmodified graph{kept}"

    def _shared_key(self) -> tuple:
        return (str(self.model_path), self.threads, self.device, self.window_frames, str(self._cache_dir),
                self.encode_only)

    def pending_build(self) -> PendingBuild | None:
        """The graph cut, the first time this model decodes in windows (cached on disk after)."""
        from studio.engine import shared

        if self._session is not None or not self.model_path.is_file():
            return None
        model = self.model_path
        if self.decoder_4d and self._layout_source is None:
            from studio.engine.onnx.layout import fp32_layout_path

            model = fp32_layout_path(self.model_path, self._cache_dir)
            if not model.is_file():
                return PendingBuild("the voice's decoder rewritten for faster kernels", "a few seconds")
        if not self.window_frames or shared.held(self._shared_key()):
            return None
        from studio.engine.onnx.split import split_cached

        if split_cached(model, self._cache_dir):
            return None
        return PendingBuild("the voice model cut for long sentences", "a few seconds")

    def _describe_windows(self) -> str:
        if self.encode_only:
            return f", latents handed over in windows of {self.window_frames} frames (+{OVERLAP_FRAMES} context)"
        if not self.window_frames:
            return ", whole sentences"
        return f", flow + decoder in windows of {self.window_frames} latent frames (+{OVERLAP_FRAMES} context)"

    @property
    def sample_rate(self) -> int:
        return self.config.sample_rate

    @property
    def default_settings(self) -> SynthesisSettings:
        """The voice's own recommended scales."""
        return self.config.default_settings

    def load(self) -> None:
        """Create the ONNX sessions, or share those another engine of the same model,
        threads and window size holds (:mod:`studio.engine.shared`). Idempotent, thread-safe."""
        from studio.engine import shared

        with self._load_lock:
            if self._session is None:
                if self.decoder_4d and self._layout_source is None:
                    from studio.engine.onnx.layout import build_fp32_layout_model

                    self._layout_source = self.model_path
                    self.model_path = build_fp32_layout_model(self.model_path, self._cache_dir)
                key = self._shared_key()
                loaded = shared.acquire(key, self._create_sessions)
                self._shared = (key, loaded)
                self._session, self._decoder, self._cut = loaded.session, loaded.decoder, loaded.cut
                self._noise = loaded.noise
                self._decoder_layouts_kept = loaded.decoder_layouts_kept
                self._has_alignment, self.window_frames = loaded.has_alignment, loaded.window_frames
                self.providers = list(loaded.providers)

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        return self.front_end.text_to_ids(text, language, lexicon)

    def synthesize_batch(
        self, ids: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> list[np.ndarray]:
        return [audio for audio, _ in self.synthesize_batch_with_alignments(ids, settings)]

    def synthesize_batch_with_alignments(
        self, ids: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> list[AlignedAudio]:
        """Like :meth:`synthesize_batch`, plus audio samples per input id.

        ``samples_per_id[k]`` is how many output samples id ``k`` produced (so pad
        ids between words show the pauses); it sums to ``len(audio)``. It is None
        only for models that could not be patched for alignments.
        """
        if not ids:
            return []
        self.load()
        results: list[AlignedAudio | None] = [None] * len(ids)
        todo = []
        for i, seq in enumerate(ids):
            if len(seq) == 0:
                results[i] = (np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64))
            else:
                todo.append(i)
        if todo:
            if self._has_alignment:
                outs = self._run([ids[i] for i in todo], settings)
            else:
                outs = [self._run([ids[i]], settings)[0] for i in todo]
            for i, out in zip(todo, outs):
                results[i] = out
        return [r for r in results if r is not None]

    def close(self) -> None:
        """Drop the session (frees its memory / GPU arena). Idempotent."""
        from studio.engine import shared

        with self._load_lock:
            self._session = None
            self._decoder = None
            held, self._shared = self._shared, None
            if held is not None:
                shared.release(*held)

    # ------------------------------------------------------- windowed decoding

    def encode_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[Latent]:
        """Text ids -> one :class:`~studio.engine.decode_windows.Latent` per item (windowed engines only)."""
        self.load()
        session = self._session
        if session is None or not self._cut[0]:
            raise EngineError("this engine decodes whole sentences (window_frames=0)")
        seeds = [sentence_seed(seq, settings) for seq in ids]
        mean, std, mask, *rest = self._call(session, batch=ids, settings=settings, seeds=seeds)
        durations = rest[0].reshape(len(ids), -1) if rest else None
        hop = self.config.hop_length
        scale = np.float32(settings.noise_scale)
        out = []
        for row, seq in enumerate(ids):
            frames = max(int(mask[row].sum()), 1)
            per_id = None if durations is None else np.rint(durations[row, : len(seq)]).astype(np.int64)
            m, s = mean[row, :, :frames], std[row, :, :frames]
            eps = standard_normal(seeds[row], PRIOR_NOISE, mean.shape[1], frames)
            louder: tuple[tuple[int, int], ...] = ()
            if settings.emphasis_ids:
                m, s, eps, per_id, louder = self._emphasize(m, s, eps, per_id, settings, seeds[row])
                frames = int(m.shape[1])
            # z_p = m_p + eps * exp(logs_p) * noise_scale, in the graph's order of operations
            z = m + (eps * s) * scale
            out.append(Latent(np.ascontiguousarray(z, dtype=np.float32), None if per_id is None else per_id * hop,
                              plan_windows(frames, self.window_frames, OVERLAP_FRAMES), louder))
        return out

    def _emphasize(self, mean: np.ndarray, std: np.ndarray, eps: np.ndarray, per_id: np.ndarray | None,
                   settings: SynthesisSettings, seed: int) -> tuple:
        """The prior with the emphasized words' phonemes longer, and their sample spans
        (:mod:`studio.engine.emphasis`); unchanged (logged) when the durations do not add up."""
        if per_id is None or int(per_id.sum()) != mean.shape[1]:
            _LOGGER.warning("%s: no per-phoneme durations; emphasis not realized", self.model_path.name)
            return mean, std, eps, per_id, ()
        source, per_id, words = emphasis.stretch_plan(per_id, settings.emphasis_ids)
        mean, std, eps = emphasis.stretch_prior(
            mean, std, eps, source, lambda c, n: standard_normal(seed, emphasis.EMPHASIS_NOISE, c, n))
        hop = self.config.hop_length
        return mean, std, eps, per_id, tuple((a * hop, b * hop) for a, b in words)

    def decoding_ready(self) -> bool:
        """Always: both halves load together in :meth:`load`."""
        return True

    def decode_window(self, latent: Latent, window: Window) -> np.ndarray:
        """The audio of one window of ``latent`` (its context frames decoded, then cut away)."""
        decoder = self._decoder
        if decoder is None:
            raise EngineError("this engine only encodes latents" if self.encode_only else "engine is closed")
        z = latent.z[None, :, window.lo : window.hi]
        name_z, name_mask = self._cut
        try:
            (audio,) = decoder.run(None, {name_z: z, name_mask: np.ones((1, 1, z.shape[-1]), dtype=np.float32)})
        except Exception as exc:
            raise EngineError(f"synthesis failed for {self.model_path.name}: {exc}") from exc
        hop = self.config.hop_length
        audio = audio.reshape(-1)[(window.start - window.lo) * hop : (window.stop - window.lo) * hop]
        return emphasis.louder_window(audio, window.start * hop, latent.louder, self.sample_rate)

    # -------------------------------------------------------------- internals

    def _create_sessions(self):  # -> studio.engine.onnx.shared.LoadedModel
        """The session of the whole graph, or the sessions of its halves when decoding in windows."""
        from studio.engine.onnx.shared import LoadedModel

        try:
            import onnxruntime
        except ImportError as exc:  # pragma: no cover - core dependency
            raise EngineError(f"onnxruntime is not installed ({exc})") from exc
        if not self.model_path.is_file():
            raise VoiceError(f"{self.model_path}: voice model not found")

        def session_options(*, arena: bool = True, pre_optimized: bool = False):
            options = onnxruntime.SessionOptions()
            options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
            options.inter_op_num_threads = 1
            if self.threads is not None:
                options.intra_op_num_threads = self.threads
            options.enable_cpu_mem_arena = arena
            if pre_optimized:
                options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
            return options

        providers: list = ["CPUExecutionProvider"]
        if self.device == "cuda":
            if cuda_available():
                providers.insert(0, ("CUDAExecutionProvider", {"cudnn_conv_algo_search": "HEURISTIC"}))
            else:
                _LOGGER.warning("CUDA requested but onnxruntime has no CUDA provider; using CPU")
        split = None
        if self.window_frames:
            from studio.engine.onnx.split import cached_split

            split = cached_split(self.model_path, self._patched_model, self._cache_dir)
            if split is None:
                _LOGGER.warning("%s: cannot cut the graph at the latent; decoding whole sentences",
                                self.model_path.name)
        if split is None:
            self.window_frames = 0
            model = self._patched_model()
            whole = model.SerializeToString() if model is not None else str(self.model_path)
            del model
            session = self._new_session(onnxruntime, whole, session_options(), providers)
            decoder, kept, cut, noise = None, False, ("", ""), None
        else:
            self._has_alignment = split.durations is not None
            from studio.engine.onnx.split import ENCODER_PRE_OPTIMIZED

            # the encoder sees whole sentences of any length: an arena would keep the largest
            # one's buffers for good, and the encoder is a small part of the time
            session = self._new_session(onnxruntime, str(split.encoder),
                                        session_options(arena=False, pre_optimized=ENCODER_PRE_OPTIMIZED), providers)
            decoder, kept = None, False
            if not self.encode_only:
                path = split.decoder
                if self.device == "cpu":  # layouts kept across the residual adds, built once per machine
                    from studio.engine.onnx.residual_layouts import kept_layouts_decoder

                    mean = next(o for o in session.get_outputs() if o.name == split.noise.mean)
                    path = kept_layouts_decoder(split.decoder, mean.shape[1], self._cache_dir) or path
                    kept = path != split.decoder
                decoder = self._new_session(onnxruntime, str(path), session_options(pre_optimized=kept), providers)
            cut, noise = (split.latent, split.mask), split.noise
        providers = list(session.get_providers())
        _LOGGER.info(
            "loaded %s (providers=%s, threads=%s, alignment=%s, window=%s)",
            self.model_path.name, providers, self.threads or "default", self._has_alignment,
            self.window_frames or "whole",
        )
        return LoadedModel(session, decoder, cut, self._has_alignment, self.window_frames, providers, noise,
                           decoder_layouts_kept=kept)

    def _new_session(self, onnxruntime, model, options, providers):  # -> onnxruntime.InferenceSession
        try:
            return onnxruntime.InferenceSession(model, sess_options=options, providers=providers)
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types
            raise EngineError(f"{self.model_path.name}: cannot load voice model ({exc})") from exc

    def _patched_model(self):  # -> onnx.ModelProto | None
        """The model with its duration tensor as an extra output (None: onnx missing)."""
        try:
            import onnx
            from piper.patch_voice_with_alignment import add_alignment_output
        except ImportError as exc:
            _LOGGER.warning("onnx not importable (%s): batching disabled for %s", exc, self.model_path.name)
            return None
        try:
            model = onnx.load(str(self.model_path))
        except Exception as exc:  # protobuf DecodeError, OSError, ...
            raise EngineError(f"{self.model_path.name}: not a readable ONNX model ({exc})") from exc
        if len(model.graph.output) >= 2:
            # Already patched on disk (piper's CLI tool writes the file in place).
            self._has_alignment = True
            return model
        try:
            add_alignment_output(model)
        except ValueError as exc:
            _LOGGER.warning("%s: no alignment output (%s); items run one by one", self.model_path.name, exc)
            return model
        self._has_alignment = True
        return model

    def _call(self, session, *, batch: Sequence[Sequence[int]], settings: SynthesisSettings,
              seeds: Sequence[int] | None = None) -> list:
        """One session call on the padded batch (whole graph or first half).

        ``seeds`` (the first half only): each row's duration noise is drawn from its
        seed (:mod:`studio.engine.noise`); padding columns get zeros, masked anyway."""
        lengths = np.array([len(seq) for seq in batch], dtype=np.int64)
        pad_id = self.config.phoneme_id_map["_"][0]
        inputs = np.full((len(batch), int(lengths.max())), pad_id, dtype=np.int64)
        for row, seq in enumerate(batch):
            inputs[row, : len(seq)] = np.asarray(seq, dtype=np.int64)
        feeds = {
            "input": inputs,
            "input_lengths": lengths,
            "scales": np.array(
                [settings.noise_scale, settings.length_scale, settings.noise_w], dtype=np.float32
            ),
        }
        try:
            sid = self.config.resolve_speaker(settings.speaker_id)
        except ValueError as exc:
            raise EngineError(str(exc)) from exc
        if sid is not None:
            feeds["sid"] = np.full(len(batch), sid, dtype=np.int64)
        if seeds is not None and self._noise is not None:
            noise = np.zeros((len(batch), 2, inputs.shape[1]), dtype=np.float32)
            for row, (seq, seed) in enumerate(zip(batch, seeds)):
                noise[row, :, : len(seq)] = standard_normal(seed, DURATION_NOISE, 2, len(seq))
            feeds[self._noise.duration] = noise
        try:
            return session.run(None, feeds)
        except Exception as exc:
            raise EngineError(f"synthesis failed for {self.model_path.name}: {exc}") from exc

    def _run(self, batch: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[AlignedAudio]:
        """One session call for a batch; crops each item to its own length."""
        session = self._session
        if session is None:  # closed concurrently
            raise EngineError("engine is closed")
        hop = self.config.hop_length
        if self._cut[0]:
            # one sentence at a time: a padded batch would size the encoder's buffers (and so
            # ORT's arena, which never shrinks) by batch x longest sentence; the windows
            # already bound the decoder's, and on a CPU batching is slower anyway
            out = []
            for seq in batch:
                (latent,) = self.encode_batch([seq], settings)
                out.append((decode_all(self, latent, hop), latent.samples_per_id))
            return out
        if settings.emphasis_ids:
            _LOGGER.warning("%s decodes whole sentences: emphasis is not realized (it is on %s)",
                            self.model_path.name, ", ".join(emphasis.HEARD_ON))
        result = self._call(session, batch=batch, settings=settings)
        audio = result[0].reshape(len(batch), -1)
        out: list[AlignedAudio] = []
        for row, seq in enumerate(batch):
            samples: np.ndarray | None = None
            if self._has_alignment and len(result) > 1:
                durations = result[1].reshape(len(batch), -1)[row, : len(seq)]
                samples = (np.rint(durations).astype(np.int64) * hop)
                n = max(int(samples.sum()), hop)  # the model clamps y_length to >= 1 frame
                if n > audio.shape[1]:
                    raise EngineError(
                        f"alignment says {n} samples but the model produced {audio.shape[1]}"
                    )
                item = audio[row, :n]
            else:
                item = audio[row]
            out.append((limited(item), samples))
        return out
