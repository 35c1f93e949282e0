"""No punctuation or symbol is ever named by the voice: every class of mark beside every other.

The oracle is the real front end: a sentence's phonemes must hold the phonemes of its
spoken form's words and nothing else (a mark espeak-ng names, "exclamation", "slash",
"asterisk", adds letters), and a mark that means a pause must leave one.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import pytest

from studio.text.normalize import spoken_form
from studio.text.normalize.marks import pause_of, quiet

CLASSES = ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So")
#: every mark of the BMP, by class
ALL = {cls: [chr(c) for c in range(0x21, 0x10000) if unicodedata.category(chr(c)) == cls] for cls in CLASSES}
#: every ASCII and Latin-1 mark, and the first marks of each class in every other block
SAMPLE = sorted({ch for marks in ALL.values() for ch in marks if ord(ch) < 0x100}
                | {ch for marks in ALL.values() for ch in marks[::max(1, len(marks) // 6)]})
_NOT_LETTERS = re.compile(r"[\sˈˌ|,.;:!?…]")
_WORDS = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


@lru_cache(maxsize=1)
def _front_end():
    from studio.engine.voice.catalog import get_voice
    from studio.engine.voice.config import VoiceConfig
    from studio.engine.voice.phonemize import PiperFrontEnd

    return PiperFrontEnd(VoiceConfig.from_file(get_voice(None).config_path))


def said(text: str) -> str:
    return "".join(_front_end().phonemize(spoken_form(text, "en"), "en"))


@lru_cache(maxsize=4096)
def words_said(spoken: str) -> str:
    return _NOT_LETTERS.sub("", "".join(_front_end().phonemize(" ".join(_WORDS.findall(spoken)), "en")))


def named(text: str) -> str | None:
    """What the voice says in ``text`` beyond its words (None: nothing), or a lost pause."""
    spoken = spoken_form(text, "en")
    phonemes = said(text)
    if _NOT_LETTERS.sub("", phonemes) != words_said(spoken):
        return f"{text!r} -> {phonemes!r}"
    between = spoken[spoken.find("alpha") + 5:spoken.rfind("beta")]  # a mark the normaliser said ("or") is no pause
    if any(pause_of(c) for c in between) and not re.search(r"[,.;:!?]", phonemes):
        return f"{text!r} lost its pause: {phonemes!r}"
    return None


def test_every_mark_alone_in_every_place() -> None:
    bad = []
    for cls, marks in ALL.items():
        for ch in marks:
            for form in ("alpha{}beta", "alpha {} beta", "alpha{} beta", "{}alpha beta{}"):
                problem = named(form.format(ch, ch))
                if problem:
                    bad.append(f"{cls} {unicodedata.name(ch, hex(ord(ch)))}: {problem}")
    assert not bad, f"{len(bad)} named:\n" + "\n".join(bad[:40])


def test_every_class_next_to_every_other() -> None:
    assert {unicodedata.category(c) for c in SAMPLE} == set(CLASSES)
    bad = []
    for a in SAMPLE:
        for b in SAMPLE:
            for form in ("alpha{}{}beta", "alpha{}{} beta"):
                problem = named(form.format(a, b))
                if problem:
                    bad.append(problem)
    assert not bad, f"{len(bad)} named:\n" + "\n".join(bad[:40])


@pytest.mark.parametrize("printed,pause", [
    ("The horse ran!—the second horse", "!"), ("The horse ran!— the second", "!"), ("Stop?!—now", "?"),
    ("wait...what", ","), ("alpha — beta", ","), ("alpha;—beta", ";"), ("x:-y", ":"), ("Oh!!! No", "!"),
])
def test_a_run_of_marks_is_its_strongest_pause(printed: str, pause: str) -> None:
    out = quiet(printed)
    assert pause in out and not re.search(r"[^\w\s'’-][^\w\s]", out), out


@pytest.mark.parametrize("printed", ["don't", "counting-house", "3.5", "10:30", "U.S. army", "e.g. this", "5%", "$3",
                                     "Smith & Wesson", "Ça va, élève?", "東京。大阪"])
def test_words_numbers_and_initials_keep_their_marks(printed: str) -> None:
    out = quiet(printed)
    assert [w for w in _WORDS.findall(out)] == [w for w in _WORDS.findall(printed)]
    if not printed.endswith("。"):
        assert out.replace("’", "'") == printed.replace("’", "'") or printed == "東京。大阪"
