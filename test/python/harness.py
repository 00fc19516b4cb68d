"""Compile MLIR with rlx-run and run it on NumPy arrays (test helper).

Every numerical test goes through the real tool: the module text is written
to a temporary directory, each input to a .npy file, and rlx-run compiles
(HIR → MIR → fusion → linalg → bufferization → LLVM JIT), runs, and writes
the outputs back as .npy.
"""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("RLX_BUILD_DIR", ROOT / "build"))
RLX_RUN = BUILD / "bin" / "rlx-run"
RLX_GEN = BUILD / "bin" / "rlx-gen"


def shared_dir() -> pathlib.Path | None:
    for c in (os.environ.get("RLX_SHARED_DIR"), ROOT.parent / "shared", "/work/shared"):
        if c and (pathlib.Path(c) / "models").is_dir():
            return pathlib.Path(c)
    return None


def run_mlir(text: str, inputs: dict[str, np.ndarray], *, dims: dict | None = None,
             policy: str = "direct", fuse: bool = True, entry: str | None = None,
             extra: tuple = (), tool: pathlib.Path | None = None) -> dict[str, np.ndarray]:
    """Runs the module `text` (with `tool`, default the build's rlx-run);
    returns outputs by name (rlx.output or resultN)."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "m.mlir").write_text(text)
        cmd = [str(tool or RLX_RUN), str(tmp / "m.mlir"), "--output-dir", str(tmp / "out"),
               "--fusion-policy", policy]
        if not fuse:
            cmd.append("--no-fuse")
        if entry:
            cmd += ["--entry", entry]
        for name, value in inputs.items():
            path = tmp / f"in_{len(cmd)}.npy"
            a = np.asarray(value)  # (ascontiguousarray would make a 0-d array 1-d)
            np.save(path, a if a.ndim == 0 else np.ascontiguousarray(a))
            cmd += ["--input", f"{name}={path}"]
        if dims:
            cmd += ["--dims", ",".join(f"{k}={v}" for k, v in dims.items())]
        cmd += list(extra)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"rlx-run failed ({proc.returncode}):\n{proc.stderr}\n{text}")
        return {p.stem: np.load(p) for p in (tmp / "out").glob("*.npy")}


def run_single(text: str, inputs: dict[str, np.ndarray], **kw) -> np.ndarray:
    out = run_mlir(text, inputs, **kw)
    assert len(out) == 1, out.keys()
    return next(iter(out.values()))


def mlir_type(a: np.ndarray | tuple, dtype: str = "f32") -> str:
    shape = a.shape if isinstance(a, np.ndarray) else a
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


# Element-wise tolerances per dtype: |got - ref| <= atol + rtol·|ref| for every
# element (numpy's allclose), so a wrong small entry is caught even next to
# large ones. The absolute parts are for entries near zero, where f32/bf16
# cancellation makes a relative bound meaningless; tests' values are O(1).
TOLERANCES = {"f32": (1e-5, 1e-6), "bf16": (2e-2, 2e-3), "f16": (2e-3, 2e-4)}


def assert_close(got: np.ndarray, ref: np.ndarray, dtype: str = "f32", *,
                 rtol: float | None = None, atol: float | None = None) -> None:
    """Element-wise comparison with the dtype's tolerances (or explicit ones)."""
    got = np.asarray(got, np.float64)
    ref = np.asarray(ref, np.float64)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    r, a = TOLERANCES[dtype]
    np.testing.assert_allclose(got, ref, rtol=r if rtol is None else rtol,
                               atol=a if atol is None else atol)


def scaled_tolerance(ref: np.ndarray, rel: float) -> dict:
    """rtol = rel and atol = rel * rms(ref): a tolerance that scales with the
    output (a fixed atol larger than typical outputs accepts wrong ones)."""
    ref = np.asarray(ref, np.float64)
    return dict(rtol=rel, atol=rel * float(np.sqrt(np.mean(ref * ref))) if ref.size else rel)


def assert_rejected(wrong: np.ndarray, ref: np.ndarray, tol: dict, what: str) -> None:
    """The comparison `tol` would catch `wrong` (a plausible bug's output)."""
    assert not np.allclose(wrong, ref, **tol), f"the tolerance accepts {what}"


_NP_TO_MLIR = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.float16): "f16",
               np.dtype(np.int64): "i64", np.dtype(np.int32): "i32", np.dtype(np.bool_): "i1"}


