"""Bad input ends in ManuscriptError with a one-line reason, or imports gracefully."""

from __future__ import annotations

import os
import random
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studio.core.errors import ManuscriptError
from studio.core.types import Book
from studio.text.importer import load_manuscript


CATCH_ALL = "could not import this file"


def write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def refused(path: Path, match: str, **kwargs: int) -> ManuscriptError:
    with pytest.raises(ManuscriptError, match=match) as info:
        load_manuscript(path, **kwargs)
    err = info.value
    assert err.path == str(path)
    assert "\n" not in err.reason and str(path) in str(err)
    return err


def paragraphs(book: Book) -> list[str]:
    return [p.text for c in book.chapters for p in c.paragraphs]


def test_missing_file(tmp_path: Path) -> None:
    refused(tmp_path / "nope.txt", "file not found")


def test_folder(tmp_path: Path) -> None:
    (tmp_path / "folder.txt").mkdir()
    refused(tmp_path / "folder.txt", "folder")


@pytest.mark.parametrize("name", ["empty.txt", "empty.md", "empty.html", "empty.epub", "empty.docx", "empty.pdf"])
def test_empty_file(tmp_path: Path, name: str) -> None:
    refused(write(tmp_path, name, b""), "empty")


def test_whitespace_only_file(tmp_path: Path) -> None:
    refused(write(tmp_path, "blank.txt", " \n\t\n  \r\n"), "empty")


