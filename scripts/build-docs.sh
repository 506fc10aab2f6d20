#!/usr/bin/env bash
# `make docs`: the documentation site, built with `mkdocs build --strict` into site/ (or "$@").
# The API pages read docstrings from an installed, non-editable copy of the package: graphs/,
# agents/, prompts/ and eval/ join planverify only at install time (as in import-contracts.sh).
# The command-line reference comes from the program itself (scripts/cli_reference.py, a hook).
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
test -f "$work/site/planverify/graphs/__init__.py" || { echo "the build failed" >&2; exit 1; }
cd "$root"
NO_MKDOCS_2_WARNING=1 PLANVERIFY_DOCS_SITE_PACKAGES="$work/site" "$python" -m mkdocs build --strict "$@"
