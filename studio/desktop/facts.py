"""What this machine offers: voices, presets (and why one is unavailable), benchmark figures.

Why gathered in the background: checking a preset's availability imports torch and
asks the CUDA driver (seconds), listing voices scans folders, and the benchmark
file is on disk; none of that may run on the GUI thread. The result is one frozen
:class:`MachineFacts` the voices/presets dialog just displays.

Benchmark file (written by ``studio bench`` and by the app's "Measure on this machine",
:mod:`studio.desktop.measure`; read-only here). Looked up in order:

1. ``<project folder>/bench.json`` (figures measured for this project's voice),
2. ``$STUDIO_CACHE_DIR/bench.json``, else ``$XDG_CACHE_HOME/studio/bench.json``
   (default ``~/.cache/studio/bench.json``): the machine-wide run.

Accepted shapes -- the reader is deliberately lenient, a malformed file only hides
the figures (the reason is shown), it never breaks the dialog::

    {"machine": "...", "measured_at": "...",
     "presets": {"fp32-cpu": {"x_real_time": 9.8, "rtf": 0.102, "mel_correlation": 1.0,
                              "noise_floor_dbfs": -96.0, "device": "cpu"}, ...}}
    {"presets": [{"preset": "fp32-cpu", "x_real_time": 9.8, ...}, ...]}   # or "results": [...]

Per preset: speed from ``x_real_time`` / ``xrt`` / ``speed`` (or ``1/rtf``), RTF from
``rtf`` / ``real_time_factor`` (or ``1/speed``), quality from ``mel_correlation`` /
``log_mel_correlation`` / ``logmel_corr`` (``bench/cpu_presets.py``'s name) / ``mel_corr`` /
``correlation`` / ``quality``, noise floor from
``noise_floor_dbfs``; an ``error`` entry is shown as the reason the preset did not run.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from studio.core.paths import cache_dir
from studio.stack.preset_advice import bench_facts

log = logging.getLogger(__name__)

BENCH_NAME = "bench.json"
#: a preset the chosen voice's abilities do not list, said plainly
VOICE_CANNOT = "The chosen voice cannot run it (pick one of the voice's own presets)."


@dataclass(frozen=True)
class BenchFigures:
    preset: str
    x_real_time: float | None = None
    rtf: float | None = None
    quality: float | None = None
    noise_floor_dbfs: float | None = None
    device: str = ""
    error: str = ""
    #: a whole ``studio render`` against the piper CLI (the benchmark's first table), when it ran them
    whole_speed: float | None = None

    def summary(self) -> str:
        if self.error:
            return f"benchmark failed: {self.error}"
        parts = []
        if self.whole_speed:
            parts.append(f"whole render {self.whole_speed:.2f}x the piper CLI")
        speed = self.x_real_time or (1.0 / self.rtf if self.rtf else None)  # one speed: RTF is its inverse
        if speed:
            parts.append(f"{speed:.1f}x real time")
        if self.quality is not None:
            parts.append(f"mel corr. {self.quality:.3f}")
        if self.noise_floor_dbfs is not None:
            parts.append(f"noise floor {self.noise_floor_dbfs:.0f} dBFS")
        return ", ".join(parts) or "no figures"


@dataclass(frozen=True)
class PresetInfo:
    name: str
    engine: str
    device: str
    precision: str
    summary: str
    available: bool
    reason: str
    bench: BenchFigures | None = None
    #: why not in a producer's words where the studio itself decided it (else the UI words ``missing``)
    plain_reason: str = ""
    #: what keeps it from running here, as :class:`studio.engine.presets.Missing` names it ("" = runs)
    missing: str = ""

    @property
    def backend(self) -> str:
        """The project setting's backend for this preset (``onnx`` or ``torch``)."""
        return "onnx" if self.engine == "onnx" else "torch"


