"""The built wheel: one import package, every module and data file, and it works on its own.

The repository keeps `graphs/`, `agents/`, `prompts/` and `eval/` at the top level and
setuptools' `package-dir` maps them into `planverify.*`, so a mistake in that mapping only shows
in a built wheel (the editable install resolves the same names straight from the checkout).
The wheel is built once per module, offline, from a copy of the sources in a temporary
directory, so the checkout gets no `build/` or `*.egg-info`.
"""

from __future__ import annotations

import base64
import configparser
import csv
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.parser import HeaderParser
from pathlib import Path, PurePosixPath

import pytest
from packaging.requirements import Requirement

from .conftest import COFFEE_PLAN, COFFEE_REFINED, ROOT

PYPROJECT_TEXT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # built as read here
PYPROJECT = tomllib.loads(PYPROJECT_TEXT)
PROJECT = PYPROJECT["project"]
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
NAME = PROJECT["name"]
VERSION = PROJECT["version"]
DIST_INFO = f"{NAME}-{VERSION}.dist-info/"
PACKAGE_DIR: dict[str, str] = SETUPTOOLS.get("package-dir", {})
PACKAGE_DATA: dict[str, list[str]] = SETUPTOOLS.get("package-data", {})
VENV_BIN = Path(sys.executable).parent

PLAN, REFINED = COFFEE_PLAN, COFFEE_REFINED


def minimal_env(home: Path) -> dict[str, str]:
    """No API keys, no tracing, no package index: a subprocess cannot reach a provider or PyPI."""
    return {
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', os.defpath)}",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PIP_NO_INDEX": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
    }


def source_dirs() -> list[str]:
    """The repository folders that become packages (from `package-dir`)."""
    return sorted({path.split("/")[0] for path in PACKAGE_DIR.values()} | {NAME})


def copy_sources(dest: Path) -> Path:
    """Copy what the build reads (no tests, venv, caches or old build output) into `dest`."""
    dest.mkdir(parents=True)
    (dest / "pyproject.toml").write_text(PYPROJECT_TEXT, encoding="utf-8")
    readme = PROJECT.get("readme")
    if isinstance(readme, str):
        shutil.copy2(ROOT / readme, dest / readme)
    for licence in ROOT.glob("LICEN[CS]E*"):
        shutil.copy2(licence, dest / licence.name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")
    for folder in source_dirs():
        shutil.copytree(ROOT / folder, dest / folder, ignore=skip)
    return dest


def build_command(src: Path, out: Path) -> list[str]:
    """An offline build: no isolation means nothing is installed, so nothing is downloaded."""
    if importlib.util.find_spec("build") is not None:
        return [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)]
    # pip needs --no-index too: a bare name would be looked up on the index.
    return [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "-w",
        str(out),
    ]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("packaging")


@pytest.fixture(scope="module")
def sources(workdir: Path) -> Path:
    """A snapshot of the sources: the build and the expectations both read it, so a file
    added to the checkout meanwhile (others edit it concurrently) cannot make them disagree."""
    return copy_sources(workdir / "src")


