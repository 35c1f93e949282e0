"""Prepare here, run there: the folder a GPU machine needs for ``bench/gpu_check.sh``.

The GPU machine gets the working tree plus one ignored folder, 64 MiB in all, and
has no espeak-ng, no coqui-tts and no network. ``bash bench/gpu_prepare.sh`` (this
module) writes that folder (default ``.gpu/``):

* ``voice/<id>.safetensors`` -- the bundled voice's inference weights, already
  mapped onto coqui's ``Vits``, in float16 (:mod:`studio.engine.torchvits.compact`),
  and ``voice/<id>.onnx.json``, its config;
* ``voice/phoneme_ids.json`` -- every sentence the check will speak, through the
  real front end (:class:`~studio.engine.voice.phonemize.RecordedFrontEnd`);
* ``sentences.json`` -- the benchmark sentences and the streaming paragraph;
* ``wheels/`` -- Python 3.12 wheels of what the torch path imports and the
  machine lacks (:mod:`studio.measure.gpu.wheels`), left out with ``--no-wheels``;
* ``manifest.json`` -- what is there, sizes, and the travel size with the tree.

The benchmark sentences are the English sentences of ``resources/sample.md``, the
calibration set's built-in sentences, and pairs of each (longer items, as a book's
long sentences are): the same set calibrates the TensorRT build, so its profile
covers what the benchmark sends.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import subprocess
import sys
import time
from pathlib import Path

from studio.measure.gpu.wheels import GPU_PYTHON, prepare_wheels

log = logging.getLogger(__name__)

FORMAT = "studio-gpu-prepare/1"
#: what may travel to the GPU machine (64 MiB), less room for the outputs of a run
TRAVEL_LIMIT = 56 * 2**20
REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "resources" / "sample.md"
#: characters of the streaming paragraph (a long narration paragraph)
PARAGRAPH_CHARS = 2000


def benchmark_sentences() -> tuple[list[str], str]:
    """``(sentences, paragraph)``: the benchmark's English sentences and a ~2,000-character paragraph."""
    from studio.engine.calibration import BUILTIN_SENTENCES
    from studio.text.importer import load_manuscript

    book = load_manuscript(SAMPLE)
    paragraphs = [p for c in book.chapters for p in c.paragraphs if p.language == "en" and len(p.sentences) > 1]
    sample = [s.text for p in paragraphs for s in p.sentences]
    builtin = list(BUILTIN_SENTENCES)
    pairs = [f"{a} {b}" for a, b in zip(sample[::2], sample[1::2])]
    pairs += [f"{a} {b}" for a, b in zip(builtin, builtin[7:] + builtin[:7])]
    paragraph = ""
    for p in paragraphs:
        if len(paragraph) >= PARAGRAPH_CHARS:
            break
        paragraph = f"{paragraph} {p.text}".strip()
    return sample + builtin + pairs, paragraph


def dry_run_paragraph(paragraph: str, chars: int = 60) -> str:
    """The start of the paragraph a CPU dry run streams (cut at a space after ``chars``)."""
    cut = paragraph.find(" ", chars)
    return paragraph if cut < 0 else paragraph[:cut].strip()


def spoken_sentences(sentences: list[str], *paragraphs: str) -> list[str]:
    """Every text the check hands a front end: the sentences, the calibration set and
    the streaming paragraph's pieces, cut exactly as :func:`stream_passage` cuts them."""
    from studio.engine.calibration import gather_calibration_sentences
    from studio.engine.serving.streaming import plan_chunks

    texts = list(sentences) + gather_calibration_sentences(sentences, env={}, max_extra=None)
    for paragraph in paragraphs:
        for pieces in plan_chunks(paragraph):
            texts += [paragraph[a:b].strip() for a, b in pieces]
    return [t for t in texts if any(ch.isalnum() for ch in t)]


