#!/usr/bin/env bash
# The import contracts of pyproject.toml ([tool.importlinter]) checked against an installed,
# non-editable build: graphs/, agents/, prompts/ and eval/ join the planverify package only at
# install time, so import-linter must read the package as pip installs it. The build runs on a
# copy of the sources, so the checkout gets no build/ or *.egg-info.
set -euo pipefail
source "$(dirname "$0")/installed-copy.sh"
cd "$work"
PYTHONPATH="$work/site" "$python" -c "from importlinter.cli import lint_imports_command as lint; lint()" \
    "$root/pyproject.toml" "$@"
