"""The project's Triton servers: addresses, model, TLS files, outage limit, and a
connection test.

Why a test button: a typo in an address or a model name otherwise shows up as a
paused render; the test asks each server whether the model is ready there, in the
background, and lists the answers.
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class TritonPanel(QWidget):
    """Edits ``ProjectSettings.triton``; ``testRequested`` carries the fields as typed."""

    testRequested = Signal(object)  # dict of the fields (see fields())

    def __init__(self, current: Any, parent: QWidget | None = None) -> None:  # current: TritonTarget | None
        super().__init__(parent)
        self.current = current
        self.servers = QLineEdit(", ".join(current.servers) if current else "")
        self.servers.setPlaceholderText("empty: render on this computer; e.g. grpc://gpu1:8001, grpc://gpu2:8001")
        self.model = QLineEdit(current.model if current else "")
        self.model.setPlaceholderText("default: <voice>.<preset>, as `studio triton export` names it")
        self.ca = QLineEdit(current.ca_file if current else "")
        self.cert = QLineEdit(current.cert_file if current else "")
        self.key = QLineEdit(current.key_file if current else "")
        for edit in (self.ca, self.cert, self.key):
            edit.setPlaceholderText("PEM file (TLS: grpcs:// or https:// addresses)")
        self.outage = QDoubleSpinBox()
        self.outage.setRange(0, 86400)
        self.outage.setSuffix(" s")
        self.outage.setValue(current.outage_s if current else 600.0)
        self.outage.setToolTip("While no server answers the render pauses; after this long its sentences fail")
        form = QFormLayout()
        form.addRow("Servers:", self.servers)
        form.addRow("Model:", self.model)
        form.addRow("CA certificate:", self.ca)
        form.addRow("Client certificate:", self.cert)
        form.addRow("Client key:", self.key)
        form.addRow("Wait for servers:", self.outage)
        self.test = QPushButton("Test connection")
        self.test.clicked.connect(lambda: self.testRequested.emit(self.fields()))
        self.result = QLabel("")
        self.result.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.test)
        row.addWidget(self.result, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Render on NVIDIA Triton Inference Server instead of this computer "
                                "(export the voice with `studio triton export`)."))
        layout.addLayout(form)
        layout.addLayout(row)
        layout.addStretch(1)

    def fields(self) -> dict[str, Any]:
        return {"servers": self.servers.text(), "model": self.model.text(), "ca_file": self.ca.text(),
                "cert_file": self.cert.text(), "key_file": self.key.text(), "outage_s": self.outage.value()}

    def testing(self) -> None:
        self.test.setEnabled(False)
        self.result.setText("Asking the servers\u2026")

    def show_result(self, rows: list[tuple[str, bool, str]]) -> None:
        """One line per server: ok or not, and what it said."""
        self.test.setEnabled(True)
        if not rows:
            self.result.setText("No servers given: the project renders on this computer.")
            return
        marks = {True: "\u2714", False: "\u2718"}
        self.result.setText("<br>".join(f"{marks[ok]} {url}: {message}" for url, ok, message in rows))

    def show_error(self, message: str) -> None:
        self.test.setEnabled(True)
        self.result.setText(f"\u2718 {message}")


def test_servers(session: Any, panel: TritonPanel, fields: dict, shown: Callable[[], bool]) -> None:
    """The Servers tab's connection test, in the background on the session's task thread (servers may
    take seconds); the answer is shown while the dialog (``shown``) is open."""
    from studio.stack.build import effective_preset
    from studio.stack.triton_repository import connection_test, make_target

    settings = session.settings
    if settings is None:
        return
    panel.testing()

    def work() -> list:
        target = make_target(**fields, base=settings.triton)
        return [] if target is None else connection_test(target, settings.voice_id, effective_preset(settings).name)

    session.tasks.run(work, on_done=lambda rows: shown() and panel.show_result(rows),
                      on_error=lambda e: panel.show_error(e.message), action="test the Triton servers")
