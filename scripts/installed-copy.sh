# Sourced by build-docs.sh and import-contracts.sh: an installed, non-editable copy of the package
# in "$work/site". graphs/, agents/, prompts/ and eval/ join planverify only at install time, so
# tools that read the package as users get it read this copy. The build runs on a copy of the
# sources, so the checkout gets no build/ or *.egg-info. Sets root, python and work (removed on
# exit).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
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
