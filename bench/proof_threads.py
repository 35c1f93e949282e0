"""Whisper base on two cores: one window on two threads, or two windows at once on one thread each.

    python bench/proof_threads.py [--windows 8] [--rounds 2]

CTranslate2 splits a model call over ``intra_threads`` (faster-whisper's ``cpu_threads``) or
runs ``inter_threads`` calls side by side (``num_workers``). The listener hears one window at
a time; this measures, on the evaluation set's audio (``bench/proof.py`` renders it), what
each layout costs for the same windows: encoding, greedy decoding and the forced alignment
of the heard tokens, as the listener does them. A B A B, wall and CPU time, the load recorded.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from proof import WORK, load_average  # noqa: E402


def windows(count: int) -> list[np.ndarray]:
    """``count`` windows of about 28 s, the set's sentences laid end to end with 0.4 s gaps."""
    from studio.audio.resample import resample
    from studio.proof.windows import GAP_S, RATE, WINDOW_S

    data = np.load(WORK / "audio-7-150-40.npz")
    rate = int(data["rate"])
    out, parts, used = [], [], 0.0
    for i in range(600):
        audio = resample(data[f"a{i}"], rate, RATE)
        if used + len(audio) / RATE > WINDOW_S and parts:
            out.append(np.concatenate(parts))
            parts, used = [], 0.0
            if len(out) == count:
                break
        parts += [audio, np.zeros(int(GAP_S * RATE), np.float32)]
        used += len(audio) / RATE + GAP_S
    return out


def hear(model, tok, audio: np.ndarray) -> None:
    from studio.proof.listen import MAX_FRAMES

    features = model.feature_extractor(audio)
    frames = min(int(features.shape[-1]), MAX_FRAMES)
    features = np.pad(features, ((0, 0), (0, max(0, MAX_FRAMES - features.shape[-1]))))[:, :MAX_FRAMES]
    encoded = model.encode(features[None].astype(np.float32))
    start = list(tok.sot_sequence) + [tok.no_timestamps]
    result = model.model.generate(encoded, [start], beam_size=1, max_length=448, suppress_blank=True,
                                  suppress_tokens=[-1])[0]
    tokens = [t for t in result.sequences_ids[0] if t < tok.eot] or tok.encode(" .")
    model.model.align(encoded, tok.sot_sequence, [tokens], [frames], median_filter_width=7)


def run(layout: str, audios: list[np.ndarray]) -> tuple[float, float]:
    from faster_whisper.tokenizer import Tokenizer

    from studio.proof.model import choose_model
    from faster_whisper import WhisperModel

    choice = choose_model(None, "cpu")
    workers = 2 if layout == "two windows at once" else 1
    model = WhisperModel(choice.source, device="cpu", compute_type="int8", cpu_threads=2 // workers,
                         num_workers=workers, local_files_only=True)
    tok = Tokenizer(model.hf_tokenizer, True, task="transcribe", language="en")
    hear(model, tok, audios[0])  # warm
    wall, cpu = time.monotonic(), time.process_time()
    if workers == 1:
        for audio in audios:
            hear(model, tok, audio)
    else:
        threads = [threading.Thread(target=lambda part=audios[k::2]: [hear(model, tok, a) for a in part])
                   for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return time.monotonic() - wall, time.process_time() - cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--windows", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    audios = windows(args.windows)
    seconds = sum(len(a) for a in audios) / 16_000
    print(f"{len(audios)} windows, {seconds:.0f} s of speech; {os.cpu_count()} CPUs")
    for r in range(args.rounds):
        for layout in ("one window on two threads", "two windows at once"):
            before = load_average()
            wall, cpu = run(layout, audios)
            print(f"round {r + 1}, {layout}: {wall:.1f} s wall ({seconds / wall:.1f}x real time), {cpu:.1f} s CPU; "
                  f"load {before} -> {load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
