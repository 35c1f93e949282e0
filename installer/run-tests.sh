#!/usr/bin/env bash
# The project's one test command: makes sure the test tools are installed (a no-op
# when they are), then runs the whole suite headless. Extra arguments go to pytest.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$here/installer/install.sh" --dev
export QT_QPA_PLATFORM=offscreen
cd "$here"
py="${STUDIO_VENV:-$here/.venv}"
# the layer rules (pyproject.toml, [tool.importlinter]) before the suite
"$py/bin/lint-imports"
if [ $# -gt 0 ] || ! command -v xvfb-run >/dev/null; then
  exec "$py/bin/python" -m pytest -q "$@"
fi
# the whole suite: everything headless in batches, two pytest processes side by side
# (tests/lanes.py: both cores busy, each process's memory bounded), then the producer's
# walkthrough in a real X server (Xvfb, Qt's xcb platform), as a producer's window would run
"$py/bin/python" tests/lanes.py
STUDIO_EXPECT_QT_PLATFORM=xcb QT_QPA_PLATFORM=xcb \
  exec xvfb-run -a -s "-screen 0 1600x1000x24" "$py/bin/python" -m pytest -q tests/desktop/test_walkthrough.py
