"""Proof-listening on an evaluation set with planted errors: recall, clean sentences flagged, speed, memory.

    python bench/proof.py [--per-source 150] [--per-kind 40] [--seed 7] [--part held|tune] [--tune]
                          [--recordings] [--show N] [--fresh] [--json out.json] [--unseen]

The set (:mod:`proof_set`): four kinds of public-domain text, one planted error per
planted sentence, each planted kind spread over the four sources; every (source,
kind) cell is split in two halves, "tune" (thresholds are set there: ``--tune``)
and "held" (the figures). Audio is rendered once by the bundled voice and what the
recogniser heard is cached per listening mode in ``bench-results/proof-set`` (only
the full listening covers the tuning half; the others listen to the held half);
``--fresh`` listens again (and measures speed and memory, each mode in its own
process so its extra resident memory is the model's and the listening's):

* ``previous`` (named in ``--modes`` only): the listener before issue 30 (the tokenizer's split " the", every
  sentence transcribed);
* ``full`` (``full-tune`` and ``full-held``, one process each half): the listener with
  the first pass off (every sentence transcribed by Whisper base);
* ``first-held``: the shipped listener (the first pass on, the doubted sentences heard by
  the model's workers as the first pass goes on), for its speed; the columns' verdicts are
  simulated from the full listening and the first pass's cached alignments (``fits``) so
  every bar is judged on the same transcripts, and the column ``as heard`` judges its own
  transcripts (``--first N``: the half's first N sentences);
* ``prompt`` (``prompt-tune``, ``prompt-held``; not run unless named in ``--modes``):
  the same with the book's vocabulary and the sentence before as the decoder's
  prompt (:mod:`studio.proof.vocabulary`), the column ``+prompt``.

``--tune`` prints how the first pass's scores separate each planted kind from the
clean sentences and the grid of its bars and of the second listener's margin, on the
tuning half (``--tune-judgement``: the judgement's own grid of rounds 1-3).

Judgements compared on the same audio: plain word error counting (1 or 3 words),
round 3's judgement (every sentence heard by Whisper), with the first pass, with the
second listener, and both ("shipped"); ``--all-columns`` adds the previous judgement
and each lever of rounds 1-3 in turn. The checker always expects the original text.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import pickle
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from proof_set import KINDS, SOURCES, apply_edit, plan, synthesize  # noqa: E402

WORK = Path(__file__).resolve().parent.parent / "bench-results" / "proof-set"
#: the default set: sentences per source, planted sentences per kind, the draw's seed
DEFAULT_SET = (150, 40, 7)
#: the sets ``--unseen`` has drawn (per source, per kind, seed): each leaves out the default set's sentences
#: and those of every one drawn before it (docs/proof-listening-benchmark.md says what each was used for)
UNSEEN_SETS = ((150, 32, 8), (150, 32, 9), (150, 32, 10))
MODES = ("full-tune", "full-held", "first-held")  # and "previous", "prompt-tune", "prompt-held" when named


def held_before(seed: int) -> frozenset[str]:
    """The texts of the default set and of every unseen set drawn before ``seed``'s."""
    held = frozenset(it["text"] for it in plan(*DEFAULT_SET))
    for earlier in (s for s in UNSEEN_SETS if s[2] < seed):
        held |= frozenset(it["text"] for it in plan(*earlier, held))
    return held


def rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def load_average() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def proof_items(items: list[dict], audio_file: Path, seed: int, *, new: bool) -> list:
    from studio.proof.check import ProofItem

    data = np.load(audio_file)
    rate = int(data["rate"])
    rng = np.random.default_rng(seed)
    names = book_texts_names()
    out = []
    for i, item in enumerate(items):
        audio = apply_edit(data[f"a{i}"], rate, item, rng)
        # what the project sent to the voice: its spoken form (the heteronym plant: the other reading)
        spoken = (item["said"] if item["kind"] == "heteronym" else item["spoken"]) if new else None
        out.append(ProofItem(audio, rate, item["text"], "en", spoken=spoken, names=names[item["source"]]))
    return out


