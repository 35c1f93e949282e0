"""The GPU check's rows for the other voice families: Kokoro on ONNX Runtime's CUDA provider
and XTTS on torch, each at batch 1 and 8 (real time factor, device memory).

Why separate from the VITS rows (:mod:`studio.measure.gpu.check`): their models cannot travel
with the working tree (Kokoro's exports are 92-310 MB, XTTS's checkpoint 1.8 GB; the tree
may carry 64 MiB), so each row runs when the GPU machine has the model (``--kokoro-voices
DIR``: a voices folder holding ``kokoro/kokoro-v1.0.fp16.onnx`` as a user keeps it;
``--xtts-model DIR``; or ``STUDIO_KOKORO_VOICES`` / ``STUDIO_XTTS_MODEL``) and otherwise
says so as an ``unavailable`` row. What does travel is prepared here: one Kokoro pack
(0.5 MB) and the Kokoro tokens of the check's sentences, so no espeak-ng is needed there.
Kokoro is reached as any caller above the engine reaches it: a voice and a preset.

"Batch 8" for Kokoro is eight sentences in flight on one session (the v1.0 export takes one
sentence per call: its alignment is per item), for XTTS eight sentences one after another
on one loaded model (coqui's XTTS inference has no batched call); both say so in the row.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

import numpy as np

from studio.measure.gpu.measures import NOISE_OFF, mib

KOKORO_PACK = "jm_kumo"
#: the check's Kokoro sentences: short and long, as a book mixes them (the dry run takes two)
KOKORO_SENTENCES = 16


#: the issue's goals on a GPU, x real time: reported with the VITS goals (:func:`studio.measure.gpu.measures.goals`)
GOALS = {"kokoro": 100.0, "xtts": 5.0}


def family_goals(rows) -> list[str]:
    """``kokoro >= 100x real time: 240x met`` and the like, from the family throughput rows."""
    out = []
    for family, goal in GOALS.items():
        xrt = [r["x_realtime"] for r in rows if r.get("kind") == "family throughput" and r.get("family") == family]
        best = max(xrt) if xrt else None
        out.append(f"{family} >= {goal:g}x real time: "
                   + ("not measured" if best is None else f"{best:,.1f}x {'met' if best >= goal else 'missed'}"))
    return out


def prepare_kokoro(out: Path, sentences: list[str]) -> dict[str, Any] | None:
    """One Kokoro pack and the tokens of ``sentences`` into ``out/kokoro`` (None: no Kokoro voice here).

    Through the registry and the presets, as any caller above the engine: the pack is the
    voice mixed with itself alone and saved by its mixer (into a scratch voices folder), the
    tokens come from its engine's front end (not loaded)."""
    import shutil

    from studio.core.errors import StudioError
    from studio.engine.presets import open_preset
    from studio.engine.voice.catalog import VOICES_DIR_ENV, get_voice
    from studio.engine.voice.mixing import mixer_for

    voice_id = f"kokoro:{KOKORO_PACK}"
    folder = out / "kokoro"
    saved_env = os.environ.get(VOICES_DIR_ENV)
    try:
        voice = get_voice(voice_id)
        engine = open_preset(voice.abilities.presets[0], voice, threads=1)
        mixer = mixer_for(f"{voice_id}=1")
        blend = mixer.mix(f"{voice_id}=1")
        with tempfile.TemporaryDirectory() as scratch:
            os.environ[VOICES_DIR_ENV] = scratch
            saved = mixer.save(f"{KOKORO_PACK}_gpu_check", blend)  # a pack's own name is taken
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(saved.model_path, folder / f"{KOKORO_PACK}{saved.model_path.suffix}")
    except StudioError:
        return None
    finally:
        if saved_env is None:
            os.environ.pop(VOICES_DIR_ENV, None)
        else:
            os.environ[VOICES_DIR_ENV] = saved_env
    by_length = sorted(sentences, key=len)
    picked = [by_length[int(i)] for i in np.linspace(0, len(by_length) - 1, KOKORO_SENTENCES).round()]
    tokens = [engine.text_to_ids(s, "en") for s in picked]
    engine.close()
    (folder / "tokens.json").write_text(json.dumps({"tokens": tokens}), encoding="utf-8")
    return {"id": voice_id, "family": voice.family, "language": voice.language, "sample_rate": voice.sample_rate,
            "presets": list(voice.abilities.presets), "pack": f"kokoro/{KOKORO_PACK}.npy",
            "tokens": "kokoro/tokens.json", "sentences": len(tokens)}


