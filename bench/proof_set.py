"""The proof-listening evaluation set: public-domain prose of four kinds, planted errors, rendered once.

Why a set of its own: thresholds hand-set on one draw of children's stories did not
carry to 19th-century prose (issue 30), so the set mixes four kinds of text the
project did not write, and every figure is reported on a held-out half that the
thresholds never saw. Sources and licences:

* ``kjv``: the King James Bible (public domain), Debian's ``bible-kjv-text`` read
  through its ``bible`` command (package ``bible-kjv``): long sentences, archaic
  words ("thee", "begat"), names;
* ``dialogue``: the fairy tales of the shared EPUB ``childrens-literature.epub``
  (Andersen, Wilde, Ruskin, Stockton; public-domain texts, packed by the W3C EPUB
  samples, CC-BY-SA 3.0), sentences with quotation marks;
* ``nonfiction``: the shared ``georgia-pls-ssml.epub`` (the 1911 Encyclopaedia
  Britannica's "Georgia", public domain; same packaging licence): figures, areas,
  years, abbreviations ("sq. m.", "ft.");
* ``verse``: the shared ``wasteland.epub`` (T. S. Eliot, 1922, public domain in the
  US; same packaging licence): short lines, quotations, other languages removed.

Each planted sentence gets one error of one kind (:data:`KINDS`); a sentence is
rendered by the bundled voice through the studio's own path (its spoken form, then
the synthesiser) and the audio is cached in ``bench-results/`` (git-ignored).
"""

from __future__ import annotations

import random
import re
import shutil
import os
import subprocess
from pathlib import Path

import numpy as np

KINDS = ("changed", "dropped", "repeated", "tripled", "language", "cut", "silence", "clipping", "noise",
         "heteronym")
SOURCES = ("kjv", "dialogue", "nonfiction", "verse")
#: the shared EPUBs beside the checkout (another place: STUDIO_SHARED_EPUBS, e.g. from a git worktree)
SHARED = Path(os.environ.get("STUDIO_SHARED_EPUBS") or Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "epub")
KJV_PASSAGES = ("Ge1:1-31", "Ge2:1-25", "Ge3:1-24", "Ge6:1-22", "Ge7:1-24", "Ge8:1-22", "Ge22:1-24", "Ge37:1-36",
                "Ex2:1-25", "Ex3:1-22", "Ru1:1-22", "Ru2:1-23", "1Sa17:1-58", "Jon1:1-17", "Jon3:1-10",
                "Lu2:1-52", "Lu15:11-32", "Ac27:1-44", "Jg16:1-31", "Es1:1-22")
OTHER_LANGUAGES = ("de", "fr", "es", "it")
_WORD = re.compile(r"[A-Za-z]{4,}")
_STRIP = ",;:.!?\"'\u201c\u201d\u2018\u2019()"


def _kjv(passages: tuple[str, ...] = KJV_PASSAGES) -> list[str]:
    from studio.text.segment import split_sentences

    if shutil.which("bible") is None:
        raise SystemExit("the KJV needs Debian's bible-kjv and bible-kjv-text: apt-get install bible-kjv")
    out = []
    for ref in passages:
        text = subprocess.run(["bible", "-f", ref], capture_output=True, text=True, check=True).stdout
        for line in text.splitlines():
            verse = re.sub(r"^\S+\d+:\d+\s+", "", line).strip()
            out += [s.text for s in split_sentences(verse)]
    return out


def _epub(name: str, keep) -> list[str]:
    from studio.text.importer import load_manuscript

    book = load_manuscript(SHARED / name)
    return [s.text for c in book.chapters if not c.front_matter and keep(c.title)
            for p in c.paragraphs if p.language == "en" for s in p.sentences]


def source_sentences(source: str, passages: tuple[str, ...] = KJV_PASSAGES) -> list[str]:
    """Every usable sentence of one kind of text (5-35 words, speakable English; ``passages``: the KJV's)."""
    if source == "kjv":
        raw = _kjv(passages)
    elif source == "dialogue":
        raw = [s for s in _epub("childrens-literature.epub", lambda t: t[:3].isdigit()) if re.search("[\"\u201c\u201d]", s)]
    elif source == "nonfiction":
        raw = _epub("georgia-pls-ssml.epub", lambda t: True)
    else:
        raw = _epub("wasteland.epub", lambda t: "NOTES" not in t)
    out, seen = [], set()
    for s in raw:
        words = s.split()
        low = 5 if source == "verse" else 6
        if low <= len(words) <= 35 and s not in seen and s.upper() != s and not re.search(r"[@#/\\|<>{}\[\]]", s):
            seen.add(s)
            out.append(s)
    return out


