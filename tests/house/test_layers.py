"""The layer rules (``[tool.importlinter]`` in pyproject.toml) hold, and they bite.

``installer/run-tests.sh`` runs ``lint-imports`` before the suite; these tests show
the same contracts pass on the real tree and fail on a copy with a deliberate
violation, so a rule cannot silently stop checking anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed (pip install 'audiobook-studio[test]')")


def lint(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT), "--config", str(root / "pyproject.toml"), "--no-cache"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)


def copy_tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "studio", root / "studio", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def test_the_tree_keeps_every_contract() -> None:
    done = lint(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(
    ("where", "code", "contract"),
    [
        ("studio/engine/onnx/bad.py", "import PySide6\n", "Only the desktop layers import PySide6"),
        ("studio/engine/onnx/bad.py", "import torch\n", "The ONNX backend never imports torch"),
        ("studio/text/bad.py", "from studio.rendering import render\n", "Layers:"),
        ("studio/ui/bad.py", "from studio.engine import presets\n", "The UI reaches the engine only through"),
        ("studio/project/bad.py", "from studio.engine.triton import servers\n", "Project state (settings, schema, facets)"),
        ("studio/stack/isolation/bad.py", "from studio.stack import build\n", "The model-process package imports no"),
        ("studio/stack/isolation/bad.py", "import studio.engine.onnx.piper\n", "The model-process package imports no"),
        ("studio/text/formats/markdown.py", "from studio.text.formats import plain\n", "Manuscript formats are read"),
        ("studio/core/bad.py", "import numpy\n", "Plain shared data (core) imports no heavy"),
    ],
)
def test_a_deliberate_violation_breaks_its_contract(tmp_path: Path, where: str, code: str, contract: str) -> None:
    root = copy_tree(tmp_path)
    (root / where).write_text(code)
    done = lint(root)
    assert done.returncode != 0
    broken = done.stdout.split("Broken contracts", 1)[-1]
    assert contract in broken, done.stdout


def test_the_command_line_names_no_desktop_module() -> None:
    """Not even as a string for importlib, which the layer contract cannot see: the
    desktop's ``gui`` command is handed to the command line by the launcher."""
    for path in sorted((REPO / "studio" / "cli").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "studio.ui" not in text and "studio.desktop" not in text, path.relative_to(REPO)


def test_no_test_module_imports_another() -> None:
    """Shared helpers live in the support package (``support.render``, ``support.fakes``, ...): importing
    a test module from another runs its module-level fixtures and marks twice over."""
    import ast

    for path in sorted((REPO / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.split(".")[0].startswith("test_") for n in names), (path.name, names)


def _imports(path: Path, module: str, modules: dict[str, Path]) -> set[str]:
    """The project's modules that ``module`` imports, type-checking imports included."""
    import ast

    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in modules:
                t = t.rpartition(".")[0]
            if t and t != module and not module.startswith(t + ".") and modules[t].name != "__init__.py":
                found.add(t)
    return found


def test_no_module_imports_itself_through_others() -> None:
    """An import circle is a class split by size rather than by concept; none is allowed,
    type-checking imports included (the layer contracts only see between packages)."""
    modules = {}
    for path in (REPO / "studio").rglob("*.py"):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    edges = {m: _imports(p, m, modules) for m, p in modules.items()}

    def reach(start: str) -> set[str]:
        todo, seen = list(edges[start]), set()
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo.extend(edges[m])
        return seen

    assert sorted(m for m in edges if m in reach(m)) == []
