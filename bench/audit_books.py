"""The book audit on public-domain books no rule was tuned on: what the voice would say wrongly.

Run ``python bench/audit_books.py`` from the repository root (``--list`` prints every
finding). The books come from Debian packages, installed offline with apt (all public
domain; see docs/spoken-forms-and-languages-benchmark.md):

* the King James Bible (1611), six books (``bible-kjv-text``, read with its ``bible`` program);
* Jane Austen, *Persuasion* (1818) and *Northanger Abbey* (1818) (``r-cran-janeaustenr``: R data
  read with the ``rdata`` package, ``pip install rdata``; the package is only downloaded and
  unpacked, ``apt-get download r-cran-janeaustenr && dpkg -x *.deb /tmp/austen``, so R is not
  needed; pass that folder as ``--austen``);
* Ambrose Bierce, *The Devil's Dictionary* (1911) (``dict-devil``).

Each is written as a plain-text manuscript and audited as ``studio inspect BOOK --audit``
does; prints the counts per kind and words spelled out per 10,000 words.
"""

from __future__ import annotations

import argparse
import gzip
import io
import re
import sys
import tempfile
from contextlib import redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import language_corpus  # noqa: E402

from studio.cli import main as studio  # noqa: E402


def kjv(folder: Path) -> Path | None:
    import subprocess

    parts = []
    for book in language_corpus.KJV_BOOKS:
        try:
            out = subprocess.run(["bible", f"{book}1:1-150:200"], capture_output=True, text=True, timeout=60,
                                 input="").stdout
        except OSError:
            return None
        chapter = None
        for line in out.splitlines():
            head = re.match(rf"^{book} (\d+)$", line.strip())
            if head:
                chapter = head.group(1)
                parts.append(f"\n\n# {book} {chapter}\n")
            elif re.match(r"^\s+\d+ ", line):
                parts.append("\n\n" + line.split(None, 1)[1])
            elif line.strip():
                parts.append(" " + line.strip())
    path = folder / "kjv.md"
    path.write_text("".join(parts).strip() + "\n", encoding="utf-8")
    return path


def devil(folder: Path) -> Path | None:
    if not language_corpus.DEVIL.is_file():
        return None
    text = gzip.decompress(language_corpus.DEVIL.read_bytes()).decode("utf-8", errors="replace")
    body = text.split("THE DEVIL'S DICTIONARY", 2)[-1]
    path = folder / "devils-dictionary.txt"
    path.write_text("The Devil's Dictionary\n\n" + body, encoding="utf-8")
    return path


def austen(folder: Path, unpacked: Path | None, name: str) -> Path | None:
    """``name`` ("persuasion") from the unpacked r-cran-janeaustenr package, or None."""
    if unpacked is None:
        return None
    try:
        import rdata
    except ImportError:
        return None
    import zlib

    base = next(unpacked.rglob("janeaustenr/data/Rdata.rdx"), None)
    if base is None:
        return None
    index = rdata.conversion.convert(rdata.parser.parse_data(gzip.decompress(base.read_bytes())))
    offset, length = (int(x) for x in index["variables"][name])
    blob = base.with_suffix(".rdb").read_bytes()[offset:offset + length]
    lines = rdata.conversion.convert(rdata.parser.parse_data(zlib.decompress(blob[4:])))
    text = "\n".join(str(x) for x in lines)
    text = re.sub(r"(?m)^(CHAPTER|Chapter) (\w+)\s*$", r"# Chapter \2", text)
    path = folder / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path


def audit(path: Path) -> dict:
    import json

    out = io.StringIO()
    with redirect_stdout(out):
        studio(["inspect", str(path), "--audit", "--json"])
    return json.loads(out.getvalue())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--austen", type=Path, help="the folder r-cran-janeaustenr's .deb was unpacked into")
    parser.add_argument("--list", action="store_true", help="print every finding but the guessed words")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        books = [kjv(folder), austen(folder, args.austen, "persuasion"), austen(folder, args.austen, "northangerabbey"),
                 devil(folder)]
        for path in (b for b in books if b is not None):
            report = audit(path)
            counts, words = report["counts"], report["words"]
            print(f"{path.stem}: {words} words, {report['sentences']} sentences; " +
                  ", ".join(f"{k} {v}" for k, v in counts.items()) +
                  f"; spelled per 10,000 words {10000 * counts['spelled'] / max(1, words):.1f}")
            if args.list:
                for f in report["findings"]:
                    if f["kind"] != "guessed":
                        print(f"  {f['kind']:9} {f['chapter']}:{f['index']} {f['detail']} | {f['text'][:110]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
