"""The platform module on this machine: real locks between processes, real process
trees killed, real readings; and the folders Linux users already have stay where they are."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from studio.core import paths, system

REPO = Path(__file__).resolve().parents[2]


def python(code: str, **popen: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, text=True,
                            env=env, **popen)  # type: ignore[call-overload]


def test_a_held_lock_refuses_another_process_and_dies_with_its_holder(tmp_path: Path) -> None:
    lock = tmp_path / "render.lock"
    holder = python(f"""
        from studio.core.system import locked_file
        import time
        with locked_file({str(lock)!r}):
            print("held", flush=True)
            time.sleep(60)
    """)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(OSError):
            with system.locked_file(lock, wait=False):
                pass
    finally:
        holder.kill()
        holder.wait(10)
    with system.locked_file(lock, wait=False) as fh:  # the system dropped it with the holder
        fh.write("mine\n")
    assert lock.read_bytes().endswith(b"mine\n")  # no CRLF on any system


def test_killing_a_group_ends_what_it_started(tmp_path: Path) -> None:
    parent = python("""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        print(child.pid, flush=True)
        time.sleep(120)
    """, **system.new_process_group())
    assert parent.stdout is not None
    grandchild = int(parent.stdout.readline())
    assert psutil.pid_exists(grandchild)
    system.kill_process_group(parent)
    parent.wait(10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the process the command started outlived the kill")


def test_the_readings_are_plausible() -> None:
    before = system.machine_busy_seconds()
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    after = system.machine_busy_seconds()
    assert before is not None and after is not None and after - before >= 0.2
    assert (system.peak_rss_bytes() or 0) > 10 * 2**20
    assert len(system.load_average()) == 3
    assert system.cpu_model()
    if sys.platform.startswith("linux"):
        assert "fpu" in system.cpu_flags() or "fp" in system.cpu_flags()  # x86 or Arm's spelling
        current = os.umask(0o022)
        os.umask(current)
        assert system.umask() == current
        spent = system.children_cpu_seconds()
        subprocess.run([sys.executable, "-c", "sum(range(3_000_000))"], check=True)
        assert (system.children_cpu_seconds() or 0) > (spent or 0)


def test_linux_folders_stay_where_they_were(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the XDG folders are Linux's")
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", paths.CACHE_ENV):
        monkeypatch.delenv(var, raising=False)
    assert paths.cache_dir() == tmp_path / ".cache" / "studio"
    assert paths.config_dir() == tmp_path / ".config" / "studio"
    assert paths.data_dir() == tmp_path / ".local" / "share" / "studio"
    assert paths.state_dir() == tmp_path / ".local" / "state" / "studio"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "s"))
    assert paths.cache_dir() == tmp_path / "c" / "studio" and paths.state_dir() == tmp_path / "s" / "studio"
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "mine"))
    assert paths.cache_dir() == tmp_path / "mine"
