"""The package installs: ``pip install .`` into a fresh virtual environment (not editable), then the
``tokfeel`` command, run from another directory, prints the same numbers as ``python -m engine`` in
the repository. Offline: the wheel is built with the test environment's pinned setuptools
(``--no-build-isolation``) and there are no dependencies to fetch."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import tomllib
import venv
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
ESTIMATE = ["estimate", "--hardware", "RTX 4090", "--model", "Llama 3.1 8B", "--quant", "Q4_K_M", "--json"]
#: What ``pip install .`` reads from the checkout (pyproject.toml names README.md as the readme).
PROJECT_FILES = ("pyproject.toml", "README.md", "engine", "data")


def test_build_requirement_and_test_extra_pin_the_same_setuptools():
    required = PYPROJECT["build-system"]["requires"]
    pinned = [r for r in PYPROJECT["project"]["optional-dependencies"]["test"] if r.startswith("setuptools")]
    assert required == pinned, "pyproject.toml: [build-system] requires and the test extra must pin one setuptools"


def test_version_is_written_once():
    assert "version" not in PYPROJECT["project"] and "version" in PYPROJECT["project"]["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "engine.__version__"}
    assert "version" not in json.loads((ROOT / "package.json").read_text(encoding="utf-8"))


def test_every_engine_package_is_in_the_wheel():
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "engine").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert on_disk <= listed, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(on_disk - listed)}"
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {"engine.data": "data"}


def _setuptools_only_path(folder: Path) -> Path:
    """A folder on which only setuptools (and the modules it brings) can be imported."""
    folder.mkdir()
    spec = importlib.util.find_spec("setuptools")
    assert spec and spec.origin, "setuptools is in the test extra"
    site = Path(spec.origin).parent.parent
    for name in ("setuptools", "pkg_resources", "_distutils_hack", *(p.name for p in site.glob("setuptools-*.dist-info"))):
        if (site / name).exists():
            (folder / name).symlink_to(site / name)
    return folder


def test_pip_install_then_tokfeel_from_another_directory(tmp_path):
    project = tmp_path / "checkout"
    project.mkdir()
    for name in PROJECT_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, project / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, project / name)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = env_dir / "bin" / "python"
    environment = {**os.environ, "PYTHONPATH": str(_setuptools_only_path(tmp_path / "setuptools")), "PIP_NO_INDEX": "1"}
    installed = subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-build-isolation", str(project)],
        capture_output=True, text=True, timeout=300, env=environment,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    where = subprocess.run(
        [python, "-c", "import engine, engine.catalog as c; print(engine.__file__); print(c.DATA_DIR)"],
        cwd=elsewhere, capture_output=True, text=True, timeout=60, env=clean,
    )
    assert where.returncode == 0, where.stderr
    module_file, data_dir = where.stdout.split("\n")[:2]
    assert module_file.startswith(str(env_dir)) and data_dir.startswith(str(env_dir)), where.stdout

    wheel = subprocess.run([env_dir / "bin" / "tokfeel", *ESTIMATE], cwd=elsewhere, capture_output=True, text=True, timeout=120, env=clean)
    assert wheel.returncode == 0, wheel.stderr
    repo = run_cli(*ESTIMATE)
    assert repo.returncode == 0, repo.stderr
    assert json.loads(wheel.stdout) == json.loads(repo.stdout)

    # The developer tools and the page layer ship in the wheel too, with the data they read.
    listing = subprocess.run([env_dir / "bin" / "tokfeel", "list", "models", "--json"], cwd=elsewhere, capture_output=True, text=True, timeout=120, env=clean)
    assert listing.returncode == 0 and json.loads(listing.stdout) == json.loads(run_cli("list", "models", "--json").stdout)


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout")
def test_no_symlink_or_environment_is_tracked():
    """A tracked .venv or node_modules symlink breaks every other checkout (it replaced the real ones)."""
    tracked = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    links = [line.split("\t", 1)[1] for line in tracked.splitlines() if line.startswith("120000")]
    assert links == []
