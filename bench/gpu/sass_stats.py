"""Instruction statistics of the GPU kernels from their SASS, without a GPU.

For each case of `SASS_CASES` (shapes of `cases.py`) the module is compiled
by `rlx-compile` for the chip (sm_90a by default) and its cubins are
disassembled by `cuobjdump -sass` (the CUDA toolkit's, else the
`nvidia-cuda-cuobjdump` wheel's, else the one torch's triton wheel ships).
Per kernel it reports the ptxas resources (`cuobjdump -res-usage`) and its
main loop: the loop (a backward branch) holding the most tensor-core
instructions, else the most instructions. A loop body is a DAG once its
inner loops (mbarrier polls) are cut at their back edges; its shortest and
longest paths from the loop head to the back edge are the instructions one
iteration issues per warp on its cheapest path (e.g. a key tile every row
sees whole) and on its dearest (a masked tile). The mix on the longest path
counts tensor-core (HGMMA/HMMA), MUFU, FP32 (FFMA/FMUL/FADD/FMNMX),
uniform-datapath, shared-memory and global-memory instructions.

Each case divides the per-iteration counts by the work of one iteration (a
128-key tile, a 64-deep K step, a 16-element NVFP4 block) so the figures are
those of issue 35's budgets, which `test/python/test_sass_budgets.py` holds.

    python bench/gpu/sass_stats.py --build build [--chip sm_90a] [--json F] [--case NAME]...
"""
from __future__ import annotations

import argparse
import dataclasses
import glob
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import cases as C  # noqa: E402

ROOT = HERE.parent.parent


# ---------------------------------------------------------------- cases

@dataclasses.dataclass
class SassCase:
    """A module, the kernel to look at (a substring of its name) and what
    one iteration of its main loop computes, to normalise the counts."""
    name: str
    text: str
    kernel: str
    unit: str            # what the per-unit count is per
    units_per_iter: float
    flags: tuple = ()
    # Where ptxas may unroll the loop: units = its tensor-core instructions
    # on the dearest path / this many per unit (units_per_iter unused).
    mma_per_unit: int = 0
    budget: dict = dataclasses.field(default_factory=dict)


def _cases():
    llama = dict(B=4, Sq=4096, Sk=4096, H=32, Hkv=8, D=128)
    return [
        # Llama-3.1-8B prefill, S = 4096, causal: 128-key tiles.
        SassCase("prefill_attention_llama8b", C.attention_text(*llama.values(), True),
                 "attention", "128-key tile", 1.0),
        # A decode step on an 8k cache, split over KV (attention_partial):
        # one iteration is one 128-key tile.
        SassCase("decode_split_kv_llama8b_kv8k", C.attention_text(8, 1, 8192, 32, 8, 128, True),
                 "attention", "128 keys", 1.0),
        # bf16 4096³ on the wgmma kernel: one iteration is one 64-deep K step.
        SassCase("matmul_bf16_4096", C.bf16_matmul_text(4096, 4096, 4096),
                 "matmul", "64-deep K step", 1.0),
        # Mixtral-8x7B's expert gate/up projection (the two merged: N = 2 ·
        # 14336, K = 4096) on 512 tokens routed top-2 (1024 rows, 8
        # experts): the grouped GEMM on mma.sync (a warp's 32 × 16 tile: 8
        # HMMA.16816 per 32-deep K step); beside it the dense mma.sync GEMM's loop on the same
        # tile, the baseline its row gather must not slow.
        SassCase("grouped_matmul_bf16_mixtral", C.grouped_matmul_text(1024, 4096, 8, 28672),
                 "grouped_matmul", "32-deep K step", 1.0, mma_per_unit=8),
        SassCase("matmul_bf16_mma_sync_4096", C.bf16_matmul_text(4096, 4096, 4096),
                 "matmul", "32-deep K step", 1.0, flags=("--matmul-kernel=tensor-cores",),
                 mma_per_unit=8),
        # Mixtral's gate/up at a decode step (one token, top-2: two routed
        # rows) on the GEMV kernel, each row streaming its expert's weights;
        # beside it the dense GEMV on two rows sharing one weight. One
        # iteration: a lane's 16-byte vector (8 bf16) of K for every row.
        SassCase("grouped_gemv_bf16_mixtral_decode", C.grouped_matmul_text(2, 4096, 8, 28672),
                 "grouped_matmul", "8-deep K step", 1.0),
        SassCase("gemv_bf16_m2_4096", C.bf16_matmul_text(2, 4096, 28672),
                 "matmul", "8-deep K step", 1.0),
        # NVFP4 W4A16 GEMV, M = 1, N = K = 4096 on mma.sync
        # (Nvfp4GemvKernel.cpp): a lane's step is 32 codes of each of its
        # two weight rows, four 16-element blocks.
        SassCase("nvfp4_gemv_m1_4096", C.nvfp4_bench_case(1, 4096, 4096, "x")["text"],
                 "nvfp4", "16-element block", 4.0),
        # Whisper's STFT frames (3001 × 400-point rfft) on the shared-memory
        # FFT kernel: its largest loop is a radix-5 pass, one iteration one
        # 5-point butterfly (five complex values in, four twiddles, out).
        SassCase("rfft_whisper_3001x400", C.rfft_case(3001, 400, "x")["text"],
                 "rfft", "radix-5 butterfly", 1.0),
    ]


