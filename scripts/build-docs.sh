#!/usr/bin/env bash
# `make docs`: the documentation site, built with `mkdocs build --strict` into site/ (or "$@").
# The API pages read docstrings from an installed, non-editable copy of the package: graphs/,
# agents/, prompts/ and eval/ join planverify only at install time (as in import-contracts.sh).
# The command-line reference comes from the program itself (scripts/cli_reference.py, a hook).
set -euo pipefail
source "$(dirname "$0")/installed-copy.sh"
cd "$root"
NO_MKDOCS_2_WARNING=1 PLANVERIFY_DOCS_SITE_PACKAGES="$work/site" "$python" -m mkdocs build --strict "$@"
