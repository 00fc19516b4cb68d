"""Shared pytest fixtures: where the built tools are."""
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The rlx package as the CMake build assembles it (the _rlx extension and the
# Python modules), which is what `pip install ./python` installs.
_BUILD = pathlib.Path(os.environ.get("RLX_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(_BUILD / "python_packages"))


@pytest.fixture(scope="session")
def build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("RLX_BUILD_DIR", ROOT / "build"))


@pytest.fixture(scope="session")
def rlx_opt(build_dir) -> str:
    path = build_dir / "bin" / "rlx-opt"
    if not path.exists():
        pytest.fail(f"{path} is missing: build the project first (scripts/setup.sh)")
    return str(path)
