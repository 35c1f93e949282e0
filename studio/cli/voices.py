"""``studio voices``: the voices this machine has."""

from __future__ import annotations

import argparse
import sys

from studio.cli.common import print_table
from studio.core.errors import StudioError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("voices", help="list or add voices",
                       description="List the voices this machine has (`studio voices`), or download one "
                       "(`studio voices add en_US-lessac-medium`).")
    p.set_defaults(func=_cmd_voices)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    add = actions.add_parser("add", help="download a Piper voice, verified against the voice index",
                             description="Download a Piper voice into the voices folder ($STUDIO_VOICES_DIR). "
                             "Each file is checked against the index's size and checksum and only then "
                             "takes its final name, so an interrupted download never leaves a broken voice.")
    add.add_argument("name", help="voice name, e.g. en_US-lessac-medium")
    add.add_argument("--base-url", default=None, metavar="URL", help="voice repository (default: piper-voices)")
    add.add_argument("--force", action="store_true", help="download again even if the voice is installed")
    add.add_argument("--timeout", type=float, default=30.0, metavar="S", help="network timeout (default: 30)")
    add.set_defaults(func=_cmd_add)


def _cmd_add(args: argparse.Namespace) -> int:
    from studio.engine.voice.download import DEFAULT_BASE_URL, download_piper_voice, fetch_voice_index

    base = args.base_url or DEFAULT_BASE_URL
    index = fetch_voice_index(base, args.timeout)
    bar = _DownloadProgress(sys.stderr)
    try:
        info = download_piper_voice(args.name, base_url=base, timeout=args.timeout, index=index,
                                    force=args.force, progress=bar)
    finally:
        bar.finish()
    sys.stdout.write(f"{info.id}\t{info.language}\t{info.sample_rate} Hz\t{info.model_path}\n")
    return 0


class _DownloadProgress:
    """Bytes so far on stderr: a rewritten line on a terminal, nothing when redirected."""

    def __init__(self, stream) -> None:  # noqa: ANN001 - a text stream
        self.stream = stream
        self.shown = False

    def __call__(self, done: int, total: int | None) -> None:
        if not self.stream.isatty():
            return
        of = f" of {total / 2**20:.1f}" if total else ""
        self.stream.write(f"\rdownloading {done / 2**20:.1f}{of} MiB")
        self.stream.flush()
        self.shown = True

    def finish(self) -> None:
        if self.shown:
            self.stream.write("\n")


def _cmd_voices(args: argparse.Namespace) -> int:
    from studio.engine.voice.catalog import list_voices

    voices = list_voices()
    if not voices:
        raise StudioError("no voices found; reinstall the studio to get the bundled voice")
    rows = [("ID", "LANGUAGE", "SPEAKERS", "PRESETS", "RATE", "SOURCE")]
    for v in voices:
        can = v.abilities
        language = ", ".join(can.languages) if len(can.languages) > 1 else v.language or "?"
        rows.append((v.id, language, str(len(can.speakers) or 1), ", ".join(can.presets) or "none runs it here",
                     f"{v.sample_rate} Hz", v.source))
    print_table(rows, sys.stdout)
    return 0
