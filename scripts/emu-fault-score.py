#!/usr/bin/env python3
"""Planted faults in the real generated kernels, scored against the GPU
emulator (issue 33).

Each case of bench/gpu/cases.py used here is compiled once with
`rlx-compile --emit-kernel-ir` (the module as it leaves the kernel pipeline:
GPU kernels at the NVVM level). Its baseline must pass under the emulator.
Then each fault edits that IR the way a kernel-generator bug would (a wait,
fence or barrier dropped, a ring stage released early, a wrong mbarrier
parity, expect_tx bytes short, swizzle or register-A operands wrong, ...),
is compiled with `--from-kernel-ir` and run on the emulator: it is detected
when the emulator reports a finding (or the run fails) or the outputs miss
the case's numpy reference. A fault whose edit no longer matches the IR is
an error, not a miss, so the list cannot rot silently.

    python scripts/emu-fault-score.py [--build build] [--only NAME] [--json F]
                                      [--min-score 0.9] [-j 2]

Prints each fault's verdict, then `N of M planted faults detected` and the
missed ones; exits 1 below --min-score or on any error.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "gpu"))
import cases as C  # noqa: E402
import device_check  # noqa: E402

CASES = {c["name"]: c for c in [
    C.wgmma_matmul_case(130, 520, 136, "wgmma_matmul"),
    C.norm_swiglu_case(130, 264, 72, "wgmma_norm_swiglu"),
    C.flash_attention_case(1, 300, 300, 2, 1, 128, "fa3_wgmma"),
    C.flash_attention_case(1, 100, 100, 4, 2, 128, "fa2_mma_sync", "flash"),
    dict(C.flash_attention_case(1, 1, 700, 4, 1, 128, "split_kv"),
         flags=["--attention-kernel", "auto", "--kv-splits", "2"]),
    C.nvfp4_numerics_case(3, 512, 1024, "nvfp4_gemv"),
    C.nvfp4_numerics_case(200, 256, 512, "nvfp4_wgmma"),
    C.rms_norm_case(7, 769, "simt_rms_norm"),
    C.attention_case(37, "simt_attention"),
]}


class Stale(Exception):
    pass


def edit(text, pattern, repl, nth=0):
    """Replaces the nth match of `pattern` (a regex over one line; repl None
    deletes the line)."""
    lines = text.split("\n")
    hits = [i for i, l in enumerate(lines) if re.search(pattern, l)]
    if nth >= len(hits):
        raise Stale(f"no match {nth} of {pattern!r} ({len(hits)} found)")
    i = hits[nth]
    if repl is None:
        del lines[i]
    else:
        lines[i] = re.sub(pattern, repl, lines[i], count=1)
    return "\n".join(lines)


def drop(pattern, nth=0):
    return lambda t: edit(t, pattern, None, nth)


def sub(pattern, repl, nth=0):
    return lambda t: edit(t, pattern, repl, nth)


def in_kernel(kernel, *edits):
    """Applies `edits` to the gpu.func named `kernel` only."""
    def apply(text):
        start = text.index(f"gpu.func @{kernel}")
        end = text.find("gpu.func @", start + 1)
        end = len(text) if end < 0 else end
        body = text[start:end]
        for e in edits:
            body = e(body)
        return text[:start] + body + text[end:]
    return apply


WAIT = r"nvvm\.wgmma\.wait\.group\.sync\.aligned"
FENCE = r"nvvm\.wgmma\.fence\.aligned"
COMMIT = r"nvvm\.wgmma\.commit\.group\.sync\.aligned"
TRY_WAIT = r"nvvm\.mbarrier\.try_wait\.parity"
EXPECT = r"nvvm\.mbarrier\.arrive\.expect_tx"
ARRIVE = r"nvvm\.mbarrier\.arrive %"
BAR = r"gpu\.barrier"
RS = r"rlx\.wgmma_register_a"

# (case, fault name, edit)
FAULTS = [
    # The wgmma matmul: TMA ring of mbarriers, producer and two consumers.
    ("wgmma_matmul", "final wgmma.wait_group 0 dropped (accumulators read in flight)",
     drop(WAIT + r" 0")),
    ("wgmma_matmul", "ring stage released before its wgmma retired (wait_group 1 -> 3)",
     sub(WAIT + r" 1", r"nvvm.wgmma.wait.group.sync.aligned 3", 1)),
    ("wgmma_matmul", "wgmma.fence before the first wgmma dropped", drop(FENCE, 0)),
    ("wgmma_matmul", "wgmma.commit_group of the main loop dropped", drop(COMMIT, 1)),
    # try_wait order (persistent): the producer's, its 4 prefetches of the
    # next tile, the consumers' first tile's, their main loop's.
    ("wgmma_matmul", "consumer's full-barrier wait dropped", drop(TRY_WAIT, 6)),
    ("wgmma_matmul", "producer's empty-barrier wait dropped", drop(TRY_WAIT, 0)),
    ("wgmma_matmul", "arrive.expect_tx dropped", drop(EXPECT)),
    ("wgmma_matmul", "expect_tx bytes half the stage's",
     lambda t: _with_constant(t, "%half_tx = arith.constant 16384 : i32", EXPECT,
                              sub(EXPECT + r" (%\w+), %c32768_i32",
                                  r"nvvm.mbarrier.arrive.expect_tx \1, %half_tx"))),
    ("wgmma_matmul", "wrong mbarrier parity on the consumer's first wait",
     sub(r"(nvvm\.mbarrier\.try_wait\.parity %\w+), %\w+,", r"\1, %c1_i32,", 5)),
    ("wgmma_matmul", "consumer never releases a stage (mbarrier.arrive dropped)", drop(ARRIVE)),
    ("wgmma_matmul", "fence.mbarrier_init dropped", drop(r"nvvm\.fence\.mbarrier\.init")),
    ("wgmma_matmul", "barrier after the mbarrier.inits dropped", drop(BAR, 0)),
    ("wgmma_matmul", "wgmma descriptors read 64B swizzle where TMA wrote 128B",
     lambda t: _swizzle_64b(t)),
    ("wgmma_matmul", "ring of 4 stages driven as 3 by the consumers",
     lambda t: _with_constant(
         t, "%ring3 = arith.constant 3 : i32", r"arith\.remui %\w+, %c4_i32",
         lambda u: sub(r"arith\.divui (%\w+), %c4_i32", r"arith.divui \1, %ring3", 6)(
             sub(r"arith\.remui (%\w+), %c4_i32", r"arith.remui \1, %ring3", 6)(u)), nth=6)),
    ("wgmma_matmul", "TMA box of A one row off", lambda t: _tma_row_off(t)),
    ("wgmma_matmul", "the producer stores into the stage TMA is filling for the consumers",
     lambda t: _store_into_tma_box(t)),
    # The norm prologue: the producer writes normalized A tiles with st.shared.
    ("wgmma_norm_swiglu", "fence.proxy.async after the normalized A tile dropped",
     drop(r"nvvm\.fence\.proxy \{kind = #nvvm\.proxy_kind<async")),
    ("wgmma_norm_swiglu", "final wgmma.wait_group 0 dropped", drop(WAIT + r" 0")),
    # setmaxnreg: only kernels whose producer transforms reallocate.
    ("wgmma_norm_swiglu", "consumers' setmaxnreg.inc past the SM's 64K registers (200 -> 216)",
     sub(r"nvvm\.setmaxregister  increase 200", "nvvm.setmaxregister  increase 216")),
    ("wgmma_norm_swiglu", "producer's setmaxnreg.dec dropped",
     drop(r"nvvm\.setmaxregister  decrease 96")),
    ("wgmma_norm_swiglu", "barrier after the mbarrier.inits and row statistics dropped",
     drop(BAR, 1)),
    # FlashAttention-3 style: S = QK^T, softmax in registers, O += P V with
    # A (P) in registers.
    ("fa3_wgmma", "wait_group 0 before the softmax reads S dropped", drop(WAIT + r" 0")),
    ("fa3_wgmma", "register-A wgmma: A registers in the wrong order",
     sub(r"\{\$64, \$65, \$66, \$67\}", "{$65, $64, $66, $67}")),
    ("fa3_wgmma", "register-A wgmma: imm-trans-b flipped", sub(r"p, 1, 1, 1;", "p, 1, 1, 0;")),
    ("fa3_wgmma", "K/V stage released before P.V retired (wait_group 1 -> 2)",
     sub(WAIT + r" 1", r"nvvm.wgmma.wait.group.sync.aligned 2")),
    ("fa3_wgmma", "K stage's full-barrier wait dropped", drop(TRY_WAIT, 3)),
    ("fa3_wgmma", "wgmma.fence before the first wgmma dropped", drop(FENCE, 0)),
    # FlashAttention-2 style: cp.async double buffer, ldmatrix, mma.sync.
    ("fa2_mma_sync", "cp.async.wait_group of the first tile dropped",
     drop(r"nvvm\.cp\.async\.wait\.group 1")),
    ("fa2_mma_sync", "barrier after the first tile's copies dropped", drop(BAR, 0)),
    ("fa2_mma_sync", "misaligned 16-byte cp.async (destination + 8 bytes)",
     lambda t: _misalign_cp_async(t)),
    # Split-KV decode: partials, then the combine kernel.
    ("split_kv", "combine: every head's block writes head 0's output",
     in_kernel("f_1_attention_combine",
               sub(r"memref\.store (%\w+), %arg2\[%block_id_z, %block_id_x, %\w+\]",
                   r"memref.store \1, %arg2[%block_id_z, %block_id_x, %arg3]"))),
    ("split_kv", "combine: the last split ignored",
     in_kernel("f_1_attention_combine", sub(r"%c0 to %c2 step", "%c0 to %c1 step", 2))),
    # NVFP4: the GEMV (mma.sync on the staged lhs, quad shuffles) and the
    # wgmma producer that dequantizes B into shared memory with st.shared.
    ("nvfp4_gemv", "quad reduction's xor-2 shuffle dropped to xor-1",
     sub(r"gpu\.shuffle  xor (%\w+), %c2_i32", r"gpu.shuffle  xor \1, %c1_i32")),
    ("nvfp4_gemv", "barrier after the staged lhs dropped", drop(BAR, 0)),
    ("nvfp4_wgmma", "fence.proxy.async after the dequantized B tile dropped",
     drop(r"nvvm\.fence\.proxy \{kind = #nvvm\.proxy_kind<async")),
    ("nvfp4_wgmma", "final wgmma.wait_group 0 dropped", drop(WAIT + r" 0")),
    # SIMT kernels.
    ("simt_rms_norm", "barrier of the block reduction dropped", drop(BAR, 0)),
    ("simt_rms_norm", "reduction shuffle width 32 -> 16",
     sub(r"gpu\.shuffle  xor (%\w+), (%\w+), %c32_i32", r"gpu.shuffle  xor \1, \2, %c16_i32")),
    ("simt_attention", "barrier after the scores dropped", drop(BAR, 1)),
]


def _with_constant(text, definition, before, mutate, nth=0):
    """`mutate`, with `definition` inserted on the line before the nth match
    of `before` (so the edit may name it)."""
    ms = list(re.finditer(r"^(\s*).*" + before, text, re.M))
    if nth >= len(ms):
        raise Stale(f"no match {nth} of {before!r}")
    m = ms[nth]
    text = text[:m.start()] + m.group(1) + definition + "\n" + text[m.start():]
    return mutate(text)


def _swizzle_64b(text):
    """Every matrix descriptor base constant with swizzle mode 1 (128B, bits
    62-63) set to mode 2 (64B)."""
    def repl(m):
        v = int(m.group(1))
        if (v % 2**64) >> 62 != 1:
            return m.group(0)
        u = (v % 2**64) & ~(3 << 62) | (2 << 62)
        return f"= arith.constant {u - 2**64 if u >= 2**63 else u} : i64"
    new = re.sub(r"= arith\.constant (-?\d+) : i64", repl, text)
    if new == text:
        raise Stale("no 128B-swizzle descriptor constant")
    return new


TMA = r"nvvm\.cp\.async\.bulk\.tensor\.shared\.cluster\.global (%\w+), (%\w+), (%\w+), box\[(%\w+), (%\w+)\]"


def _tma_row_off(text):
    """The first TMA load's row coordinate plus one."""
    m = re.search(r"^(\s*)" + TMA, text, re.M)
    if not m:
        raise Stale("no 2-d TMA load")
    ind, row = m.group(1), m.group(6)
    new = (f"{ind}%one_row = arith.constant 1 : i32\n{ind}%row_off = arith.addi {row}, %one_row : i32\n"
           + m.group(0).replace(f", {row}]", ", %row_off]"))
    return text[:m.start()] + new + text[m.end():]


