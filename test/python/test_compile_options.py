"""Compile options are declared once (include/RLX/Target/CompileOptions.def)
and reach every entry point from there: rlx-run's and rlx-compile's flags,
the rlx-lower-to-cpu / rlx-lower-to-nvvm pass options, and Python's keyword
arguments; one check refuses bad values the same way everywhere."""
from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

import rlx
from harness import BUILD
from rlx import hir, mir

OPTIONS = rlx.options.compile_options()
TOOLS = {"rlx-run": {"common", "codegen", "cpu", "cpu_jit", "gpu"},
         "rlx-compile": {"common", "codegen", "gpu", "gpu_artifact"}}
PIPELINES = {"rlx-lower-to-cpu": {"common", "cpu", "cpu_pipeline"},
             "rlx-lower-to-nvvm": {"common", "codegen", "gpu", "gpu_pipeline"}}


def tool(name, *args, **kw):
    return subprocess.run([str(BUILD / "bin" / name), *args], capture_output=True, text=True,
                          timeout=120, **kw)


def test_every_option_is_declared_once_with_help():
    names = [o["name"] for o in OPTIONS]
    assert len(names) == len(set(names))
    assert all(o["help"] and o["flag"] for o in OPTIONS)
    assert {o["group"] for o in OPTIONS} == {"common", "codegen", "cpu", "cpu_pipeline",
                                             "cpu_jit", "gpu", "gpu_pipeline", "gpu_artifact"}


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_tools_take_their_groups_as_flags(name):
    text = tool(name, "--help").stdout
    flags = set(re.findall(r"^\s+-{1,2}([\w-]+)", text, re.M))
    for o in OPTIONS:
        if o["group"] in TOOLS[name] and not (name == "rlx-run" and o["flag"] == "rank"):
            assert o["flag"] in flags, (name, o["flag"])
            if o["type"] == "bool" and o["default"] == "true":
                assert "no-" + o["flag"] in flags, (name, o["flag"])
        elif o["group"] not in TOOLS[name]:
            assert o["flag"] not in flags or o["flag"] == "trace", (name, o["flag"])


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_pipelines_take_their_groups_as_pass_options(pipeline):
    text = tool("rlx-opt", "--help").stdout
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip().startswith(f"--{pipeline} "))
    indent = len(lines[start]) - len(lines[start].lstrip())
    flags = set()
    for ln in lines[start + 1:]:
        if len(ln) - len(ln.lstrip()) <= indent:
            break
        flags.add(re.match(r"\s+-{1,2}([\w-]+)", ln).group(1))
    for o in OPTIONS:
        if o["group"] in PIPELINES[pipeline]:
            assert o["flag"] in flags, (pipeline, o["flag"])
        else:
            assert o["flag"] not in flags, (pipeline, o["flag"])


def module():
    f = hir.Function("f")
    x = f.input("x", (2, 8))
    f.output("y", mir.softmax(x, axis=1))
    return f.build()


# (Python name, value, the message after the option's name)
BAD = [("fusion_policy", "greedy", " must be direct or fusable, got 'greedy'"),
       ("matmul_kernel", "cublas", " must be auto, gemv, simt, tensor-cores, wgmma or tcgen05, "
                                   "got 'cublas'"),
       ("row_tile", 0, " must be >= 1, got 0"),
       ("dims", {"seq": -1}, ": 'seq=-1' is not name=size"),
       ("opt_level", 7, " must be 0, 1, 2 or 3, got 7")]


@pytest.mark.parametrize("name,value,message", BAD)
def test_a_bad_value_is_the_same_error_everywhere(name, value, message):
    """The one check, with the option named as each caller spells it."""
    o = next(o for o in OPTIONS if o["name"] == name)
    text = rlx.options.as_text({name: value})[name]
    dash = "-" if len(o["flag"]) == 1 else "--"
    if o["group"] in ("common", "codegen", "cpu"):
        with pytest.raises(rlx.RlxError, match=re.escape(name + message)):
            rlx.compile_cpu(module(), **{name: value})
        flag = f"-{o['flag']}{text}" if dash == "-" else f"--{o['flag']}={text}"
        run = tool("rlx-run", "-", flag, input=module().text())
        assert run.returncode != 0 and f"rlx-run: {dash}{o['flag']}{message}" in run.stderr, \
            run.stderr
    if o["group"] in ("common", "cpu"):
        src = tool("rlx-opt", "--pass-pipeline=builtin.module(rlx-lower-to-cpu{"
                   f"{o['flag']}={text}}})", input="module {}\n")
        assert src.returncode != 0 and o["flag"] + message in src.stderr, src.stderr
    if o["group"] in ("common", "codegen", "gpu"):
        with pytest.raises(rlx.RlxError, match=re.escape(name + message)):
            rlx.gpu.compile(module(), device="emu", **{name: value})
        out = tool("rlx-compile", "-", "-o", "/dev/null/x", f"{dash}{o['flag']}" +
                   (text if dash == "-" else f"={text}"), input=module().text())
        assert out.returncode != 0 and f"rlx-compile: {dash}{o['flag']}{message}" in out.stderr, \
            out.stderr


def test_python_refuses_tensor_parallel_cpu_runs():
    with pytest.raises(rlx.RlxError, match="mpirun -np N rlx-run --tp N"):
        rlx.compile_cpu(module(), tp=2)


def test_unknown_keyword_names_the_options():
    with pytest.raises(rlx.RlxError, match=r"unknown option 'matmul_kernel' \(options: .*row_tile"):
        rlx.compile_cpu(module(), matmul_kernel="wgmma")
    with pytest.raises(rlx.RlxError, match=r"unknown option 'row_tile' \(options: .*matmul_kernel"):
        rlx.gpu.compile(module(), device="emu", row_tile=4)


def test_an_option_means_the_same_on_every_entry_point(tmp_path):
    """fuse=False: every primitive op its own kernel, from Python, rlx-run and
    rlx-compile alike (the kernel counts agree)."""
    m = module()
    fused = rlx.compile_cpu(m).stats["kernels"]
    unfused = rlx.compile_cpu(m, fuse=False).stats["kernels"]
    assert unfused >= fused
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    want = np.exp(x) / np.exp(x).sum(1, keepdims=True)
    for kw in ({}, {"fuse": False}):
        np.testing.assert_allclose(rlx.compile_cpu(m, **kw).run(x=x)["y"], want, rtol=1e-6)
        np.testing.assert_allclose(rlx.gpu.compile(m, device="emu", **kw).run(x=x)["y"], want,
                                   rtol=1e-6)
    src = tmp_path / "m.mlir"
    src.write_text(m.text())
    for flags in ([], ["--no-fuse"]):
        art = tmp_path / ("a" + "".join(flags))
        out = tool("rlx-compile", str(src), "-o", str(art), "--no-cubin", *flags)
        assert out.returncode == 0, out.stderr
    import json
    launches = [len(json.loads((tmp_path / d / "manifest.json").read_text())["functions"][0]
                    ["launches"]) for d in ("a", "a--no-fuse")]
    assert launches[1] >= launches[0]
