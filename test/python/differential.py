"""Differential checker: one random graph, compiled fused and unfused, against NumPy.

For a `random_graphs.Case` the checker
  1. verifies the module with `rlx-opt` (a rejection is a generator bug:
     the generator only writes valid IR),
  2. runs it with `rlx-run` once per variant (default: fused, and unfused
     with `--no-fuse`) on the case's inputs,
  3. compares every result of every variant with the float64 reference,
     and the fused results with the unfused ones.

Comparison, element by element (np.testing.assert_allclose style):
    |got - want| <= SAFETY * bound + RTOL * |want| + 1e-30
with RTOL = 1e-4 and `bound` the per-element error bound the generator
propagated (random_graphs: running error analysis in units of f32 roundoff,
so the atol is scaled to the magnitudes that went into each element, never
to max |want|). Fused vs unfused uses the sum of both bounds. Infinities
must match exactly, NaN never passes, integer and boolean results are exact.

A nonzero exit or a crash of rlx-run, a missing result, or any failed
comparison is a finding; `check` returns them all.
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("RLX_BUILD_DIR", ROOT / "build"))
RLX_RUN = BUILD / "bin" / "rlx-run"
RLX_OPT = BUILD / "bin" / "rlx-opt"

RTOL = 1e-4
SAFETY = 4.0
FLOOR = 1e-30

VARIANTS = {
    "fused": [],
    "unfused": ["--no-fuse"],
    # extra configurations (scripts/difftest.py --variants)
    "fused-noblas": ["--no-blas"],
    "fused-tiles": ["--blas-min-flops=0", "--row-tile=2"],
    "fused-nolir": ["--no-lir"],
}
DEFAULT_VARIANTS = ("fused", "unfused")


@dataclass
class Finding:
    kind: str      # verify | crash | missing | mismatch
    where: str     # variant, or "fused-vs-unfused"
    detail: str
    result: int | None = None

    def key(self):
        """A coarse signature to group findings."""
        first = self.detail.splitlines()[0] if self.detail else ""
        return f"{self.kind}:{self.where}:{first[:120]}"


@dataclass
class Outcome:
    seed: int
    findings: list = field(default_factory=list)
    stderr: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    seconds: float = 0.0
    culprit: str | None = None  # first fusion family that reproduces the failure (see culprit())

    @property
    def ok(self):
        return not self.findings


def _env():
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


def write_case(case, d: pathlib.Path) -> list[str]:
    """Writes m.mlir and the inputs; returns the --input arguments."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "m.mlir").write_text(case.text)
    args = []
    (d / "inputs").mkdir(exist_ok=True)
    for name, value in case.inputs.items():
        p = d / "inputs" / f"{name}.npy"
        np.save(p, np.asarray(value, order="C"))
        args += ["--input", f"{name}=inputs/{name}.npy"]
    return args


def _run(cmd, cwd, timeout):
    """subprocess.run that waits out a rebuild of the tools (missing / busy binary)."""
    import time
    for attempt in range(60):
        try:
            return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=_env())
        except (PermissionError, FileNotFoundError, OSError) as e:
            if attempt == 59:
                raise
            time.sleep(10)


def verify(d: pathlib.Path, timeout=60):
    proc = _run([str(RLX_OPT), "m.mlir", "-o", os.devnull], d, timeout)
    if proc.returncode != 0:
        # A tool rebuilt under us fails strangely: retry once before reporting.
        import time
        time.sleep(2)
        proc = _run([str(RLX_OPT), "m.mlir", "-o", os.devnull], d, timeout)
    return proc.returncode, proc.stderr


def run_variant(d: pathlib.Path, input_args, variant, timeout=120):
    out = d / f"out-{variant}"
    if out.exists():
        shutil.rmtree(out)
    cmd = [str(RLX_RUN), "m.mlir", "--output-dir", out.name, *input_args, *VARIANTS[variant]]
    import time
    for attempt in range(2):
        try:
            proc = _run(cmd, d, timeout)
            rc, err = proc.returncode, proc.stderr
        except subprocess.TimeoutExpired:
            rc, err = "timeout", f"rlx-run timed out after {timeout} s"
        if rc == 0:
            break
        time.sleep(2)  # a failure is reported only when it repeats
    outs = {}
    if rc == 0:
        for p in out.glob("*.npy"):
            outs[p.stem] = np.load(p)
    return rc, err, outs, cmd


