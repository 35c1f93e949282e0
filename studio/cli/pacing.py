"""``--speed`` and the pause options of ``studio render``.

Why they store into the project: speed and pauses are project settings like the
preset (the desktop app's Speed & pauses dialog shows and edits the same values),
so giving them once is enough. Pauses render nothing again (they are laid in at
assembly); a new speed renders every sentence again, the old audio stays cached.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import TYPE_CHECKING

from studio.core.errors import StudioError
from studio.core.speed import SPEED_RANGE, length_scale_of

if TYPE_CHECKING:
    from studio.project.settings import ProjectSettings

#: option -> the :class:`~studio.audio.assemble.Pauses` field it sets
PAUSE_OPTIONS = {"sentence_pause": "sentence", "paragraph_pause": "paragraph", "title_pause": "title",
                 "chapter_end_pause": "chapter_end"}


def add_render_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "speed and pauses", "Stored in the project; later renders keep them. New pauses render nothing again; "
        "a new speed renders every sentence again.")
    group.add_argument("--speed", type=float, metavar="X",
                       help=f"how fast the voice speaks, {SPEED_RANGE[0]:g} to {SPEED_RANGE[1]:g} (default: 1)")
    group.add_argument("--sentence-pause", type=float, metavar="S", help="seconds between sentences (default: 0.35)")
    group.add_argument("--paragraph-pause", type=float, metavar="S", help="seconds between paragraphs (default: 0.8)")
    group.add_argument("--title-pause", type=float, metavar="S", help="seconds after a chapter title (default: 1.5)")
    group.add_argument("--chapter-end-pause", type=float, metavar="S",
                       help="seconds of silence closing each chapter file (default: 0)")


def pacing_changes(args: argparse.Namespace, settings: "ProjectSettings") -> "ProjectSettings":
    """``settings`` with the speed and pauses given on the command line (StudioError: out of range)."""
    changes: dict[str, object] = {}
    if args.speed is not None:
        try:
            length_scale = length_scale_of(args.speed)
        except ValueError as err:
            raise StudioError(f"--speed: {err}") from None
        changes["synthesis"] = replace(settings.synthesis, length_scale=length_scale)
    pauses = {field: getattr(args, option) for option, field in PAUSE_OPTIONS.items() if getattr(args, option) is not None}
    if pauses:
        changes["pauses"] = replace(settings.pauses, **pauses)  # StudioError outside 0-30 s
    return settings.with_changes(**changes) if changes else settings