@dataclass(frozen=True)
class VoiceChoice:
    id: str
    name: str
    language: str
    #: the ISO 639-1 language of ``language`` (``en`` for ``en_US``)
    family: str
    sample_rate: int
    source: str
    #: the presets that can run it
    presets: tuple[str, ...] = ()
    #: `studio bench` can measure it (it compares against the piper CLI)
    benchable: bool = False
    #: the voice mixer can blend it with others (its abilities say ``mixing``)
    mixable: bool = False
    #: the ISO 639-1 languages it speaks, its own first (``ja``, ``en`` for Kokoro's jm_kumo)
    speaks: tuple[str, ...] = ()
    #: those languages as every list shows them (``ja, en``; ``en_US`` for a voice of one)
    languages: str = ""
    #: what each of ``presets`` runs for this voice, in its family's words
    preset_words: tuple[str, ...] = ()
    #: the preset it gets here when none is picked (measured fastest on this computer, else its
    #: family's reference: :func:`studio.stack.preset_speed.default_preset`); "" = not looked up
    default_preset: str = ""

    def speaks_language(self, family: str) -> bool:
        """Whether it reads text in ``family`` (ISO 639-1) as a voice of that language."""
        return family in self.speaks or family == self.family


@dataclass(frozen=True)
class MachineFacts:
    voices: tuple[VoiceChoice, ...]
    presets: tuple[PresetInfo, ...]
    bench_path: str = ""
    bench_note: str = ""
    default_preset: str = ""


def presets_for_voice(facts: MachineFacts, voice_id: str | None) -> MachineFacts:
    """The machine's presets as the chosen voice sees them: a preset the voice cannot run
    does not run here either, and says so (never "Runs here: Yes" for it); one it runs is
    described in its family's words (a Kokoro voice's fp32-cpu is not a Piper voice's)."""
    voice = next((v for v in facts.voices if v.id == voice_id), None)
    if voice is None or not voice.presets:
        return facts
    why = f"the voice {voice.id} cannot run it (its presets: {', '.join(voice.presets)})"
    words = dict(zip(voice.presets, voice.preset_words))
    return replace(facts, presets=tuple(replace(p, summary=words.get(p.name, p.summary)) if p.name in voice.presets
                                        else replace(p, available=False, reason=why, plain_reason=VOICE_CANNOT)
                                        for p in facts.presets))


def bench_paths(project_folder: str | Path | None) -> list[Path]:
    """Where a benchmark file is looked for, first match wins (see the module doc)."""
    paths = []
    if project_folder:
        paths.append(Path(project_folder) / BENCH_NAME)
    paths.append(cache_dir() / BENCH_NAME)
    return paths


def _num(entry: Mapping[str, Any], *keys: str) -> float | None:
    for key in keys:
        value = entry.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def _figures(name: str, entry: Mapping[str, Any]) -> BenchFigures:
    speed = _num(entry, "x_real_time", "xrt", "speed", "x_realtime")
    rtf = _num(entry, "rtf", "real_time_factor")
    if speed is None and rtf:
        speed = 1.0 / rtf
    if rtf is None and speed:
        rtf = 1.0 / speed
    return BenchFigures(
        preset=name, x_real_time=speed, rtf=rtf,
        quality=_num(entry, "mel_correlation", "log_mel_correlation", "logmel_corr", "mel_corr", "correlation", "quality"),
        noise_floor_dbfs=_num(entry, "noise_floor_dbfs", "noise_floor_db"),
        device=str(entry.get("device") or entry.get("gpu") or ""),
        error=str(entry.get("error") or ""),
    )


def parse_bench(data: Any) -> dict[str, BenchFigures]:
    """Preset name -> figures from any accepted shape (ValueError if none is recognised)."""
    entries: Iterable[tuple[str, Any]]
    body = data.get("presets", data.get("results")) if isinstance(data, dict) else data
    if isinstance(body, dict):
        entries = body.items()
    elif isinstance(body, list):
        entries = [(str(e.get("preset") or e.get("name") or ""), e) for e in body if isinstance(e, dict)]
    else:
        raise ValueError("no 'presets' or 'results' in the benchmark file")
    out = {name: _figures(name, e) for name, e in entries if name and isinstance(e, dict)}
    if not out:
        raise ValueError("the benchmark file lists no presets")
    if isinstance(data, dict):  # the whole processes, read as the benchmark's own recommendation reads them
        whole = {f.name: f.whole_speed for f in bench_facts(data, {name: True for name in out})}
        out = {name: replace(f, whole_speed=whole.get(name)) for name, f in out.items()}
    return out


