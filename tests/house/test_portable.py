"""The studio runs on Linux, macOS and Windows: a call that exists on one system only
lives in ``studio/core/system.py``, model processes start the way all three can, and
text files name their encoding (Windows' default is not UTF-8).

Why a lint and not only the suite: the suite runs on Linux, where ``fcntl``,
``os.killpg`` or ``/proc`` work, so a new use of one passes every test here and
breaks the first Windows user. This reads every module of ``studio/`` (the code that
ships; the tests and bench/ run on Linux CI) and names each such call by file and line.
Each rule is shown to bite on a snippet, so it cannot silently stop checking.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: the one module allowed to touch what only some systems have
PLATFORM_MODULE = REPO / "studio" / "core" / "system.py"

#: modules that exist on POSIX only, or on Windows only
ONE_SYSTEM_MODULES = {"fcntl", "resource", "termios", "tty", "pty", "pwd", "grp", "posix", "syslog",
                      "msvcrt", "winreg", "winsound", "_winapi"}
POSIX_OS = {"killpg", "setsid", "setpgid", "setpgrp", "getpgid", "getpgrp", "getsid", "fork", "forkpty", "wait3",
            "wait4", "getuid", "geteuid", "getgid", "getegid", "getgroups", "sysconf", "posix_spawn",
            "posix_spawnp", "nice", "sched_getaffinity", "sched_setaffinity", "getloadavg", "chown", "lchown",
            "fchown", "mkfifo", "statvfs", "fstatvfs", "sync", "getpriority", "setpriority", "pipe2",
            "memfd_create", "openpty", "uname", "WNOHANG", "O_NONBLOCK", "POSIX_SPAWN_OPEN"}
POSIX_SIGNAL = {"SIGKILL", "SIGSTOP", "SIGCONT", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGCHLD", "SIGPIPE",
                "SIGQUIT", "SIGTSTP", "SIGWINCH", "alarm", "pause", "setitimer", "getitimer", "pthread_kill",
                "pthread_sigmask", "siginterrupt", "sigwait"}
POSIX_POPEN_KEYWORDS = {"start_new_session", "preexec_fn", "process_group"}
POSIX_PATHS = ("/proc/", "/sys/", "/dev/shm")


def one_system_uses(source: str) -> list[str]:
    """``"line N: what"`` for each use of something only some systems have."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        what = None
        if isinstance(node, ast.Import):
            what = next((a.name for a in node.names if a.name.split(".")[0] in ONE_SYSTEM_MODULES), None)
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in ONE_SYSTEM_MODULES:
                what = node.module
            elif node.module in ("os", "signal"):
                banned = POSIX_OS if node.module == "os" else POSIX_SIGNAL
                what = next((f"{node.module}.{a.name}" for a in node.names if a.name in banned), None)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            banned = {"os": POSIX_OS, "signal": POSIX_SIGNAL}.get(node.value.id, set())
            what = f"{node.value.id}.{node.attr}" if node.attr in banned else None
        elif isinstance(node, ast.Call):
            what = next((f"{k.arg}=" for k in node.keywords if k.arg in POSIX_POPEN_KEYWORDS), None)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            what = node.value if node.value.startswith(POSIX_PATHS) else None
        if what:
            found.append(f"line {node.lineno}: {what}")
    return found


def start_methods(source: str) -> list[str]:
    """``"line N: what"`` for a process started any way but ``get_context("spawn")``: the
    start method Windows and macOS use, so Linux tests exercise what they run."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        owner = getattr(node.func, "value", None)
        owner_name = getattr(owner, "id", "")
        if name == "get_context":
            method = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
            if method != "spawn":
                found.append(f"line {node.lineno}: get_context({method!r})")
        elif name == "set_start_method" or (name in ("Process", "Pool") and owner_name in ("mp", "multiprocessing")):
            found.append(f"line {node.lineno}: {owner_name}.{name}" if owner_name else f"line {node.lineno}: {name}")
    return found


def unnamed_encodings(source: str) -> list[str]:
    """``"line N: what"`` for text read or written without naming its encoding: Windows
    would take its ANSI code page (cp1252), and a title with ``é`` or ``—`` would change."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or any(k.arg == "encoding" for k in node.keywords):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("read_text", "write_text"):
            given = 1 if func.attr == "write_text" else 0  # write_text(data, encoding): the second positional
            if len(node.args) <= given:
                found.append(f"line {node.lineno}: .{func.attr}()")
        elif (isinstance(func, ast.Name) and func.id == "open") or (isinstance(func, ast.Attribute)
                                                                    and func.attr == "fdopen"):
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            text = mode is None or (isinstance(mode, ast.Constant) and "b" not in str(mode.value))
            if text and len(node.args) < 4:  # open(file, mode, buffering, encoding)
                found.append(f"line {node.lineno}: open() in text mode")
    return found


