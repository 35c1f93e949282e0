"""How fast this project rendered, kept with it, per preset.

Why stored: the time a render will take is the sentences left times the synthesis
seconds per sentence measured so far. That figure lived in the app's memory only,
so a project reopened with hundreds of sentences rendered said "Estimated time:
not known yet" until the next render. Each finished job adds its synthesis seconds
and sentences here (the ``settings`` table under its own key, which no rendition
depends on); the app starts from this figure and refines it as it renders.

Per preset *and voice*: a Kokoro voice on ``fp32-cpu`` runs at its own speed, and the
bundled Piper voice's figure was shown for it until it had rendered (an entry kept
under the preset alone, before voices were told apart, is not used).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studio.project.db import ProjectDb

SPEED_KEY = "render_speed"


def _read(db: ProjectDb) -> dict[str, list[float]]:
    row = db.read().execute("SELECT value FROM settings WHERE key = ?", (SPEED_KEY,)).fetchone()
    try:
        data = json.loads(row[0]) if row else {}
    except ValueError:
        return {}
    return {k: v for k, v in data.items() if isinstance(v, list) and len(v) == 2} if isinstance(data, dict) else {}


def _key(preset: str, voice_id: str) -> str:
    return f"{preset} {voice_id}"


def remember_speed(db: ProjectDb, preset: str, voice_id: str, synth_seconds: float, sentences: int) -> None:
    """Add one job's synthesis time (seconds inside synthesis) and sentences synthesized."""
    if sentences <= 0 or synth_seconds <= 0:
        return
    with db.write() as conn:
        row = conn.execute("SELECT value FROM settings WHERE key = ?", (SPEED_KEY,)).fetchone()
        try:
            data = json.loads(row[0]) if row else {}
        except ValueError:
            data = {}
        seconds, count = data.get(_key(preset, voice_id), [0.0, 0])
        data[_key(preset, voice_id)] = [float(seconds) + float(synth_seconds), int(count) + int(sentences)]
        conn.execute("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = "
                     "excluded.value", (SPEED_KEY, json.dumps(data)))


def seconds_per_sentence(db: ProjectDb, preset: str, voice_id: str) -> float | None:
    """Synthesis seconds per sentence this project measured with ``preset`` and the voice (None: never
    rendered with them)."""
    seconds, count = _read(db).get(_key(preset, voice_id), [0.0, 0])
    return float(seconds) / int(count) if count else None