def kokoro_rows(writer, step: Callable, folder: Path, device: str, dry_run: bool, voices: Path | None) -> None:
    """``kokoro load``, ``kokoro batch 1``, ``kokoro batch 8`` (see the module notes). ``voices``: a
    voices folder holding the export as a user keeps it (``kokoro/kokoro-v1.0.fp16.onnx``)."""
    from studio.engine.voice.catalog import VOICES_DIR_ENV
    from studio.engine.presets import open_preset
    from studio.engine.voice.info import VoiceAbilities, VoiceInfo

    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8")).get("kokoro")
    voices = voices or (Path(os.environ["STUDIO_KOKORO_VOICES"]) if os.environ.get("STUDIO_KOKORO_VOICES") else None)
    if manifest is None:
        writer.add("kokoro", "unavailable", "the prepared folder has no Kokoro pack (no Kokoro voice where it was prepared)")
        return
    if voices is None and not dry_run:
        writer.add("kokoro", "unavailable", "no Kokoro export on this machine (92-310 MB: it cannot travel with the "
                                            "tree); pass --kokoro-voices DIR, a voices folder holding "
                                            "kokoro/kokoro-v1.0.fp16.onnx, or set STUDIO_KOKORO_VOICES")
        return
    # the voices folder the preset's engine looks in: the one given, else (a dry run) an empty one, so
    # the offline model runs and no system folder is looked up (platformdirs is not on the GPU machine)
    os.environ[VOICES_DIR_ENV] = str(voices or tempfile.mkdtemp(prefix="gpu-check-voices-"))
    voice = VoiceInfo(id=manifest["id"], name=manifest["id"], family=manifest["family"], language=manifest["language"],
                      sample_rate=int(manifest["sample_rate"]), model_path=folder / manifest["pack"],
                      config_path=folder / manifest["pack"], source="prepared",
                      abilities=VoiceAbilities(presets=tuple(manifest["presets"])), default_settings=NOISE_OFF)
    tokens = json.loads((folder / manifest["tokens"]).read_text(encoding="utf-8"))["tokens"]
    tokens = sorted(tokens, key=len)[:1] if dry_run else tokens  # the dry run: the shortest sentence
    preset = "int8-cpu" if dry_run else "fp16-cuda"  # the dry run: the offline INT8 model on the CPU
    held: dict[str, Any] = {}

    def load() -> tuple[str, str, dict]:
        from studio.engine.cuda_info import device_memory

        before = device_memory(device) if device.startswith("cuda") else None
        start = time.perf_counter()
        engine = open_preset(preset, voice, device=device, threads=1 if dry_run else None)
        engine.load()
        if not dry_run:  # warm-up: kernels, arena (a dry run only checks the path)
            engine.synthesize_batch(tokens[:1], NOISE_OFF)
        held["engine"] = engine
        after = device_memory(device) if device.startswith("cuda") else None
        resident = None if before is None or after is None else after[0] - before[0]
        return "ok", f"loaded in {time.perf_counter() - start:.1f} s; resident {mib(resident)}; {engine.describe()}", \
            {"load_s": time.perf_counter() - start, "resident_bytes": resident, "preset": preset}

    step("kokoro load", 10, load, kind="family load", family="kokoro")
    if "engine" not in held:
        return
    engine = held["engine"]
    for batch in (1, 8):
        step(f"kokoro batch {batch}", 30, lambda b=batch: _kokoro_throughput(engine, tokens, b, device),
             kind="family throughput", family="kokoro")
    engine.close()


