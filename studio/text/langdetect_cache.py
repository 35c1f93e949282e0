"""langdetect's language profiles, loaded from a compact cache instead of 55 JSON files.

Why: ``DetectorFactory.load_profile`` parses ~55 JSON profiles into a dict of 87,000
words x 55 probabilities, ~0.6 s of CPU at every start of ``studio render`` -- a
third of a one-sentence render. The same numbers stored once as one float64 matrix
and a word list load in a few hundredths of a second. Detection is unchanged: every
lookup returns the same Python floats the JSON gave (float64 both ways), and the
cache is keyed by the profile files' names, sizes and times.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Iterator

import numpy as np

from studio.core import paths

log = logging.getLogger(__name__)

#: bump when the file layout changes
CACHE_VERSION = 1


class WordProbabilities(Mapping):
    """word -> per-language probabilities (a list, as langdetect's own dict holds)."""

    def __init__(self, words: list[str], matrix: np.ndarray) -> None:
        self._index = {w: i for i, w in enumerate(words)}
        self._matrix = matrix

    def __getitem__(self, word: str) -> list[float]:
        return self._matrix[self._index[word]].tolist()

    def __contains__(self, word: object) -> bool:
        return word in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)


def _key(profiles: Path) -> str:
    h = hashlib.sha256(f"v{CACHE_VERSION}".encode())
    for f in sorted(profiles.iterdir()):
        st = f.stat()
        h.update(f"\0{f.name}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return h.hexdigest()[:24]


def load_factory(factory, profiles_dir: str) -> None:
    """Fill ``factory`` (a fresh ``DetectorFactory``) with the profiles, via the cache."""
    profiles = Path(profiles_dir)
    try:
        path = paths.cache_dir() / "langdetect" / f"profiles-{_key(profiles)}.npz"
    except OSError:
        factory.load_profile(profiles_dir)
        return
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as data:
                langs = json.loads(str(data["langs"]))
                words = json.loads(str(data["words"]))
                matrix = np.array(data["matrix"], dtype=np.float64)
            factory.langlist = langs
            factory.word_lang_prob_map = WordProbabilities(words, matrix)
            return
        except (OSError, ValueError, KeyError) as exc:  # a damaged cache: rebuild it
            log.info("language profile cache %s unreadable (%s); rebuilding", path, exc)
    factory.load_profile(profiles_dir)
    _save(path, factory.langlist, factory.word_lang_prob_map)


def _save(path: Path, langs: list[str], table: dict[str, list[float]]) -> None:
    words = list(table)
    matrix = np.array([table[w] for w in words], dtype=np.float64)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.stem + ".", suffix=".tmp.npz", dir=path.parent)
        os.close(fd)
        try:
            np.savez(tmp, langs=np.array(json.dumps(langs)), words=np.array(json.dumps(words)), matrix=matrix)
            os.replace(tmp, path)
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError as exc:  # a read-only cache folder only costs the time
        log.info("cannot cache language profiles at %s: %s", path, exc)
