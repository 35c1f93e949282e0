"""Proof-listening on planted errors: recall per kind, clean sentences flagged, speed, memory.

    python bench/proof.py [--clean 100] [--per-kind 40] [--seed 7] [--work DIR] [--json out.json]

Sentences come from the chapters of the shared EPUB fixtures (long-form prose the
project did not write). Each planted sentence gets one error of one kind:

* ``changed``: a word of the text sent to the voice replaced by another word;
* ``dropped``: a word left out of the text sent to the voice;
* ``language``: the sentence spoken through another language's rules (German,
  French, Spanish, Italian in turn);
* ``cut``: the audio cut off at 45-75 % of its length;
* ``silence``: 1.2-2.5 s of silence inserted between two words;
* ``clipping``: the audio driven 3-6x into full scale;
* ``noise``: a 60-200 ms burst of white noise, as loud as the speech or louder.

The checker always expects the original text. Synthesis (the bundled voice) runs
in a child process once and is cached in ``--work``, so the measured process
holds only the checker: its extra resident memory is the model's and the
listening's. Speed is steady state (model loaded; audio seconds checked per
wall second) and whole process (model load included). The baseline is plain free
transcription with word error counting, on the same transcripts: flagged when
one (or three) normalised words differ.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

KINDS = ("changed", "dropped", "language", "cut", "silence", "clipping", "noise")
SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "epub"
BOOKS = ("childrens-literature.epub", "georgia-pls-ssml.epub")
OTHER_LANGUAGES = ("de", "fr", "es", "it")
_WORD = re.compile(r"[A-Za-z]{4,}")


def corpus(limit: int, seed: int) -> list[str]:
    """Prose sentences of 6-30 words from the fixtures' chapters, shuffled, no repeats."""
    from studio.text.importer import load_manuscript

    seen: set[str] = set()
    out: list[str] = []
    for name in BOOKS:
        book = load_manuscript(SHARED / name)
        for chapter in book.chapters:
            if chapter.front_matter:
                continue
            for para in chapter.paragraphs:
                if para.language != "en":
                    continue
                for s in para.sentences:
                    words = s.text.split()
                    if 6 <= len(words) <= 30 and s.text not in seen and not re.search(r"[0-9@#/\\|<>{}\[\]]", s.text):
                        seen.add(s.text)
                        out.append(s.text)
    random.Random(seed).shuffle(out)
    return out[:limit]


