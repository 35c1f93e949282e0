"""A manuscript saved on Windows (CRLF line endings) reads exactly as the same text with LF."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.text.importer import load_manuscript

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample.md"


def _read(path: Path) -> list[tuple[str, list[str]]]:
    book = load_manuscript(path)
    return [(c.title, [str(p) for p in c.paragraphs]) for c in book.chapters]


@pytest.mark.parametrize("suffix", [".md", ".txt"])
def test_crlf_and_lf_give_the_same_book(tmp_path: Path, suffix: str) -> None:
    text = SAMPLE.read_text(encoding="utf-8")
    (tmp_path / f"lf{suffix}").write_bytes(text.encode("utf-8"))
    (tmp_path / f"crlf{suffix}").write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    lf, crlf = _read(tmp_path / f"lf{suffix}"), _read(tmp_path / f"crlf{suffix}")
    assert len(lf) >= 3 and sum(len(p) for _, p in lf) > 10
    assert crlf == lf
    assert not any("\r" in title or any("\r" in p for p in paras) for title, paras in crlf)