@functools.lru_cache(maxsize=1)
def book_texts_names() -> dict[str, frozenset[str]]:
    """Each source read as the book it comes from: the names a project of it would know."""
    from proof_set import source_sentences
    from studio.proof.names import book_names

    return {source: book_names(source_sentences(source)) for source in SOURCES}


def listen(mode: str, items: list[dict], audio_file: Path, seed: int, cache: Path, first: int = 0) -> None:
    """Child process: one listening mode over the whole set (``first``: the half's first sentences only);
    what was heard and the cost, cached."""
    from studio.proof.check import Checker

    started = time.monotonic()
    # the full listening serves the tuning too; the other modes are measured on the held half only
    part = "tune" if mode.endswith("-tune") else "held"
    subset = [i for i, it in enumerate(items) if it["part"] == part][:first or None]
    every = proof_items(items, audio_file, seed, new=mode != "previous")  # once: the noise draws run in order
    proof = [every[i] for i in subset]
    base = rss_mib()
    t0 = time.monotonic()
    checker = Checker.open()
    if mode == "previous":
        checker.listener.canonical_tokens = False
    if mode.startswith("prompt"):  # the book's vocabulary as the decoder's prompt (each source its book)
        from proof_set import source_sentences
        from studio.proof.vocabulary import Vocabulary, book_vocabulary

        checker.listener.vocabulary = Vocabulary(frozenset().union(
            *(book_vocabulary(source_sentences(s)).words for s in SOURCES)))
    # every sentence transcribed, or (first) only those the first pass doubts
    if not mode.startswith("first"):
        checker.listener.first_pass = None
    load_s = time.monotonic() - t0
    t1, cpu1 = time.monotonic(), time.process_time()
    heard = checker.hear(proof)
    listen_s, listen_cpu = time.monotonic() - t1, time.process_time() - cpu1
    t2 = time.monotonic()
    checker.verdicts(proof, heard)
    judge_s = time.monotonic() - t2
    whole = time.monotonic() - started
    audio_s = sum(p.audio.size / p.rate for p in proof)
    cost = {"mode": mode, "audio_s": round(audio_s, 1), "model_load_s": round(load_s, 2),
            "listen_s": round(listen_s, 1), "listen_cpu_s": round(listen_cpu, 1), "judge_s": round(judge_s, 1),
            "whole_s": round(whole, 1), "x_real_time": round(audio_s / (load_s + listen_s + judge_s), 2),
            "whole_x_real_time": round(audio_s / whole, 2), "decoded": checker.listener.decoded,
            "trusted": checker.listener.trusted, "cleared": checker.cleared,
            "extra_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - base, 1),
            "load": load_average(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    cache.write_bytes(pickle.dumps({"index": subset, "heard": heard, "cost": cost}))


def fits(items: list[dict], audio_file: Path, seed: int, cache: Path) -> None:
    """Child process: the first pass's alignment of every sentence (a third of the tuning half with the
    free phone loop too, for comparison), and its CPU time (the repeat test's included)."""
    from studio.audio.resample import resample
    from studio.proof.listen import FIRST_PASS
    from studio.proof.windows import RATE
    from studio.proof.sphinx import aligner
    from studio.proof.words import expected_text, normalize_words

    proof = proof_items(items, audio_file, seed, new=True)
    out, cpu, seconds = [], {"tune": 0.0, "held": 0.0, "loop": 0.0}, {"tune": 0.0, "held": 0.0, "loop": 0.0}
    for it, p in zip(items, proof):
        audio = resample(p.audio, p.rate, RATE)
        words = normalize_words(expected_text(p.text, "en"), "en")
        c = time.process_time()
        fit = FIRST_PASS.fit(audio, words)
        cpu[it["part"]] += time.process_time() - c
        seconds[it["part"]] += audio.size / RATE
        if it["part"] == "tune" and len(out) % 3 == 0:  # the loop costs four alignments: a third of the half
            c = time.process_time()
            fit = dataclasses.replace(aligner().fit(audio, words, loop=True), repeat=fit.repeat)
            cpu["loop"] += time.process_time() - c
            seconds["loop"] += audio.size / RATE
        out.append(fit)
    cost = {"cpu": cpu, "audio_s": seconds, "load": load_average(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    cache.write_bytes(pickle.dumps({"fits": out, "cost": cost}))


def wer_errors(expected: str, heard: str) -> int:
    from studio.proof.words import align_words, expected_text, normalize_words

    e, h = normalize_words(expected_text(expected, "en"), "en"), normalize_words(heard, "en")
    return sum(max(r.e1 - r.e0, r.h1 - r.h0) for r in align_words(e, h))


def judged(items: list[dict], proof: list, heard: list, t, second=None) -> list[bool]:
    """Each sentence flagged or not by the judgement ``t`` (and the second listener ``second``, None: none)."""
    from studio.proof.check import Checker
    from studio.proof.model import ModelChoice

    checker = Checker(None, ModelChoice("", "cpu", "int8", "bench"), t, second)
    have = [i for i, h in enumerate(heard) if h is not None]
    got = checker.verdicts([proof[i] for i in have], [heard[i] for i in have], t)
    out: list[bool | None] = [None] * len(heard)
    for i, r in zip(have, got):
        out[i] = r.status == "flagged"
    return out


def figures(items: list[dict], flagged: list[bool], part: str) -> dict:
    sel = [(it, f) for it, f in zip(items, flagged) if it["part"] == part and f is not None]
    out: dict[str, float] = {}
    for kind in KINDS:
        got = [f for it, f in sel if it["kind"] == kind]
        out[kind] = sum(got) / len(got) if got else float("nan")
    planted = [f for it, f in sel if it["kind"] != "clean"]
    out["recall"] = sum(planted) / max(1, len(planted))
    clean = [(it, f) for it, f in sel if it["kind"] == "clean"]
    out["clean"] = sum(f for _, f in clean) / max(1, len(clean))
    for source in SOURCES:
        got = [f for it, f in clean if it["source"] == source]
        out[f"clean:{source}"] = sum(got) / max(1, len(got))
    out["n_clean"], out["n_planted"] = len(clean), len(planted)
    return out


def _objective(f: dict) -> tuple[float, float]:
    """The lowest planted kind's recall, and the tuning score: recall, half the lowest kind, less the
    clean flags (three times over for what is above 3 %)."""
    worst = min(f[k] for k in KINDS if k != "clean")
    return worst, f["recall"] + 0.5 * worst - 3 * max(0.0, f["clean"] - 0.03) - f["clean"]


def tune(items: list[dict], proof: list, heard: list) -> None:
    """A small grid on the tuning half: most recall with clean sentences flagged at most 3 %."""
    from studio.proof.judge import DEFAULT, ROUND2

    for differing in (None, 1.0, 2.0, 3.0, 5.0):  # round 3: what counts towards "garbled"
        for short in (0, 2, 3, 5):
            t = dataclasses.replace(ROUND2, symbols=True, differing_tie=differing, short=short)
            f = figures(items, judged(items, proof, heard, t), "tune")
            worst, score = _objective(f)
            print(f"round 3: differing_tie {differing} short {short}: recall {f['recall']:.1%} (lowest kind "
                  f"{worst:.0%}) clean {f['clean']:.1%} " + " ".join(f"{s} {f['clean:' + s]:.0%}" for s in SOURCES)
                  + f" score {score:.3f}", flush=True)
    best = None
    for drop in (0.003, 0.01, 0.03):
        for ratio in (3.0, 4.0, 5.0, 6.0):
            for weakest in (False, True):
                for longer in (None, 1.6):
                    t = dataclasses.replace(DEFAULT, drop_weakest=drop, ratio=ratio, ratio_weakest=weakest,
                                            longer=longer)
                    f = figures(items, judged(items, proof, heard, t), "tune")
                    worst, score = _objective(f)
                    if best is None or score > best[0]:
                        best = (score, t, f)
                    print(f"dropped below {drop} ratio {ratio} weakest {weakest} longer {longer}: recall "
                          f"{f['recall']:.1%} (lowest kind {worst:.0%}) clean {f['clean']:.1%}", flush=True)
    print("best on the tuning half:", best[1], {k: round(v, 3) for k, v in best[2].items()})
    for nil in (None, 1e-5, 1e-4, 1e-3, 3e-3):  # then: no near tie when a word not heard has a nil token
        f = figures(items, judged(items, proof, heard, dataclasses.replace(best[1], tie_nil=nil)), "tune")
        worst, score = _objective(f)
        print(f"... tie_nil {nil}: recall {f['recall']:.1%} (lowest kind {worst:.0%}) clean {f['clean']:.1%} "
              f"score {score:.3f}", flush=True)


def first_heard(heard: list, fits: list, first_pass) -> list:
    """The full listening with the sentences ``first_pass`` trusts taken as heard as written (what the
    listener does without transcribing them), and what it hears in the others."""
    from studio.proof.listen import Heard, with_first_pass

    out = []
    for h, fit in zip(heard, fits):
        if isinstance(h, Heard) and first_pass.trusts(fit):
            h = Heard(h.expected, h.expected, "", False)
        elif isinstance(h, Heard):
            h = with_first_pass(h, fit, first_pass)
        out.append(h)
    return out


def first_pass_grid(items: list[dict], proof: list, heard: list, fits: list) -> None:
    """The first pass's bars and the second listener's margin, tuning half only: what each trusts and
    what that costs in recall; then how the scores separate the kinds (the free phone loop beside)."""
    from studio.proof.judge import DEFAULT
    from studio.proof.listen import FIRST_PASS
    from studio.proof.sphinx import FirstPass
    from studio.proof.second import SecondOpinion

    heard = [h if it["part"] == "tune" else None for it, h in zip(items, heard)]  # judged on the tuning half only
    tune_idx = [i for i, h in enumerate(heard) if h is not None]
    for kind in ("clean", *KINDS):
        sel = [fits[i] for i in tune_idx if items[i]["kind"] == kind]
        ok = [f for f in sel if not f.failed]
        if not ok:
            print(f"{kind:10} n={len(sel):3} failed {len(sel):2} (the aligner found no path: doubted)")
            continue
        worst = [min(w.forced for w in f.words) for f in ok]
        loop = [min(w.forced - w.free for w in f.words) for f in ok if f.free is not None]
        print(f"{kind:10} n={len(sel):3} failed {len(sel) - len(ok):2}  worst word median {np.median(worst):6.2f} "
              f"p10 {np.percentile(worst, 10):6.2f}  sentence median {np.median([f.forced for f in ok]):6.2f}  "
              f"pause>0.5s {sum(f.silence > 0.5 for f in ok):2}  loop margin median "
              f"{np.median(loop) if loop else float('nan'):6.2f}", flush=True)
    base = figures(items, judged(items, proof, heard, DEFAULT), "tune")
    print(f"every sentence to Whisper: recall {base['recall']:.1%} clean {base['clean']:.1%}")
    n_tune = len(tune_idx)
    clean = [i for i in tune_idx if items[i]["kind"] == "clean"]
    one_bar = [FirstPass(word, sentence, pause, short=0.0) for word in (-2.5, -3.0, -4.0, -5.0, -6.0)
               for sentence in (-1.2, -1.4, -1.6, -1.8, -2.2) for pause in (0.5, 1.0, 1.5)]
    short_bar = [FirstPass(word, short=short, short_word=short_word) for word in (-3.0, -4.0)
                 for short in (0.08, 0.10, 0.12, 0.15) for short_word in (-4.0, -5.0, -6.0, -8.0)]
    for fp in one_bar + short_bar:
        trusted = [i for i in tune_idx if fp.trusts(fits[i])]
        # the judgement as shipped: with the second listener
        f = figures(items, judged(items, proof, first_heard(heard, fits, fp), DEFAULT, SecondOpinion()), "tune")
        print(f"first pass word {fp.word} sentence {fp.sentence} pause {fp.pause} short word {fp.short_word} up to "
              f"{fp.short} s: trusts {len(trusted)} of {n_tune} ({sum(items[i]['kind'] == 'clean' for i in trusted)} "
              f"of {len(clean)} clean); recall {f['recall']:.1%} clean {f['clean']:.1%} "
              + " ".join(f"{k} {f[k]:.0%}" for k in KINDS), flush=True)
    for margin in (-0.1, 0.0, 0.1):
        second = SecondOpinion(margin=margin)
        for name, h in (("every sentence", heard), ("first pass", first_heard(heard, fits, FIRST_PASS))):
            f = figures(items, judged(items, proof, h, DEFAULT, second), "tune")
            print(f"second listener margin {margin} ({name}): recall {f['recall']:.1%} clean {f['clean']:.1%} "
                  + " ".join(f"{k} {f[k]:.0%}" for k in KINDS), flush=True)


def load_fits(args: argparse.Namespace, items: list[dict], audio_file: Path, tag: str) -> list:
    """The first pass's alignment of every sentence (computed once in a child process, cached)."""
    cache = WORK / f"fits-{tag}.pkl"
    if args.fresh or not cache.is_file():
        print("aligning (first pass) ...", flush=True)
        subprocess.run([sys.executable, __file__, *[a for a in sys.argv[1:] if a != "--fresh"], "--child", "fits",
                        str(cache)], check=True)
    run = pickle.loads(cache.read_bytes())
    c = run["cost"]
    print(f"first pass ({c['date']}, load {c['load']}): " + ", ".join(
        f"{part} half {c['audio_s'][part]:.0f} s of audio in {c['cpu'][part]:.1f} s CPU" for part in ("tune", "held"))
        + f"; with the free phone loop (a third of the tuning half) {c['audio_s']['loop']:.0f} s of audio in "
        f"{c['cpu']['loop']:.1f} s CPU", flush=True)
    return run["fits"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-source", type=int, default=DEFAULT_SET[0])
    ap.add_argument("--per-kind", type=int, default=DEFAULT_SET[1])
    ap.add_argument("--seed", type=int, default=DEFAULT_SET[2])
    ap.add_argument("--part", default="held", choices=("held", "tune"))
    ap.add_argument("--tune", action="store_true", help="the first pass's and the second listener's bars")
    ap.add_argument("--tune-judgement", action="store_true", help="the judgement's grid (rounds 1-3)")
    ap.add_argument("--recordings", action="store_true", help="--audio/--text on the half's clean sentences")
    ap.add_argument("--fresh", action="store_true", help="listen again (measures speed and memory)")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--show", type=int, default=0)
    ap.add_argument("--all-columns", action="store_true", help="also each lever of rounds 1-3 in turn")
    ap.add_argument("--json", default="")
    ap.add_argument("--first", type=int, default=0,
                    help="with --child MODE: only the half's first N sentences")
    ap.add_argument("--unseen", action="store_true",
                    help="a set drawn from the sentences neither the default set nor an earlier unseen set "
                         "(UNSEEN_SETS) holds: both its halves are sentences no bar was set on")
    ap.add_argument("--child", nargs=2, metavar=("WHAT", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    items = plan(args.per_source, args.per_kind, args.seed, held_before(args.seed) if args.unseen else frozenset())
    WORK.mkdir(parents=True, exist_ok=True)
    tag = f"{args.seed}-{args.per_source}-{args.per_kind}" + ("-unseen" if args.unseen else "")
    audio_file = WORK / f"audio-{tag}.npz"
    if args.child:
        what, path = args.child
        if what == "synth":
            synthesize(items, Path(path))
        elif what == "fits":
            fits(items, audio_file, args.seed, Path(path))
        else:
            listen(what, items, audio_file, args.seed, Path(path), args.first)
        return 0
    if not audio_file.is_file():  # rendered in a child process of its own
        subprocess.run([sys.executable, __file__, *sys.argv[1:], "--child", "synth", str(audio_file)], check=True)
    runs = {}
    for mode in args.modes.split(","):
        cache = WORK / f"heard-{mode}-{tag}.pkl"
        if args.fresh or not cache.is_file():
            print(f"listening ({mode}) ...", flush=True)
            subprocess.run([sys.executable, __file__, *[a for a in sys.argv[1:] if a != "--fresh"],
                            "--child", mode, str(cache)], check=True)
        run = pickle.loads(cache.read_bytes())
        heard: list = [None] * len(items)
        for i, h in zip(run["index"], run["heard"]):
            heard[i] = h
        runs[mode] = {**run, "heard": heard}
    for name in ("full", "prompt", "first"):
        if f"{name}-tune" in runs and f"{name}-held" in runs:  # one listening, run as two processes
            halves = (runs.pop(f"{name}-tune"), runs.pop(f"{name}-held"))
            runs[name] = {"heard": [a if a is not None else b for a, b in zip(halves[0]["heard"], halves[1]["heard"])],
                          "cost": halves[1]["cost"]}
    from studio.proof.judge import DEFAULT, PREVIOUS, ROUND2, Thresholds

    round1 = Thresholds(heard_sure=0.4, ratio=3.0, ratio_fits=0.3, function_words=True, repeat_sure=0.3)
    new_items = proof_items(items, audio_file, args.seed, new=True)
    old_items = proof_items(items, audio_file, args.seed, new=False)
    if args.recordings:
        from proof_recordings import recordings

        recordings(items, audio_file, args.seed, args.part)
        return 0
    if args.tune:
        first_pass_grid(items, new_items, runs["full"]["heard"], load_fits(args, items, audio_file, tag))
        return 0
    if args.tune_judgement:
        tune(items, new_items, runs["full"]["heard"])
        return 0
    columns: dict[str, list[bool]] = {}
    full = runs.get("full")
    if full:
        raw = [h.raw if hasattr(h, "raw") else "" for h in full["heard"]]
        columns["WER>=1"] = [wer_errors(it["text"], r) >= 1 for it, r in zip(items, raw)]
        columns["WER>=3"] = [wer_errors(it["text"], r) >= 3 for it, r in zip(items, raw)]
    if "previous" in runs:
        columns["previous"] = judged(items, old_items, runs["previous"]["heard"], PREVIOUS)
    if full:
        steps = [("+tokens", PREVIOUS, old_items),
                 ("+ratio", dataclasses.replace(PREVIOUS, ratio=round1.ratio, ratio_fits=round1.ratio_fits), old_items),
                 ("+engine", dataclasses.replace(PREVIOUS, ratio=round1.ratio, ratio_fits=round1.ratio_fits,
                                                 function_words=True), old_items),
                 ("+repeat", round1, old_items),
                 ("round 1", round1, new_items),
                 ("+runs", dataclasses.replace(round1, repeat_ngram=True), new_items),
                 ("+dropped", dataclasses.replace(round1, repeat_ngram=True, drop_weakest=DEFAULT.drop_weakest,
                                                  drop_gain=DEFAULT.drop_gain), new_items),
                 ("+ratio 5", dataclasses.replace(ROUND2, ratio_weakest=False, tie_nil=None), new_items),
                 ("ratio 3", dataclasses.replace(ROUND2, ratio=3.0, tie_nil=None), new_items),
                 ("+tie_nil", ROUND2, new_items),
                 ("round 2", ROUND2, new_items),
                 ("+symbols", dataclasses.replace(ROUND2, symbols=True), new_items)]
        for name, t, proof in steps if args.all_columns else ():
            columns[name] = judged(items, proof, full["heard"], t)
        # round 4: the first pass (simulated on the full listening), the second listener, both ("shipped")
        from studio.proof.listen import FIRST_PASS
        from studio.proof.second import SecondOpinion

        first = first_heard(full["heard"], load_fits(args, items, audio_file, tag), FIRST_PASS)
        for name, h, second in (("round 3", full["heard"], None), ("+first pass", first, None),
                                ("+second", full["heard"], SecondOpinion()), ("shipped", first, SecondOpinion())):
            columns[name] = judged(items, new_items, h, DEFAULT, second)
        if "first-held" in runs:  # the shipped listener's own transcripts: its windows, its workers
            columns["as heard"] = judged(items, new_items, runs["first-held"]["heard"], DEFAULT, SecondOpinion())
    if "prompt" in runs:  # the shipped judgement on a listening with the book's vocabulary as prompt
        columns["+prompt"] = judged(items, new_items, runs["prompt"]["heard"], DEFAULT)
    table = {name: figures(items, flags, args.part) for name, flags in columns.items()
             if any(f is not None and it["part"] == args.part for it, f in zip(items, flags))}
    any_fig = next(iter(table.values()))
    print(f"{len(items)} sentences ({sum(it['part'] == args.part for it in items)} in the {args.part} half: "
          f"{int(any_fig['n_clean'])} clean, {int(any_fig['n_planted'])} planted); load average {load_average()} "
          f"on {os.cpu_count()} CPUs")
    names = list(table)
    print(f"{'':16}" + "".join(f"{n:>11}" for n in names))
    for row in (*KINDS, "recall", "clean", *[f"clean:{s}" for s in SOURCES]):
        print(f"{row:16}" + "".join(f"{table[n][row]:11.1%}" for n in names))
    shipped = table.get("shipped") or table[names[-1]]
    worst_kind = min(KINDS, key=lambda k: shipped[k])
    worst_source = max(SOURCES, key=lambda s: shipped[f"clean:{s}"])
    def verdict(value: float, goal: float, low: bool) -> str:
        ok = value <= goal if low else value >= goal
        return "met" if ok else f"missed by {100 * abs(value - goal):.1f} points"

    label = "shipped" if "shipped" in table else names[-1]
    hardest = shipped["clean:" + worst_source]
    print(f"targets ({label}): clean <= 3 %: {shipped['clean']:.1%} ({verdict(shipped['clean'], 0.03, True)}); "
          f"hardest prose ({worst_source}) <= 5 %: {hardest:.1%} ({verdict(hardest, 0.05, True)}); "
          f"recall >= 95 %: {shipped['recall']:.1%} ({verdict(shipped['recall'], 0.95, False)}); every kind >= 90 %: "
          f"lowest {worst_kind} {shipped[worst_kind]:.1%} ({verdict(shipped[worst_kind], 0.90, False)})")
    for mode, run in runs.items():
        c = run["cost"]
        print(f"speed ({mode}, {c['date']}, load {c['load']}): {c['audio_s']:.0f} s of audio, model load "
              f"{c['model_load_s']} s, listening {c['listen_s']} s ({c['listen_cpu_s']} s CPU), judging "
              f"{c['judge_s']} s: {c['x_real_time']}x real time (whole process {c['whole_x_real_time']}x, "
              f"target 30x); {c['decoded']} sentences transcribed; memory +{c['extra_rss_mib']} MiB (target 600)")
    if args.show and "shipped" in columns:
        heard = runs["full"]["heard"]
        for it, f, h in zip(items, columns["shipped"], heard):
            if it["part"] == args.part and (f != (it["kind"] != "clean")):
                tag_ = "MISS" if it["kind"] != "clean" else "FALSE"
                print(f"{tag_} {it['kind']}/{it['source']}: {it['text'][:90]!r} {it['edit']} heard "
                      f"{getattr(h, 'raw', '')[:90]!r}")
    if args.json:
        Path(args.json).write_text(json.dumps({"figures": table, "cost": {m: r["cost"] for m, r in runs.items()}},
                                              indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
