"""``studio voices``: the voices this machine has."""

from __future__ import annotations

import argparse
import sys

from studio.cli.common import print_table
from studio.core.errors import StudioError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("voices", help="list installed voices", description="List the voices this machine has.")
    p.set_defaults(func=_cmd_voices)


def _cmd_voices(args: argparse.Namespace) -> int:
    from studio.engine.voice.catalog import list_voices

    voices = list_voices()
    if not voices:
        raise StudioError("no voices found; reinstall the studio to get the bundled voice")
    engines = {"piper": "onnx, torch", "coqui": "torch"}
    rows = [("ID", "BACKEND", "ENGINES", "LANGUAGE", "RATE", "SOURCE")]
    for v in voices:
        rows.append((v.id, v.backend, engines.get(v.backend, "?"), v.language, f"{v.sample_rate} Hz", v.source))
    print_table(rows, sys.stdout)
    return 0
