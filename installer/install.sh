#!/usr/bin/env bash
# Installs the audiobook studio into a virtual environment. Rerunnable: each step
# checks what is already there and says what it did.
#
#   bash installer/install.sh            # app + torch presets (+ desktop entry on Linux)
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
# tested set in installer/constraints.txt; installer/lock.sh refreshes that file).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${STUDIO_VENV:-$here/.venv}"
python="${PYTHON:-python3}"
with_torch=1
with_proof=1
with_kokoro=1
dev=0
triton=0
for arg in "$@"; do
  case "$arg" in
    --dev) dev=1 ;;
    --no-torch) with_torch=0 ;;
    --no-proof) with_proof=0 ;;
    --no-kokoro) with_kokoro=0 ;;
    --triton) triton=1 ;;
    -h|--help) sed -n 2,18p "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

say() { printf '[install] %s\n' "$*"; }

# 1. System packages: ffmpeg (MP3/M4B export), PortAudio (preview playback),
#    Xvfb (screenshots, optional). Only when we can install them ourselves.
need=()
command -v ffmpeg >/dev/null || need+=(ffmpeg)
ldconfig -p 2>/dev/null | grep -q libportaudio.so.2 || need+=(libportaudio2)
# Qt's xcb platform plugin on a real display
ldconfig -p 2>/dev/null | grep -q libxcb-icccm.so.4 || need+=(libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-xkb1 libxkbcommon-x11-0 libxcb-cursor0)
if [ "$dev" = 1 ]; then
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
if [ ${#need[@]} -gt 0 ]; then
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

# 2. Virtual environment.
if [ -x "$venv/bin/python" ]; then
  say "virtual environment: reusing $venv"
else
  say "virtual environment: creating $venv"
  "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
# The tested set of versions (installer/constraints.txt): every package pip installs is
# held to the version the suite passed with; what is not listed there floats.
constraints="$here/installer/constraints.txt"
pins=()
if [ "${STUDIO_UNLOCKED:-0}" != 1 ] && [ -f "$constraints" ]; then
  pins=(-c "$constraints")
  say "versions: the tested set (installer/constraints.txt)"
else
  say "versions: the newest pyproject.toml allows (STUDIO_UNLOCKED=1 or no constraints file)"
fi

# 3. Torch, the build that fits this machine. coqui-tts needs torchaudio and
#    torchcodec of the matching release.
torch_pins=(torch==2.11.0 torchaudio==2.11.0 torchcodec==0.11.1)
if [ "$with_torch" = 1 ]; then
  if "$venv/bin/python" -c "import torch, torchaudio" 2>/dev/null; then
    say "torch: already installed ($("$venv/bin/python" -c 'import torch; print(torch.__version__)'))"
  elif command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    say "torch: NVIDIA driver found, installing the CUDA build"
    "${pip[@]}" install "${pins[@]}" "${torch_pins[@]}"
  else
    say "torch: no NVIDIA driver, trying the CPU-only build"
    if ! "${pip[@]}" install "${pins[@]}" --timeout 15 --retries 1 \
        --index-url https://download.pytorch.org/whl/cpu "${torch_pins[@]:0:2}" 2>/dev/null; then
      say "torch: CPU-only wheels unreachable; installing PyPI's build (CUDA-capable, runs on CPU)"
      "${pip[@]}" install "${pins[@]}" "${torch_pins[@]:0:2}"
    fi
    "${pip[@]}" install "${pins[@]}" "${torch_pins[2]}"
  fi
fi

# 4. The app itself, with its console scripts.
extras="gui"
[ "$with_torch" = 1 ] && extras="$extras,torch"
[ "$with_proof" = 1 ] && extras="$extras,proof"
[ "$with_kokoro" = 1 ] && extras="$extras,kokoro"
[ "$dev" = 1 ] && triton=1
[ "$dev" = 1 ] && extras="$extras,test"
[ "$triton" = 1 ] && extras="$extras,triton"
# the distribution was called "studio" before it took a name of its own on the package index
if "${pip[@]}" show studio >/dev/null 2>&1; then
  say "studio: removing the old distribution name 'studio' (now audiobook-studio)"
  "${pip[@]}" uninstall -y studio
  rm -rf "$here/studio.egg-info"
fi
say "studio: installing audiobook-studio (editable) with extras [$extras]"
"${pip[@]}" install "${pins[@]}" -e "$here[$extras]"

# 4b. The CPU Triton server's own environment (see installer/triton-env.sh). A failure
#     here does not stop the install: the Triton tests then skip and print why.
if [ "$triton" = 1 ]; then
  bash "$here/installer/triton-env.sh" || say "Triton server environment: not created (the Triton tests will skip)"
fi

# 5. Desktop entry (Linux, per user).
if [ "$(uname -s)" = Linux ] && [ -n "${HOME:-}" ]; then
  apps="${XDG_DATA_HOME:-$HOME/.local/share}/applications"
  mkdir -p "$apps"
  cat >"$apps/audiobook-studio.desktop" <<DESKTOP
[Desktop Entry]
Type=Application
Name=Audiobook Studio
Comment=Render manuscripts as audiobooks with neural voices
Exec=$venv/bin/studio gui %f
Terminal=false
Categories=AudioVideo;Audio;
MimeType=text/plain;text/markdown;text/html;application/epub+zip;application/vnd.openxmlformats-officedocument.wordprocessingml.document;application/pdf;
DESKTOP
  say "desktop entry: $apps/audiobook-studio.desktop"
fi

say "done: $venv/bin/studio ($("$venv/bin/studio" --version 2>/dev/null || echo 'installed'))"
