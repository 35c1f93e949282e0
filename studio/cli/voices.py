"""``studio voices``: the voices this machine has."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from studio.cli.common import print_table
from studio.core.errors import StudioError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("voices", help="list or add voices",
                       description="List the voices this machine has (`studio voices`), or download one "
                       "(`studio voices add en_US-lessac-medium`).")
    p.set_defaults(func=_cmd_voices)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    add = actions.add_parser("add", help="download a Piper voice (verified against the voice index) or a Kokoro "
                             "pack or model (kokoro:af_heart, kokoro:model-fp32; resumable)",
                             description="Download a Piper voice into the voices folder ($STUDIO_VOICES_DIR). "
                             "Each file is checked against the index's size and checksum and only then "
                             "takes its final name, so an interrupted download never leaves a broken voice.")
    add.add_argument("name", help="voice name, e.g. en_US-lessac-medium, kokoro:af_heart or kokoro:model-fp32, "
                     "or a Coqui model, e.g. tts_models/en/ljspeech/tacotron2-DDC (with the vocoder it pairs with)")
    add.add_argument("--base-url", default=None, metavar="URL", help="voice repository (default: piper-voices)")
    add.add_argument("--force", action="store_true", help="download again even if the voice is installed")
    add.add_argument("--timeout", type=float, default=30.0, metavar="S", help="network timeout (default: 30)")
    add.add_argument("--models-file", type=Path, default=None, metavar="JSON",
                     help="the Coqui model list to use (default: coqui-tts's own)")
    add.add_argument("--agree", action="store_true", help="accept a Coqui model's licence where it asks (XTTS v2)")
    add.set_defaults(func=_cmd_add)
    clone = actions.add_parser("clone", help="make a voice from a recording of one person speaking (XTTS v2)",
                               description="Take a voice from 6-30 seconds of one person speaking (no music): the "
                               "clip is checked (too short, clipped, mostly silence, too quiet or hours long is "
                               "refused with the reason), trimmed and resampled, the speaker computed once and "
                               "stored with the new voice, with the person's consent statement, which the "
                               "credits and the manifest carry.")
    clone.add_argument("name", help="the new voice's id")
    clone.add_argument("--from", dest="recording", type=Path, required=True, metavar="WAV",
                       help="the recording (any format ffmpeg reads)")
    clone.add_argument("--model", required=True, metavar="VOICE", help="the XTTS v2 voice to clone with")
    clone.add_argument("--consent", required=True, metavar="TEXT",
                       help="the recorded person's consent statement, e.g. 'Ann Lee agrees to this use, 2026-12-05'")
    clone.set_defaults(func=_cmd_clone)
    mix = actions.add_parser("blend", help="mix Kokoro voices into a new named voice",
                             description="Mix Kokoro voice packs by weight (kokoro:jf_alpha=0.6,kokoro:jm_kumo=0.4). "
                             "--sample writes the blend speaking a sentence, to hear it before it is saved; "
                             "--save stores it as kokoro:NAME.")
    mix.add_argument("name", help="the blend's name (letters, digits, _ and -)")
    mix.add_argument("recipe", help="VOICE=WEIGHT,... e.g. kokoro:jf_alpha=0.6,kokoro:jm_kumo=0.4")
    mix.add_argument("--sample", metavar="WAV", help="write the blend speaking --text to this WAV file")
    mix.add_argument("--text", default=None, help="what the sample says (default: a sentence of prose)")
    mix.add_argument("--save", action="store_true", help="save the blend as the voice kokoro:NAME")
    mix.set_defaults(func=_cmd_blend)


def _cmd_clone(args: argparse.Namespace) -> int:
    from studio.stack.cloning import voice_from_recording

    folder, clip = voice_from_recording(args.model, args.name, args.recording, args.consent)
    sys.stdout.write(f"{folder.name}\t{clip.kept_s:.1f} s of speech at {clip.loudness_db:.0f} dBFS\t{folder}\n")
    return 0


def _cmd_blend(args: argparse.Namespace) -> int:
    from studio.audio.writers import write_wav
    from studio.engine.voice.mixing import mixer_for

    if not (args.sample or args.save):
        raise StudioError("say what to do with the blend: --sample FILE.wav to hear it, --save to keep it")
    mixer = mixer_for(args.recipe)
    mixed = mixer.mix(args.recipe)
    if args.sample:
        audio, rate = mixer.sample(mixed, args.text or mixer.sample_text)
        write_wav(args.sample, audio, rate)
        sys.stdout.write(f"sample\t{args.sample}\t{audio.size / rate:.1f} s\n")
    if args.save:
        info = mixer.save(args.name, mixed)
        sys.stdout.write(f"{info.id}\t{info.language}\t{info.sample_rate} Hz\t{info.model_path}\n")
    return 0


def _cmd_add(args: argparse.Namespace) -> int:
    """A voice or model by name, from the family that downloads it; a licence that must be read
    (a Coqui model card's) is said first."""
    import json

    from studio.stack.voice_fetch import fetch, licence

    catalogue = json.loads(args.models_file.read_text(encoding="utf-8")) if args.models_file else None
    note = licence(args.name, catalogue)
    if note.line:
        sys.stderr.write(f"studio: {note.line}\n")
    bar = _DownloadProgress(sys.stderr)
    try:
        got = fetch(args.name, agree=args.agree, force=args.force, timeout=args.timeout, progress=bar,
                    catalogue=catalogue, base_url=args.base_url)
    finally:
        bar.finish()
    info = got.voice
    if info is None:  # a model, no voice of its own
        sys.stdout.write(f"{got.name}\t{got.path}\n")
    else:
        sys.stdout.write(f"{info.id}\t{info.language}\t{info.sample_rate} Hz\t{got.path}\n")
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
        none = "none: take a voice with it (studio voices clone)" if can.cloning else "none runs it here"
        rows.append((v.id, v.languages_label, str(len(can.speakers) or 1), ", ".join(can.presets) or none,
                     f"{v.sample_rate} Hz", v.source))
    print_table(rows, sys.stdout)
    return 0
