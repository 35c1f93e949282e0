"""Pronunciation lexicon: entries, whole-word matching, and what applies to a sentence.

Why in ``core``: the project stores entries and puts the ones a sentence uses into
its cache key, the engine's phoneme front end splices them into the phoneme
stream, and the text layer reads and writes them as W3C PLS. All three must agree
on *which* entries apply to a sentence, so there is exactly one matcher, here,
with no dependency on anything else.

Matching rules (the same for every engine and preset):

* whole words only: ``Win`` never fires inside ``Winter``. A boundary is required
  only where the grapheme itself starts/ends with a letter or digit, so ``N.`` and
  ``30°`` match as written;
* case: an entry either ignores case (the default, ``Nguyen`` also fixes
  ``NGUYEN``) or matches exactly (``Mobile`` the city, not ``mobile``);
* language: an entry with a language (ISO 639-1 family) applies only to sentences
  in that language; one without applies to every language;
* overlaps: the longest grapheme wins, then the leftmost; a language-specific or
  case-exact entry beats a general one for the same text.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from studio.core.language import language_family

Kind = Literal["alias", "phoneme"]
KINDS: tuple[str, ...] = ("alias", "phoneme")

_SPACE = re.compile(r"\s+")


def normalize_grapheme(text: str) -> str:
    """Whitespace collapsed and trimmed: phrases match across line breaks and double spaces."""
    return _SPACE.sub(" ", text).strip()


@dataclass(frozen=True)
class LexiconEntry:
    """One word or phrase and how to say it.

    ``kind`` ``"alias"``: ``value`` is a respelling spoken instead of the grapheme
    ("Nguyen" -> "Win"); ``"phoneme"``: ``value`` is IPA as the voice's phoneme
    front end produces it, spliced in for the grapheme. ``language`` None means
    every language.
    """

    grapheme: str
    kind: Kind
    value: str
    case_sensitive: bool = False
    language: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "grapheme", normalize_grapheme(self.grapheme))
        object.__setattr__(self, "value", normalize_grapheme(self.value))
        if self.language is not None:
            family = language_family(self.language)
            if self.language.strip() and not family:
                # never widen an entry meant for one language to every language
                raise ValueError(f"{self.language!r} is not a language code (use ISO 639-1, e.g. 'en', 'fr')")
            object.__setattr__(self, "language", family or None)
        if not self.grapheme:
            raise ValueError("a lexicon entry needs a word or phrase")
        if self.kind not in KINDS:
            raise ValueError(f"lexicon entry kind must be one of {KINDS}, not {self.kind!r}")
        if not self.value:
            raise ValueError(f"the entry for {self.grapheme!r} has no {self.kind}")

    @property
    def key(self) -> tuple[str, str, bool]:
        """Identity within a lexicon: adding an entry with the same key replaces it."""
        g = self.grapheme if self.case_sensitive else self.grapheme.casefold()
        return (g, self.language or "", self.case_sensitive)

    def token(self) -> dict[str, object]:
        """Everything that changes how the entry sounds (enters cache keys)."""
        return {
            "g": self.grapheme, "k": self.kind, "v": self.value,
            "cs": self.case_sensitive, "lang": self.language or "",
        }


@dataclass(frozen=True)
class Match:
    """One occurrence of an entry in a text: ``text[start:end]`` is replaced."""

    start: int
    end: int
    entry: LexiconEntry


_WORDISH = re.compile(r"\w")
#: Where a match can start: a word's first character, or a character that is
#: neither a word character nor a space (``°``, ``℔``, an opening ``-``).
_CANDIDATE = re.compile(r"(?<!\w)\w|[^\w\s]")


def _pattern(entry: LexiconEntry) -> str:
    body = r"\s+".join(re.escape(part) for part in entry.grapheme.split(" "))
    if not entry.case_sensitive:
        body = f"(?i:{body})"
    lead = r"(?<!\w)" if _WORDISH.match(entry.grapheme[0]) else ""
    tail = r"(?!\w)" if _WORDISH.match(entry.grapheme[-1]) else ""
    return f"{lead}{body}{tail}"


_Compiled = tuple[dict[str, re.Pattern[str]], dict[tuple[str, bool], LexiconEntry]]


@dataclass(frozen=True)
class Lexicon:
    """An immutable set of entries (picklable: it travels to model processes)."""

    entries: tuple[LexiconEntry, ...] = ()
    _compiled: dict[str, _Compiled] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    @classmethod
    def of(cls, entries: Iterable[LexiconEntry]) -> Lexicon:
        """Entries deduplicated by key; a later entry replaces an earlier one."""
        by_key: dict[tuple[str, str, bool], LexiconEntry] = {}
        for entry in entries:
            by_key[entry.key] = entry
        return cls(tuple(sorted(by_key.values(), key=lambda e: (e.grapheme.casefold(), e.language or "", e.case_sensitive))))

    def __bool__(self) -> bool:
        return bool(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __getstate__(self) -> dict[str, object]:
        return {"entries": self.entries}

    def __setstate__(self, state: dict[str, object]) -> None:
        object.__setattr__(self, "entries", state["entries"])
        object.__setattr__(self, "_compiled", {})

    def inherit(self, base: Lexicon) -> Lexicon:
        """``base`` (the user's lexicon) with this one's entries replacing same-key ones."""
        return Lexicon.of([*base.entries, *self.entries])

    def _for_language(self, language: str) -> _Compiled:
        """Patterns grouped by the (lower-cased) first character of the grapheme, so a
        sentence is scanned once and only a few alternatives are tried at each word
        start -- one alternation of every entry costs seconds per book."""
        family = language_family(language) or language.lower()
        cached = self._compiled.get(family)
        if cached is not None:
            return cached
        usable = [e for e in self.entries if e.language in (None, family)]
        lookup: dict[tuple[str, bool], LexiconEntry] = {}
        # general first, so a language-specific entry for the same text overwrites it
        for entry in sorted(usable, key=lambda e: e.language is not None):
            g = entry.grapheme if entry.case_sensitive else entry.grapheme.casefold()
            lookup[(g, entry.case_sensitive)] = entry
        ordered = sorted(usable, key=lambda e: (-len(e.grapheme), not e.case_sensitive))
        grouped: dict[str, list[str]] = {}
        for entry in ordered:
            grouped.setdefault(entry.grapheme[0].lower(), []).append(_pattern(entry))
        groups = {first: re.compile("|".join(alts)) for first, alts in grouped.items()}
        self._compiled[family] = (groups, lookup)
        return groups, lookup

    def find(self, text: str, language: str) -> list[Match]:
        """Non-overlapping occurrences in ``text`` of entries usable in ``language``."""
        groups, lookup = self._for_language(language)
        if not groups:
            return []
        out: list[Match] = []
        end = 0
        for candidate in _CANDIDATE.finditer(text):
            start = candidate.start()
            pattern = groups.get(text[start].lower()) if start >= end else None
            m = pattern.match(text, start) if pattern is not None else None
            if m is None:
                continue
            found = normalize_grapheme(m.group(0))
            entry = lookup.get((found, True)) or lookup.get((found.casefold(), False))
            if entry is not None:
                out.append(Match(m.start(), m.end(), entry))
                end = m.end()
        return out

    def applicable(self, text: str, language: str) -> Lexicon:
        """Only the entries that occur in ``text``: what a sentence's audio depends on."""
        if not self.entries:
            return self
        return Lexicon.of(m.entry for m in self.find(text, language))

    def digest(self) -> str:
        """Stable hash of the entries ("" for none): part of a sentence's cache key."""
        if not self.entries:
            return ""
        payload = json.dumps([e.token() for e in self.entries], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]

    def runs(self, text: str, language: str) -> list[tuple[str, bool]]:
        """``text`` as runs to speak: ``(text, False)`` for text (respellings already
        substituted, so the phonemizer sees them in context) and ``(ipa, True)`` for
        phoneme entries, to be spliced into the phoneme stream as they are."""
        runs: list[tuple[str, bool]] = []
        buf: list[str] = []
        pos = 0
        for m in self.find(text, language):
            buf.append(text[pos:m.start])
            if m.entry.kind == "alias":
                buf.append(m.entry.value)
            else:
                if "".join(buf):
                    runs.append(("".join(buf), False))
                buf = []
                runs.append((m.entry.value, True))
            pos = m.end
        buf.append(text[pos:])
        if "".join(buf):
            runs.append(("".join(buf), False))
        return runs

    def respelled(self, text: str, language: str) -> str:
        """``text`` with respellings substituted and phoneme entries left as written:
        for front ends that take text, not phonemes."""
        out: list[str] = []
        pos = 0
        for m in self.find(text, language):
            out.append(text[pos:m.start])
            out.append(m.entry.value if m.entry.kind == "alias" else text[m.start:m.end])
            pos = m.end
        out.append(text[pos:])
        return "".join(out)