def tree_bytes(repo: Path = REPO) -> int:
    """Bytes of the working tree that travels (tracked + untracked, not ignored)."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=repo, check=True,
                         capture_output=True).stdout.decode()
    return sum((repo / name).stat().st_size for name in out.split("\0") if name and (repo / name).is_file())


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def prepare(out: Path, *, wheels: bool = True, python_version: str = GPU_PYTHON) -> dict:
    """Write the folder; returns its manifest. Raises if it would not fit :data:`TRAVEL_LIMIT`."""
    from studio.core.files import sha256_file
    from studio.engine.torchvits.compact import save_compact
    from studio.engine.torchvits.weights import build_coqui_vits
    from studio.engine.voice.catalog import get_voice
    from studio.engine.voice.config import VoiceConfig
    from studio.engine.voice.phonemize import PiperFrontEnd, RecordedFrontEnd

    start = time.perf_counter()
    if out.exists():
        shutil.rmtree(out)
    (out / "voice").mkdir(parents=True)
    voice = get_voice(None)
    model, report = build_coqui_vits(voice.config_path, voice.model_path)
    weights = out / "voice" / f"{voice.id}.safetensors"
    save_compact(model, report, weights, source=f"sha256:{sha256_file(voice.model_path)}")
    config = out / "voice" / f"{voice.id}.onnx.json"
    shutil.copyfile(voice.config_path, config)

    sentences, paragraph = benchmark_sentences()
    language = "en"
    front_end = PiperFrontEnd(VoiceConfig.from_file(voice.config_path))
    dry = dry_run_paragraph(paragraph)
    texts = spoken_sentences(sentences, paragraph, dry)
    n_ids = RecordedFrontEnd.record(front_end, [(language, t) for t in texts], out / "voice" / "phoneme_ids.json")
    (out / "sentences.json").write_text(json.dumps({
        "language": language, "sentences": sentences, "paragraph": paragraph, "dry_run_paragraph": dry,
    }, indent=1), encoding="utf-8")

    from studio.measure.gpu.families import prepare_kokoro

    kokoro = prepare_kokoro(out, sentences)
    shipped = prepare_wheels(out / "wheels", python_version) if wheels else []
    files = {str(p.relative_to(out)): p.stat().st_size for p in sorted(out.rglob("*")) if p.is_file()}
    tree = tree_bytes()
    manifest = {
        "format": FORMAT,
        "created": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "python_version": python_version if wheels else None,
        "voice": {"id": voice.id, "name": voice.name, "language": voice.language, "sample_rate": voice.sample_rate,
                  "weights": str(weights.relative_to(out)), "config": str(config.relative_to(out)),
                  "phoneme_ids": "voice/phoneme_ids.json", "recorded_sentences": n_ids},
        "sentences": len(sentences),
        "paragraph_chars": len(paragraph),
        "kokoro": kokoro,
        "wheels": [w.file for w in shipped],
        "files": files,
        "folder_bytes": sum(files.values()),
        "tree_bytes": tree,
        "travel_bytes": sum(files.values()) + tree,
        "travel_limit_bytes": TRAVEL_LIMIT,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    if manifest["travel_bytes"] > TRAVEL_LIMIT:
        raise RuntimeError(f"{out} + working tree = {manifest['travel_bytes'] / 2**20:.1f} MiB, over the "
                           f"{TRAVEL_LIMIT / 2**20:.0f} MiB that may travel")
    log.info("prepared %s in %.0f s", out, time.perf_counter() - start)
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bash bench/gpu_prepare.sh", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / ".gpu", help="folder to write (default: .gpu/)")
    parser.add_argument("--no-wheels", action="store_true", help="leave out the wheels (tests, CPU dry runs)")
    parser.add_argument("--python-version", default=GPU_PYTHON, help="the GPU machine's Python (default 3.12)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("studio.measure").setLevel(logging.INFO)
    logging.getLogger("studio.engine.torchvits.compact").setLevel(logging.INFO)
    m = prepare(args.out, wheels=not args.no_wheels, python_version=args.python_version)
    print(f"{args.out}: {m['folder_bytes'] / 2**20:.1f} MiB ({len(m['files'])} files, {len(m['wheels'])} wheels); "
          f"with the working tree {m['travel_bytes'] / 2**20:.1f} MiB of {m['travel_limit_bytes'] / 2**20:.0f} MiB")
    for name, size in m["files"].items():
        print(f"  {size / 2**20:8.2f} MiB  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
