"""Live readouts (speed, sentences/s, memory, CPU, VRAM) and a small chart.

Why QPainter and not QtCharts: QtCharts is not part of PySide6-Essentials, and a
two-line sparkline over the last minutes needs fifty lines of painting, not a
module. The panel only displays :class:`~studio.desktop.messages.Readout` values.
"""

from __future__ import annotations

from collections import deque

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from studio.core.words import counted
from studio.desktop.messages import ListeningState, Readout
from studio.ui.common import fmt_bytes

SPEED_COLOR = QColor("#1565c0")
MEMORY_COLOR = QColor("#ef6c00")


class LiveChart(QWidget):
    """Speed (x real time) and memory over the last ``span_s`` seconds, two scales."""

    def __init__(self, span_s: float = 300.0, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.span_s = span_s
        self.points: deque[tuple[float, float, float]] = deque()  # (t, speed, rss MiB)
        self.setMinimumHeight(110)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(320, 140)

    def add(self, r: Readout) -> None:
        self.points.append((r.at, r.x_real_time, r.rss_bytes / float(1 << 20)))
        while self.points and self.points[0][0] < r.at - self.span_s:
            self.points.popleft()
        self.update()

    def paintEvent(self, _event) -> None:  # noqa: ANN001
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        p.fillRect(self.rect(), pal.base())
        font = QFont(self.font())
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
        p.setFont(font)
        fm = p.fontMetrics()
        plot = QRectF(self.rect()).adjusted(8, fm.height() + 6, -8, -fm.height() - 4)
        p.setPen(QPen(pal.mid().color(), 1))
        p.drawRect(plot)
        now = self.points[-1][0] if self.points else 0.0
        span = min(self.span_s, max(60.0, now - self.points[0][0])) if self.points else self.span_s
        max_speed = max([pt[1] for pt in self.points] + [1.0]) * 1.15
        mems = [pt[2] for pt in self.points] or [0.0]
        lo_mem, hi_mem = min(mems) * 0.9, max(mems) * 1.1 + 1.0

        def line(values: list[tuple[float, float]], lo: float, hi: float, color: QColor) -> None:
            if len(values) < 2:
                return
            path = QPainterPath()
            for k, (t, v) in enumerate(values):
                x = plot.right() - (now - t) / span * plot.width()
                y = plot.bottom() - (v - lo) / (hi - lo) * plot.height()
                path.lineTo(QPointF(x, y)) if k else path.moveTo(QPointF(x, y))
            p.setPen(QPen(color, 1.8))
            p.drawPath(path)

        line([(t, s) for t, s, _ in self.points], 0.0, max_speed, SPEED_COLOR)
        line([(t, m) for t, _, m in self.points], lo_mem, hi_mem, MEMORY_COLOR)
        p.setPen(SPEED_COLOR)
        p.drawText(QPointF(plot.left(), plot.top() - 4), f"speed (max {max_speed / 1.15:.1f}x)")
        p.setPen(MEMORY_COLOR)
        label = f"memory {mems[-1]:.0f} MiB"
        p.drawText(QPointF(plot.right() - fm.horizontalAdvance(label), plot.top() - 4), label)
        p.setPen(pal.text().color())
        p.drawText(QPointF(plot.left(), plot.bottom() + fm.ascent() + 2), f"last {span / 60:.0f} min" if span >= 90 else f"last {span:.0f} s")
        if not self.points:
            p.drawText(plot, Qt.AlignmentFlag.AlignCenter, "waiting for readouts\u2026")
        p.end()


class ReadoutPanel(QWidget):
    """Figures in a grid, updated by :meth:`show`, and the chart under them."""

    FIELDS = (
        ("speed", "Speed"), ("sps", "Sentences/s"), ("memory", "Memory"),
        ("cpu", "CPU"), ("vram", "VRAM"), ("device", "Device"), ("ui", "UI latency"),
    )

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.values: dict[str, QLabel] = {}
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        for i, (key, title) in enumerate(self.FIELDS):
            name = QLabel(title + ":")
            value = QLabel("\u2014")
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setMinimumWidth(90)
            self.values[key] = value
            grid.addWidget(name, i, 0)
            grid.addWidget(value, i, 1)
        grid.setVerticalSpacing(2)
        grid.setColumnStretch(1, 1)
        self.status = QLabel("Idle")
        self.status.setStyleSheet("font-weight: 600;")
        self.engine = QLabel("Model not loaded yet (it loads with the first render or preview)")
        self.engine.setWordWrap(True)
        self.chart = LiveChart()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.status)
        layout.addWidget(self.engine)
        layout.addLayout(grid)
        layout.addWidget(self.chart, 1)
        self.last: Readout | None = None
        self.listening: ListeningState | None = None
        self.updates = 0

    def show_readout(self, r: Readout) -> None:
        self.last = r
        self.updates += 1
        v = self.values
        # one speed (its inverse, the real-time factor, only in the tooltip: the two side by side read as two figures)
        v["speed"].setText(f"{r.x_real_time:.1f}\u00d7 real time" if r.x_real_time else "\u2014")
        v["speed"].setToolTip(f"seconds of audio made per second of synthesis over the last {r.window_s:.0f} s"
                              + (f" (real-time factor {r.rtf:.3f})" if r.rtf else ""))
        v["sps"].setText(f"{r.sentences_per_s:.2f}" if r.rendering or r.sentences_per_s else "\u2014")
        v["memory"].setText(fmt_bytes(r.rss_bytes) + (f" (studio + {r.children} child process{'es' if r.children > 1 else ''})" if r.children else ""))
        v["memory"].setToolTip(f"resident memory of the studio and its {counted(r.children, 'child process', 'child processes')}"
                               " (the isolated model process)" if r.children else "resident memory of the studio")
        v["cpu"].setText(f"{r.cpu_percent:.0f} %")
        if r.vram_used is None:
            v["vram"].setText("n/a")
            v["vram"].setToolTip("no CUDA device in use")
        else:
            v["vram"].setText(f"{fmt_bytes(r.vram_used)} (peak {fmt_bytes(r.vram_peak)})")
        v["device"].setText(r.device)
        v["ui"].setText(f"{r.ui_stall_ms:.0f} ms worst")
        self._say_status()
        self.chart.add(r)

    def set_listening(self, state: ListeningState | None) -> None:
        """Proof-listening's progress (None: done): said where "Idle" would be."""
        self.listening = state
        self._say_status()

    def _say_status(self) -> None:
        """"Rendering", "Proof-listening chapter 3: 40 %", both, or "Idle"."""
        doing = ["Rendering"] if self.last is not None and self.last.rendering else []
        doing += [self.listening.words()] if self.listening is not None else []
        self.status.setText(" \u00b7 ".join(doing) or "Idle")

    def set_engine_status(self, text: str) -> None:
        self.engine.setText(text)
