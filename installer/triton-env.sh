#!/usr/bin/env bash
# Creates the Triton server environment (.venv-triton) used by `studio triton serve`
# and the Triton tests. Rerunnable: does nothing when the environment is complete.
#
# Why its own environment: PyTriton 0.7.0's Python-backend stub fails to start under
# newer Python 3.11 builds (RLock._recursion_count) but works under Debian's own
# python3 (3.11.2), so the server runs under that interpreter, not the app's.
#
# Environment: STUDIO_TRITON_VENV (default: .venv-triton in the checkout),
# TRITON_PYTHON (default: /usr/bin/python3, else python3).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${STUDIO_TRITON_VENV:-$here/.venv-triton}"
py="${TRITON_PYTHON:-}"
if [ -z "$py" ]; then
  if [ -x /usr/bin/python3 ]; then py=/usr/bin/python3; else py="$(command -v python3)"; fi
fi
say() { printf '[triton-env] %s\n' "$*"; }
check='import pytriton, numpy, onnxruntime, tritonclient.grpc'

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" 2>/dev/null; then
  say "server environment: ready ($venv)"
  exit 0
fi
if [ "$(uname -s)" != Linux ]; then
  say "the Triton server environment needs Linux (PyTriton ships Linux binaries); skipped"
  exit 0
fi
if ! "$py" -m venv --help >/dev/null 2>&1; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    say "apt: installing python3-venv"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  else
    say "python3-venv is missing for $py; install it and rerun"; exit 1
  fi
fi
say "server environment: creating $venv with $("$py" --version 2>&1)"
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
started=$(date +%s)
"$venv/bin/python" -m pip --disable-pip-version-check -q install -r "$here/installer/triton-server-requirements.txt"
"$venv/bin/python" -c "$check"
say "server environment: installed in $(( $(date +%s) - started )) s"
