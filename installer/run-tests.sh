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
exec "$py/bin/python" -m pytest -q "$@"