@pytest.fixture(scope="module")
def build(workdir: Path, sources: Path) -> subprocess.CompletedProcess[str]:
    """The build of the snapshot (absolute paths: pip would read `src` as a name)."""
    src = sources
    out = workdir / "dist"
    return subprocess.run(
        [*build_command(src, out), str(src)],
        cwd=workdir,
        env=minimal_env(workdir),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def wheel(workdir: Path, build: subprocess.CompletedProcess[str]) -> Path:
    """The wheel the build wrote."""
    assert build.returncode == 0, (
        f"wheel build failed:\n{build.stdout[-4000:]}\n{build.stderr[-4000:]}"
    )
    wheels = sorted((workdir / "dist").glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def read(wheel: Path, name: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(name).decode("utf-8")


def expected_files(src: Path) -> set[str]:
    """Every module and data file of the mapped folders, at its place in the wheel.

    Walking the folders (not just the listed packages) catches a new subpackage that was not
    added to `packages`, which the editable install would hide.
    """
    expected: set[str] = set()
    for package in SETUPTOOLS["packages"]:
        folder = src / PACKAGE_DIR.get(package, package.replace(".", "/"))
        target = PurePosixPath(*package.split("."))
        patterns = ["*.py", *PACKAGE_DATA.get(package, []), *PACKAGE_DATA.get("*", [])]
        for pattern in patterns:
            for path in folder.glob(pattern):
                if path.is_file():
                    expected.add(str(target / path.relative_to(folder).as_posix()))
        for path in folder.rglob("*.py"):
            if "__pycache__" not in path.parts:
                expected.add(str(target / path.relative_to(folder).as_posix()))
    return expected


def test_setuptools_finds_nothing_to_warn_about_in_the_declaration(
    build: subprocess.CompletedProcess[str], wheel: Path
) -> None:
    """A data folder setuptools takes for a package it was not told about prints forty lines
    of warning in every install and build; the declaration must leave it nothing to say."""
    said = build.stdout + build.stderr
    assert "absent from the `packages` configuration" not in said
    assert "Package would be ignored" not in said


def test_the_wheel_is_pure_python_and_named_for_the_project(wheel: Path) -> None:
    assert wheel.name == f"{NAME}-{VERSION}-py3-none-any.whl"


def test_the_wheel_holds_one_import_package(wheel: Path, names: list[str]) -> None:
    strays = [n for n in names if not n.startswith((f"{NAME}/", DIST_INFO))]
    assert strays == []
    assert read(wheel, DIST_INFO + "top_level.txt").split() == [NAME]


def test_the_wheel_ships_the_mapped_packages_and_their_data(
    names: list[str], sources: Path
) -> None:
    required = {
        "planverify/__init__.py",
        "planverify/graphs/graph.py",
        "planverify/agents/judge.py",
        "planverify/eval/__init__.py",
        "planverify/prompts/judge_system.txt",
        "planverify/llm/presets.toml",
        "planverify/py.typed",
    }
    prompts = {f"planverify/prompts/{p.name}" for p in (sources / "prompts").glob("*.txt")}
    assert len(prompts) >= 6
    missing = (required | prompts | expected_files(sources)) - set(names)
    assert missing == set()


def test_the_wheel_has_no_tests_caches_or_build_leftovers(names: list[str]) -> None:
    parts = [PurePosixPath(n).parts for n in names]
    assert not [n for n, p in zip(names, parts, strict=True) if "tests" in p or "test" in p]
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".pyo"))]
    assert not [n for n in names if ".egg-info" in n or n.startswith(("build/", "src/"))]


def test_the_metadata_declares_the_entry_point_and_dependencies(wheel: Path) -> None:
    entry_points = configparser.ConfigParser()
    entry_points.read_string(read(wheel, DIST_INFO + "entry_points.txt"))
    assert dict(entry_points["console_scripts"]) == {"planverify": "planverify.cli:main"}
    metadata = HeaderParser().parsestr(read(wheel, DIST_INFO + "METADATA"))
    assert metadata["Name"] == NAME and metadata["Version"] == VERSION
    assert metadata["Requires-Python"] == PROJECT["requires-python"]
    requires = [Requirement(r) for r in metadata.get_all("Requires-Dist") or []]

    def key(r: Requirement) -> tuple[str, str, str]:
        return r.name, str(r.specifier), str(r.marker or "")

    outside_extras = {key(r) for r in requires if "extra" not in str(r.marker or "")}
    assert outside_extras == {key(Requirement(d)) for d in PROJECT["dependencies"]}
    extras = set(metadata.get_all("Provides-Extra") or [])
    assert extras == set(PROJECT["optional-dependencies"])


def test_the_record_matches_the_contents(wheel: Path, names: list[str]) -> None:
    rows = list(csv.reader(io.StringIO(read(wheel, DIST_INFO + "RECORD"))))
    recorded = {row[0] for row in rows}
    assert recorded == set(names)
    with zipfile.ZipFile(wheel) as archive:
        for path, digest, size in rows:
            if not digest:  # RECORD itself
                continue
            data = archive.read(path)
            algorithm, _, value = digest.partition("=")
            actual = base64.urlsafe_b64encode(hashlib.new(algorithm, data).digest()).rstrip(b"=")
            assert (actual.decode(), int(size)) == (value, len(data)), path