# ---------------------------------------------------------------- tools

def find_cuobjdump():
    """cuobjdump with an nvdisasm beside it (cuobjdump -sass runs it): on
    PATH, in the CUDA toolkit, else from the wheels (nvidia-cuda-cuobjdump
    and nvidia-cuda-nvdisasm, or triton's) in this interpreter's
    site-packages."""
    def usable(f):
        return f and os.access(f, os.X_OK) and (
            shutil.which("nvdisasm") or os.access(os.path.join(os.path.dirname(f), "nvdisasm"),
                                                  os.X_OK))
    found = shutil.which("cuobjdump")
    if usable(found):
        return found
    for d in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_ROOT"), "/usr/local/cuda"):
        if d and usable(os.path.join(d, "bin", "cuobjdump")):
            return os.path.join(d, "bin", "cuobjdump")
    for site in sys.path:
        for pat in ("nvidia/cu*/bin/cuobjdump", "triton/backends/nvidia/bin/cuobjdump"):
            for f in sorted(glob.glob(os.path.join(site, pat))):
                if usable(f):
                    return f
    return None


def compile_case(build, case, chip, out):
    src = out / f"{case.name}.mlir"
    src.write_text(case.text)
    art = out / case.name
    cmd = [str(build / "bin" / "rlx-compile"), str(src), "-o", str(art), "--chip", chip,
           "--spills", "error", "--no-emulator", *case.flags]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{case.name}: rlx-compile failed:\n{r.stderr[-3000:]}")
    return sorted(art.glob("*.cubin"))


# ---------------------------------------------------------------- SASS

INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")
FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)")


@dataclasses.dataclass
class Instr:
    addr: int
    text: str

    @property
    def opcode(self):
        t = re.sub(r"^@!?U?P\w+\s+", "", self.text)
        return t.split()[0] if t else ""

    @property
    def base(self):
        return self.opcode.split(".")[0]

    @property
    def predicated(self):
        return self.text.startswith("@")


def parse_sass(text):
    """{function: ([Instr], {label: addr})} of `cuobjdump -sass` output."""
    funcs, cur, pending = {}, None, []
    for line in text.splitlines():
        m = FUNC.match(line)
        if m:
            cur = m.group(1)
            funcs[cur] = ([], {})
            pending = []
            continue
        if cur is None:
            continue
        m = LABEL.match(line)
        if m:
            pending.append(m.group(1))
            continue
        m = INSTR.match(line)
        if m:
            ins = Instr(int(m.group(1), 16), m.group(2).strip())
            for lab in pending:
                funcs[cur][1][lab] = ins.addr
            pending = []
            funcs[cur][0].append(ins)
    return funcs


