#!/usr/bin/env python3
"""Does every package of the tested set install on Windows and macOS? Asks the package index.

    python installer/wheels.py            # rewrite installer/wheels.json from PyPI's JSON metadata
    python installer/wheels.py --check    # say what lacks a wheel, write nothing

For each pin of installer/constraints.txt and each target system (Windows x86-64,
macOS on Apple silicon, macOS on Intel), with CPython 3.11 (the tested set's Python),
it records the wheel pip would take: a build for that system, a pure-Python wheel, or
nothing. A package with no wheel at all is read from its source distribution: it
counts as installable when that has no C, C++, Cython or Rust source. What stays
unmet must be a known exception below, with its reason, or on a target named
unsupported (Intel Macs), with the package that decides it. ``tests/house/test_wheels.py``
compares the written file with constraints.txt, so the test command needs no network;
``installer/versions.sh newest`` runs this after it rewrites the tested set.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tarfile
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

from packaging import tags
from packaging.utils import canonicalize_name, parse_wheel_filename

HERE = Path(__file__).resolve().parent
CONSTRAINTS = HERE / "constraints.txt"
OUT = HERE / "wheels.json"
INDEX = "https://pypi.org/pypi/{name}/json"
PYTHON = (3, 11)
#: the oldest macOS each Mac target is checked for (a wheel built for a newer one does not install there)
MACOS = (14, 0)
TARGETS = {
    "win_amd64": ["win_amd64"],
    "macos_arm64": list(tags.mac_platforms(MACOS, "arm64")),
    "macos_x86_64": list(tags.mac_platforms(MACOS, "x86_64")),
}
COMPILED_SOURCES = (".c", ".cc", ".cpp", ".cxx", ".pyx", ".rs", ".f90")

#: packages of the tested set a target does without, and why (the test fails on any other gap)
EXCEPTIONS: dict[str, dict[str, str]] = {
    **{name: {t: "Linux only: torch's CUDA build requires it on Linux alone (its marker)" for t in TARGETS}
       for name in ("cuda-bindings", "nvidia-cublas", "nvidia-cuda-cupti",
                    "nvidia-cuda-nvrtc", "nvidia-cuda-runtime", "nvidia-cudnn-cu13", "nvidia-cufft", "nvidia-cufile",
                    "nvidia-curand", "nvidia-cusolver", "nvidia-cusparse", "nvidia-cusparselt-cu13",
                    "nvidia-nccl-cu13", "nvidia-nvjitlink", "nvidia-nvshmem-cu13", "nvidia-nvtx", "triton")},
    "pyworld": {t: "the bench extra only (a benchmark's pitch tracks); the installer never installs it"
                for t in TARGETS},
    "gevent": {t: "--triton and --dev only (Triton's HTTP client); a wheel for macOS from Python 3.12 on, and "
                  "pip builds it from source on 3.11" for t in ("macos_arm64", "macos_x86_64")},
}
#: targets the studio does not support, why, and the package whose missing wheel says so
#: (the test fails when that package gains a wheel there: time to look again)
UNSUPPORTED: dict[str, tuple[str, str]] = {
    "macos_x86_64": ("Intel Macs: onnxruntime publishes no x86-64 macOS wheel since 1.24 (the tested set has 1.32), "
                     "nor torch since 2.3; Apple-silicon Macs are supported", "onnxruntime"),
}


def pins() -> dict[str, str]:
    """``{canonical name: version}`` of installer/constraints.txt."""
    found = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        name, sep, version = line.strip().partition("==")
        if sep and not line.lstrip().startswith("#"):
            found[canonicalize_name(name)] = version.strip()
    return found


def compatible(target: str) -> set[tags.Tag]:
    platforms = TARGETS[target]
    interpreter = f"cp{PYTHON[0]}{PYTHON[1]}"
    return {*tags.cpython_tags(PYTHON, abis=[interpreter, "abi3", "none"], platforms=platforms),
            *tags.compatible_tags(PYTHON, interpreter, platforms)}


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as answer:
        return answer.read()


def sdist_compiles(url: str) -> list[str]:
    """The compiled-language sources in a source distribution (empty: pure Python)."""
    data = fetch(url)
    if url.endswith(".zip"):
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    else:
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            names = archive.getnames()
    return sorted(n for n in names if n.lower().endswith(COMPILED_SOURCES))[:5]


def look_up(name: str, version: str) -> dict:
    """What the index offers each target for ``name==version``."""
    meta = json.loads(fetch(INDEX.format(name=name)))
    files = meta.get("releases", {}).get(version)
    if files is None:
        return {"version": version, "error": "this version is not on the index"}
    wheels = [f["filename"] for f in files if f["filename"].endswith(".whl") and not f.get("yanked")]
    entry: dict = {"version": version}
    for target in TARGETS:
        wanted = compatible(target)
        fits = [w for w in wheels if parse_wheel_filename(w)[3] & wanted]
        # a build for the system before a pure-Python wheel, as pip prefers it
        fits.sort(key=lambda w: all(t.platform == "any" for t in parse_wheel_filename(w)[3]))
        entry[target] = fits[0] if fits else None
    if not wheels:
        sdists = [f["url"] for f in files if f["packagetype"] == "sdist"]
        entry["sdist_compiles"] = sdist_compiles(sdists[0]) if sdists else ["(no source distribution either)"]
    return entry


def unmet(name: str, entry: dict) -> dict[str, str]:
    """``{target: why}`` for each target ``entry`` cannot install on and no exception covers."""
    if "error" in entry:
        return {t: entry["error"] for t in TARGETS}
    gaps = {}
    for target in TARGETS:
        if target in UNSUPPORTED or entry.get(target) or EXCEPTIONS.get(name, {}).get(target):
            continue
        if "sdist_compiles" in entry and not entry["sdist_compiles"]:
            continue  # source only, pure Python: pip builds it anywhere
        gaps[target] = "no wheel for it" + (f" (source with {entry['sdist_compiles']})" if entry.get("sdist_compiles")
                                            else "")
    return gaps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 on an unmet gap")
    parser.add_argument("--python", help="another CPython to check for, e.g. 3.12 (implies --check)")
    args = parser.parse_args(argv)
    if args.python:
        global PYTHON
        PYTHON, args.check = tuple(int(p) for p in args.python.split(".")), True
    wanted = pins()
    with ThreadPoolExecutor(8) as pool:
        entries = dict(zip(wanted, pool.map(lambda item: look_up(*item), wanted.items())))
    gaps = {name: g for name, entry in entries.items() if (g := unmet(name, entry))}
    for name, g in sorted(gaps.items()):
        print(f"{name}=={wanted[name]}: " + "; ".join(f"{t}: {why}" for t, why in g.items()))
    if not args.check:
        OUT.write_text(json.dumps({
            "written": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
            "python": ".".join(map(str, PYTHON)), "macos_at_least": ".".join(map(str, MACOS)),
            "targets": list(TARGETS), "unsupported": UNSUPPORTED, "exceptions": EXCEPTIONS,
            "packages": dict(sorted(entries.items())),
        }, indent=1, sort_keys=False) + "\n", encoding="utf-8", newline="\n")
        print(f"wrote {OUT.name}: {len(entries)} packages, {len(gaps)} with an unmet gap")
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main())
