"""Help > User Guide and Keyboard Shortcuts, and the Edit menu's Undo / Redo words.

Why the shortcuts are read from the actions: a list written by hand goes stale the
first time a key changes; this one is the menus' own keys, so it is always right.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from studio.desktop.history import step_words

#: keys that belong to no menu command
OTHER_KEYS = (("Space", "Play or pause the selection"), ("F2", "Edit the sentence's text (book tree)"),
              ("Double-click", "Edit the sentence's text (book tree)"))


def shortcut_rows(actions: Mapping[str, QAction]) -> list[tuple[str, str]]:
    """``(keys, command)`` of every action with a key, then the keys of no menu command."""
    rows = []
    for action in actions.values():
        keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts() if not k.isEmpty())
        if keys:
            rows.append((keys, action.text().replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("\u2026")))
    return rows + list(OTHER_KEYS)


def show_shortcuts(window: QWidget, acts: Any) -> QDialog:
    """A small window listing :func:`shortcut_rows` (not modal: the book stays usable)."""
    dialog = QDialog(window)
    dialog.setWindowTitle("Keyboard shortcuts")
    rows = shortcut_rows(acts.named)
    table = QTableWidget(len(rows), 2)
    table.setHorizontalHeaderLabels(["Keys", "Command"])
    for r, (keys, what) in enumerate(rows):
        table.setItem(r, 0, QTableWidgetItem(keys))
        table.setItem(r, 1, QTableWidgetItem(what))
    table.resizeColumnsToContents()
    table.horizontalHeader().setStretchLastSection(True)
    table.verticalHeader().setVisible(False)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dialog.close)
    layout = QVBoxLayout(dialog)
    layout.addWidget(table)
    layout.addWidget(buttons)
    dialog.resize(460, 420)
    dialog.open()
    window.shortcuts_dialog = dialog  # kept: a dialog without an owner reference is collected
    return dialog


def name_history(undo: QAction, redo: QAction, labels: tuple[str | None, str | None]) -> None:
    """"Undo sentence edit", "Redo chapter merge": what each would do, or plain words when nothing."""
    for action, word, label in ((undo, "Undo", step_words(labels[0])), (redo, "Redo", step_words(labels[1]))):
        action.setText(f"&{word} {label}" if label else f"&{word}")
        action.setStatusTip(f"{word}: {label}" if label else f"Nothing to {word.lower()}")
