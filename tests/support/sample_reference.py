"""The sample book's reference render, kept as numbers that survive a change of CPU.

Why not hashes: float audio differs in its last bits across CPUs (AVX2, AVX-512,
oneDNN kernels) and ONNX Runtime releases, so a stored SHA-256 passes only on the
machine it was taken on. What must not change is what a listener hears: each
chapter's exact length in samples (durations come from the model's integer
frame counts, so they are exact wherever the arithmetic is sane) and its coarse
log-mel spectrogram (what was said, and how), which float noise does not move.

Run ``python tests/support/sample_reference.py`` to write ``tests/data/sample_reference.npz``
again after a change that is meant to change the sample's audio; say why in the commit.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "tests" / "data" / "sample_reference.npz"
#: coarse log-mel: enough to tell words and voices apart, small enough to keep in git
N_FFT, HOP, N_MELS = 2048, 1024, 32


def render_sample(folder: Path) -> dict[str, np.ndarray]:
    """``studio render`` of resources/sample.md with noise off, WAV; the audio per file."""
    from studio.audio.measure import read_audio
    from support.voice import DETERMINISTIC
    from studio.engine.voice.catalog import get_voice
    from studio.project.opening import new_project_settings, open_for_manuscript

    settings = new_project_settings(get_voice(None)).with_changes(synthesis=DETERMINISTIC)
    project = folder / "sample.studio"
    open_for_manuscript(REPO / "resources" / "sample.md", project, settings).project.close()
    done = subprocess.run(
        [sys.executable, "-m", "studio", "render", str(project), "-o", str(folder / "wav"), "--format", "wav"],
        capture_output=True, text=True, cwd=REPO, timeout=600,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return {f.name: read_audio(f)[0] for f in sorted((folder / "wav").glob("*.wav"))}


def fingerprint(audio: np.ndarray, rate: int) -> np.ndarray:
    """The coarse log-mel spectrogram that stands for a chapter's sound."""
    from studio.measure.quality import log_mel_spectrogram

    return log_mel_spectrogram(audio, rate, n_fft=N_FFT, hop=HOP, n_mels=N_MELS).astype(np.float32)


def main() -> None:
    from studio.engine.voice.catalog import get_voice

    rate = int(get_voice(None).sample_rate)
    with tempfile.TemporaryDirectory() as tmp:
        files = render_sample(Path(tmp))
    arrays = {}
    for i, (name, audio) in enumerate(files.items()):
        arrays[f"name{i}"] = np.array(name)
        arrays[f"samples{i}"] = np.array(audio.size)
        arrays[f"logmel{i}"] = fingerprint(audio, rate).astype(np.float16)
    REFERENCE.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(REFERENCE, rate=np.array(rate), **arrays)
    print(f"wrote {REFERENCE} ({REFERENCE.stat().st_size} bytes, {len(files)} files)")


def load_reference() -> tuple[int, dict[str, tuple[int, np.ndarray]]]:
    """``(rate, {file name: (samples, log-mel)})`` as stored."""
    with np.load(REFERENCE) as data:
        n = sum(1 for k in data.files if k.startswith("name"))
        return int(data["rate"]), {
            str(data[f"name{i}"]): (int(data[f"samples{i}"]), data[f"logmel{i}"].astype(np.float32))
            for i in range(n)
        }


if __name__ == "__main__":
    main()
