"""The installed CMake package: a separate project finds RLX and runs a pipeline.

`cmake --install` the build into a temporary prefix, then configure, build
and run examples/consumer against it with find_package(RLX), compiling every
installed RLX header on its own as well (RLX_CHECK_HEADERS).
"""
import os
import shutil
import subprocess

import pytest

from harness import BUILD, ROOT


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ninja") is None,
                    reason="cmake and ninja are needed")
def test_installed_package_builds_and_runs_the_consumer(tmp_path):
    prefix = tmp_path / "prefix"
    run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)])
    config = prefix / "lib" / "cmake" / "rlx" / "RLXConfig.cmake"
    assert config.exists()
    assert (prefix / "include" / "RLX" / "InitAll.h").exists()
    assert (prefix / "lib" / "libRLXPlugin.so").exists()
    build = tmp_path / "consumer"
    cxx = shutil.which("clang++-22") or "c++"
    # ccache, keyed on paths relative to tmp_path: a rerun compiles only the
    # headers that changed (the header check is most of this test's time).
    env = dict(os.environ, CCACHE_BASEDIR=str(tmp_path))
    launcher = [f"-DCMAKE_CXX_COMPILER_LAUNCHER={shutil.which('ccache')}"] if shutil.which("ccache") else []
    run(["cmake", "-G", "Ninja", "-S", str(ROOT / "examples" / "consumer"), "-B", str(build),
         f"-DRLX_DIR={config.parent}", f"-DCMAKE_CXX_COMPILER={cxx}", "-DRLX_CHECK_HEADERS=ON",
         "-DCMAKE_BUILD_TYPE=Release", *launcher], env=env)
    run(["ninja", "-C", str(build), "-j2"], env=env)
    out = run([str(build / "rlx-consumer")])
    assert "rlx-consumer: @mlp: 2 kernels, plan {alignment = 64" in out, out
