"""The export's messages in the app's words: the Export dialog's controls, not the command line's flags.

Why a table here and not a second set of messages in the export: the export is one
function for both faces (:mod:`studio.delivery.export_book`), and its warnings and
refusals name the command line's options ("give it with --cover"). In the app a
producer has no flags, only the dialog's controls; each hint is said again with the
control's name, and any flag the table does not know is named by its control.
"""

from __future__ import annotations

import re

#: whole hints of the export, as the app says them
HINTS: tuple[tuple[str, str], ...] = (
    ("give it with --cover", "choose one under Cover art"),
    ("pick one with --cover", "choose one under Cover art"),
    ("pick another with --sample-chapter", "choose another chapter beside Retail sample"),
    ("use --cover-fit pad or crop", "set Cover shape to pad or crop"),
    ("--require-proof: ", "Only when proof-listened: "),
    ("run `studio proof` and review or mark the flagged sentences",
     "press Listen now in the Proof dock, then re-render the flagged sentences or mark them as fine"),
    ("export with --no-credits", "untick Opening and closing credits"),
    ("leave them out with --no-credits", "untick Opening and closing credits"),
    ("export WAV with --format wav", "choose WAV as the Format"),
    ("export with --format mp3", "choose MP3 as the Format"),
    ("use --format mp3", "choose MP3 as the Format"),
    ("(see `studio proof`)", "(see the Proof dock)"),
)

#: a flag the hints above do not cover: the control that does the same
CONTROLS: dict[str, str] = {
    "--cover-fit": "Cover shape", "--cover": "Cover art", "--sample-chapter": "Retail sample's chapter",
    "--sample-length": "Retail sample", "--no-sample": "Retail sample", "--sample": "Retail sample",
    "--no-credits": "Opening and closing credits", "--credits": "Opening and closing credits",
    "--opening-credits": "Opening credits", "--closing-credits": "Closing credits", "--format": "Format",
    "--chapters": "Chapters", "--require-proof": "Only when proof-listened", "--producer": "Recording by",
    "--credits-text": "Opening credits and Closing credits", "--credits-file": "Opening credits and Closing credits", "--acx": "the results table",
}

_FLAG = re.compile(r"--[a-z][a-z-]*")


def in_app_words(text: str) -> str:
    """``text`` with the command line's hints and flags said as the Export dialog's controls."""
    for cli, app in HINTS:
        text = text.replace(cli, app)
    return _FLAG.sub(lambda m: CONTROLS.get(m.group(0), m.group(0)), text)


__all__ = ["CONTROLS", "HINTS", "in_app_words"]
