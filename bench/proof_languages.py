"""Another language's rules, heard back: fresh text read as written and by another language's rules.

    python bench/proof_languages.py [--texts 120]

Why material of its own: an evaluation set plants another language's rules in 16 to 40 sentences, too
few to say whether that kind reaches 90 %. Here texts no set holds (KJV chapters no set draws
from, :data:`FRESH_PASSAGES`, and the children's literature's dialogue no set holds) are each
rendered twice by the bundled voice: as written, and read by German, French, Spanish or Italian
rules in turn. Whisper hears every rendering, the first pass aligns it (both cached in
``bench-results/proof-set/languages-*``, git-ignored), and the shipped judgement is simulated
as in ``bench/proof.py``: the sentences the first pass trusts taken as heard as written.

It prints, per reading, the renderings flagged with and without the first pass's "unlike English"
test (:attr:`studio.proof.sphinx.FirstPass.unlike`, :attr:`studio.proof.judge.Thresholds.foreign_share`),
and those the first pass trusted (Whisper never hears them).
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from proof import UNSEEN_SETS, WORK, first_heard, held_before, judged  # noqa: E402
from proof_set import OTHER_LANGUAGES, source_sentences, synthesize  # noqa: E402

#: KJV chapters none of the evaluation sets draws from
FRESH_PASSAGES = ("Ex14:1-31", "Nu22:1-41", "Jos6:1-27", "1Ki3:1-28", "Da3:1-30", "Da6:1-28", "Mt2:1-23",
                  "Mr5:1-43", "Joh11:1-57", "Ac9:1-43")


def material(texts: int, seed: int = 12) -> list[dict]:
    """``texts`` fresh texts, half scripture and half dialogue, each as written and by another language's rules."""
    from studio.text.normalize import spoken_form

    rng = random.Random(seed)
    held = held_before(max(s[2] for s in UNSEEN_SETS) + 1)
    out = []
    for source, pool in (("kjv", source_sentences("kjv", FRESH_PASSAGES)), ("dialogue", source_sentences("dialogue"))):
        pool = [s for s in pool if s not in held]
        rng.shuffle(pool)
        for text in pool[:texts // 2]:
            spoken = spoken_form(text, "en")
            base = {"source": source, "text": text, "spoken": spoken, "said": spoken, "edit": {}, "part": "held"}
            out.append({**base, "kind": "clean", "language": "en"})
            out.append({**base, "kind": "language", "language": OTHER_LANGUAGES[len(out) // 2 % len(OTHER_LANGUAGES)]})
    return out


def proof_items(items: list[dict], audio_file: Path) -> list:
    """The renderings as a project would check them: each source's names known, as its book's."""
    from studio.proof.check import ProofItem
    from studio.proof.names import book_names

    data = np.load(audio_file)
    rate = int(data["rate"])
    names = {s: book_names([it["text"] for it in items if it["source"] == s]) for s in {it["source"] for it in items}}
    return [ProofItem(data[f"a{i}"], rate, it["text"], "en", spoken=it["spoken"], names=names[it["source"]])
            for i, it in enumerate(items)]


def heard_and_fits(items: list[dict], audio_file: Path, cache: Path) -> tuple[list, list]:
    """Whisper on every rendering (the first pass off) and the first pass's alignment of each, cached."""
    if cache.is_file():
        run = pickle.loads(cache.read_bytes())
        return run["heard"], run["fits"]
    from studio.audio.resample import resample
    from studio.proof.check import Checker
    from studio.proof.listen import FIRST_PASS
    from studio.proof.windows import RATE
    from studio.proof.words import expected_text, normalize_words

    proof = proof_items(items, audio_file)
    checker = Checker.open()
    checker.listener.first_pass = None
    heard = checker.hear(proof)
    fits = [FIRST_PASS.fit(resample(p.audio, p.rate, RATE), normalize_words(expected_text(p.text, "en"), "en"))
            for p in proof]
    cache.write_bytes(pickle.dumps({"heard": heard, "fits": fits}))
    return heard, fits


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--texts", type=int, default=120)
    args = ap.parse_args()
    from studio.proof.judge import DEFAULT
    from studio.proof.listen import FIRST_PASS
    from studio.proof.second import SecondOpinion

    items = material(args.texts)
    audio_file = WORK / f"languages-audio-{args.texts}.npz"
    synthesize(items, audio_file)
    heard, fits = heard_and_fits(items, audio_file, WORK / f"languages-heard-{args.texts}.pkl")
    proof = proof_items(items, audio_file)
    simulated = first_heard(heard, fits, FIRST_PASS)
    verdicts = {label: judged(items, proof, simulated, t, SecondOpinion()) for label, t in
                (("before", dataclasses.replace(DEFAULT, foreign_share=None)), ("shipped", DEFAULT))}
    seconds = sum(p.audio.size / p.rate for p in proof)
    print(f"{len(items)} renderings of {seconds:.0f} s: {len(items) // 2} texts as written and by another "
          "language's rules")
    print(f"{'read by':10} {'renderings':>10} {'trusted':>8} {'unlike English':>15} {'flagged before':>15} "
          f"{'shipped':>8}")
    for reading in ("en", *OTHER_LANGUAGES):
        sel = [i for i, it in enumerate(items) if it["language"] == reading]
        trusted = sum(FIRST_PASS.trusts(fits[i]) for i in sel)
        foreign = sum(FIRST_PASS.foreign(fits[i]) for i in sel)
        before, now = (sum(bool(verdicts[k][i]) for i in sel) for k in ("before", "shipped"))
        print(f"{reading:10} {len(sel):10d} {trusted:8d} {foreign:15d} {before:9d} ({before / len(sel):4.0%}) "
              f"{now:3d} ({now / len(sel):4.0%})")
    planted = [i for i, it in enumerate(items) if it["kind"] == "language"]
    clean = [i for i, it in enumerate(items) if it["kind"] == "clean"]
    for k in ("before", "shipped"):
        print(f"{k}: another language's rules flagged {np.mean([verdicts[k][i] for i in planted]):.1%}, "
              f"as written flagged {np.mean([verdicts[k][i] for i in clean]):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
