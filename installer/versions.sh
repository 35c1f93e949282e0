#!/usr/bin/env bash
# The version ranges in pyproject.toml, tried at both ends, and the tested set kept.
#
#   bash installer/versions.sh newest   # a fresh venv with the newest versions the ranges
#                                       # allow, the whole test command; when it passes,
#                                       # installer/constraints.txt is rewritten from it
#   bash installer/versions.sh oldest   # a fresh venv with the oldest versions the ranges
#                                       # allow (uv's lowest-direct resolution), the whole
#                                       # test command; nothing is written
#
# Why: installer/install.sh installs the tested set by default, so a user gets what the
# suite passed with; the ranges must still hold at both ends for anyone who installs
# the package another way. Extra arguments go to pytest (for a quicker partial check).
# The venv is made under ${STUDIO_VERSIONS_DIR:-/tmp}/studio-<mode> and kept for a look.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-}"; shift || true
case "$mode" in newest|oldest) ;; *) sed -n 2,15p "$0"; exit 2 ;; esac
venv="${STUDIO_VERSIONS_DIR:-/tmp}/studio-$mode"
rm -rf "$venv"
python3 -m venv "$venv"
if [ "$mode" = oldest ]; then
  "$venv/bin/python" -m pip -q install uv
  # torch as the installer pins it (its build depends on the machine); the rest at their floors
  extras="gui,torch,test,triton"
  "$venv/bin/uv" pip install --python "$venv/bin/python" --resolution lowest-direct \
    torch==2.11.0 torchaudio==2.11.0 torchcodec==0.11.1 -e "$here[$extras]"
fi
STUDIO_VENV="$venv" STUDIO_UNLOCKED=1 bash "$here/installer/run-tests.sh" "$@"
# local version labels (+cpu, +cu130) left out: the CPU and the CUDA builds of torch both match
"$venv/bin/python" -m pip list --format=freeze 2>/dev/null | grep -iv '^audiobook-studio==' | sed -E 's/\+[A-Za-z0-9.]+$//' \
  >"$venv/versions.txt"
if [ "$mode" = newest ] && [ $# -eq 0 ]; then
  {
    echo "# The tested set: what installer/install.sh installs by default (pip -c); STUDIO_UNLOCKED=1 ignores it."
    echo "# Written by 'bash installer/versions.sh newest' on $(date -u +%Y-%m-%d) after the whole test"
    echo "# command passed, Python $("$venv/bin/python" -c 'import platform; print(platform.python_version())'), $(uname -m)."
    cat "$venv/versions.txt"
  } >"$here/installer/constraints.txt"
  echo "[versions] installer/constraints.txt rewritten ($(wc -l <"$venv/versions.txt") packages)"
  # the wheels each pin has for Windows and macOS (tests/house/test_wheels.py compares the two files)
  "$venv/bin/python" "$here/installer/wheels.py" || echo "[versions] some pins lack a Windows or macOS wheel: see above"
fi
echo "[versions] $mode: passed; versions in $venv/versions.txt"