def branch_target(ins, labels):
    """The target address of a branch (BRA in all its forms), or None."""
    if ins.base != "BRA":
        return None
    m = re.search(r"`\((\.L_x_\d+)\)", ins.text)
    if m:
        return labels.get(m.group(1))
    m = re.search(r"\b0x([0-9a-f]+)\b", ins.text)
    return int(m.group(1), 16) if m else None


@dataclasses.dataclass
class Block:
    start: int                 # index of the first instruction
    end: int                   # one past the last
    succ: list = dataclasses.field(default_factory=list)


def conditional(ins):
    """Whether a branch may fall through: a guard predicate (@P0), a
    predicate operand (BRA !P1, target) or a warp-vote form (BRA.DIV / .ANY /
    .ALL / .CONV: taken by some warps, not others)."""
    if ins.predicated:
        return True
    mods = ins.opcode.split(".")[1:]
    if any(m in ("DIV", "ANY", "ALL", "CONV") for m in mods):
        return True
    operands = ins.text.split(None, 1)[1] if " " in ins.text else ""
    return bool(re.match(r"!?U?P[0-6T]\b", operands.strip())) and "PT" not in operands.split(",")[0]


def cfg(instrs, labels):
    """Basic blocks of a function and their successors (block indices)."""
    at = {i.addr: k for k, i in enumerate(instrs)}
    leaders = {0}
    for k, ins in enumerate(instrs):
        t = branch_target(ins, labels)
        if t is not None and t in at:
            leaders.add(at[t])
        if (t is not None or ins.base in ("EXIT", "RET", "BRX", "JMX", "JMP")) and k + 1 < len(instrs):
            leaders.add(k + 1)
    starts = sorted(leaders)
    blocks = [Block(a, b) for a, b in zip(starts, starts[1:] + [len(instrs)])]
    of = {b.start: n for n, b in enumerate(blocks)}
    for n, b in enumerate(blocks):
        last = instrs[b.end - 1]
        t = branch_target(last, labels)
        if t is not None and t in at:
            b.succ.append(of[at[t]])
        ends = (t is not None or last.base in ("EXIT", "RET", "BRX", "JMX", "JMP")) \
            and not conditional(last)
        if not ends and n + 1 < len(blocks):
            b.succ.append(n + 1)
    return blocks


def dominators(blocks):
    """Dominator sets and predecessors of the blocks reachable from the
    entry (the padding after EXIT is not: it would break every set)."""
    reach, stack = {0}, [0]
    while stack:
        for s in blocks[stack.pop()].succ:
            if s not in reach:
                reach.add(s)
                stack.append(s)
    preds = [[] for _ in blocks]
    for n, b in enumerate(blocks):
        if n in reach:
            for s in b.succ:
                preds[s].append(n)
    full = set(range(len(blocks)))
    dom = [full.copy() for _ in blocks]
    dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for n in sorted(reach - {0}):
            ps = [dom[p] for p in preds[n]]
            new = (set.intersection(*ps) if ps else set()) | {n}
            if new != dom[n]:
                dom[n], changed = new, True
    return dom, preds


def natural_loops(blocks):
    """{header: (body blocks, latches)} of the back edges u -> h, h
    dominating u (the loops of a reducible CFG, as ptxas emits)."""
    dom, preds = dominators(blocks)
    loops_ = {}
    for u, b in enumerate(blocks):
        if not preds[u] and u != 0:
            continue  # unreachable
        for h in b.succ:
            if h in dom[u]:
                body, latches = loops_.setdefault(h, ({h}, set()))
                latches.add(u)
                stack = [u]
                while stack:
                    x = stack.pop()
                    if x not in body:
                        body.add(x)
                        stack.extend(preds[x])
    return loops_, dom