def studio_modules() -> list[Path]:
    return sorted(p for p in (REPO / "studio").rglob("*.py") if p != PLATFORM_MODULE)


def test_only_the_platform_module_uses_what_one_system_has() -> None:
    bad = {str(p.relative_to(REPO)): uses for p in studio_modules() if (uses := one_system_uses(p.read_text("utf-8")))}
    assert not bad, f"use studio.core.system instead (or add the call there): {bad}"


def test_every_model_process_starts_by_spawn() -> None:
    bad = {str(p.relative_to(REPO)): uses for p in studio_modules() if (uses := start_methods(p.read_text("utf-8")))}
    assert not bad, f"start processes from multiprocessing.get_context('spawn'): {bad}"


def test_text_files_name_their_encoding() -> None:
    modules = [*studio_modules(), PLATFORM_MODULE]
    bad = {str(p.relative_to(REPO)): uses for p in modules if (uses := unnamed_encodings(p.read_text("utf-8")))}
    assert not bad, f"name the encoding (utf-8): {bad}"


@pytest.mark.parametrize(("snippet", "bad"), [
    ("from pathlib import Path\nPath('x').read_text()\n", True),
    ("from pathlib import Path\nPath('x').write_text('t')\n", True),
    ("open('x', 'w')\n", True),
    ("open('x')\n", True),
    ("import os\nos.fdopen(3, 'w')\n", True),
    ("from pathlib import Path\nPath('x').read_text(encoding='utf-8')\n", False),
    ("from pathlib import Path\nPath('x').read_text('utf-8')\n", False),
    ("from pathlib import Path\nPath('x').write_text('t', 'utf-8')\n", False),
    ("open('x', 'rb')\n", False),
    ("open('x', 'a+', encoding='utf-8', newline='\\n')\n", False),
])
def test_the_encoding_rule_bites(snippet: str, bad: bool) -> None:
    assert bool(unnamed_encodings(snippet)) is bad


def test_the_platform_module_is_where_they_live() -> None:
    """The lint has something to allow: the platform module does use them (else the rule is stale)."""
    assert one_system_uses(PLATFORM_MODULE.read_text("utf-8"))


@pytest.mark.parametrize("snippet", [
    "import fcntl\n",
    "import resource as r\n",
    "from msvcrt import locking\n",
    "import os\nos.killpg(1, 9)\n",
    "from os import setsid\n",
    "import signal\nx = signal.SIGKILL\n",
    "import subprocess\nsubprocess.Popen(['x'], start_new_session=True)\n",
    "import subprocess\nsubprocess.Popen(['x'], preexec_fn=None)\n",
    "open('/proc/self/status')\n",
    "try:\n    import fcntl\nexcept ImportError:\n    fcntl = None\n",  # a guard still belongs in the module
])
def test_the_lint_names_each_kind(snippet: str) -> None:
    assert one_system_uses(snippet)


@pytest.mark.parametrize("snippet", [
    "import os\nos.kill(1, 15)\nos.getpid()\n",
    "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nsignal.SIGTERM\n",
    "import subprocess\nsubprocess.run(['x'], check=True)\n",
    "x = '/proc is a word here'\n",
])
def test_what_every_system_has_passes(snippet: str) -> None:
    assert not one_system_uses(snippet)


@pytest.mark.parametrize(("snippet", "bad"), [
    ("import multiprocessing as mp\nctx = mp.get_context('spawn')\nctx.Process(target=print)\n", False),
    ("import multiprocessing as mp\nmp.get_context('fork')\n", True),
    ("import multiprocessing\nmultiprocessing.get_context()\n", True),
    ("import multiprocessing\nmultiprocessing.Process(target=print)\n", True),
    ("import multiprocessing as mp\nmp.set_start_method('forkserver')\n", True),
])
def test_the_start_method_rule_bites(snippet: str, bad: bool) -> None:
    assert bool(start_methods(snippet)) is bad
