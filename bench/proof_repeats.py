"""Where the first pass's repeat test is set: words said twice or three times, on tuning text only.

    python bench/proof_repeats.py [--top 2]

Why material of its own: the evaluation set plants one repeated word in a few dozen sentences of
its tuning half, too few to set a bar on. Here every tuning-half English text of the default set
that carries no word plant (clean, or a sound fault) is rendered twice by the bundled voice: as
written, and with one inner word of four letters or more said twice (two in three) or three
times. Cached in ``bench-results/proof-set/repeats-*`` (git-ignored).

It prints the repeat test's gain (:attr:`studio.proof.sphinx.Repeat.gain`) on the clean renderings
and the repeated ones, apart for those every other bar of the first pass trusts and those it
doubts, what each bar between them flags, and the CPU the test adds to the alignment.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from proof import DEFAULT_SET, WORK  # noqa: E402
from proof_set import inner_words, plan, said_again, synthesize  # noqa: E402

#: the kinds whose text is said as written (the plant, if any, is in the sound)
AS_WRITTEN = ("clean", "cut", "silence", "clipping", "noise")


def material(seed: int = 11) -> list[dict]:
    """Each text twice: as written ("clean"), and with one inner word repeated ("repeated", "tripled")."""
    from studio.text.normalize import spoken_form

    rng = random.Random(seed)
    out = []
    for it in plan(*DEFAULT_SET):
        if it["part"] != "tune" or it["language"] != "en" or it["kind"] not in AS_WRITTEN:
            continue
        toks = it["text"].split()
        inner = inner_words(toks)
        if not inner:
            continue
        k = rng.choice(inner)
        times = rng.choice((2, 2, 3))
        said = said_again(toks, k, times)
        out.append({"text": it["text"], "kind": "repeated" if times == 2 else "tripled",
                    "said": spoken_form(" ".join(said), "en"), "language": "en", "word": said[k]})
        out.append({"text": it["text"], "kind": "clean", "said": spoken_form(it["text"], "en"), "language": "en"})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--top", type=int, default=0, help="words tried (default: the shipped first pass's)")
    args = ap.parse_args()
    from studio.audio.resample import resample
    from studio.proof.listen import FIRST_PASS
    from studio.proof.sphinx import aligner
    from studio.proof.words import expected_text, normalize_words

    top = args.top or FIRST_PASS.top
    items = material()
    audio_file = WORK / "repeats-audio.npz"
    synthesize(items, audio_file)
    data = np.load(audio_file)
    rate = int(data["rate"])
    gains: dict[tuple[str, bool], list[float]] = {(k, t): [] for k in ("clean", "repeated") for t in (True, False)}
    cpu_fit, cpu_test = 0.0, 0.0
    for i, it in enumerate(items):
        audio = resample(data[f"a{i}"], rate, 16_000)
        words = normalize_words(expected_text(it["text"], "en"), "en")
        c = time.process_time()
        fit = aligner().fit(audio, words)
        cpu_fit += time.process_time() - c
        c = time.process_time()
        repeat = aligner().repeat(audio, fit, top, FIRST_PASS.drawn).repeat
        cpu_test += time.process_time() - c
        key = ("clean" if it["kind"] == "clean" else "repeated", FIRST_PASS.trusts(fit))  # the other bars
        gains[key].append(float("-inf") if repeat is None else repeat.gain)
    seconds = sum(data[f"a{i}"].size for i in range(len(items))) / rate
    print(f"{len(items)} renderings of {seconds:.0f} s ({len(items) // 2} clean, {len(items) // 2} with a word "
          f"repeated); CPU: alignment {cpu_fit:.1f} s, the repeat test {cpu_test:.1f} s")
    for trusted in (True, False):
        clean, repeated = (np.sort(gains[(k, trusted)]) for k in ("clean", "repeated"))
        print(f"{'trusted' if trusted else 'doubted'} by the other bars: {clean.size} clean, {repeated.size} repeated")
        print("  highest gains, clean:", " ".join(f"{g:.2f}" for g in clean[-6:]))
        print("  lowest gains, repeated:", " ".join(f"{g:.2f}" for g in repeated[:12]))
        for bar in (0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.8):
            print(f"  bar {bar:.2f}: clean above it {int((clean > bar).sum())} of {clean.size}, repeats at or "
                  f"below it {int((repeated <= bar).sum())} of {repeated.size}"
                  + ("   <- shipped" if bar == (FIRST_PASS.repeat if trusted else FIRST_PASS.repeat_doubted) else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
