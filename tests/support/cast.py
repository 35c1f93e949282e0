"""A chapter with a narrator and two characters, and its project (noise off: the same input, the same audio)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from studio.engine.voice.catalog import get_voice
from support.voice import DETERMINISTIC
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.project.store import Project

CHAPTER = """# The Harbour

The night was calm over the harbour, and the lamps were lit.

"Where are you going at this hour?" asked Mary.

"To the lighthouse," said Tom. "I will be back before the morning comes."

"Then take the lamp with you, Tom."

"I have it here," he said.

He went out, and the door closed behind him.
"""


def cast_project(tmp_path: Path) -> Project:
    ms = tmp_path / "harbour.md"
    ms.write_text(CHAPTER, encoding="utf-8")
    settings = new_project_settings(get_voice(None))
    settings = replace(settings, synthesis=DETERMINISTIC)
    return open_for_manuscript(ms, tmp_path / "harbour.studio", settings).project


def two_speaker_voice(folder: Path) -> Path:
    """The bundled voice with a speaker input: speaker 1 speaks 1.6x slower (its length
    scale times a table's row), so each speaker's audio is told apart by its length."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    voice = get_voice(None)
    model = onnx.load(str(voice.model_path))
    graph = model.graph
    renamed = {"scales": "scales_by_speaker", "sid": "phoneme_embedding"}  # this export calls its embedding "sid"
    for node in graph.node:
        node.input[:] = [renamed.get(i, i) for i in node.input]
    for init in graph.initializer:
        init.name = renamed.get(init.name, init.name)
    graph.input.append(helper.make_tensor_value_info("sid", TensorProto.INT64, ["N"]))
    table = np.array([[1.0, 1.0, 1.0], [1.0, 1.6, 1.0]], np.float32)
    graph.initializer.extend([numpy_helper.from_array(table, "speaker_scales"),
                              numpy_helper.from_array(np.array(0, np.int64), "first_row")])
    graph.node.insert(0, helper.make_node("Gather", ["speaker_scales", "sid"], ["rows_by_speaker"], axis=0))
    graph.node.insert(1, helper.make_node("Gather", ["rows_by_speaker", "first_row"], ["row_of_speaker"], axis=0))
    graph.node.insert(2, helper.make_node("Mul", ["scales", "row_of_speaker"], ["scales_by_speaker"]))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "en_US-duo-medium.onnx"
    onnx.save(model, str(path))
    config = json.loads(Path(voice.config_path).read_text(encoding="utf-8"))
    config.update(num_speakers=2, speaker_id_map={"ann": 0, "bob": 1})
    Path(f"{path}.json").write_text(json.dumps(config), encoding="utf-8")
    return path


def other_language_voice(folder: Path, family: str = "fr", espeak: str = "fr") -> Path:
    """The bundled voice's model under a config of another language (espeak-ng reads its text
    with that language's rules): a voice "of another language" for a character."""
    voice = get_voice(None)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{family}_{family.upper()}-testjoe-medium.onnx"
    path.symlink_to(voice.model_path)
    config = json.loads(Path(voice.config_path).read_text(encoding="utf-8"))
    config["espeak"] = {"voice": espeak}
    config["language"] = dict(config.get("language", {}), code=f"{family}_{family.upper()}", family=family)
    Path(f"{path}.json").write_text(json.dumps(config), encoding="utf-8")
    return path
