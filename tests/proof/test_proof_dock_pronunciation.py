"""The Proof dock shows the new kind, "check the pronunciation", in plain words on real widgets.

The verdict comes from the real check (the studio's heteronym rules against what the
voice was given); the dock lists it with its reason, pre-fills the pronunciation
dialog's word, explains that a new take will not help and offers none.
"""

from __future__ import annotations

from studio.project.proofs import FLAGGED, ProofRecord
from studio.proof.pronounce import pronunciation_flags
from studio.desktop.proof import ProofEntry, ProofView
from studio.ui.proof_dock import ProofPanel

TEXT = "Every night she wound the old clock on the mantel."


def test_the_dock_lists_a_pronunciation_to_check_with_plain_advice(qtbot) -> None:  # noqa: ANN001
    flags = tuple(pronunciation_flags(TEXT, TEXT, "en"))  # the voice was given the printed word
    assert [f.kind for f in flags] == ["pronunciation"]
    record = ProofRecord(FLAGGED, 1, 100.0, "every night she wound the old clock on the mantel", flags)
    panel = ProofPanel()
    qtbot.addWidget(panel)
    entry = ProofEntry(7, 0, 3, TEXT, record.heard, record.severity, record.score, record.flags)
    panel.set_view(ProofView("book", (entry,), ((0, "1 to review; 32 of 33 heard and passed"),)))
    assert panel.table.rowCount() == 1
    why = panel.table.item(0, 2).text()
    assert "check the pronunciation" in why and "wound" in why
    panel.table.selectRow(0)
    assert "new take will not change it" in panel.details.toPlainText()
    assert panel.lexicon_btn.isEnabled() and not panel.rerender_btn.isEnabled()
    words = []
    panel.addPronunciation.connect(words.append)
    panel.lexicon_btn.click()
    assert words == ["wound"]


def test_the_reason_is_said_in_good_english() -> None:
    """"the context ... calls for", "the heteronym rules call for" (issue 41, point 4)."""
    from studio.text.normalize import spoken_form

    (context,) = pronunciation_flags("He read it.", spoken_form("He read it.", "en"), "en")
    assert "the context (part of speech) calls for /" in context.reason
    (rules,) = pronunciation_flags(TEXT, TEXT, "en")
    assert "the heteronym rules call for /" in rules.reason
