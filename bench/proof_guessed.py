"""How often the "guessed word" pronunciation check asks about a sentence of ordinary prose.

    python bench/proof_guessed.py [--seed 7] [--epub childrens-literature.epub] [--show]

No audio: the check reads what the voice was given (each sentence's spoken form).
The bar (:data:`studio.proof.pronounce.GUESSES_APART`) is chosen on the evaluation
set's tuning half (its clean sentences, each source's sentences as the "book" whose
recurring names are known) and reported on the held half and on a whole shared EPUB
read as a project would read it (every English sentence; the book's own recurring
names known). A check that cries wolf is no check: the target is rare, about 1 % of
sentences or fewer.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from proof_set import SHARED, SOURCES, plan, source_sentences  # noqa: E402


def flagged(sentences: list[tuple[str, frozenset[str]]], bar: int) -> list[tuple[str, list[str]]]:
    from studio.proof import pronounce

    out = []
    with mock.patch.object(pronounce, "GUESSES_APART", bar):
        for spoken, names in sentences:
            flags = pronounce.guessed_flags(spoken, "en", None, names)
            if flags:
                out.append((spoken, [f.expected for f in flags]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--epub", default="childrens-literature.epub")
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args()
    from studio.proof.names import book_names
    from studio.text.importer import load_manuscript
    from studio.text.normalize import spoken_form

    started = time.monotonic()
    items = plan(150, 40, args.seed)
    names = {s: book_names(source_sentences(s)) for s in SOURCES}
    halves = {part: [(it["spoken"], names[it["source"]], it["source"]) for it in items
                     if it["kind"] == "clean" and it["part"] == part] for part in ("tune", "held")}
    for bar in (2, 3, 4):
        got = flagged([(s, n) for s, n, _ in halves["tune"]], bar)
        print(f"tuning half, bar {bar}: {len(got)} of {len(halves['tune'])} clean sentences asked about "
              f"({len(got) / len(halves['tune']):.1%}): {sorted({w for _, ws in got for w in ws})}")
    from studio.proof.pronounce import GUESSES_APART

    held = halves["held"]
    got = flagged([(s, n) for s, n, _ in held], GUESSES_APART)
    print(f"held half, shipped bar {GUESSES_APART}: {len(got)} of {len(held)} clean sentences "
          f"({len(got) / len(held):.1%})")
    for source in SOURCES:
        mine = [(s, n) for s, n, src in held if src == source]
        print(f"    {source}: {len(flagged(mine, GUESSES_APART))} of {len(mine)}")
    if args.show:
        for s, ws in got:
            print(f"    {ws}: {s[:100]!r}")
    path = SHARED / args.epub
    if path.is_file():
        book = load_manuscript(path)
        texts = [s.text for c in book.chapters if not c.front_matter for p in c.paragraphs if p.language == "en"
                 for s in p.sentences]
        known = book_names(texts)
        spoken = [(spoken_form(t, "en"), known) for t in texts]
        got = flagged(spoken, GUESSES_APART)
        print(f"{args.epub}, the whole book ({len(texts)} sentences), bar {GUESSES_APART}: {len(got)} asked about "
              f"({len(got) / len(texts):.2%}); words: {sorted({w for _, ws in got for w in ws})}")
        if args.show:
            for s, ws in got:
                print(f"    {ws}: {s[:100]!r}")
    else:
        print(f"{path} is absent: the EPUB figure is skipped")
    print(f"{time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
