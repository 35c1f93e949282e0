#!/usr/bin/env bash
# Every GPU figure and GPU correctness check of the studio, in one command of at most
# 6 minutes, made for a GPU machine that is lent for minutes: one NVIDIA GPU, Python
# 3.12 with torch (CUDA), numpy, onnx, onnxruntime, nvidia-ml-py; no coqui-tts,
# espeak-ng, PySide6 or network. Prepare first, on any machine with the studio
# installed: `bash bench/gpu_prepare.sh` writes .gpu/, which travels with the tree.
#
#   bash bench/gpu_check.sh                   # on the GPU machine; rows in $OUT (/tmp/gpu_check)
#   bash bench/gpu_check.sh --dry-run         # same code on the CPU, a few sentences, < 60 s
#   options: --prepared DIR (default .gpu)  --out DIR  --require-tensorrt
#            --kokoro-voices DIR (holding kokoro/kokoro-v1.0.fp16.onnx), --xtts-model DIR: those
#            families' rows (their models cannot travel with the tree; without them each is
#            one 'unavailable' row)
#            --coqui: after the check, Tacotron 2 rows (bench/coqui.py --device cuda, 90 s more;
#            needs coqui-tts on the GPU machine's Python) in $OUT/coqui.jsonl
#
# Steps: unpack the prepared wheels this Python lacks into a temporary folder; run
# `python3 -m studio.measure.gpu.check` (JSON rows written one by one to
# $OUT/gpu_check.jsonl as they finish); print one summary table. Exit status 0 only
# when every check passed: a skipped, failed or timed-out check, or a check killed
# at the time limit, exits 1; a missing prepared folder or wheel failure exits 2.
set -u
cd "$(dirname "$0")/.."
PREPARED=.gpu
OUT="${OUT:-/tmp/gpu_check}"
DRY=""
REQUIRE=""
COQUI=""
MODELS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY="--dry-run" ;;
        --prepared) PREPARED="$2"; shift ;;
        --out) OUT="$2"; shift ;;
        --require-tensorrt) REQUIRE="--require-tensorrt" ;;
        --kokoro-voices|--xtts-model) MODELS+=("$1" "$2"); shift ;;
        --coqui) COQUI=1 ;;
        *) echo "gpu_check.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export STUDIO_CACHE_DIR="${STUDIO_CACHE_DIR:-$OUT/cache}"
mkdir -p "$OUT"
rm -f "$OUT/gpu_check.jsonl" "$OUT/wheels-installed.json"
T0=$(date +%s)
if [ ! -f "$PREPARED/manifest.json" ]; then
    echo "gpu_check.sh: no prepared folder at $PREPARED; run 'bash bench/gpu_prepare.sh' first" >&2
    exit 2
fi
if [ -n "$DRY" ]; then
    LIMIT=60; BUDGET=52
    echo "== dry run on the CPU: the prepared wheels are for the GPU machine's Python, not unpacked"
else
    LIMIT=355; BUDGET=330
    if [ -f "$PREPARED/wheels/wheels.json" ]; then
        SITE="$(mktemp -d)"
        trap 'rm -rf "$SITE"' EXIT
        echo "== wheels -> $SITE"
        "$PY" -m studio.measure.gpu.wheels install --wheels "$PREPARED/wheels" --target "$SITE" \
            --report "$OUT/wheels-installed.json" || { echo "gpu_check.sh: unpacking the wheels failed" >&2; exit 2; }
        export PYTHONPATH="$PWD:$SITE${PYTHONPATH#$PWD}"
    else
        echo "== no wheels in $PREPARED (prepared with --no-wheels): using this Python's packages"
    fi
fi
echo "== check (at most $LIMIT s)"
timeout -k 5 "$LIMIT" "$PY" -m studio.measure.gpu.check --prepared "$PREPARED" --out "$OUT" $DRY \
    --budget-s "$BUDGET" "${MODELS[@]}" 2>&1 | tee "$OUT/check.log"
RC=${PIPESTATUS[0]}
if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then
    echo "gpu_check.sh: TIMED OUT after $LIMIT s: the rows below are what finished"
fi
if [ -n "$COQUI" ] && [ -z "$DRY" ]; then
    if "$PY" -c "import TTS" 2>/dev/null; then
        echo "== Tacotron 2 rows (at most 90 s)"
        timeout -k 5 90 "$PY" bench/coqui.py --device cuda --steps 200 --out "$OUT/coqui.jsonl" 2>&1 | tee "$OUT/coqui.log"
    else
        echo "== Tacotron 2 rows: skipped, coqui-tts is not installed on this machine"
    fi
fi
echo
echo "== summary ($(( $(date +%s) - T0 )) s)"
"$PY" -m studio.measure.gpu.rows "$OUT" $REQUIRE
SUMMARY_RC=$?
if [ "$RC" != 0 ] || [ "$SUMMARY_RC" != 0 ]; then
    exit 1
fi
exit 0