def _heteronym(text: str) -> tuple[str, str, str] | None:
    """``(word, reading the rules give, the other reading)`` for the first heteronym of ``text``."""
    from studio.text.normalize import heteronyms

    for m in heteronyms.WORDS.finditer(text):
        low = m.group(0).lower()
        if low not in heteronyms.HETERONYMS or low == "august":
            continue
        alt = heteronyms.HETERONYMS[low][0]
        chosen = heteronyms.respell(m)
        other = m.group(0) if chosen.lower() != low else alt
        return m.group(0), chosen, other
    return None


def inner_words(toks: list[str]) -> list[int]:
    """The tokens a word plant may take: words of four letters or more, neither first nor last."""
    return [k for k, w in enumerate(toks[1:-1], 1) if _WORD.fullmatch(w.strip(_STRIP))]


def said_again(toks: list[str], k: int, times: int) -> list[str]:
    """``toks`` with token ``k``'s word said ``times`` times (its punctuation kept on the last)."""
    return toks[:k] + [toks[k].strip(_STRIP)] * (times - 1) + toks[k:]


def plan(per_source: int, per_kind: int, seed: int, exclude: frozenset[str] = frozenset()) -> list[dict]:
    """What each sentence becomes: source, kind, text the voice gets, language, audio edit, split half
    (``exclude``: sentences another set holds, never drawn)."""
    from studio.text.normalize import spoken_form

    rng = random.Random(seed)
    items: list[dict] = []
    for source in SOURCES:
        pool = [s for s in source_sentences(source) if s not in exclude]
        rng.shuffle(pool)
        pool = pool[:per_source]
        quota = {k: per_kind // len(SOURCES) for k in KINDS}
        words = sorted({w.lower() for s in pool for w in _WORD.findall(s)})
        for text in pool:
            het = _heteronym(text)
            if het and quota["heteronym"] > 0:
                kind = "heteronym"
            else:
                kind = next((k for k in KINDS if k != "heteronym" and quota[k] > 0), "clean")
            quota[kind] = quota.get(kind, 0) - 1
            spoken = spoken_form(text, "en")
            item = {"source": source, "text": text, "kind": kind, "spoken": spoken, "said": spoken,
                    "language": "en", "edit": {}}
            toks = text.split()
            inner = inner_words(toks) or [len(toks) // 2]
            if kind in ("changed", "dropped", "repeated", "tripled"):
                k = rng.choice(inner)
                old = toks[k].strip(_STRIP)
                if kind == "changed":
                    new = rng.choice([w for w in words if w[0] != old[0].lower() and abs(len(w) - len(old)) <= 3])
                    toks[k] = toks[k].replace(old, new)
                    item["edit"] = {"word": old, "to": new}
                elif kind == "dropped":
                    item["edit"] = {"word": toks[k]}
                    toks = toks[:k] + toks[k + 1:]
                else:
                    n = 2 if kind == "repeated" else 3
                    item["edit"] = {"word": old, "times": n}
                    toks = said_again(toks, k, n)
                item["said"] = spoken_form(" ".join(toks), "en")
            elif kind == "language":
                item["language"] = OTHER_LANGUAGES[len(items) % len(OTHER_LANGUAGES)]
            elif kind == "heteronym":
                word, chosen, other = het  # type: ignore[misc]
                said = spoken.replace(chosen, other, 1) if chosen in spoken else spoken
                item["said"], item["edit"] = said, {"word": word, "rules": chosen, "said": other}
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
    # the split: alternate members of each (source, kind) group, so both halves hold every cell
    seen: dict[tuple[str, str], int] = {}
    for item in items:
        key = (item["source"], item["kind"])
        item["part"] = "tune" if seen.get(key, 0) % 2 == 0 else "held"
        seen[key] = seen.get(key, 0) + 1
    return items


def synthesize(items: list[dict], out: Path) -> None:
    """Every item spoken by the bundled voice (default preset, the render's own synthesiser), saved as npz
    once: a render already at ``out`` is kept."""
    if out.is_file():
        return
    print(f"rendering {len(items)} texts with the bundled voice (once) ...", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    from studio.engine.base import SynthesisSettings
    from studio.engine.presets import DEFAULT_PRESET, open_preset
    from studio.engine.voice.catalog import get_voice
    from studio.rendering.synthesizer import SynthRequest, each_synthesizer

    engine = open_preset(DEFAULT_PRESET, get_voice(None))
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
    """The audio-level plants (cut, silence, clipping, noise); other kinds pass unchanged."""
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
