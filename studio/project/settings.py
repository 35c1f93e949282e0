"""Per-project render settings and their (JSON) storage form.

Kept apart from the store so the GUI can build and compare settings without a
database, and so the JSON shape (what lands in the ``settings`` table) is in one
place.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Mapping

from studio.audio.assemble import Pauses
from studio.core.errors import ProjectError, StudioError
from studio.core.types import UnvoicedPolicy
from studio.engine.base import SynthesisSettings
from studio.core.triton_target import TritonTarget
from studio.text import content

BACKENDS = ("onnx", "torch")


@dataclass(frozen=True)
class ProjectSettings:
    """How a project is spoken and delivered.

    ``voice_id`` is the default voice; ``language_voices`` maps ISO 639-1 codes to
    other voices for passages in that language. ``backend`` + ``preset`` name the
    engine configuration (they enter the cache key). ``output_sample_rate`` None
    means "the voice's own rate". ``triton`` (None: render on this machine) sends
    synthesis to Triton servers: addresses, model name, TLS files and how long to
    wait for servers that stop answering. It is where the preset runs, not what it
    computes, so it does not enter cache keys (Triton's audio equals the local one).
    """

    voice_id: str
    backend: str = "onnx"
    preset: str = ""
    synthesis: SynthesisSettings = SynthesisSettings()
    pauses: Pauses = Pauses()
    output_sample_rate: int | None = None
    language_voices: Mapping[str, str] = field(default_factory=dict, hash=False)
    triton: TritonTarget | None = None
    #: a passage in a language no voice speaks: "native" (the book's voice with that
    #: language's phonemes), "book" (read as the book's language) or "skip" (left out,
    #: listed); see :class:`~studio.core.types.UnvoicedPolicy`
    unvoiced: str = "native"
    #: the book's rights as the producer states them ("public domain", "Copyright 2019 by Acme Press");
    #: empty: what the book itself says (EPUB dc:rights, front matter, its copyright page)
    rights: str = ""
    #: who holds the recording's copyright, for the closing credits ("Recording copyright 2026 by ...")
    producer: str = ""
    #: the book's details as the producer set them (Book Details, ``studio details``); empty: the
    #: manuscript's own title and author, the synthetic voice as narrator, this year for the recording
    title: str = ""
    author: str = ""
    narrator: str = ""
    recording_year: str = ""
    #: what is read of what is not prose (studio.text.content): notes "end" (the end of the chapter),
    #: "inline" or "skip"; images "captions", "all" (alt text too) or "none"; tables "rows", "summary" or
    #: "skip"; code "skip" or "read"
    notes: str = "end"
    images: str = "captions"
    tables: str = "rows"
    code: str = "skip"

    def __post_init__(self) -> None:
        if not self.voice_id:
            raise ProjectError("project settings need a voice id")
        if self.backend not in BACKENDS:
            raise ProjectError(f"unknown engine '{self.backend}' (choose one of: {', '.join(BACKENDS)})")
        if self.output_sample_rate is not None and not (8000 <= self.output_sample_rate <= 192000):
            raise ProjectError(f"output sample rate {self.output_sample_rate} Hz is out of range (8000-192000)")
        if self.recording_year and not (self.recording_year.isdigit() and len(self.recording_year) == 4):
            raise ProjectError(f"the recording's year '{self.recording_year}' is not a year like 2026")
        if self.unvoiced not in {p.value for p in UnvoicedPolicy}:
            raise ProjectError(f"unknown policy '{self.unvoiced}' for unvoiced passages (native, book or skip)")
        for name in content.CHOICES:
            if (why := content.check(name, getattr(self, name))) is not None:
                raise ProjectError(why)

    @property
    def engine_token(self) -> str:
        """``backend/preset`` as it enters cache keys."""
        return f"{self.backend}/{self.preset}"

    def with_changes(self, **changes: Any) -> "ProjectSettings":
        return replace(self, **changes)

    # ------------------------------------------------------------ storage form

    def to_rows(self) -> dict[str, Any]:
        """Key -> JSON-able value for the ``settings`` table (mapping stored apart)."""
        return {
            "voice_id": self.voice_id,
            "backend": self.backend,
            "preset": self.preset,
            "synthesis": asdict(self.synthesis),
            "pauses": asdict(self.pauses),
            "output_sample_rate": self.output_sample_rate,
            "triton": asdict(self.triton) if self.triton is not None else None,
            "unvoiced": self.unvoiced,
            "rights": self.rights,
            "producer": self.producer,
            "title": self.title,
            "author": self.author,
            "narrator": self.narrator,
            "recording_year": self.recording_year,
            **{name: getattr(self, name) for name in content.CHOICES},
        }

    @classmethod
    def from_rows(cls, rows: Mapping[str, Any], language_voices: Mapping[str, str]) -> "ProjectSettings":
        try:
            synthesis = SynthesisSettings(**rows.get("synthesis", {}))
            pauses = Pauses(**rows.get("pauses", {}))
            return cls(
                voice_id=str(rows["voice_id"]),
                backend=str(rows.get("backend", "onnx")),
                preset=str(rows.get("preset", "")),
                synthesis=synthesis,
                pauses=pauses,
                output_sample_rate=rows.get("output_sample_rate"),
                language_voices=dict(language_voices),
                triton=_triton_from_row(rows.get("triton")),
                unvoiced=str(rows.get("unvoiced", "native")),
                rights=str(rows.get("rights") or ""),
                producer=str(rows.get("producer") or ""),
                title=str(rows.get("title") or ""),
                author=str(rows.get("author") or ""),
                narrator=str(rows.get("narrator") or ""),
                recording_year=str(rows.get("recording_year") or ""),
                **{name: str(rows.get(name) or default) for name, default in content.DEFAULTS.items()},
            )
        except (KeyError, TypeError, ValueError, StudioError) as err:
            raise ProjectError(f"project settings are damaged ({err})") from err


def _triton_from_row(row: Any) -> TritonTarget | None:
    if not row:
        return None
    values = dict(row)
    values["servers"] = tuple(values.get("servers") or ())
    return TritonTarget(**values)


def write_settings(conn: sqlite3.Connection, settings: ProjectSettings) -> None:
    """Store ``settings`` in the ``settings`` and ``language_voices`` tables (caller's transaction)."""
    for key, value in settings.to_rows().items():
        conn.execute(
            "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, json.dumps(value)),
        )
    conn.execute("DELETE FROM language_voices")
    conn.executemany(
        "INSERT INTO language_voices (language, voice_id) VALUES (?, ?)",
        [(lang.lower(), voice) for lang, voice in settings.language_voices.items()],
    )