class Arg:
    """A function argument: its value, MLIR element type, and dynamic dims."""

    def __init__(self, value, dtype: str | None = None, dynamic: dict[int, str] | None = None):
        self.value = np.asarray(value)
        self.dtype = dtype or _NP_TO_MLIR[self.value.dtype]
        self.dynamic = dynamic or {}

    def type(self) -> str:
        dims = ["?" if i in self.dynamic else str(d) for i, d in enumerate(self.value.shape)]
        return "tensor<" + "".join(d + "x" for d in dims) + self.dtype + ">"

    def attrs(self, name: str) -> str:
        a = f'rlx.input = "{name}"'
        if self.dynamic:
            names = ", ".join(f'"{self.dynamic.get(i, "")}"' for i in range(self.value.ndim))
            a += f", rlx.dim_names = [{names}]"
        return "{" + a + "}"


def function(args: dict[str, Arg], results: list[str], body: str, name: str = "main") -> str:
    """func.func @name(%<arg>: <type> {rlx.input = "<arg>"}, ...) -> results { body }.

    `body` ends with the `return`; argument `x` is `%x` inside it."""
    params = ",\n    ".join(f"%{n}: {a.type()} {a.attrs(n)}" for n, a in args.items())
    res = ", ".join(results)
    return f"func.func @{name}(\n    {params})\n    -> ({res}) {{\n{body}\n}}\n"


def run_function(args: dict[str, Arg], results: list[str], body: str, **kw) -> list[np.ndarray]:
    """Builds the function, runs it on the argument values; returns results in order."""
    text = function(args, results, body)
    out = run_mlir(text, {n: a.value for n, a in args.items()}, **kw)
    return [out[f"result{i}"] for i in range(len(results))]


def gen_model(config: pathlib.Path, *args: str) -> str:
    """The rlx-gen output for `config` with extra command-line arguments."""
    proc = subprocess.run([str(RLX_GEN), str(config), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"rlx-gen failed: {proc.stderr}")
    return proc.stdout


_ARG = None


def signature(text: str) -> list[dict]:
    """Arguments of the first function: name, role, dims (ints or dim names), dtype."""
    import re
    global _ARG
    _ARG = _ARG or re.compile(r"%[\w.]+: tensor<([^>]*)> \{([^}]*)\}")
    args = []
    for m in _ARG.finditer(text.split(") -> ")[0]):
        *dims, dtype = m.group(1).split("x")
        attrs = m.group(2)
        role = re.search(r'rlx\.(input|param) = "([^"]+)"', attrs)
        names = re.search(r"rlx\.dim_names = \[([^\]]*)\]", attrs)
        dim_names = [n.strip().strip('"') for n in names.group(1).split(",")] if names else []
        shape = [d if d != "?" else dim_names[i] for i, d in enumerate(dims)]
        args.append({"name": role.group(2), "param": role.group(1) == "param",
                     "shape": [int(d) if isinstance(d, str) and d.isdigit() else d for d in shape],
                     "dtype": dtype})
    return args


LLVM_BIN = "/usr/lib/llvm-22/bin"
UPSTREAM_LOWERING = (
    "builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor,"
    "convert-elementwise-to-linalg),"
    "one-shot-bufferize{bufferize-function-boundaries},func.func(convert-linalg-to-loops),"
    "convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,"
    "convert-math-to-llvm,convert-math-to-libm,convert-arith-to-llvm,convert-cf-to-llvm,"
    "convert-func-to-llvm,reconcile-unrealized-casts)")


def run_upstream(module: str) -> np.ndarray:
    """Upstream's own lowering of `module` (mlir-opt-22, no RLX) run by
    mlir-runner: its @main prints one memref (printMemrefF32); returns the
    printed values, flat, in float64."""
    return run_upstream_all(module)[0]


def run_upstream_all(module: str) -> list[np.ndarray]:
    """run_upstream for a @main that prints several memrefs: each one's
    values, flat, in the order printed."""
    opt = subprocess.run([f"{LLVM_BIN}/mlir-opt", f"--pass-pipeline={UPSTREAM_LOWERING}"],
                         input=module, capture_output=True, text=True)
    assert opt.returncode == 0, opt.stderr
    libs = ",".join(f"{LLVM_BIN}/../lib/{n}" for n in
                    ["libmlir_c_runner_utils.so", "libmlir_runner_utils.so"])
    run = subprocess.run([f"{LLVM_BIN}/mlir-runner", "-e", "main", "-entry-point-result=void",
                          f"-shared-libs={libs}"], input=opt.stdout, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    printed = run.stdout.split("data =")[1:]
    assert printed, run.stdout
    return [np.array([float(v) for v in re.findall(r"-?\d+\.?\d*(?:e[-+]?\d+)?",
                                                   body.split("Unranked Memref")[0])],
                     np.float64) for body in printed]
