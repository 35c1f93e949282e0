"""The studio's Kokoro against kokoro-onnx, whole processes, A B pairs, medians.

Why whole processes: what a user waits for is the command, start-up and model
assembly included, and memory is the peak of the whole process tree (the studio
renders in a model process). Both sides read the same held-out English prose (the
first chapters of the shared ``childrens-literature.epub`` stories, public-domain
tales; each sentence once, no repeats; nothing was tuned on it) with the same
voice pack (``jm_kumo``) and the same offline INT8 model file:

* A: ``studio render TEXT -o OUT --voice kokoro:jm_kumo --format wav`` (``--preset``
  as given, else the preset the studio chooses here: measured, or the family's reference);
* B: kokoro-onnx 0.6.1 as its README shows it: ``Kokoro(model, voices)``,
  ``create(text, voice=..., speed=1.0, lang="en-us")``, ``soundfile.write``.

Each pair runs A then B (B then A on odd rounds). The speed ratio is the reference's
wall time over the studio's for the same text: what a producer waits for. Seconds of
audio per wall second are printed too, but they do not compare the two: each lays out
its own pauses (the studio's audio is about a tenth longer for the same words), and
silence costs nothing to make. Memory is the peak resident set of the process tree (sampled every
50 ms). ``--proof`` also proof-listens the studio's Kokoro render and a Piper
render of the same text and prints how many sentences each flagged. kokoro-onnx
is installed for this script only (``pip install kokoro-onnx==0.6.1``, or into a folder
named by ``PYTHONPATH``); the studio does not depend on it. CPU seconds of each process tree
are printed too, and the speed ratio by CPU time: on a shared machine wall times say little.

    python bench/kokoro.py [--pairs 3 (0: none)] [--chars 2400] [--preset NAME] [--epub FILE] [--proof]
    python bench/kokoro.py --precisions 12      # INT8 against the fp32-cpu build, in one process
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
EPUB = REPO.parent / "shared" / "fixtures" / "epub" / "childrens-literature.epub"
PACK = "jm_kumo"

#: CPU seconds of each finished run_tree, in order (a loaded machine's wall times say little)
CPU_SECONDS: list[float] = []

REFERENCE = """
import sys, numpy as np, soundfile as sf
from kokoro_onnx import Kokoro
kokoro = Kokoro(sys.argv[1], sys.argv[2])
samples, sample_rate = kokoro.create(open(sys.argv[3], encoding="utf-8").read(), voice=sys.argv[4], speed=1.0,
                                     lang="en-us")
sf.write(sys.argv[5], samples, sample_rate)
"""


def held_out_text(chars: int, epub: Path = EPUB) -> str:
    """Sentences of the shared EPUB's stories, each once, up to ``chars`` characters, as paragraphs."""
    from studio.text.importer import load_manuscript
    from studio.text.segment import is_speakable

    book = load_manuscript(epub)
    seen, paragraphs, total = set(), [], 0
    for chapter in book.chapters[3:]:
        for paragraph in chapter.paragraphs:
            kept = [s.text for s in paragraph.sentences if s.text not in seen and is_speakable(s.text)
                    and len(s.text) > 20]
            seen.update(kept)
            if kept:
                paragraphs.append(" ".join(kept))
                total += len(paragraphs[-1])
            if total >= chars:
                return "\n\n".join(paragraphs)
    return "\n\n".join(paragraphs)


