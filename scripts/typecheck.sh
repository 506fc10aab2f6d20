#!/usr/bin/env bash
# mypy cannot follow setuptools' package-dir mapping, so check a symlinked copy of the
# installed layout (planverify/ with graphs/, agents/, prompts/, eval/ inside it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
mkdir "$tree/planverify"
for f in "$root"/planverify/*; do ln -s "$f" "$tree/planverify/"; done
for sub in graphs agents prompts eval; do ln -s "$root/$sub" "$tree/planverify/$sub"; done
cd "$root"
"${MYPY:-mypy}" --config-file "$root/pyproject.toml" "$tree/planverify"
