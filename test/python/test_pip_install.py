"""`pip install ./python` from the repository, then the example script.

Slow (it builds the package through scikit-build-core, minutes even with
ccache), so it runs only when RLX_TEST_PIP_INSTALL=1 (scripts/test-all.sh,
i.e. CI, sets it); otherwise it is reported as skipped.
"""
import os
import pathlib
import subprocess
import sys
import venv

import pytest

from harness import ROOT, shared_dir


@pytest.mark.skipif(os.environ.get("RLX_TEST_PIP_INSTALL") != "1",
                    reason="set RLX_TEST_PIP_INSTALL=1 to build and install the package with pip")
@pytest.mark.skipif(shared_dir() is None, reason="../shared/models not found")
def test_pip_install_and_example(tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    pip = subprocess.run([str(py), "-m", "pip", "install", "-q", str(ROOT / "python")],
                         capture_output=True, text=True, timeout=3000)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    # Run from elsewhere so that nothing from the source tree is imported.
    out = subprocess.run([str(py), str(ROOT / "examples" / "python" / "llama_2_layers.py"),
                          str(shared_dir() / "models" / "llama-3.2-1b.json")],
                         capture_output=True, text=True, cwd=tmp_path, timeout=1200)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "max error" in out.stdout and "(OK)" in out.stdout, out.stdout
    where = subprocess.run([str(py), "-c", "import rlx; print(rlx.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert str(env_dir) in where.stdout