def compare(got, val, bound_scale=SAFETY, extra_bound=None):
    """None when `got` matches the reference Val, else a message."""
    got = np.asarray(got)
    if tuple(got.shape) != tuple(val.shape):
        return f"shape {got.shape} != expected {val.shape}"
    if val.dt not in ("f32", "f64"):
        want = np.asarray(val.ref)
        if got.dtype == np.bool_ or want.dtype == np.bool_:
            bad = got.astype(bool) != want.astype(bool)
        else:
            bad = got.astype(np.int64) != want.astype(np.int64)
        if bad.any():
            i = tuple(int(a[0]) for a in np.nonzero(bad))
            return f"{int(bad.sum())}/{bad.size} elements differ; first at {i}: got {got[i]}, want {want[i]}"
        return None
    g = got.astype(np.float64)
    w = val.ref
    bound = val.err if extra_bound is None else val.err + extra_bound
    tol = bound_scale * bound + RTOL * np.abs(np.where(np.isfinite(w), w, 0)) + FLOOR
    with np.errstate(invalid="ignore"):
        diff = np.abs(g - w)
        inf_w = ~np.isfinite(w)
        bad = np.isnan(g) | np.where(inf_w, g != w, ~(diff <= tol))
    if not bad.any():
        return None
    idx = np.argwhere(bad)
    i = tuple(int(x) for x in idx[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        worst = np.where(bad & ~inf_w, diff / tol, 0)
    j = tuple(int(x) for x in np.unravel_index(np.argmax(worst), worst.shape))
    return (f"{int(bad.sum())}/{bad.size} elements out of tolerance; first at {i}: got {g[i]!r}, "
            f"want {w[i]!r} (tol {tol[i]:.3g}); worst at {j}: got {g[j]!r}, want {w[j]!r}, "
            f"|diff| {diff[j]:.3g} = {worst[j]:.3g} x tol")


def crash_summary(err: str) -> str:
    """The first error line, or for a crash the innermost RLX frames of the stack dump."""
    import re
    lines = [l for l in err.splitlines() if l.strip()]
    errors = [l for l in lines if "error:" in l]
    frames = re.findall(r"#\d+ 0x[0-9a-f]+ (.*?\)?)(?: \(/| [A-Za-z]+\.cpp|$)", err)
    rlx = [f for f in frames if "rlx" in f or "anonymous namespace" in f]
    if errors:
        head = errors[0]
        if head.startswith("loc(") and "): error:" in head:  # fused locations: keep the message
            head = "error:" + head.split("): error:", 1)[1]
    elif rlx:
        name = lambda f: re.sub(r"\((?!anonymous).*", "", f)
        pat = [f for f in rlx if "matchAndRewrite" in f or "runOnOperation" in f]
        head = "crash in " + name(pat[0] if pat else rlx[0]) + " (top frame " + name(rlx[0]) + ")"
    else:
        head = lines[0] if lines else "(no output)"
    return head[:400] + ("\n" + "\n".join(lines[:40])[-3000:] if lines else "")


def check(case, workdir: pathlib.Path | None = None, variants=DEFAULT_VARIANTS, keep=False,
          find_culprit=True) -> Outcome:
    """Runs every variant of `case`; returns the findings (empty: the case passes)."""
    import time
    t0 = time.monotonic()
    own = workdir is None
    d = pathlib.Path(tempfile.mkdtemp(prefix=f"rlx-diff-{case.seed}-")) if own else pathlib.Path(workdir)
    res = Outcome(case.seed)
    try:
        input_args = write_case(case, d)
        rc, err = verify(d)
        if rc != 0:
            res.findings.append(Finding("verify", "rlx-opt", err.strip()))
            return res
        outs = {}
        for var in variants:
            rc, err, o, cmd = run_variant(d, input_args, var)
            res.stderr[var] = err
            if rc != 0:
                res.findings.append(Finding("crash", var, f"rlx-run exit {rc}: {crash_summary(err)}"))
                continue
            outs[var] = o
            for i, v in enumerate(case.results):
                name = f"result{i}"
                if name not in o:
                    res.findings.append(Finding("missing", var, f"no {name}.npy", i))
                    continue
                msg = compare(o[name], v)
                if msg:
                    res.findings.append(Finding("mismatch", f"{var}-vs-numpy", f"result{i} {v.type}: {msg}", i))
        res.outputs = outs
        base = [v for v in variants if v in outs]
        for other in base[1:]:
            for i, v in enumerate(case.results):
                a, b = outs[base[0]].get(f"result{i}"), outs[other].get(f"result{i}")
                if a is None or b is None:
                    continue
                # b vs a, with a's value as the reference and both bounds added.
                from random_graphs import Val
                pseudo = Val("", tuple(np.shape(a)), v.dt,
                             np.asarray(a, np.float64) if v.dt in ("f32", "f64") else np.asarray(a),
                             v.err if v.dt in ("f32", "f64") else None)
                msg = compare(b, pseudo, extra_bound=v.err if v.dt in ("f32", "f64") else None)
                if msg:
                    res.findings.append(Finding("mismatch", f"{base[0]}-vs-{other}",
                                                f"result{i} {v.type}: {msg}", i))
        return res
    finally:
        if find_culprit and res.findings and not any(f.kind == "verify" for f in res.findings):
            try:
                res.culprit = culprit(case)
            except Exception as e:  # a diagnostic only
                res.culprit = f"(culprit search failed: {e})"
        res.seconds = time.monotonic() - t0
        if own and not keep:
            shutil.rmtree(d, ignore_errors=True)


# rlx-mir-fuse's families in its order (docs/reference/RLXMIRPasses.md)
FAMILIES = ["canonicalize,cse", "rlx-mir-fuse-attention", "rlx-mir-fuse-swiglu", "rlx-mir-fuse-epilogue",
            "rlx-mir-fuse-rope", "rlx-mir-merge-matmuls", "rlx-mir-fuse-residual-norm",
            "rlx-mir-fuse-norm-prologue", "rlx-mir-fuse-elementwise", "rlx-mir-pack-weights"]


def culprit(case, timeout=120) -> str | None:
    """The first fusion family after which the graph fails: rlx-opt runs the families of
    rlx-mir-fuse one prefix at a time, rlx-run --no-fuse runs the result. A diagnostic for
    failing cases (the reports name the pass); None when no prefix reproduces the failure."""
    d = pathlib.Path(tempfile.mkdtemp(prefix=f"rlx-culprit-{case.seed}-"))
    try:
        input_args = write_case(case, d)
        for k in range(1, len(FAMILIES) + 1):
            flags = [f"--{p}" for fam in FAMILIES[:k] for p in fam.split(",")]
            proc = _run([str(RLX_OPT), "m.mlir", *flags, "-o", "f.mlir"], d, timeout)
            if proc.returncode != 0:
                return f"{FAMILIES[k - 1]} (rlx-opt exits {proc.returncode})"
            out = d / "out"
            if out.exists():
                shutil.rmtree(out)
            proc = _run([str(RLX_RUN), "f.mlir", "--output-dir", "out", "--no-fuse", *input_args], d, timeout)
            if proc.returncode != 0:
                return f"{FAMILIES[k - 1]} (rlx-run exits {proc.returncode} on its output)"
            for i, v in enumerate(case.results):
                p = out / f"result{i}.npy"
                if not p.exists() or compare(np.load(p), v):
                    return f"{FAMILIES[k - 1]} (wrong result{i})"
        return None
    finally:
        shutil.rmtree(d, ignore_errors=True)


def save_failure(case, outcome: Outcome, dest: pathlib.Path, variants=DEFAULT_VARIANTS):
    """Writes the graph, its inputs, the reference and what failed to `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    input_args = write_case(case, dest)
    ref = dest / "expected"
    ref.mkdir(exist_ok=True)
    for i, v in enumerate(case.results):
        np.save(ref / f"result{i}.npy", np.asarray(v.ref))
        if v.err is not None:
            np.save(ref / f"result{i}.bound.npy", v.err)
    for var, outs in outcome.outputs.items():
        od = dest / f"out-{var}"
        od.mkdir(exist_ok=True)
        for k, a in outs.items():
            np.save(od / f"{k}.npy", a)
    lines = [f"seed {case.seed}", f"motifs {' '.join(case.motifs)}", f"tags {' '.join(sorted(case.tags))}",
             f"culprit {outcome.culprit}", ""]
    for f in outcome.findings:
        lines.append(f"[{f.kind}] {f.where}: {f.detail}")
    lines.append("")
    lines.append("commands (in this directory):")
    run, opt = BUILD / "bin" / "rlx-run", BUILD / "bin" / "rlx-opt"
    lines.append(f"  {opt} m.mlir")
    for var in variants:
        lines.append("  " + " ".join([str(run), "m.mlir", "--output-dir", f"out-{var}", *input_args,
                                      *VARIANTS[var]]))
    for var, err in outcome.stderr.items():
        if err.strip():
            lines += ["", f"--- stderr {var} ---", err[-6000:]]
    (dest / "report.txt").write_text("\n".join(lines) + "\n")
