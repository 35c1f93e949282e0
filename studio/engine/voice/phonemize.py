"""The Piper voices' front end: one sentence + its language -> phoneme ids.

Why this exists instead of calling ``PiperVoice.phonemize``:

* the language is **explicit**. The text layer detects each paragraph's language
  and we honour it: a French quotation inside an English book is phonemized with
  espeak's French rules, never guessed from the voice;
* one of *our* sentences must become exactly one id sequence (one synthesis item,
  one cache entry), whereas espeak may split it further (``"Dr. Smith went."``),
  so its sub-sentences are joined with a space;
* it is a pure function of ``(text, language, config)``, so results can be cached
  and child processes produce the same ids. The only shared thing is espeak-ng
  itself, a process-global C library, which is driven under a lock (the same lock
  Piper's own ``PiperVoice`` uses, so both can coexist in one process).

The torch engine reuses this module for Piper-format voices.

Words in capitals get the normaliser's decision (:func:`studio.text.normalize.capitals.fold`)
also on text that bypassed it (an override, a preview), so the two never disagree.

Punctuation and symbols reach espeak-ng as :func:`studio.text.normalize.marks.quiet`
leaves them (the pause a mark means, never a mark espeak-ng would name), whatever the
text's origin.

Pronunciation lexicon (:mod:`studio.core.lexicon`): applied here, once, for every
engine and preset. Respellings are substituted in the text; a phoneme entry's IPA
is spliced into the phoneme stream in place of its word -- the text around it is
phonemized as separate runs, and punctuation a run starts with (``", and"``), which
espeak would drop, is kept so pauses stay where the text has them.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from studio.core.errors import EngineError
from studio.core.language import language_tag
from studio.core.lexicon import Lexicon
from studio.engine.voice.config import VoiceConfig
from studio.text.normalize import capitals, marks
from studio.text.segment import is_speakable

_LOGGER = logging.getLogger(__name__)

BOS = "^"
EOS = "$"
PAD = "_"

#: ISO 639-1 (optionally with region) -> espeak-ng voice name as piper's bundled
#: espeak-ng-data knows it (``espeakbridge.set_voice`` matches voice *file* names
#: under ``espeak-ng-data/lang``; e.g. ``fr-fr`` is not a file, ``fr`` is).
#: Every entry is checked against the bundled data by the tests. Languages whose
#: espeak dictionary is not bundled (Faroese, Pashto) are left out on purpose.
ESPEAK_VOICES: dict[str, str] = {
    # regional variants first; lookups try the full tag, then the family
    "en-us": "en-us", "en-gb": "en", "en-029": "en-029",
    "pt-br": "pt-br", "pt-pt": "pt",
    "es-419": "es-419", "es-mx": "es-419", "es-ar": "es-419",
    "fr-be": "fr-be", "fr-ch": "fr-ch",
    "zh": "cmn", "zh-cn": "cmn", "zh-tw": "cmn", "zh-hk": "yue",
    "no": "nb", "nn": "nb", "nb": "nb",
    # plain families
    "en": "en-us", "fr": "fr", "de": "de", "es": "es", "it": "it", "pt": "pt",
    "nl": "nl", "ru": "ru", "pl": "pl", "uk": "uk", "cs": "cs", "sk": "sk",
    "sl": "sl", "hr": "hr", "sr": "sr", "bs": "bs", "bg": "bg", "mk": "mk",
    "be": "be", "ro": "ro", "hu": "hu", "fi": "fi", "et": "et", "lt": "lt",
    "lv": "lv", "sv": "sv", "da": "da", "is": "is", "el": "el", "tr": "tr",
    "az": "az", "kk": "kk", "ky": "ky", "uz": "uz", "tt": "tt", "ba": "ba",
    "tk": "tk", "ug": "ug", "ca": "ca", "eu": "eu", "an": "an", "la": "la",
    "eo": "eo", "cy": "cy", "ga": "ga", "gd": "gd", "mt": "mt", "sq": "sq",
    "hy": "hy", "ka": "ka", "af": "af", "lb": "lb", "sw": "sw", "tn": "tn",
    "am": "am", "om": "om", "ti": "ti", "ar": "ar", "he": "he", "fa": "fa",
    "ku": "ku", "hi": "hi", "ur": "ur", "bn": "bn", "pa": "pa", "gu": "gu",
    "mr": "mr", "ne": "ne", "or": "or", "as": "as", "sd": "sd", "si": "si",
    "ta": "ta", "te": "te", "kn": "kn", "ml": "ml", "vi": "vi", "th": "th",
    "my": "my", "id": "id", "ms": "ms", "mi": "mi", "ja": "ja", "ko": "ko",
    "ht": "ht", "gn": "gn", "qu": "qu", "kl": "kl",
}

#: Same sound, other code point: lexicons (the W3C samples among them) write the
#: ASCII ``g`` where espeak and Piper's id maps use IPA ``ɡ`` (U+0261).
IPA_EQUIVALENTS = {"g": "\u0261"}
#: Punctuation Piper voices are trained on (pauses and intonation).
_PAUSES = frozenset(",.;:!?")
_LEAD = re.compile(r"^\s*([^\w\s]*)\s*")

_BOOTSTRAP = threading.Lock()
_espeak: tuple[threading.Lock, Any] | None = None


def _espeak_handle() -> tuple[threading.Lock, Any]:
    """The process-wide (lock, EspeakPhonemizer) pair, created on first use.

    Reuses ``piper.voice``'s lock and phonemizer when present so that espeak-ng is
    initialised once and never driven by two threads at a time, whoever calls it.
    """
    global _espeak
    if _espeak is not None:
        return _espeak
    with _BOOTSTRAP:
        if _espeak is None:
            try:
                import piper.voice as piper_voice
                from piper.phonemize_espeak import EspeakPhonemizer
            except ImportError as exc:  # pragma: no cover - piper is a core dependency
                raise EngineError(f"piper-tts is not installed ({exc})") from exc
            lock = getattr(piper_voice, "_ESPEAK_PHONEMIZER_LOCK", None) or threading.Lock()
            with lock:
                phonemizer = getattr(piper_voice, "_ESPEAK_PHONEMIZER", None)
                if phonemizer is None:
                    phonemizer = EspeakPhonemizer()
                    if hasattr(piper_voice, "_ESPEAK_PHONEMIZER"):
                        piper_voice._ESPEAK_PHONEMIZER = phonemizer
            _espeak = (lock, phonemizer)
    return _espeak




@lru_cache(maxsize=256)
def espeak_voice_for(language: str, voice_espeak: str, voice_family: str) -> str:
    """Pick the espeak voice for a sentence in ``language`` spoken by this voice.

    Same language family as the voice -> the voice's own espeak voice (its accent,
    and the phonemization it was trained on). Otherwise the espeak voice of that
    language. Unknown language -> EngineError (we never silently fall back).
    """
    tag = language_tag(language)
    if not tag:
        raise EngineError("no language given for phonemization")
    family = tag.split("-", 1)[0]
    if voice_espeak and family == voice_family:
        return voice_espeak
    for key in (tag, family):
        if key in ESPEAK_VOICES:
            return ESPEAK_VOICES[key]
    raise EngineError(f"no espeak-ng voice for language {language!r}")


class PiperFrontEnd:
    """Text -> phonemes -> ids for one Piper voice config.

    Holds only the (immutable) config, so it is cheap to pickle and to share
    between threads.
    """

    def __init__(self, config: VoiceConfig) -> None:
        self.config = config
        if config.phoneme_type not in ("espeak", "text"):
            # Piper's pinyin/hebrew/japanese/thai front ends need extra models that
            # we do not ship; fail at load rather than mid-book.
            raise EngineError(
                f"{config.source_path or 'voice'}: phoneme type {config.phoneme_type!r} "
                "is not supported (only espeak and text voices)"
            )

    def espeak_voice(self, language: str) -> str:
        """The espeak-ng voice used for ``language`` with this voice."""
        return espeak_voice_for(language, self.config.espeak_voice, self.config.language_family)

    def phonemize(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[str]:
        """One flat phoneme list for one sentence (espeak sub-sentences joined by a space),
        with ``lexicon``'s entries applied (see the module docstring)."""
        if self.config.phoneme_type == "text":
            if lexicon:
                text = lexicon.respelled(text, language)
            return list(unicodedata.normalize("NFD", text))
        if not lexicon:
            return self._espeak(text, language)
        phonemes: list[str] = []
        for run, is_ipa in lexicon.runs(text, language):
            if is_ipa:
                part = self.ipa_phonemes(run)
            else:
                lead = _LEAD.match(run)
                marks = [c for c in (lead.group(1) if lead else "") if c in _PAUSES]
                spoken = self._espeak(run, language) if is_speakable(run) else []
                part = marks + ([" "] if marks and spoken else []) + spoken
            if not part:
                continue
            if phonemes and phonemes[-1] != " " and part[0] not in _PAUSES:
                phonemes.append(" ")
            phonemes.extend(part)
        return phonemes

    def phonemes(self, text: str, language: str, lexicon: Lexicon | None = None) -> str:
        """The sentence's phonemes as one string, as the listings show them ("" for blank text)."""
        return "".join(self.phonemize(text, language, lexicon or None)) if text.strip() else ""

    def ipa_phonemes(self, ipa: str) -> list[str]:
        """An entry's IPA as this voice's phoneme symbols (NFD, like espeak's output)."""
        chars = list(unicodedata.normalize("NFD", ipa.strip()))
        id_map = self.config.phoneme_id_map
        return [IPA_EQUIVALENTS.get(c, c) if c not in id_map else c for c in chars]

    def unknown_phonemes(self, ipa: str) -> list[str]:
        """Symbols of ``ipa`` this voice has no id for (they would be dropped): shown
        to the user when an entry is added, so a typo is caught before a render."""
        id_map = self.config.phoneme_id_map
        return sorted({c for c in self.ipa_phonemes(ipa) if c not in id_map})

    def _espeak(self, text: str, language: str) -> list[str]:
        voice = self.espeak_voice(language)
        if language_tag(language).startswith("en"):
            # words in capitals as the normaliser decided (espeak-ng spells "IT", "US" on its own)
            text = capitals.fold(text)
        text = marks.quiet(text)  # the pause a mark means, never its name
        lock, phonemizer = _espeak_handle()
        with lock:
            try:
                sentences = phonemizer.phonemize(
                    voice, text, vowel_clusters=self.config.vowel_clusters
                )
            except RuntimeError as exc:  # espeak could not set the voice
                raise EngineError(f"espeak-ng failed for language {language!r} ({voice}): {exc}") from exc
        phonemes: list[str] = []
        for sentence in sentences:
            if not sentence:
                continue
            if phonemes and phonemes[-1] != " ":
                phonemes.append(" ")
            phonemes.extend(sentence)
        return phonemes

    def phonemes_to_ids(self, phonemes: list[str]) -> list[int]:
        """Piper's id layout: ``^ _ p1 _ p2 _ ... $`` with unknown phonemes dropped."""
        from piper.phoneme_ids import phonemes_to_ids

        id_map = self.config.phoneme_id_map
        known = [p for p in phonemes if p in id_map]
        if len(known) != len(phonemes):
            missing = sorted({p for p in phonemes if p not in id_map})
            _LOGGER.debug("dropping phonemes missing from the voice's id map: %s", missing)
        return phonemes_to_ids(known, id_map)

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        """The whole front end for one sentence, with ``lexicon`` applied."""
        return self.phonemes_to_ids(self.phonemize(text, language, lexicon))


