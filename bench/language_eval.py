"""Language detection: accuracy and speed on held-out human-written passages.

Run ``python bench/language_eval.py`` (``--set dev`` for the tuning half). Needs the
Debian fortune packages (see bench/language_corpus.py) and, for the "before" row,
this repository's history: the detector as it was before lingua is loaded from
commit ``BEFORE`` with ``git show``.

Prints, per system: passages right, first sentences right (each judged alone), and
paragraphs right in mixed books - per language of the set, a book of 80 paragraphs in
4 chapters where one paragraph in four is in another language, half of those a
single sentence - then the time per paragraph of labelling those books (wall and CPU;
"cold" includes loading the models, "warm" has them loaded but no cached answers).
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import language_corpus  # noqa: E402

#: the last commit with the langdetect-based detector
BEFORE = "3b35aeb"
BOOK_PARAGRAPHS = 80
SYSTEMS = ("before (langdetect)", "lingua alone (all languages)", "studio (script + lingua + context)")
CHAPTERS = 4

Assign = Callable[[Sequence[Sequence[str]]], list[list[str]]]


def mixed_books(
    data: list[tuple[str, str]], seed: int = 7, paragraphs: int = BOOK_PARAGRAPHS
) -> list[tuple[list[list[str]], list[list[str]]]]:
    """Per main language, ``(chapters of texts, chapters of true languages)``."""
    rng = random.Random(seed)
    books = []
    for lang in language_corpus.LANGUAGES:
        own = [t for code, t in data if code == lang]
        others = [(code, t) for code, t in data if code != lang]
        texts, truth = [], []
        for i in range(paragraphs):
            if i % 4 == 3:
                code, text = rng.choice(others)
                if (i // 4) % 2 == 0:
                    text = language_corpus.first_sentence(text)
            else:
                code, text = lang, own[(i - i // 4) % len(own)]
            texts.append(text)
            truth.append(code)
        size = max(1, paragraphs // CHAPTERS)
        books.append(([texts[i : i + size] for i in range(0, paragraphs, size)],
                      [truth[i : i + size] for i in range(0, paragraphs, size)]))
    return books


def _load_before() -> object | None:
    """The old studio/text/language.py as a module, or None outside a git checkout."""
    root = Path(__file__).resolve().parents[1]
    try:
        source = subprocess.run(["git", "show", f"{BEFORE}:studio/text/language.py"], cwd=root,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    path = Path(tempfile.mkdtemp()) / "language_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("language_before", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def systems() -> dict[str, tuple[Callable[[str], str], Assign, Callable[[], None]]]:
    """name -> (detect one text, label a book, clear caches)."""
    from studio.text import detector, language

    out: dict[str, tuple[Callable[[str], str], Assign, Callable[[], None]]] = {}
    before = _load_before()
    if before is not None:
        out[SYSTEMS[0]] = (
            lambda t: before.detect_language(t)[0],
            lambda chs: [[c for c, _ in ch] for ch in before.assign_languages(chs)[1]],
            before.clear_cache,
        )
    from lingua import LanguageDetectorBuilder

    lingua = LanguageDetectorBuilder.from_all_languages().build()

    def lingua_one(text: str) -> str:
        found = lingua.detect_language_of(text)
        return found.iso_code_639_1.name.lower() if found else ""

    out[SYSTEMS[1]] = (lingua_one, lambda chs: [[lingua_one(t) for t in ch] for ch in chs], lambda: None)
    out[SYSTEMS[2]] = (
        lambda t: language.detect_language(t)[0],
        lambda chs: [[c for c, _ in ch] for ch in language.assign_languages(chs)[1]],
        detector.clear_cache,
    )
    return out


def evaluate(name: str, detect: Callable[[str], str], assign: Assign, clear: Callable[[], None],
             data: list[tuple[str, str]], *, show_errors: bool, english: Sequence[str] = ()) -> dict[str, float]:
    books = mixed_books(data)
    paragraphs = sum(len(ch) for chapters, _ in books for ch in chapters)
    timings = {}
    for run in ("cold", "warm"):
        clear()
        wall, cpu = time.perf_counter(), time.process_time()
        labelled = [assign(chapters) for chapters, _ in books]
        timings[run] = ((time.perf_counter() - wall) * 1000 / paragraphs, (time.process_time() - cpu) * 1000 / paragraphs)
    book_right = sum(got == want for (_, truth), lab in zip(books, labelled)
                     for gch, wch in zip(lab, truth) for got, want in zip(gch, wch))
    results = {"passages": 0.0, "sentences": 0.0}
    for label, items in (("passages", data), ("sentences", [(c, language_corpus.first_sentence(t)) for c, t in data])):
        wrong = [(want, got, t) for want, t in items if (got := detect(t)) != want]
        results[label] = 100 * (1 - len(wrong) / len(items))
        if show_errors:
            for want, got, text in wrong:
                print(f"    {label[:4]} want {want} got {got or '-'}: {text[:90]!r}")
    results["book"] = 100 * book_right / paragraphs
    if english:  # an English book whose every sentence is a paragraph: how many stay English
        chapters = [english[i:i + 100] for i in range(0, len(english), 100)]
        got = [c for ch in assign(chapters) for c in ch]
        short = [g for g, t in zip(got, english) if len(t.split()) <= 7]
        results["english"] = 100 * sum(g == "en" for g in got) / len(got)
        results["english_short"] = 100 * sum(g == "en" for g in short) / max(1, len(short))
        print(f"{'':36} English books, every sentence a paragraph: {results['english']:6.2f} % kept English "
              f"({len(got)}), {results['english_short']:6.2f} % of those of 7 words or fewer ({len(short)})")
        if show_errors:
            for g, t in zip(got, english):
                if g != "en":
                    print(f"    english got {g or '-'}: {t[:90]!r}")
    print(f"{name:36} passages {results['passages']:6.2f} %  sentences {results['sentences']:6.2f} %  "
          f"mixed book {results['book']:6.2f} %  | ms/paragraph cold {timings['cold'][0]:.2f} wall "
          f"{timings['cold'][1]:.2f} cpu, warm {timings['warm'][0]:.2f} wall {timings['warm'][1]:.2f} cpu")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("test", "dev", "fresh", "round3"), default="test",
                        help="fresh: the passages after dev, held out from every rule (issue 31); round3: the "
                        "passages after those and every sentence of two English books (issue 38's held-out set)")
    parser.add_argument("--per-language", type=int, default=150)
    parser.add_argument("--only", default="", help="run the systems whose name contains this")
    parser.add_argument("--errors", action="store_true", help="list every passage and sentence judged wrong")
    args = parser.parse_args()
    if not args.only:  # each system in a fresh process, so "cold" loads its own models
        for name in SYSTEMS:
            subprocess.run([sys.executable, __file__, *sys.argv[1:], "--only", name], check=True)
        return
    fresh: list[tuple[str, str]] = []
    round3: list[tuple[str, str]] = []
    dev, test, dropped = language_corpus.build(args.per_language, fresh=fresh, round3=round3)
    data = {"test": test, "dev": dev, "fresh": fresh, "round3": round3}[args.set]
    english = language_corpus.english_book_sentences() if args.set == "round3" else []
    for name, (detect, assign, clear) in systems().items():
        if args.only in name:
            print(f"[{args.set} set: {len(data)} passages in {len(language_corpus.LANGUAGES)} languages; "
                  f"dropped as probably foreign: {dropped}]")
            evaluate(name, detect, assign, clear, data, show_errors=args.errors, english=english)


if __name__ == "__main__":
    main()
