#!/usr/bin/env bash
# Prepare here, run there: writes .gpu/ (git-ignored), everything the GPU machine lacks
# for `bash bench/gpu_check.sh`: the bundled voice's weights as float16 safetensors,
# the phoneme ids of every sentence the check speaks (no espeak-ng needed there), the
# benchmark sentences, and Python 3.12 wheels of coqui-tts and what its Vits imports.
# Refuses to finish when .gpu/ plus the working tree would not fit the 56 MiB budget.
#
#   bash bench/gpu_prepare.sh                 # .gpu/, about 40 MiB, a minute or two
#   bash bench/gpu_prepare.sh --no-wheels     # without the wheels (CPU dry runs, tests)
#   bash bench/gpu_prepare.sh --out DIR       # somewhere else
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
exec "$PY" -m studio.measure.gpu.prepare "$@"