def read_bench(project_folder: str | Path | None) -> tuple[dict[str, BenchFigures], str, str]:
    """``(figures, path used, note)``; the note says why there are no figures."""
    for path in bench_paths(project_folder):
        if not path.is_file():
            continue
        try:
            return parse_bench(json.loads(path.read_text(encoding="utf-8"))), str(path), ""
        except (OSError, UnicodeDecodeError, ValueError, AttributeError) as exc:
            log.warning("cannot read benchmark %s: %s", path, exc)
            return {}, str(path), f"{path} is unreadable ({exc})"
    return {}, "", "no benchmark yet: run `studio bench` to measure the presets on this machine"


def list_voice_choices(*, defaults: bool = False) -> tuple[VoiceChoice, ...]:
    """The installed voices; ``defaults``: with the preset each gets here when none is picked
    (checking a preset can import torch: only in the facts' child process)."""
    from studio.engine.presets import describe
    from studio.engine.voice.catalog import list_voices
    from studio.stack.preset_speed import default_preset
    from studio.text.inspect import language_prefix

    return tuple(
        VoiceChoice(v.id, v.name, v.language, language_prefix(v.language), v.sample_rate, v.source,
                    v.abilities.presets, v.abilities.piper_cli, v.abilities.mixing, v.abilities.languages,
                    v.languages_label, tuple(describe(p, v) for p in v.abilities.presets),
                    default_preset(v).name if defaults and v.abilities.presets else "")
        for v in list_voices()
    )


def list_presets(bench: Mapping[str, BenchFigures]) -> tuple[tuple[PresetInfo, ...], str]:
    """Every preset with its availability here and its benchmark figures."""
    from studio.engine import presets as presets_mod

    out = []
    for name, p in presets_mod.PRESETS.items():
        try:
            ok, reason, missing = presets_mod.availability(name)
        except Exception as exc:  # noqa: BLE001 - a broken optional install must not hide the list
            ok, reason, missing = False, f"{type(exc).__name__}: {exc}", None
        out.append(PresetInfo(name, p.engine, p.device, p.precision, p.summary, ok, reason, bench.get(name),
                              missing=missing or ""))
    return tuple(out), presets_mod.DEFAULT_PRESET


def gather_facts(project_folder: str | Path | None) -> MachineFacts:
    """Voices, presets and benchmark figures (slow: run in the background)."""
    bench, path, note = read_bench(project_folder)
    presets, default = list_presets(bench)
    return MachineFacts(list_voice_choices(defaults=True), presets, path, note, default)


# ------------------------------------------------------------------ in a child process


def facts_from_dict(data: Mapping[str, Any]) -> MachineFacts:
    """Rebuild :class:`MachineFacts` from its JSON form (see :func:`gather_facts_in_subprocess`)."""
    presets = tuple(
        PresetInfo(**{**p, "bench": BenchFigures(**p["bench"]) if p.get("bench") else None}) for p in data["presets"]
    )
    return MachineFacts(
        voices=tuple(VoiceChoice(**{**v, **{k: tuple(v.get(k, ())) for k in ("presets", "speaks", "preset_words")}})
                     for v in data["voices"]),
        presets=presets,
        bench_path=data.get("bench_path", ""), bench_note=data.get("bench_note", ""),
        default_preset=data.get("default_preset", ""),
    )


def gather_facts_in_subprocess(project_folder: str | Path | None, timeout: float = 300.0) -> MachineFacts:
    """:func:`gather_facts` in a child Python process.

    Why: checking preset availability imports torch and coqui-tts; an import of
    that size holds the interpreter lock for seconds at a time, and in a thread of
    the GUI process that freezes the window. A child process pays the same time
    without touching the GUI's interpreter.
    """
    import subprocess
    import sys

    from studio.core.errors import StudioError

    cmd = [sys.executable, "-m", "studio.desktop.facts", str(project_folder or "")]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise StudioError(f"checking voices and presets took longer than {timeout:.0f} s") from exc
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise StudioError(f"checking voices and presets failed: {tail}")
    return facts_from_dict(json.loads(proc.stdout.strip().splitlines()[-1]))


if __name__ == "__main__":  # the child of gather_facts_in_subprocess
    import dataclasses
    import sys as _sys

    logging.basicConfig(level=logging.WARNING, stream=_sys.stderr)
    _facts = gather_facts(_sys.argv[1] if len(_sys.argv) > 1 and _sys.argv[1] else None)
    _sys.stdout.write(json.dumps(dataclasses.asdict(_facts)) + "\n")  # the answer, read by the parent
