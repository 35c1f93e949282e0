"""gruut's part-of-speech tagger and pronouncing dictionary, one reading of a sentence.

Why shared: the heteronym rules (:mod:`studio.text.normalize.heteronyms`) ask it
whether a noun/verb heteronym ("use", "record", "present") is the noun or the verb,
the book audit lists where it and the rules disagree, and proof-listening
(:mod:`studio.proof.pronounce`) takes its reading as the second opinion on what the
voice was given: one tagger, so the three cannot disagree about the same sentence.
gruut is optional (the ``proof`` extra); without it every answer is empty and the
rules decide alone. Callers ask only about sentences holding a word that needs it.

gruut's English lexicon (a 13 MB SQLite file) has no index on its words, and gruut
looks up every word of a sentence, several times: each lookup read the whole table
(most of the book audit's time: a 16,000-word novel excerpt spent 100 of its 220
profiled seconds there). Each thread's tagger reads an indexed copy in memory instead.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from functools import lru_cache
from typing import Any, NamedTuple

log = logging.getLogger(__name__)
_LOCAL = threading.local()
_LANG = "en-us"


class Tagged(NamedTuple):
    word: str  # lower case
    pos: str  # Penn Treebank tag ("NN", "VBP"), "" when none
    phonemes: str  # gruut's IPA for the word in this sentence


@lru_cache(maxsize=4096)
def tagged(sentence: str) -> tuple[Tagged, ...]:
    """gruut's reading of each word of an English ``sentence``; empty when gruut is absent."""
    processor = _processor()
    if processor is None:
        return ()
    out = []
    graph, root = processor(sentence, lang=_LANG)
    for sent in processor.sentences(graph, root, phonemes=True, pos=True):
        for w in sent:
            if w.phonemes:
                out.append(Tagged(w.text.lower(), w.pos or "", "".join(w.phonemes)))
    return tuple(out)


def _processor() -> Any:
    """This thread's gruut text processor, reading an indexed copy of its lexicon; None without gruut."""
    processor = getattr(_LOCAL, "processor", None)
    if processor is not None:
        return processor
    try:
        from gruut.phonemize import SqlitePhonemizer
        from gruut.text_processor import TextProcessor
    except ImportError:
        log.debug("gruut is not installed: no part-of-speech tagger")
        return None
    processor = TextProcessor(default_lang=_LANG)
    settings = processor.get_settings(_LANG)
    delayed = settings.lookup_phonemes
    path = getattr(delayed, "db_path", None)
    if path is not None:
        indexed = sqlite3.connect(":memory:")
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as disk:
            disk.backup(indexed)
        disk.close()
        indexed.execute("CREATE INDEX IF NOT EXISTS word_phonemes_word ON word_phonemes(word)")
        settings.lookup_phonemes = SqlitePhonemizer(db_conn=indexed, **delayed.phonemizer_args)
    _LOCAL.processor = processor
    return processor


def part_of_speech(sentence: str, word: str, nth: int = 0) -> str:
    """"noun", "verb", "adjective" or "" for the ``nth`` ``word`` (lower case) of ``sentence``."""
    mine = [t.pos for t in tagged(sentence) if t.word == word]
    if nth >= len(mine):
        return ""
    pos = mine[nth]
    return "verb" if pos.startswith("VB") else "noun" if pos.startswith("NN") else "adjective" if pos.startswith("JJ") else ""