def _store_into_tma_box(text):
    """A generic 4-byte store into the first TMA load's box, right after the
    producer issues it."""
    m = re.search(r"^(\s*)" + TMA + r".*$", text, re.M)
    if not m:
        raise Stale("no 2-d TMA load")
    ind, dst = m.group(1), m.group(2)
    new = (m.group(0) + f"\n{ind}%stray = arith.constant 0 : i32\n"
           f"{ind}llvm.store %stray, {dst} : i32, !llvm.ptr<7>")
    return text[:m.start()] + new + text[m.end():]


def _misalign_cp_async(text):
    """The first cp.async's shared destination moved by 8 bytes (a GEP)."""
    m = re.search(r"nvvm\.cp\.async\.shared\.global (%\w+), ", text)
    if not m:
        raise Stale("no cp.async")
    dst = m.group(1)
    line_start = text.rfind("\n", 0, m.start()) + 1
    indent = re.match(r"\s*", text[line_start:]).group(0)
    gep = (f"{indent}%misaligned = llvm.getelementptr {dst}[8] : (!llvm.ptr<3>) -> "
           f"!llvm.ptr<3>, i8\n")
    line = text[line_start:text.index("\n", m.start())]
    new = line.replace(f"shared.global {dst}, ", "shared.global %misaligned, ", 1)
    return text[:line_start] + gep + new + text[line_start + len(line):]