# Runs in a fresh interpreter with the unpacked wheel as the only source of `planverify`.
#
# The venv's `site` setup must stay (the dependencies live in its site-packages), but it also
# runs the editable install's `.pth`, which appends setuptools' `_EditableFinder` to
# `sys.meta_path`. That finder sits after the normal `PathFinder`, so with the unpacked wheel
# first on `sys.path` the wheel wins for every module it has, but a module the wheel LACKS
# (say a subpackage missing from `packages`) would silently be imported from the checkout.
# So the script removes the editable finder (and its path hook and placeholder entry), drops
# any `sys.path` entry inside the checkout but outside the venv (a "compat" editable install
# adds the repo root), then puts the unpacked wheel first. `-s` drops the user site, `-E` ignores PYTHON* variables
# (so the path comes in via argv), `-P` keeps the working directory off `sys.path`; the cwd is
# a temporary directory anyway. Afterwards every loaded `planverify*` module must come from
# the unpacked wheel, and so must the distribution metadata.
CHECK = r"""
import json, sys
from pathlib import Path

site, repo = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
venv = Path(sys.prefix).resolve()  # may sit inside the checkout (.venv): keep its entries
assert "planverify" not in sys.modules, "imported during start-up"


def editable(thing):
    module = getattr(thing, "__module__", None) or type(thing).__module__
    return "__editable__" in str(module)


def in_repo(entry):
    try:
        path = Path(entry or ".").resolve()
    except OSError:
        return False
    inside = path == repo or repo in path.parents
    return inside and not (path == venv or venv in path.parents)


sys.meta_path[:] = [f for f in sys.meta_path if not editable(f)]
sys.path_hooks[:] = [h for h in sys.path_hooks if not editable(h)]
sys.path[:] = [p for p in sys.path if "__editable__" not in p and not in_repo(p)]
sys.path.insert(0, str(site))
sys.path_importer_cache.clear()

import importlib.metadata as metadata
import tomllib
from importlib import resources

import planverify
import planverify.graphs.graph as graph_module
from planverify import verify_plan

result = verify_plan(json.loads(sys.argv[3]), goal="Make a mug of coffee.")
(script,) = metadata.entry_points(group="console_scripts", name="planverify")
main = script.load()
presets = tomllib.loads(resources.files("planverify.llm").joinpath("presets.toml").read_text())
modules = {
    name: getattr(module, "__file__", None)
    for name, module in sys.modules.items()
    if name == "planverify" or name.startswith("planverify.")
}
print(json.dumps({
    "file": planverify.__file__,
    "modules": modules,
    "graph": graph_module.build_verifier().name,
    "status": result.status,
    "error": result.error,
    "refined": result.refined,
    "stop_reason": result.stop_reason,
    "version": metadata.version("planverify"),
    "dist": str(metadata.distribution("planverify").locate_file("")),
    "entry_point": f"{main.__module__}:{main.__name__}",
    "presets": sorted(presets.get("presets", {})),
}))
"""


def test_the_unpacked_wheel_imports_and_verifies_a_plan_on_its_own(
    wheel: Path, workdir: Path
) -> None:
    site = workdir / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    run = workdir / "run"
    run.mkdir()
    done = subprocess.run(
        [sys.executable, "-s", "-E", "-P", "-c", CHECK, str(site), str(ROOT), json.dumps(PLAN)],
        cwd=run,
        env=minimal_env(run),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])

    site = site.resolve()
    assert Path(report["file"]).resolve() == site / "planverify" / "__init__.py"
    assert {"planverify.graphs.graph", "planverify.agents", "planverify.prompts"} <= set(
        report["modules"]
    )
    outside = {
        name: path
        for name, path in report["modules"].items()
        if path is None or site not in Path(path).resolve().parents
    }
    assert outside == {}
    assert Path(report["dist"]).resolve() == site
    assert report["version"] == VERSION
    assert report["entry_point"] == "planverify.cli.program:main"
    assert report["presets"], "the shipped presets.toml is empty or unreadable"
    assert report["graph"] == "planverify"
    assert (report["status"], report["error"]) == ("ok", None)
    assert report["refined"] == REFINED
    assert report["stop_reason"] == "no_objections"