def path_counts(instrs, blocks, header, body, latches, dom):
    """The instructions one iteration issues per warp: the shortest and the
    longest path from `header` to a latch through the loop's blocks, every
    back edge (the inner loops' polls too) cut, so an inner loop counts
    once. Returns (shortest, longest), each a list of instructions."""
    size = lambda n: blocks[n].end - blocks[n].start  # noqa: E731
    succ = {n: [s for s in blocks[n].succ if s in body and s not in dom[n]] for n in body}
    # Post-order DFS of the forward DAG (iterative: large kernels).
    order, seen, stack = [], {header}, [(header, iter(succ[header]))]
    while stack:
        n, it = stack[-1]
        s = next(it, None)
        if s is None:
            stack.pop()
            order.append(n)
        elif s not in seen:
            seen.add(s)
            stack.append((s, iter(succ[s])))

    def best(better):
        cost, via = {header: size(header)}, {}
        for n in reversed(order):
            if n not in cost:
                continue
            for s in succ[n]:
                c = cost[n] + size(s)
                if s not in cost or better(c, cost[s]):
                    cost[s], via[s] = c, n
        ends = [n for n in latches if n in cost]
        n = ends[0]
        for e in ends[1:]:
            if better(cost[e], cost[n]):
                n = e
        path = []
        while True:
            path[:0] = instrs[blocks[n].start:blocks[n].end]
            if n == header:
                return path
            n = via[n]
    return best(lambda a, b: a < b), best(lambda a, b: a > b)


MIX = {
    "tensor core": lambda o: o.startswith(("HGMMA", "HMMA", "IMMA", "QGMMA", "UTCHMMA", "UTCQMMA")),
    "MUFU": lambda o: o.startswith("MUFU"),
    "FP32": lambda o: o.split(".")[0] in ("FFMA", "FMUL", "FADD", "FMNMX", "FSEL", "FSETP"),
    "uniform": lambda o: o.startswith("U") and not o.startswith(("UTMA", "UTC")) or o.startswith("R2UR"),
    "shared": lambda o: o.split(".")[0] in ("LDS", "STS", "LDSM", "STSM", "ATOMS"),
    "global": lambda o: o.split(".")[0] in ("LDG", "STG", "RED", "ATOMG") or o.startswith("UTMA"),
    "convert": lambda o: o.split(".")[0] in ("F2F", "F2FP", "I2F", "F2I", "HADD2", "HFMA2", "HMUL2"),
}


def mix(instrs):
    out = {k: 0 for k in MIX}
    for i in instrs:
        for k, f in MIX.items():
            if f(i.opcode):
                out[k] += 1
    return out


def resources(cuobjdump, cubin):
    """{function: {registers, shared, stack, local}} from -res-usage."""
    r = subprocess.run([cuobjdump, "-res-usage", str(cubin)], capture_output=True, text=True,
                       check=True)
    out, cur = {}, None
    for line in r.stdout.splitlines():
        m = re.search(r"Function (\S+):", line)
        if m:
            cur = m.group(1)
            continue
        if cur and "REG:" in line:
            get = lambda k: int(re.search(k + r":(\d+)", line).group(1)) if re.search(k + r":(\d+)", line) else 0  # noqa: E731,E501
            out[cur] = dict(registers=get("REG"), stack=get("STACK"), shared=get("SHARED"),
                            local=get("LOCAL"))
    return out


def kernel_stats(name, instrs, labels):
    """The kernel's main loop and its counts (no loop figures without one)."""
    stats = dict(kernel=name, instructions=len(instrs),
                 stores=sorted({i.opcode for i in instrs if i.base in ("STG", "STS", "STSM")
                                or i.opcode.startswith("UTMASTG")}))
    if not instrs:
        return stats
    blocks = cfg(instrs, labels)
    loops_, dom = natural_loops(blocks)
    if not loops_:
        return stats

    def body_instrs(body):
        return [i for n in body for i in instrs[blocks[n].start:blocks[n].end]]
    # Among the innermost loops with tensor-core instructions (a persistent
    # kernel's tile loop holds the k-loop, with more of them counting the
    # peeled first k-tile: the k-loop is the main one) the one with the
    # most, else the largest loop.
    tc = {h: mix(body_instrs(b))["tensor core"] for h, (b, _) in loops_.items()}
    innermost = [h for h, (b, _) in loops_.items() if tc[h] and not any(
        o != h and tc[o] and ob < b for o, (ob, _) in loops_.items())]
    if innermost:
        header = max(innermost, key=lambda h: (tc[h], -len(loops_[h][0])))
    else:
        header = max(loops_, key=lambda h: len(loops_[h][0]))
    body, latches = loops_[header]
    short, long_ = path_counts(instrs, blocks, header, body, latches, dom)
    stats.update(loop_static=len(body_instrs(body)), loop_min=len(short), loop_max=len(long_),
                 mix_min=mix(short), mix=mix(long_),
                 mufu_ops=sorted({i.opcode for i in long_ if i.opcode.startswith("MUFU")}))
    return stats


