"""The installer's scripts (installer/*.py) loaded as modules: they are files run by path
before anything is installed, not a package the tests can import."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

INSTALLER = Path(__file__).resolve().parents[2] / "installer"


def installer_module(name: str) -> ModuleType:
    """``installer/<name>.py`` as a module (registered first: its dataclasses look themselves up)."""
    spec = importlib.util.spec_from_file_location(f"installer_{name}", INSTALLER / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
