"""Language tags, normalised in one place for the text, the voices and the project.

Why here: a file says ``fr_FR``, a detector says ``fr``, a Piper config says
``fr_FR`` and espeak says ``fr-fr``; the text layer, the voice catalog and the
project's language-to-voice map must all agree on what "the same language" is, or a
French passage silently falls back to the English voice.
"""

from __future__ import annotations

_ALIASES = {
    "iw": "he", "in": "id", "ji": "yi", "jw": "jv", "mo": "ro",
    "eng": "en", "fre": "fr", "fra": "fr", "ger": "de", "deu": "de", "spa": "es",
    "ita": "it", "por": "pt", "dut": "nl", "nld": "nl", "rus": "ru", "chi": "zh",
    "zho": "zh", "jpn": "ja", "ara": "ar", "heb": "he", "pol": "pl", "swe": "sv",
    "ces": "cs", "cze": "cs",
    "english": "en", "french": "fr", "francais": "fr", "fran\u00e7ais": "fr",
    "german": "de", "deutsch": "de", "spanish": "es", "espa\u00f1ol": "es",
    "italian": "it", "portuguese": "pt", "dutch": "nl", "russian": "ru",
    "chinese": "zh", "japanese": "ja", "arabic": "ar", "hebrew": "he",
}


def language_family(tag: str | None) -> str:
    """ISO 639-1 from whatever a file or a library says: ``en-US``/``zh_cn``/``fra`` -> ``en``/``zh``/``fr``.

    Returns ``""`` when the value cannot be understood.
    """
    if not tag:
        return ""
    low = tag.strip().lower().replace("_", "-")
    if low in _ALIASES:
        return _ALIASES[low]
    primary = _ALIASES.get(low.split("-")[0], low.split("-")[0])
    if len(primary) == 2 and primary.isascii() and primary.isalpha():
        return primary
    return ""


def language_tag(tag: str) -> str:
    """``"pt_BR"`` / ``"PT-br"`` -> ``"pt-br"``: the region kept, for phoneme tables."""
    return tag.strip().replace("_", "-").lower()


def piper_language(tag: str) -> str:
    """``en-us`` -> ``en_US``: the Piper spelling, so every voice reads alike."""
    parts = tag.replace("-", "_").split("_")
    if len(parts) >= 2 and len(parts[1]) == 2:
        parts[1] = parts[1].upper()
    return "_".join(p for p in parts if p)