def sass_of(cuobjdump, cubins):
    funcs, res = {}, {}
    # cuobjdump -sass runs nvdisasm: the one beside it (toolkit, wheels).
    env = dict(os.environ)
    env.setdefault("NVDISASM_PATH", os.path.dirname(cuobjdump))
    env["PATH"] = os.path.dirname(cuobjdump) + os.pathsep + env.get("PATH", "")
    for cubin in cubins:
        r = subprocess.run([cuobjdump, "-sass", str(cubin)], capture_output=True, text=True,
                           env=env)
        if r.returncode != 0:
            raise RuntimeError(f"cuobjdump -sass {cubin}: {r.stderr.strip()[-500:]}")
        funcs.update(parse_sass(r.stdout))
        res.update(resources(cuobjdump, cubin))
    return funcs, res


def measure(build, chip="sm_90a", only=None):
    cuobjdump = find_cuobjdump()
    if cuobjdump is None:
        raise RuntimeError("no cuobjdump with nvdisasm (pip install nvidia-cuda-cuobjdump "
                           "nvidia-cuda-nvdisasm)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in _cases():
            if only and case.name not in only:
                continue
            funcs, res = sass_of(cuobjdump, compile_case(build, case, chip, pathlib.Path(tmp)))
            for fname, (instrs, labels) in funcs.items():
                s = kernel_stats(fname, instrs, labels)
                s.update(res.get(fname, {}))
                s["case"] = case.name
                s["focus"] = case.kernel in fname and "combine" not in fname
                s["unit"], s["units_per_iter"] = case.unit, case.units_per_iter
                if case.mma_per_unit and s.get("mix", {}).get("tensor core"):
                    s["units_per_iter"] = s["mix"]["tensor core"] / case.mma_per_unit
                rows.append(s)
    return dict(chip=chip, cuobjdump=cuobjdump, ptxas=ptxas_version(build), kernels=rows)


def ptxas_version(build):
    cache = pathlib.Path(build) / "CMakeCache.txt"
    ptxas = None
    if cache.exists():
        m = re.search(r"^RLX_PTXAS\S*=(\S+)$", cache.read_text(), re.M)
        ptxas = m.group(1) if m else None
    ptxas = ptxas or shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    try:
        v = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
        return v.strip().splitlines()[-1]
    except OSError:
        return "unknown"


def markdown(report):
    lines = [f"chip {report['chip']}; ptxas {report['ptxas']}; {report['cuobjdump']}", "",
             "Per iteration of the main loop, per warp: the cheapest path (a tile every row "
             "sees whole) / the dearest (a masked tile); the mix is the dearest path's.", "",
             "| case | kernel | regs | loop SASS min / max | per unit | tensor core | MUFU | "
             "FP32 | uniform | shared | global | convert | stores |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in report["kernels"]:
        if "loop_max" not in s or not s["focus"]:
            continue
        m = s["mix"]
        u = s["units_per_iter"]
        per = f"{s['loop_min'] / u:g} / {s['loop_max'] / u:g} per {s['unit']}"
        lines.append(
            f"| {s['case']} | `{s['kernel'][:48]}` | {s.get('registers', '?')} | "
            f"{s['loop_min']} / {s['loop_max']} | {per} | {m['tensor core']} | "
            f"{m['MUFU']} | {m['FP32']} | {m['uniform']} | {m['shared']} | {m['global']} | "
            f"{m['convert']} | {' '.join(s['stores'])} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--chip", default="sm_90a")
    ap.add_argument("--json")
    ap.add_argument("--case", action="append")
    a = ap.parse_args()
    report = measure(pathlib.Path(a.build).resolve(), a.chip, a.case)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(report, indent=1))
    print(markdown(report))


if __name__ == "__main__":
    main()