def _kokoro_throughput(engine, tokens: list, batch: int, device: str) -> tuple[str, str, dict]:
    from studio.engine.cuda_info import DevicePeakMeter

    settings = NOISE_OFF
    start = time.perf_counter()
    with DevicePeakMeter(device if device.startswith("cuda") else None, interval_s=0.01) as meter:
        if batch == 1:
            audio = [engine.synthesize_batch([t], settings)[0] for t in tokens]
        else:
            with ThreadPoolExecutor(batch) as pool:
                audio = list(pool.map(lambda t: engine.synthesize_batch([t], settings)[0], tokens))
    wall = time.perf_counter() - start
    seconds = sum(a.size for a in audio) / engine.sample_rate
    xrt = seconds / wall if wall > 0 else 0.0
    how = "one at a time" if batch == 1 else f"{batch} in flight on one session"
    return "ok", (f"{xrt:,.1f}x real time (RTF {1 / xrt if xrt else 0:.4f}), {len(tokens)} sentences {how}, "
                  f"{seconds:.0f} s audio in {wall:.1f} s; device peak {mib(meter.peak)}"), \
        {"batch": batch, "x_realtime": round(xrt, 1), "rtf": 1 / xrt if xrt else None, "audio_s": seconds,
         "wall_s": wall, "device_peak_bytes": meter.peak}


def xtts_rows(writer, step: Callable, device: str, dry_run: bool, given: Path | None, sentences: list[str]) -> None:
    """``xtts load``, ``xtts batch 1``, ``xtts batch 8`` when coqui-tts and an XTTS checkpoint are here."""
    import importlib.util

    folder = given or (Path(os.environ["STUDIO_XTTS_MODEL"]) if os.environ.get("STUDIO_XTTS_MODEL") else None)
    if importlib.util.find_spec("TTS") is None:
        writer.add("xtts", "unavailable", "coqui-tts is not installed on this machine")
        return
    if folder is None or not (folder / "config.json").is_file():
        writer.add("xtts", "unavailable", "no XTTS checkpoint on this machine (1.8 GB: it cannot travel with the "
                                          "tree); pass --xtts-model DIR (config.json, model.pth, vocab.json, "
                                          "a speaker WAV as speaker.wav) or set STUDIO_XTTS_MODEL")
        return
    held: dict[str, Any] = {}

    def load() -> tuple[str, str, dict]:
        import torch
        from TTS.tts.configs.xtts_config import XttsConfig
        from TTS.tts.models.xtts import Xtts

        start = time.perf_counter()
        config = XttsConfig()
        config.load_json(str(folder / "config.json"))
        model = Xtts.init_from_config(config)
        model.load_checkpoint(config, checkpoint_dir=str(folder), eval=True)
        model.to(device)
        latents = model.get_conditioning_latents(audio_path=[str(folder / "speaker.wav")])
        held.update(model=model, latents=latents, rate=config.audio.output_sample_rate)
        resident = torch.cuda.memory_allocated() if device.startswith("cuda") else None
        return "ok", f"loaded in {time.perf_counter() - start:.1f} s; {mib(resident)} torch", \
            {"load_s": time.perf_counter() - start, "resident_bytes": resident}

    step("xtts load", 60, load, kind="family load", family="xtts")
    if "model" not in held:
        return
    texts = sentences[:2] if dry_run else sentences[:16]
    for batch in (1, 8):
        step(f"xtts batch {batch}", 60, lambda b=batch: _xtts_throughput(held, texts[: max(b, 2)]),
             kind="family throughput", family="xtts")


def _xtts_throughput(held: dict, texts: list[str]) -> tuple[str, str, dict]:
    model, (gpt_latent, speaker) = held["model"], held["latents"]
    start = time.perf_counter()
    samples = sum(np.asarray(model.inference(t, "en", gpt_latent, speaker)["wav"]).size for t in texts)
    wall = time.perf_counter() - start
    seconds = samples / held["rate"]
    xrt = seconds / wall if wall > 0 else 0.0
    return "ok", f"{xrt:,.2f}x real time, {len(texts)} sentences one after another on one model", \
        {"batch": len(texts), "x_realtime": round(xrt, 2), "audio_s": seconds, "wall_s": wall}
