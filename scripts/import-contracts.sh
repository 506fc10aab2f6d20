#!/usr/bin/env bash
# The import contracts of pyproject.toml ([tool.importlinter]) checked against an installed,
# non-editable build: graphs/, agents/, prompts/ and eval/ join the planverify package only at
# install time, so import-linter must read the package as pip installs it. The build runs on a
# copy of the sources, so the checkout gets no build/ or *.egg-info.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-$root/.venv/bin/python}"
case "$python" in */*) python="$(cd "$(dirname "$python")" && pwd)/$(basename "$python")" ;; esac
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
for part in pyproject.toml README.md planverify graphs agents prompts eval; do
    cp -R "$root/$part" "$work/src/"
done
"$python" -m pip install --quiet --no-deps --no-build-isolation --no-compile \
    --target "$work/site" "$work/src" 2>&1 | grep -v '^WARNING: Location' >&2 || true
test -f "$work/site/planverify/__init__.py" || { echo "the build failed" >&2; exit 1; }
cd "$work"
PYTHONPATH="$work/site" "$python" -c "from importlinter.cli import lint_imports_command as lint; lint()" \
    "$root/pyproject.toml" "$@"