def compile_(build, src, out, flags):
    p = subprocess.run([str(build / "bin" / "rlx-compile"), str(src), "-o", str(out),
                        "--no-cubin", *flags], capture_output=True, text=True, timeout=600)
    return p.returncode, p.stderr


def verdict(case, art):
    """'detected: ...' or 'missed'."""
    try:
        r = device_check.check(case, "emu", timeout=600, art=art)
    except RuntimeError as e:
        # A finding names the kernel, block and thread; any other failure
        # (a crash, a bad artifact) is not a detection.
        lines = [l.strip() for l in str(e).splitlines() if l.strip()]
        finding = next((l for l in lines if re.match(r"kernel '.*' block", l)), None)
        if finding is None:
            return "error: the run failed without a finding: " + " | ".join(lines)[-300:]
        return "detected (emulator): " + finding[:240]
    except subprocess.TimeoutExpired:
        return "detected (the run hangs)"
    if r["status"] != "pass":
        return f"detected (numerics: {r.get('error_over_tolerance', 0):.3g}x the tolerance)"
    return "missed"


def run_case(build, name, faults, work):
    case = CASES[name]
    src = work / f"{name}.mlir"
    src.write_text(case["text"])
    kir = work / f"{name}.kernels.mlir"
    rc, err = compile_(build, src, work / f"{name}.art",
                       [*case.get("flags", []), "--emit-kernel-ir", str(kir)])
    if rc:
        return [(name, f, "error: the case does not compile: " + err[-500:]) for f, _ in faults]
    base = verdict(case, work / f"{name}.art")
    if base != "missed":
        return [(name, f, "error: the unmodified kernels fail: " + base) for f, _ in faults]
    text = kir.read_text()
    out = []
    for i, (fname, mutate) in enumerate(faults):
        try:
            mutated = mutate(text)
        except Stale as e:
            out.append((name, fname, f"error: stale edit ({e})"))
            continue
        if mutated == text:
            out.append((name, fname, "error: the edit changed nothing"))
            continue
        fsrc = work / f"{name}.fault{i}.mlir"
        fsrc.write_text(mutated)
        rc, err = compile_(build, fsrc, work / f"{name}.fault{i}.art", ["--from-kernel-ir"])
        if rc:
            out.append((name, fname, "error: the faulty kernels do not compile: " +
                        err.strip().splitlines()[0][:200]))
            continue
        out.append((name, fname, verdict(case, work / f"{name}.fault{i}.art")))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--only", help="one case")
    ap.add_argument("--json", help="write the verdicts here")
    ap.add_argument("--min-score", type=float, default=0.9)
    ap.add_argument("-j", type=int, default=2, help="cases in parallel")
    a = ap.parse_args()
    build = pathlib.Path(a.build).resolve()
    device_check.RUN = build / "bin" / "rlx-gpu-run"
    by_case = {}
    for name, fname, mutate in FAULTS:
        if not a.only or a.only == name:
            by_case.setdefault(name, []).append((fname, mutate))
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(a.j) as pool:
        work = pathlib.Path(tmp)
        futures = [pool.submit(run_case, build, n, fs, work) for n, fs in by_case.items()]
        results = [r for f in futures for r in f.result()]
    detected = [r for r in results if r[2].startswith("detected")]
    missed = [r for r in results if r[2] == "missed"]
    errors = [r for r in results if r[2].startswith("error")]
    for case, fname, v in results:
        print(f"{case:18} {fname}: {v}")
    total = len(results)
    print(f"\n{len(detected)} of {total} planted faults detected "
          f"({100 * len(detected) / max(total, 1):.0f} %) in {time.time() - t0:.0f} s")
    for case, fname, _ in missed:
        print(f"missed: {case}: {fname}")
    for case, fname, v in errors:
        print(f"error: {case}: {fname}: {v}")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(
            [{"case": c, "fault": f, "verdict": v} for c, f, v in results], indent=1))
    ok = not errors and len(detected) >= a.min_score * total
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
