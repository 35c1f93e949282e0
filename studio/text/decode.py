"""Bytes -> text for plain-text formats, refusing binaries with a clear reason.

Decision (documented because it decides what users see): we try, in order, a BOM
(UTF-8, UTF-16, UTF-32), then strict UTF-8. If that fails we fall back to cp1252
(the usual "ANSI" of Windows editors, a superset of printable Latin-1) *only* when
the bytes look like text: no NUL bytes, almost no control bytes, and at most 30 %
non-ASCII bytes. Anything else is refused rather than imported as mojibake, because
a voice reading mojibake for an hour is worse than an error message now.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from studio.core.errors import ManuscriptError

_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"%PDF", "it is a PDF file; give it the .pdf extension to import it"),
    (b"PK\x03\x04", "it is a ZIP archive (an .epub or .docx with the wrong name?)"),
    (b"\x89PNG", "it is a PNG image"),
    (b"GIF8", "it is a GIF image"),
    (b"\xff\xd8\xff", "it is a JPEG image"),
    (b"\xd0\xcf\x11\xe0", "it is an old Microsoft Office file (.doc); save it as .docx"),
    (b"{\\rtf", "it is an RTF document; save it as .docx or .txt"),
    (b"\x7fELF", "it is a program, not text"),
    (b"ID3", "it is an audio file"),
    (b"RIFF", "it is a media file"),
    (b"\x1f\x8b", "it is a gzip archive"),
)
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# Control characters that have no business in text (\t \n \v \f \r and the DOS
# end-of-file marker \x1a are fine).
_BAD_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0e-\x19\x1b-\x1f\x7f]")
_BAD_CONTROL_CHARS = re.compile("[\x00-\x08\x0e-\x19\x1b-\x1f\x7f]")
_HIGH_BYTES = re.compile(rb"[\x80-\xff]")
MAX_CONTROL_RATIO = 0.05  # binary without NULs has ~10 %; a few stray controls are fine
MIN_CONTROLS = 16
MAX_HIGH_RATIO = 0.30


def decode_text(data: bytes, path: str | Path) -> tuple[str, str]:
    """Decode a text file; returns ``(text, encoding)`` or raises ManuscriptError."""
    if not data.strip():
        raise ManuscriptError(path, "the file is empty")
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return _check_decoded(data.decode(encoding), path), encoding
            except UnicodeDecodeError as exc:
                raise ManuscriptError(path, f"the file starts with a {encoding} mark but is not valid {encoding} ({exc.reason})") from None
    for magic, why in _SIGNATURES:
        if data.startswith(magic):
            raise ManuscriptError(path, f"this is not a text file: {why}")
    nuls = data.count(b"\x00")
    if nuls > max(2, len(data) // 1000):
        guessed = _utf16_without_bom(data)
        if guessed is not None:
            return _check_decoded(guessed[0], path), guessed[1]
        raise ManuscriptError(path, "this is not a text file (it contains NUL bytes: binary data)")
    data = data.replace(b"\x00", b"")  # a stray NUL or two: drop, keep the text
    try:
        return _check_decoded(data.decode("utf-8"), path), "utf-8"
    except UnicodeDecodeError:
        pass
    sample = data[:1_000_000]
    controls = len(_BAD_CONTROL_BYTES.findall(sample))
    high = len(_HIGH_BYTES.findall(sample))
    if controls > max(MIN_CONTROLS, MAX_CONTROL_RATIO * len(sample)) or high > MAX_HIGH_RATIO * len(sample):
        raise ManuscriptError(path, "this does not look like text: it is neither UTF-8 nor a Windows (cp1252) text file")
    try:
        return _check_decoded(data.decode("cp1252"), path), "cp1252"
    except UnicodeDecodeError:
        raise ManuscriptError(path, "the text is not valid UTF-8 and not valid cp1252; save it as UTF-8") from None


def _utf16_without_bom(data: bytes) -> tuple[str, str] | None:
    """UTF-16 text saved without a BOM: every other byte of ASCII-range text is NUL."""
    sample = data[:200_000]
    half = max(1, len(sample) // 2)
    for encoding, zeros in (("utf-16-le", sample[1::2]), ("utf-16-be", sample[0::2])):
        if zeros.count(0) > 0.9 * half:
            try:
                return data.decode(encoding), encoding
            except UnicodeDecodeError:
                return None
    return None


def _check_decoded(text: str, path: str | Path) -> str:
    """Reject decoded text that is mostly control characters (binary in disguise)."""
    sample = text[:1_000_000]
    if not sample.strip():
        raise ManuscriptError(path, "the file is empty")
    controls = len(_BAD_CONTROL_CHARS.findall(sample))
    if sample.count("\x00") > 2 or controls > max(MIN_CONTROLS, MAX_CONTROL_RATIO * len(sample)):
        raise ManuscriptError(path, "this is not a text file (too many control characters)")
    return text


def decode_markup(data: bytes, path: str | Path, declared: str | None = None) -> str:
    """Decode HTML: BOM, then the declared charset, then the plain-text rules."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data.decode(encoding, errors="replace")
    if declared:
        try:
            codecs.lookup(declared)
            return data.decode(declared)
        except (LookupError, UnicodeDecodeError):
            pass
    return decode_text(data, path)[0]


def read_file(path: Path) -> bytes:
    """The file's bytes, or a :class:`ManuscriptError` saying why they cannot be read."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ManuscriptError(path, f"cannot read the file ({exc.strerror or exc})") from None


def read_text(path: Path) -> tuple[str, str]:
    """``(text, encoding)`` of a plain-text manuscript, line ends made ``\\n``."""
    text, encoding = decode_text(read_file(path), path)
    return text.replace("\r\n", "\n").replace("\r", "\n"), encoding
