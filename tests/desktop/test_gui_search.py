"""Search in a Moby-Dick-sized book combined with the filters, and a search that
matches most of the book. Real widgets, a real project of about 200k words."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.window import big_book
from support.gui import write_manuscript
from support.window import WAIT, make_window, open_and_wait, visible_rows

from studio.ui.book_view import EXPAND_MATCHES

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("private_dirs")]


def test_search_with_filters_and_a_search_matching_most_of_a_big_book(qtbot, tmp_path: Path) -> None:
    window = make_window(qtbot, tmp_path, [])
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", big_book(), "big.md"))
    book = window.book
    qtbot.keyClicks(book.search, "white whale")
    qtbot.waitUntil(lambda: book.proxy.matches is not None and book.proxy.matches.needle == "white whale",
                    timeout=WAIT)
    found = visible_rows(window)
    assert found[0].startswith("Chapter 141 (track 141)") and found[-1].startswith("The white whale surfaced")
    assert len(found) == 3 and book.tree.isExpanded(book.proxy.index(0, 0))

    book.filter_combo.setCurrentText("Not rendered")  # a filter on top of the search: both apply
    assert visible_rows(window) == found
    book.filter_combo.setCurrentText("Failed")
    assert visible_rows(window) == []
    book.filter_combo.setCurrentText("All")
    assert visible_rows(window) == found

    book.search.clear()
    qtbot.keyClicks(book.search, "hauled")  # every paragraph of every chapter
    qtbot.waitUntil(lambda: book.proxy.matches is not None and book.proxy.matches.needle == "hauled", timeout=WAIT)
    assert len(book.proxy.matches.rows) > EXPAND_MATCHES
    assert book.proxy.rowCount() == 141
    first = book.proxy.index(0, 0)
    assert not book.tree.isExpanded(first) and book.proxy.hasChildren(first)  # collapsed, and can be opened
    book.tree.expand(first)
    assert book.proxy.rowCount(first) == 12  # its paragraphs (the title paragraph does not say "hauled")
    window.close()