def plan(sentences: list[str], per_kind: int, seed: int) -> list[dict]:
    """What each sentence becomes: kind, text sent to the voice, language it is spoken in, audio edit."""
    rng = random.Random(seed)
    pool = sorted({w.lower() for s in sentences for w in _WORD.findall(s)})
    items = []
    for i, text in enumerate(sentences):
        kind = KINDS[i // per_kind] if i < per_kind * len(KINDS) else "clean"
        item = {"text": text, "kind": kind, "said": text, "language": "en", "edit": {}}
        words = text.split()
        inner = [k for k, w in enumerate(words[1:-1], 1) if _WORD.fullmatch(w.strip(",;:.!?\"'\u201c\u201d"))]
        if kind in ("changed", "dropped") and not inner:
            inner = [len(words) // 2]
        if kind == "changed":
            k = rng.choice(inner)
            old = words[k].strip(",;:.!?\"'\u201c\u201d")
            new = rng.choice([w for w in pool if w[0] != old[0].lower() and abs(len(w) - len(old)) <= 3])
            words[k] = words[k].replace(old, new)
            item["said"], item["edit"] = " ".join(words), {"word": old, "to": new}
        elif kind == "dropped":
            k = rng.choice(inner)
            item["edit"] = {"word": words[k]}
            item["said"] = " ".join(words[:k] + words[k + 1:])
        elif kind == "language":
            item["language"] = OTHER_LANGUAGES[i % len(OTHER_LANGUAGES)]
        elif kind == "cut":
            item["edit"] = {"keep": rng.uniform(0.45, 0.75)}
        elif kind == "silence":
            item["edit"] = {"seconds": rng.uniform(1.2, 2.5), "at": rng.uniform(0.3, 0.7)}
        elif kind == "clipping":
            item["edit"] = {"gain": rng.uniform(3.0, 6.0)}
        elif kind == "noise":
            item["edit"] = {"seconds": rng.uniform(0.06, 0.2), "at": rng.uniform(0.15, 0.85),
                            "level": rng.uniform(1.0, 3.0)}
        items.append(item)
    return items


def synthesize(items: list[dict], out: Path) -> None:
    """Child process: every item spoken by the bundled voice, saved to ``out`` (npz)."""
    from studio.engine.base import SynthesisSettings
    from studio.engine.presets import open_preset
    from studio.engine.voice.catalog import get_voice
    from studio.rendering.render import SynthRequest, each_synthesizer

    engine = open_preset("fp32-cpu", get_voice(None))
    engine.load()
    synth = each_synthesizer(engine, SynthesisSettings())
    audios = {}
    for i, item in enumerate(items):
        (audio,) = synth([SynthRequest(i, item["said"], item["language"])])
        if isinstance(audio, Exception):
            raise audio
        audios[f"a{i}"] = np.asarray(audio, np.float32)
    np.savez(out, rate=engine.sample_rate, **audios)


def _quiet_point(audio: np.ndarray, rate: int, at: float) -> int:
    """A sample near ``at`` (share of the length) in the quietest 10 ms nearby: between words."""
    size = int(rate * 0.01)
    centre = int(len(audio) * at)
    lo, hi = max(0, centre - rate // 2), min(len(audio) - size, centre + rate // 2)
    starts = np.arange(lo, max(lo + 1, hi), size)
    energy = [float(np.sum(audio[s:s + size] ** 2)) for s in starts]
    return int(starts[int(np.argmin(energy))])


def apply_edit(audio: np.ndarray, rate: int, item: dict, rng: np.random.Generator) -> np.ndarray:
    kind, edit = item["kind"], item["edit"]
    if kind == "cut":
        return audio[: int(len(audio) * edit["keep"])].copy()
    if kind == "silence":
        at = _quiet_point(audio, rate, edit["at"])
        return np.concatenate([audio[:at], np.zeros(int(rate * edit["seconds"]), np.float32), audio[at:]])
    if kind == "clipping":
        return np.clip(audio * edit["gain"] / max(1e-6, float(np.max(np.abs(audio)))), -1.0, 1.0).astype(np.float32)
    if kind == "noise":
        n = int(rate * edit["seconds"])
        at = min(len(audio) - n, int(len(audio) * edit["at"]))
        speech = float(np.sqrt(np.mean(audio ** 2)))
        out = audio.copy()
        out[at:at + n] += (rng.standard_normal(n) * speech * edit["level"]).astype(np.float32)
        return out
    return audio


def wer_flags(expected: str, heard: str, threshold: int) -> bool:
    from studio.proof.words import align_words, normalize_words

    e, h = normalize_words(expected, "en"), normalize_words(heard, "en")
    errors = sum(max(r.e1 - r.e0, r.h1 - r.h0) for r in align_words(e, h))
    return errors >= threshold


def rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def cpu_load() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clean", type=int, default=100)
    ap.add_argument("--per-kind", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", default="/tmp/studio-bench-proof")
    ap.add_argument("--json", default="")
    ap.add_argument("--show", type=int, default=0, help="print this many misses and false alarms")
    ap.add_argument("--synth-only", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    started = time.monotonic()
    total = args.clean + args.per_kind * len(KINDS)
    items = plan(corpus(total, args.seed), args.per_kind, args.seed)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    audio_file = work / f"audio-{args.seed}-{args.per_kind}-{args.clean}.npz"
    if args.synth_only:
        synthesize(items, Path(args.synth_only))
        return 0
    if not audio_file.is_file():
        print(f"synthesizing {len(items)} sentences with the bundled voice (child process) ...", flush=True)
        subprocess.run([sys.executable, __file__, "--clean", str(args.clean), "--per-kind", str(args.per_kind),
                        "--seed", str(args.seed), "--synth-only", str(audio_file)], check=True)
    data = np.load(audio_file)
    rate = int(data["rate"])
    rng = np.random.default_rng(args.seed)
    audios = [apply_edit(data[f"a{i}"], rate, item, rng) for i, item in enumerate(items)]
    from studio.proof.check import Checker, ProofItem

    base_rss = rss_mib()
    load_start = time.monotonic()
    checker = Checker.open()
    load_s = time.monotonic() - load_start
    items_in = [ProofItem(a, rate, item["text"], "en") for a, item in zip(audios, items)]
    t0, cpu0 = time.monotonic(), time.process_time()
    records = checker.check(items_in)
    wall, cpu = time.monotonic() - t0, time.process_time() - cpu0
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    audio_s = sum(len(a) for a in audios) / rate
    rows = []
    for item, rec in zip(items, records):
        rows.append({**item, "flagged": rec.status == "flagged", "reasons": rec.reasons, "heard": rec.heard,
                     "wer1": wer_flags(item["text"], rec.heard, 1), "wer3": wer_flags(item["text"], rec.heard, 3)})
    report: dict[str, object] = {"sentences": len(rows), "audio_seconds": round(audio_s, 1), "load": cpu_load(),
                                 "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count()}
    print(f"{len(rows)} sentences, {audio_s / 60:.1f} min of audio; load average {cpu_load()} on {os.cpu_count()} CPUs")
    print(f"{'kind':10} {'n':>4} {'proof':>8} {'WER>=1':>8} {'WER>=3':>8}")
    planted = [r for r in rows if r["kind"] != "clean"]
    for kind in (*KINDS, "clean"):
        sel = [r for r in rows if r["kind"] == kind]
        if not sel:
            continue
        share = {k: sum(r[k] for r in sel) / len(sel) for k in ("flagged", "wer1", "wer3")}
        report[kind] = {"n": len(sel), **{k: round(v, 4) for k, v in share.items()}}
        label = "clean (flagged)" if kind == "clean" else kind
        print(f"{label:10} {len(sel):4d} {share['flagged']:8.1%} {share['wer1']:8.1%} {share['wer3']:8.1%}")
    if planted:
        overall = {k: sum(r[k] for r in planted) / len(planted) for k in ("flagged", "wer1", "wer3")}
        report["overall"] = {k: round(v, 4) for k, v in overall.items()}
        print(f"{'overall':10} {len(planted):4d} {overall['flagged']:8.1%} {overall['wer1']:8.1%} "
              f"{overall['wer3']:8.1%}")
    whole = time.monotonic() - started
    report.update({"steady_x_real_time": round(audio_s / wall, 2), "model_load_s": round(load_s, 2),
                   "check_wall_s": round(wall, 1), "check_cpu_s": round(cpu, 1),
                   "whole_process_s": round(whole, 1), "whole_x_real_time": round(audio_s / whole, 2),
                   "extra_rss_mib": round(peak_rss - base_rss, 1)})
    print(f"speed: steady state {audio_s / wall:.1f}x real time ({wall:.1f} s wall, {cpu:.1f} s CPU for "
          f"{audio_s:.0f} s of audio); whole process {audio_s / whole:.1f}x (model load {load_s:.1f} s, "
          "audio decoding and planting included, synthesis excluded)")
    print(f"memory: {peak_rss - base_rss:.0f} MiB extra resident (peak {peak_rss:.0f} MiB, "
          f"before the model {base_rss:.0f})")
    if args.show:
        misses = [r for r in planted if not r["flagged"]][: args.show]
        alarms = [r for r in rows if r["kind"] == "clean" and r["flagged"]][: args.show]
        for r in misses:
            print(f"MISS {r['kind']}: {r['text']!r} {r['edit']} heard {r['heard']!r}")
        for r in alarms:
            print(f"FALSE {r['reasons']}: {r['text']!r} heard {r['heard']!r}")
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": report, "rows": rows}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
