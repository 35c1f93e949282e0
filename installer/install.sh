#!/usr/bin/env bash
# Installs the audiobook studio on Linux (and macOS): the system packages that have no
# wheel, then installer/install.py (the same on Windows, macOS and Linux) for the rest.
# Rerunnable: each step checks what is already there and says what it did.
#
#   bash installer/install.sh            # app + torch presets (+ desktop entry / app launcher)
#   bash installer/install.sh --dev      # also the test tools (pytest, pytest-qt, ...)
#   bash installer/install.sh --no-torch # ONNX voices only (small install)
#   bash installer/install.sh --no-proof # without proof-listening (faster-whisper and
#                                        # its 145 MB speech model)
#   bash installer/install.sh --no-kokoro # without the offline Kokoro voices (the 92 MB
#                                        # Kokoro-82M INT8 model and its five voice packs)
#   bash installer/install.sh --triton   # also render on Triton servers (client) and the
#                                        # CPU Triton server environment (.venv-triton);
#                                        # --dev includes it (the tests start a real server)
#
# Environment: STUDIO_VENV (default: .venv in the checkout), PYTHON (default: python3),
# STUDIO_UNLOCKED=1 (install the newest versions pyproject.toml allows instead of the
# tested set in installer/constraints.txt; installer/versions.sh refreshes that file).

set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
dev=0
for arg in "$@"; do
  case "$arg" in
    --dev) dev=1 ;;
    --no-torch|--no-proof|--no-kokoro|--triton|--dry-run) ;;
    -h|--help) sed -n 2,19p "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

say() { printf '[install] %s\n' "$*"; }

# 1. System packages (Linux): PortAudio (preview playback; Linux's sounddevice wheel has
#    none inside), Qt's xcb libraries; for --dev also ffmpeg (the tests read files back
#    with its ffprobe; the studio itself runs the ffmpeg the imageio-ffmpeg wheel ships),
#    Xvfb and the evaluation texts. Only when we can install them ourselves. macOS
#    needs none: every piece comes as a wheel there.
need=()
ldconfig -p 2>/dev/null | grep -q libportaudio.so.2 || need+=(libportaudio2)
# Qt's xcb platform plugin on a real display
ldconfig -p 2>/dev/null | grep -q libxcb-icccm.so.4 || need+=(libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-xkb1 libxkbcommon-x11-0 libxcb-cursor0)
if [ "$dev" = 1 ]; then
  command -v ffprobe >/dev/null || need+=(ffmpeg)
  command -v Xvfb >/dev/null || need+=(xvfb)
  ldconfig -p 2>/dev/null | grep -q libxkbcommon-x11 || need+=(libxkbcommon-x11-0 libegl1 libgl1 libfontconfig1 libdbus-1-3)
  # human-written passages in 8 languages: the language detection's evaluation set
  # the King James Bible: one of the proof-listening evaluation set's four kinds of text (bench/proof_set.py)
  for pkg in bible-kjv bible-kjv-text; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
  for pkg in fortunes fortunes-de fortunes-es fortunes-it fortunes-br fortunes-pl fortunes-ru fortunes-cs; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
fi
if [ "$(uname -s)" != Linux ]; then
  say "system packages: none needed on $(uname -s)"
elif [ ${#need[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    say "apt: installing ${need[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  elif command -v apt-get >/dev/null && command -v sudo >/dev/null; then
    say "apt (sudo): installing ${need[*]}"
    sudo apt-get update -qq >/dev/null
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    say "please install with your package manager: ${need[*]} (continuing)"
  fi
else
  say "system packages: already present"
fi

# 2. The virtual environment, torch, the app and the launcher: the same on every system.
exec "$python" "$here/installer/install.py" "$@"