def run_tree(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and the peak RSS (GB) of the whole process tree of ``cmd``; its CPU seconds
    (user + system of the tree, as the OS accounts them) go to :data:`CPU_SECONDS`."""
    import resource

    import psutil

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    root, peak = psutil.Process(proc.pid), 0
    while proc.poll() is None:
        try:
            rss = sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])
            peak = max(peak, rss)
        except psutil.Error:
            pass
        time.sleep(0.05)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU_SECONDS.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed: {proc.stderr.read()[-2000:]}")
    return wall, peak / 1e9


def seconds_of(path: Path) -> float:
    import soundfile

    info = soundfile.info(str(path))
    return info.frames / info.samplerate


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--chars", type=int, default=2400, help="characters of prose (default 2400: ~3 minutes)")
    ap.add_argument("--preset", default=None, help="the studio's preset (default: the one it chooses here, "
                    "measured or the family's reference)")
    ap.add_argument("--epub", type=Path, default=EPUB, help=f"the shared EPUB (default: {EPUB})")
    ap.add_argument("--proof", action="store_true", help="also proof-listen a Kokoro and a Piper render")
    ap.add_argument("--precisions", type=int, default=0, metavar="N",
                    help="instead: the INT8 model against the fp32-cpu build on N held-out sentences, one thread")
    args = ap.parse_args()
    if args.precisions:
        return precisions(args.precisions, args.epub)

    from studio.engine.kokoro.model import offline_model
    from studio.engine.kokoro.packs import offline_packs_file

    work = Path(tempfile.mkdtemp(prefix="kokoro-bench-"))
    text = held_out_text(args.chars, args.epub)
    (work / "prose.md").write_text("# Prose\n\n" + text + "\n", encoding="utf-8")
    (work / "prose.txt").write_text(text.replace("\n\n", "\n"), encoding="utf-8")
    model, packs = offline_model(), offline_packs_file()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
    from studio.core.system import cpu_model
    from studio.engine.cpu_features import notable_flags
    from studio.engine.kokoro.model import model_for

    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {cpu_model()} ({' '.join(notable_flags())}), "
          f"{os.cpu_count()} CPUs; {len(text)} characters; load before: {os.getloadavg()[0]:.2f}\n"
          f"int8-cpu here: {model_for('int8', None).what}")

    def studio(i: int) -> tuple[float, float, float]:
        out = work / f"studio-{i}"
        preset = ["--preset", args.preset] if args.preset else []
        wall, peak = run_tree([sys.executable, "-m", "studio", "render", str(work / "prose.md"), "-o", str(out),
                               "--voice", f"kokoro:{PACK}", "--format", "wav", *preset], env)
        return wall, peak, sum(seconds_of(f) for f in out.glob("*.wav"))

    def reference(i: int) -> tuple[float, float, float]:
        out = work / f"reference-{i}.wav"
        wall, peak = run_tree([sys.executable, "-c", REFERENCE, str(model), str(packs), str(work / "prose.txt"),
                               PACK, str(out)], env)
        return wall, peak, seconds_of(out)

    if args.pairs:
        pairs(args.pairs, studio, reference)
    if args.proof:
        proof_counts(work, env)
    return 0


def pairs(count: int, studio, reference) -> None:
    """``count`` A B pairs (alternating order) and their medians."""
    rows: dict[str, list[tuple[float, float, float]]] = {"studio": [], "kokoro-onnx": []}
    cpu: dict[str, list[float]] = {"studio": [], "kokoro-onnx": []}
    for i in range(count):
        order = [("studio", studio), ("kokoro-onnx", reference)]
        for name, run in order if i % 2 == 0 else order[::-1]:
            rows[name].append(run(i))
            wall, peak, audio = rows[name][-1]
            cpu[name].append(CPU_SECONDS[-1])
            print(f"pair {i + 1} {name:12s} {wall:7.1f} s wall  {CPU_SECONDS[-1]:7.1f} s CPU  {audio:6.1f} s audio  "
                  f"{audio / wall:5.2f}x real time  peak {peak:.2f} GB  load {os.getloadavg()[0]:.2f}")
    speed = {k: statistics.median(a / w for w, _, a in v) for k, v in rows.items()}
    peak = {k: statistics.median(p for _, p, _ in v) for k, v in rows.items()}
    ratios = [rw / sw for (sw, _, _), (rw, _, _) in zip(rows["studio"], rows["kokoro-onnx"])]
    print(f"median: studio {speed['studio']:.2f}x real time, kokoro-onnx {speed['kokoro-onnx']:.2f}x; "
          f"studio's speed over kokoro-onnx's for the same text (wall) per pair {', '.join(f'{r:.2f}' for r in ratios)} "
          f"(median {statistics.median(ratios):.2f}); "
          f"peak memory studio {peak['studio']:.2f} GB, kokoro-onnx {peak['kokoro-onnx']:.2f} GB; "
          f"load after {os.getloadavg()[0]:.2f}")
    by_cpu = [rc / sc for sc, rc in zip(cpu["studio"], cpu["kokoro-onnx"])]
    print(f"by CPU time for the same text: studio/kokoro-onnx per pair {', '.join(f'{r:.2f}' for r in by_cpu)} "
          f"(median {statistics.median(by_cpu):.2f})")


def proof_counts(work: Path, env: dict[str, str]) -> None:
    """Sentences flagged by `studio proof` on the Kokoro render and on a Piper render of the same text."""
    import re

    for voice in (f"kokoro:{PACK}", "en_US-joe-medium"):
        out = work / f"proof-{voice.replace(':', '-')}"
        subprocess.run([sys.executable, "-m", "studio", "render", str(work / "prose.md"), "-o", str(out), "--voice",
                        voice, "--format", "wav"], env=env, check=True, capture_output=True)
        done = subprocess.run([sys.executable, "-m", "studio", "proof", str(out / "prose.studio")], env=env,
                              capture_output=True, text=True)
        counts = re.search(r"(\d+) sentence\(s\) listened to.*; (\d+) need listening", done.stdout)
        print(f"proof-listening {voice}: " + (f"{counts.group(2)} of {counts.group(1)} sentences flagged" if counts
                                                else f"no summary ({done.stderr[-300:]})"))
        for line in done.stdout.splitlines():
            if line.startswith(("    expected", "    heard")):
                print(line)


def precisions(count: int, epub: Path) -> int:
    """CPU seconds per second of audio and peak memory of each preset's model on the same sentences,
    and the INT8 model's log-mel distance (dB) from the fp32-cpu build (same durations: the
    duration predictor is the same in both)."""
    import resource

    import numpy as np

    from studio.engine.base import SynthesisSettings
    from studio.engine.presets import open_preset

    sentences = [s for p in held_out_text(4000, epub).split("\n\n") for s in _sentences(p)][:count]
    audio: dict[str, list[np.ndarray]] = {}
    for preset in ("fp32-cpu", "int8-cpu"):
        engine = open_preset(preset, f"kokoro:{PACK}", threads=1)
        engine.load()
        ids = [engine.text_to_ids(s, "en") for s in sentences]
        started = time.process_time()
        audio[preset] = [engine.synthesize_batch([i], SynthesisSettings())[0] for i in ids]
        cpu = time.process_time() - started
        seconds = sum(a.size for a in audio[preset]) / engine.sample_rate
        print(f"{preset}: {engine.describe()}\n    {cpu / seconds:.3f} CPU s per s of audio ({seconds:.1f} s of audio); "
              f"peak RSS so far {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB")
        engine.close()
    distances = [_log_mel_distance(a, b) for a, b in zip(audio["fp32-cpu"], audio["int8-cpu"])]
    print(f"int8-cpu against fp32-cpu: log-mel distance median {statistics.median(distances):.2f} dB, "
          f"max {max(distances):.2f} dB over {len(distances)} sentences")
    return 0


def _sentences(paragraph: str) -> list[str]:
    from studio.text.segment import split_sentences

    return [s.text for s in split_sentences(paragraph, language="en") if len(s.text) > 20]


def _log_mel_distance(a, b) -> float:
    """Mean absolute difference of 80-band log-mel spectra in dB (the shorter length compared)."""
    import numpy as np
    import scipy.signal

    n = min(a.size, b.size)
    specs = []
    for x in (a[:n], b[:n]):
        _, _, z = scipy.signal.stft(x, fs=24000, nperseg=1024, noverlap=768)
        power = np.abs(z) ** 2
        freqs = np.linspace(0, 12000, power.shape[0])
        mel = 2595 * np.log10(1 + freqs / 700)
        edges = np.linspace(0, mel[-1], 82)
        bands = np.stack([power[(mel >= lo) & (mel < hi)].sum(0) for lo, hi in zip(edges[:-1], edges[2:])])
        specs.append(10 * np.log10(bands + 1e-10))
    return float(np.mean(np.abs(specs[0] - specs[1])))


if __name__ == "__main__":
    raise SystemExit(main())