def test_binary_named_txt(tmp_path: Path) -> None:
    rng = random.Random(7)
    refused(write(tmp_path, "nul.txt", bytes(rng.randrange(256) for _ in range(4096))), "not a text file")
    high = bytes(rng.randrange(128, 256) for _ in range(4096))
    refused(write(tmp_path, "noise.txt", high), "does not look like text")
    refused(write(tmp_path, "image.txt", b"\x89PNG\r\n\x1a\n" + bytes(100)), "PNG")
    refused(write(tmp_path, "doc.txt", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"), "PDF")


def test_invalid_utf8_that_is_not_cp1252(tmp_path: Path) -> None:
    # 0x81/0x8d/0x8f/0x90/0x9d are undefined in cp1252: mostly-ASCII text with them is refused
    refused(write(tmp_path, "broken.txt", b"Hello there \x81\x8d world."), "not valid UTF-8")


def test_a_stray_nul_is_tolerated(tmp_path: Path) -> None:
    book = load_manuscript(write(tmp_path, "stray.txt", b"Hello\x00 world, this is fine."))
    assert paragraphs(book) == ["Hello world, this is fine."]


@pytest.mark.parametrize(
    "suffix, reason",
    [(".pdf", "not a valid PDF|no pages"), (".doc", "save the document as .docx"), (".xyz", "unsupported file type"), ("", "unsupported file type")],
)
def test_unsupported_suffix(tmp_path: Path, suffix: str, reason: str) -> None:
    refused(write(tmp_path, "book" + suffix, b"%PDF-1.4 whatever"), reason)


def test_missing_pdf(tmp_path: Path) -> None:
    refused(tmp_path / "missing.pdf", "file not found")


def test_file_over_the_size_limit(tmp_path: Path) -> None:
    refused(write(tmp_path, "big.txt", "word " * 1000), "too large", max_bytes=1000)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file(tmp_path: Path) -> None:
    path = write(tmp_path, "locked.txt", "Some text.")
    path.chmod(0)
    try:
        refused(path, "cannot read")
    finally:
        path.chmod(0o644)


@pytest.mark.parametrize("text", ["... !!! ??? --- ***", "\U0001f600\U0001f44d\U0001f3fd \u2764\ufe0f", "\x01\x02\x03 \x07"])
def test_nothing_speakable(tmp_path: Path, text: str) -> None:
    refused(write(tmp_path, "punct.txt", text), "no speakable text|empty")


def test_only_numbers_render(tmp_path: Path) -> None:
    book = load_manuscript(write(tmp_path, "numbers.txt", "1 2 3\n\n42.\n\n3.14 1,000 2024"))
    assert paragraphs(book) == ["1 2 3", "42.", "3.14 1,000 2024"]
    assert book.language == "en"  # nothing to detect: the fallback


def test_emoji_and_control_characters(tmp_path: Path) -> None:
    text = "Hello \U0001f600 there!\x07 Tab\there.\x1b[0m Done \U0001f44d\U0001f3fd.\n\nSecond\x00 paragraph \u200d\u2764\ufe0f."
    book = load_manuscript(write(tmp_path, "emoji.txt", text))
    assert paragraphs(book) == ["Hello \U0001f600 there! Tab here.[0m Done \U0001f44d\U0001f3fd.", "Second paragraph \u200d\u2764\ufe0f."]
    for para in book.chapters[0].paragraphs:
        assert "".join(s.text + s.trailing for s in para.sentences) == para.text


def test_right_to_left_text(tmp_path: Path) -> None:
    arabic = "\u0643\u0627\u0646 \u0627\u0644\u0645\u064a\u0646\u0627\u0621 \u0647\u0627\u062f\u0626\u0627 \u0641\u064a \u0630\u0644\u0643 \u0627\u0644\u0635\u0628\u0627\u062d\u060c \u0648\u0643\u0627\u0646\u062a \u0627\u0644\u0642\u0648\u0627\u0631\u0628 \u062a\u062a\u0623\u0631\u062c\u062d \u0628\u0647\u062f\u0648\u0621 \u0639\u0646\u062f \u0627\u0644\u062c\u062f\u0627\u0631. \u0644\u0645 \u064a\u062a\u0630\u0643\u0631 \u0623\u062d\u062f \u0628\u062d\u0631\u0627 \u0623\u0647\u062f\u0623 \u0645\u0646 \u0647\u0630\u0627\u061f"
    hebrew = "\u05d4\u05e0\u05de\u05dc \u05d4\u05d9\u05d4 \u05e9\u05e7\u05d8 \u05d1\u05d1\u05d5\u05e7\u05e8 \u05d4\u05d4\u05d5\u05d0 \u05d5\u05d4\u05e1\u05d9\u05e8\u05d5\u05ea \u05e0\u05e2\u05d5 \u05d1\u05e2\u05d3\u05d9\u05e0\u05d5\u05ea \u05dc\u05d9\u05d3 \u05d4\u05d7\u05d5\u05de\u05d4. \u05d0\u05d9\u05e9 \u05dc\u05d0 \u05d6\u05db\u05e8 \u05d9\u05dd \u05e9\u05e7\u05d8 \u05db\u05dc \u05db\u05da."
    book = load_manuscript(write(tmp_path, "rtl.txt", f"\u200f{arabic}\n\n{hebrew}\u202c"))
    first, second = book.chapters[0].paragraphs
    assert first.text == arabic and second.text == hebrew
    assert (first.language, second.language) == ("ar", "he")
    assert [s.text[-1] for s in first.sentences] == [".", "\u061f"]
    assert len(second.sentences) == 2


def test_giant_paragraph_without_punctuation_is_fast(tmp_path: Path) -> None:
    rng = random.Random(3)
    words = ["lantern", "harbour", "tide", "rope", "gull", "salt", "stone", "wind"]
    line = " ".join(rng.choice(words) for _ in range(35_000))[:200_000]
    started = time.perf_counter()
    book = load_manuscript(write(tmp_path, "wall.txt", line))
    assert time.perf_counter() - started < 5
    (para,) = book.chapters[0].paragraphs
    assert para.text == line
    assert all(s.was_split and 0 < len(s.text) <= 500 for s in para.sentences)
    assert "".join(s.text + s.trailing for s in para.sentences) == line


def test_ten_megabyte_single_line(tmp_path: Path) -> None:
    rng = random.Random(5)
    chunk = " ".join(rng.choice(["alpha", "beta", "gamma", "delta"]) for _ in range(20_000))
    line = (chunk + " ") * (10_000_000 // (len(chunk) + 1) + 1)
    started = time.perf_counter()
    book = load_manuscript(write(tmp_path, "ten.txt", line[:10_000_000]))
    elapsed = time.perf_counter() - started
    assert elapsed < 20, f"10 MB line took {elapsed:.1f}s"
    assert sum(len(p.sentences) for p in book.chapters[0].paragraphs) >= 20_000


def test_huge_single_word(tmp_path: Path) -> None:
    book = load_manuscript(write(tmp_path, "aaaa.txt", "a" * 1_000_000), max_sentence_chars=300)
    sentences = book.chapters[0].paragraphs[0].sentences
    assert all(len(s.text) == 300 for s in sentences[:-1]) and sum(len(s.text) for s in sentences) == 1_000_000


def test_deeply_nested_html(tmp_path: Path) -> None:
    """Deep nesting that real books have imports whole; a hostile depth is refused, saying why."""
    def nested(depth: int) -> str:
        return "<html><body>" + "<div>" * depth + "Deep text here." + "</div>" * depth + "</body></html>"

    assert "Deep text here." in paragraphs(load_manuscript(write(tmp_path, "deep.html", nested(200))))
    with pytest.raises(ManuscriptError, match="nested too deeply"):
        load_manuscript(write(tmp_path, "deeper.html", nested(5000)))


# --- fuzz: any bytes, any supported suffix -> a Book or a ManuscriptError -------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.one_of(st.binary(max_size=2000), st.text(max_size=500).map(lambda t: t.encode("utf-8", "surrogatepass"))),
    suffix=st.sampled_from([".txt", ".md", ".html", ".epub", ".docx"]),
)
def test_arbitrary_bytes_never_escape_as_other_errors(data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("fuzz" + suffix)
        path.write_bytes(data)
        try:
            book = load_manuscript(path)
        except ManuscriptError as err:
            assert not err.reason.startswith(CATCH_ALL), err.reason  # a reader bug, not a file problem
            return
        for chapter in book.chapters:
            for para in chapter.paragraphs:
                assert "".join(s.text + s.trailing for s in para.sentences) == para.text


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=10_000), st.integers(min_value=0, max_value=255)), min_size=1, max_size=20))
def test_corrupted_epub_never_escapes(flips: list[tuple[int, int]]) -> None:
    source = (Path(__file__).resolve().parents[2] / "resources" / "sample.epub").read_bytes()
    data = bytearray(source)
    for offset, value in flips:
        data[offset % len(data)] = value
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corrupt.epub"
        path.write_bytes(bytes(data))
        try:
            load_manuscript(path)
        except ManuscriptError as err:
            assert not err.reason.startswith(CATCH_ALL), err.reason
