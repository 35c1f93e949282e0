"""Small shared helpers for the widgets: language names, number formatting, messages."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QMessageBox, QPushButton, QWidget

#: languages offered in override menus (ISO 639-1); voices' languages are added at run time
LANGUAGE_NAMES: dict[str, str] = {
    "en": "English", "fr": "French", "de": "German", "es": "Spanish", "it": "Italian",
    "pt": "Portuguese", "nl": "Dutch", "la": "Latin", "ru": "Russian", "pl": "Polish",
    "sv": "Swedish", "da": "Danish", "no": "Norwegian", "fi": "Finnish", "cs": "Czech",
    "el": "Greek", "tr": "Turkish", "uk": "Ukrainian", "zh": "Chinese", "ja": "Japanese",
    "ar": "Arabic", "he": "Hebrew", "hi": "Hindi", "ko": "Korean", "ca": "Catalan",
}

#: a short sentence per language for voice samples
SAMPLE_TEXT: dict[str, str] = {
    "en": "Every evening at a quarter past six, she climbed the iron steps and wound the great lamp.",
    "fr": "Chaque soir, à six heures et quart, elle montait l'escalier de fer et remontait la grande lampe.",
    "de": "Jeden Abend um Viertel nach sechs stieg sie die eiserne Treppe hinauf und zog die große Lampe auf.",
    "es": "Cada tarde, a las seis y cuarto, subía la escalera de hierro y daba cuerda a la gran lámpara.",
    "it": "Ogni sera alle sei e un quarto saliva la scala di ferro e caricava la grande lampada.",
}


def language_name(code: str) -> str:
    """A language's name in English ("sk" "Slovak"): the menus' table, else the detector's own
    (lingua knows every language it can find); the code itself only for one neither knows."""
    family = code.replace("-", "_").split("_")[0].lower()
    if family in LANGUAGE_NAMES:
        return LANGUAGE_NAMES[family]
    from lingua import IsoCode639_1, Language

    iso = getattr(IsoCode639_1, family.upper(), None)
    return Language.from_iso_code_639_1(iso).name.title() if iso is not None else code


def language_label(code: str) -> str:
    name = language_name(code)
    return f"{name} ({code})" if name != code else code


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return "n/a"
    if n >= 1 << 30:
        return f"{n / (1 << 30):.2f} GiB"
    return f"{n / (1 << 20):.0f} MiB"


def fmt_eta(seconds: float | None) -> str:
    if seconds is None:
        return "estimating\u2026"
    total = int(round(max(0.0, seconds)))
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    return f"{h} h {m:02d} min" if h else (f"{m} min {s:02d} s" if m else f"{s} s")


def show_message_box(parent: QWidget, title: str, text: str, detail: str = "",
                     icon: QMessageBox.Icon = QMessageBox.Icon.Warning) -> QMessageBox:
    """A non-blocking message box (``open()``, not ``exec()``): the event loop keeps running."""
    box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, parent)
    if detail:
        box.setDetailedText(detail)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
    box.open()
    return box


def browse_row(edit: QLineEdit, browse) -> QHBoxLayout:  # noqa: ANN001 - a slot
    """A path field with its "Browse..." button beside it (``browse`` fills the field)."""
    button = QPushButton("Browse\u2026")
    button.clicked.connect(browse)
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    row.addWidget(button)
    return row