#: the ``format`` value of a recorded phoneme-id file
RECORDED_IDS_FORMAT = "studio-phoneme-ids/1"


def _recorded_key(text: str, language: str) -> tuple[str, str]:
    return language_tag(language).split("-")[0], " ".join(text.split())


class RecordedFrontEnd:
    """The real front end's answers, recorded once and replayed where espeak-ng is absent.

    Why: a machine that only runs the model (a GPU box for a timed check) has no
    espeak-ng and cannot install it, but the engines ask their front end for ids.
    :meth:`record` runs a real front end over every sentence that machine will ask
    for and writes ``{language, text, ids}`` entries; there :meth:`text_to_ids`
    looks them up (whitespace-normalised, by language family) and refuses any
    sentence that was not recorded -- it never guesses ids.
    """

    def __init__(self, entries: Mapping[tuple[str, str], Sequence[int]]) -> None:
        self._table = {_recorded_key(text, lang): list(ids) for (lang, text), ids in entries.items()}

    def __len__(self) -> int:
        return len(self._table)

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        if lexicon:
            # recordings hold the plain front end's ids; a lexicon would change them
            raise EngineError(f"no recorded phoneme ids for {text[:60]!r} with pronunciation lexicon entries")
        try:
            return list(self._table[_recorded_key(text, language)])
        except KeyError:
            raise EngineError(
                f"no recorded phoneme ids for {text[:60]!r} ({language}); record it with the real front end"
            ) from None

    @staticmethod
    def record(front_end: Any, sentences: Iterable[tuple[str, str]], path: str | Path) -> int:
        """Write ``front_end``'s ids of every ``(language, text)`` to ``path``; returns the count."""
        entries, seen = [], set()
        for language, text in sentences:
            key = _recorded_key(text, language)
            if key in seen:
                continue
            seen.add(key)
            entries.append({"language": key[0], "text": key[1], "ids": list(front_end.text_to_ids(text, language))})
        Path(path).write_text(json.dumps({"format": RECORDED_IDS_FORMAT, "entries": entries}), encoding="utf-8")
        return len(entries)

    @classmethod
    def from_file(cls, path: str | Path) -> "RecordedFrontEnd":
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("format") != RECORDED_IDS_FORMAT:
            raise EngineError(f"{path}: not a {RECORDED_IDS_FORMAT} file")
        return cls({(e["language"], e["text"]): e["ids"] for e in data["entries"]})
