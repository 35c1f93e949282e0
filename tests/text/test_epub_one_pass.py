"""One pass over an EPUB at import: the archive is opened once, and text, pronunciations and
CSS Speech direction all come back from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.engine.voice.catalog import get_voice
from studio.project.lexicon import USER_LEXICON_ENV
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.text import safety


@pytest.fixture
def opened_archives(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every archive the import opens (the real SafeZip, watched)."""
    seen: list[Path] = []
    real = safety.SafeZip.__init__

    def watched(self, path, *args, **kwargs) -> None:
        seen.append(Path(path))
        real(self, path, *args, **kwargs)

    monkeypatch.setattr(safety.SafeZip, "__init__", watched)
    return seen


def test_an_epub_is_read_once_for_text_lexicon_and_direction(shared_epubs: Path, tmp_path: Path,
                                                             opened_archives: list[Path],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(USER_LEXICON_ENV, str(tmp_path / "none.pls"))
    epub = shared_epubs / "georgia-pls-ssml.epub"
    opened = open_for_manuscript(epub, tmp_path / "p", new_project_settings(get_voice(None)))
    with opened.project as project:
        assert opened_archives == [epub]
        by = {e.grapheme: e for e in project.lexicon.entries().entries}
        assert by["Altamaha"].value == "ˈɔltəməˌhɔ" and by["N."].value == "nɔrθ"  # the PLS and the SSML
        assert set(project.lexicon.sources().values()) == {"epub"}
        assert any("Altamaha" in r.text for r in project.sentences())

