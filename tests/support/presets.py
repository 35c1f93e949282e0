"""Shared by the tests: moved out of test_preset_choice_gui.py so no test module imports another."""

from __future__ import annotations

import json
from pathlib import Path
import pytest
from PySide6.QtCore import Qt
from studio.engine.presets import PRESETS, Missing, available_presets
from studio.engine.voice.catalog import get_voice
from studio.stack.preset_advice import PresetFacts, recommend
from studio.project.opening import new_project_settings
from studio.desktop.facts import MachineFacts, PresetInfo, list_voice_choices, read_bench
from studio.desktop.measure import MeasureProgress, PresetMeasurer
from studio.desktop.preset_words import PLAIN_NAMES, UNKNOWN_REASON, plain_name, plain_reason


SETTINGS = new_project_settings(get_voice(None))


def machine(runs: dict[str, str], bench: dict[str, object] | None = None, path: str = "") -> MachineFacts:
    refused = {p: UNAVAILABLE.get(p, ("not available", "")) for p in PRESETS if p not in runs}
    presets = tuple(PresetInfo(p.name, p.engine, p.device, p.precision, p.summary, p.name in runs,
                               runs.get(p.name) or refused[p.name][0], (bench or {}).get(p.name),
                               missing=refused.get(p.name, ("", ""))[1])
                    for p in PRESETS.values())
    return MachineFacts(list_voice_choices(), presets, path, "" if path else "no benchmark yet")


CPU_ONLY = {"fp32-cpu": "ONNX Runtime on CPU", "int8-cpu": "ONNX Runtime INT8 on CPU", "fp32-torch": "torch on CPU",
            "dynamic-int8": "torch CPU"}


#: raw reasons in the words :func:`studio.engine.presets.availability` uses
NO_GPU = "no CUDA device: torch.cuda.is_available() is False"


NO_TRT = "TensorRT is not installed (pip install tensorrt)"


#: raw reason and what is missing, as availability() gives them where there is no GPU
UNAVAILABLE = {"fp16-cuda": (NO_GPU, Missing.NO_GPU), "tensorrt-int8": (NO_TRT, Missing.TENSORRT)}


def library_row(dlg, voice_id: str) -> list[str]:  # dlg: studio.ui.voices_dialog.VoicesDialog
    """The cells of a voice's row in the dialog's voice library ([] when it is not listed)."""
    t = dlg.library.table
    for r in range(t.rowCount()):
        if t.item(r, 0).text() == voice_id:
            return [t.item(r, c).text() for c in range(t.columnCount())]
    return []
