"""Text normalisation: accuracy per category, milliseconds per sentence, start-up cost.

Run ``python bench/normalize_eval.py`` from the repository root. Candidates, each on the
labelled set in tests/data/normalize (462 sentences in five languages, plus two English
sets written after the rules of a round were frozen, ``en_heldout.tsv`` and
``en_heldout_2.tsv``):

* ``unchanged``: the text as printed (what the studio passed to espeak-ng before);
* ``num2words``: every digit run replaced by num2words' cardinal in the sentence's
  language (a library alone, no rules);
* ``inflect``: English digit runs through inflect's ``number_to_words`` (English only);
* ``studio``: studio.text.normalize (own rules, num2words for de/fr/es/it numbers).

``--nemo`` is not offered: NeMo's deterministic normaliser needs pynini and grammars
built offline; the issue measured it at 289 ms per sentence after a 2.3 s load, about
two thirds right on a held-out set of the same kinds of sentences.

Text-level scores compare words; espeak-ng reads some printed forms right by itself
("50%", "&"), so a second table judges by sound: a sentence is right when the phonemes
espeak-ng (through the bundled voice's front end) makes of it equal those it makes of
an accepted spoken form. Its "as printed" column is the honest "before".

Speed is the mean over all sentences with the rules loaded and the answer cache
cleared (every sentence is normalised from scratch); start-up is a fresh interpreter
importing the candidate and normalising one sentence, minus the bare interpreter.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from studio.measure.normalize_score import DATA, LANGUAGES, load_items, score  # noqa: E402

Say = Callable[[str, str], str]
#: English sets written after the rules of a round were frozen (issue 31's: en_heldout_2)
HELD_OUT = ("en_heldout", "en_heldout_2")
_DIGITS = re.compile(r"\d+(?:[.,]\d+)?")


def unchanged(text: str, language: str) -> str:
    return text


def with_num2words(text: str, language: str) -> str:
    from num2words import num2words

    def one(m: re.Match[str]) -> str:
        token = m.group(0).replace(",", ".") if language != "en" else m.group(0).replace(",", "")
        try:
            return str(num2words(float(token) if "." in token else int(token), lang=language))
        except (ValueError, NotImplementedError, OverflowError):
            return m.group(0)

    return _DIGITS.sub(one, text)


def with_inflect(text: str, language: str) -> str:
    if language != "en":
        return text
    import inflect

    engine = _INFLECT.setdefault("e", inflect.engine())
    return _DIGITS.sub(lambda m: engine.number_to_words(m.group(0).replace(",", "")), text)


_INFLECT: dict[str, object] = {}


def studio(text: str, language: str) -> str:
    from studio.text.normalize import spoken_form

    return spoken_form(text, language)


CANDIDATES: dict[str, tuple[Say, str]] = {
    "unchanged": (unchanged, "pass"),
    "num2words": (with_num2words, "from num2words import num2words; num2words(1907, lang='en')"),
    "inflect": (with_inflect, "import inflect; inflect.engine().number_to_words('1907')"),
    "studio": (studio, "from studio.text.normalize import spoken_form; spoken_form('It cost $5 in 1907.', 'en')"),
}


def startup_seconds(code: str, repeats: int = 3) -> float:
    """Best of ``repeats``: a fresh interpreter running ``code``, minus one running ``pass``."""
    def best(snippet: str) -> float:
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", snippet], check=True, cwd=Path(__file__).resolve().parents[1])
            times.append(time.perf_counter() - t)
        return min(times)

    return max(0.0, best(code) - best("pass"))


def ms_per_sentence(say: Say, texts: list[tuple[str, str]], rounds: int = 5) -> float:
    for text, lang in texts:  # load every language's rules first
        say(text, lang)
    best = float("inf")
    for _ in range(rounds):
        if say is studio:
            from studio.text.normalize import clear_cache

            clear_cache()
        t = time.perf_counter()
        for text, lang in texts:
            say(text, lang)
        best = min(best, (time.perf_counter() - t) / len(texts) * 1000)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wrong", action="store_true", help="list what the studio normaliser gets wrong")
    args = parser.parse_args()
    items = load_items()
    for item in items:
        _BY_TEXT.setdefault((item.text, item.language), []).append(item)
    sets = {name: [type(i)("en", i.category, i.text, i.accepted) for i in load_items(DATA, [name])]
            for name in HELD_OUT}
    heldout = [i for items_ in sets.values() for i in items_]
    texts = [(i.text, i.language) for i in items]
    plain = _plain_sentences()
    results = {name: score(items, say) for name, (say, _) in CANDIDATES.items()}
    held = {(s, name): score(sets[s], say) for s in sets for name, (say, _) in CANDIDATES.items()}
    for lang in LANGUAGES:
        cats = sorted({c for (lg, c) in results["studio"] if lg == lang and c != "all"}) + ["all"]
        print(f"\n{lang}: accuracy per category (right / total)")
        print(f"  {'category':14s}" + "".join(f"{n:>12s}" for n in CANDIDATES))
        for cat in cats:
            row = "".join(f"{_pct(results[n].get((lang, cat))):>12s}" for n in CANDIDATES)
            total = results["studio"][(lang, cat)][1]
            print(f"  {cat:14s}{row}   (n={total})")
    for s in sets:
        print(f"\n{s} (written after the rules were frozen), accuracy per category:")
        print(f"  {'category':14s}" + "".join(f"{n:>12s}" for n in CANDIDATES))
        for cat in sorted({c for (_, c) in held[(s, 'studio')] if c != "all"}) + ["all"]:
            row = "".join(f"{_pct(held[(s, n)].get(('en', cat))):>12s}" for n in CANDIDATES)
            print(f"  {cat:14s}{row}   (n={held[(s, 'studio')][('en', cat)][1]})")
    print("\nby sound: espeak-ng's phonemes equal those of an accepted form (as printed -> studio)")
    for lang in LANGUAGES:
        sub = [i for i in items if i.language == lang]
        before, after = score(sub, _heard(unchanged)), score(sub, _heard(studio))
        cats = sorted({c for (_, c) in after if c != "all"}) + ["all"]
        print(f"  {lang}: " + ", ".join(f"{c} {_pct(before[(lang, c)])} -> {_pct(after[(lang, c)])}" for c in cats))
    print("\nspeed (ms per sentence, labelled set / plain book sentences) and start-up (s)")
    for name, (say, code) in CANDIDATES.items():
        ms = ms_per_sentence(say, texts)
        ms_plain = ms_per_sentence(say, plain) if plain else float("nan")
        print(f"  {name:12s} {ms:8.3f} ms  {ms_plain:8.4f} ms   start-up {startup_seconds(code):.3f} s")
    if args.wrong:
        from studio.measure.normalize_score import wrong

        for item, said in wrong(items + heldout, studio):
            print(f"  [{item.language}/{item.category}] {item.text!r} -> {said!r}")


def _heard(say: Say) -> Say:
    """``say`` judged by sound: its output replaced by its phonemes, so ``score`` compares
    phonemes: an accepted form whose phonemes match stands in for the sound."""
    from studio.engine.voice.catalog import get_voice
    from studio.engine.voice.config import VoiceConfig
    from studio.engine.voice.phonemize import PiperFrontEnd

    front = _FRONT.setdefault("fe", PiperFrontEnd(VoiceConfig.from_file(get_voice(None).config_path)))

    def phonemes(text: str, lang: str) -> str:
        return "".join(front.phonemize(text, lang))

    def heard(text: str, lang: str) -> str:
        said = phonemes(say(text, lang), lang)
        # the accepted form whose sound matches stands in for the sound (score compares words)
        for item in _BY_TEXT.get((text, lang), ()):
            for accepted in item.accepted:
                if phonemes(accepted, lang) == said:
                    return accepted
        return said

    return heard


_FRONT: dict[str, object] = {}
_BY_TEXT: dict[tuple[str, str], list] = {}


def _plain_sentences() -> list[tuple[str, str]]:
    """Ordinary prose (the shared EPUB fixtures when present): what most of a book is."""
    from studio.text.importer import load_manuscript

    folder = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "epub"
    out: list[tuple[str, str]] = []
    for path in sorted(folder.glob("*.epub"))[:3]:
        book = load_manuscript(path)
        out += [(s.text, s.language) for c in book.chapters for p in c.paragraphs for s in p.sentences]
    return out[:5000]


def _pct(pair: tuple[int, int] | None) -> str:
    if not pair:
        return "-"
    right, total = pair
    return f"{right / total:.0%}"


if __name__ == "__main__":
    main()
