#!/usr/bin/env python3
"""Arena planner table: RLX's plan against the lower bound and the original RLX planner.

    python3 bench/planner/bench_planner.py [--build build] [--alignment 64]

For every config in ../shared/models (the whole model as rlx-gen builds it
from config.json, f32) at prefill (seq 2048) and at decode (1 token after a
2048-token KV history), and for one wide DAG written in MIR (a 1-D U-Net with
residual blocks and long skip connections): HIR → MIR → fusion →
convert-rlx-mir-to-lir → rlx-lir-bufferize → rlx-lir-plan-buffers (JSON
report) → rlx-lir-verify-plan. From the JSON it reports the sum of all
buffers, the lower bound (largest sum of bytes live at one op), our arena and
the ratio, and the original RLX planner (decreasing size, lowest offset that
fits, inclusive lifetimes, no in-place reuse) simulated here on the same
buffers and lifetimes. Weights, inputs and outputs are function arguments,
outside the arena. Writes bench/out/planner.md and planner.json.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "python"))
from harness import shared_dir  # noqa: E402  ($RLX_SHARED_DIR, ../shared, /work/shared)

SHARED = (shared_dir() or ROOT.parent / "shared") / "models"
PIPELINE = ["--convert-rlx-hir-to-mir", "--rlx-mir-fuse", "--convert-rlx-mir-to-lir",
            "--rlx-lir-bufferize"]


def plan(build, text, alignment, tmp, name, pre=()):
    rep = tmp / name
    cmd = [str(build / "bin" / "rlx-opt"), "-", *pre, *PIPELINE,
           f"--rlx-lir-plan-buffers=alignment={alignment} report-dir={rep}",
           "--rlx-lir-verify-plan", "-o", "/dev/null"]
    proc = subprocess.run(cmd, input=text, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{name}: rlx-opt failed:\n{proc.stderr[-3000:]}")
    plans = [json.loads(p.read_text()) for p in rep.glob("*.plan.json")]
    return max(plans, key=lambda p: p["sum_bytes"])  # the model, not its pack function


def rlx_original(buffers, alignment):
    """Decreasing size, lowest offset that fits among lifetime-overlapping
    buffers, inclusive [start, end], every buffer on its own."""
    bufs = sorted(({"size": -(-b["size"] // alignment) * alignment, "start": b["start"],
                    "end": b["end"]} for b in buffers), key=lambda b: -b["size"])
    placed, arena = [], 0
    for b in bufs:
        busy = sorted((p["offset"], p["offset"] + p["size"]) for p in placed
                      if p["start"] <= b["end"] and b["start"] <= p["end"])
        off = 0
        for lo, hi in busy:
            if lo - off >= b["size"]:
                break
            off = max(off, hi)
        b["offset"] = off
        placed.append(b)
        arena = max(arena, off + b["size"])
    return arena


def unet_mir(levels=5, n=4096, c=32):
    """A 1-D U-Net in MIR: per level a residual block (matmul, relu, add), a
    skip connection to the decoder, 2× average-pool down and repeat-upsample."""
    lines, args, cnt = [], [], [0]

    def new():
        cnt[0] += 1
        return f"%v{cnt[0]}"

    def t(shape):
        return "tensor<" + "x".join(map(str, shape)) + "xf32>"

    def weight(ci, co):
        name = f"%w{len(args)}"
        args.append(f"{name}: {t([ci, co])} {{rlx.param = \"w{len(args)}\"}}")
        return name

    def block(h, shape, co):
        w = weight(shape[-1], co)
        y = new()
        lines.append(f"  {y} = rlx_mir.matmul {h}, {w} : {t(shape)}, {t([shape[-1], co])}")
        r = new()
        out = shape[:-1] + [co]
        lines.append(f"  {r} = rlx_mir.relu {y} : {t(out)}")
        return r, out

    def residual(h, shape):
        y, _ = block(h, shape, shape[-1])
        s = new()
        lines.append(f"  {s} = rlx_mir.add {h}, {y} : {t(shape)}, {t(shape)}")
        return s

    h, shape, skips = "%x", [1, n, c], []
    for lvl in range(levels):
        h, shape = block(h, shape, c << lvl)
        h = residual(h, shape)
        skips.append((h, list(shape)))
        r = new()
        lines.append(f"  {r} = rlx_mir.reshape {h} [1, {shape[1] // 2}, 2, {shape[2]}] : {t(shape)}")
        p = new()
        lines.append(f"  {p} = rlx_mir.reduce mean {r} axes = [2] : {t([1, shape[1] // 2, 2, shape[2]])}")
        h, shape = p, [1, shape[1] // 2, shape[2]]
    h = residual(h, shape)
    for skip, sshape in reversed(skips):
        e = new()
        lines.append(f"  {e} = rlx_mir.reshape {h} [1, {shape[1]}, 1, {shape[2]}] : {t(shape)}")
        b = new()
        lines.append(f"  {b} = rlx_mir.broadcast {e} [1, {shape[1]}, 2, {shape[2]}] : {t([1, shape[1], 1, shape[2]])}")
        u = new()
        up = [1, shape[1] * 2, shape[2]]
        lines.append(f"  {u} = rlx_mir.reshape {b} [1, {up[1]}, {up[2]}] : {t([1, shape[1], 2, shape[2]])}")
        cat = new()
        cshape = [1, up[1], up[2] + sshape[2]]
        lines.append(f"  {cat} = rlx_mir.concat {u}, {skip} axis = 2 : {t(up)}, {t(sshape)}")
        h, shape = block(cat, cshape, sshape[2])
        h = residual(h, shape)
    sig = ", ".join([f"%x: {t([1, n, c])} {{rlx.input = \"x\"}}"] + args)
    return (f"func.func @unet({sig}) -> ({t(shape)} {{rlx.output = \"y\"}}) {{\n" + "\n".join(lines) +
            f"\n  return {h} : {t(shape)}\n}}\n")


def random_dag_mir(nodes=60, rows=256, seed=7):
    """A seeded random DAG in MIR: node i = relu(sum over 1-3 earlier nodes j of
    node_j · W_ij) with a random width, inputs drawn mostly from recent nodes
    and sometimes from far back (long skips), so buffer sizes and lifetimes
    vary widely."""
    import random
    rnd = random.Random(seed)
    widths = [rnd.choice([32, 48, 64, 96, 128, 192, 256, 384, 512]) for _ in range(nodes)]
    widths[0] = 64
    t = lambda w: f"tensor<{rows}x{w}xf32>"
    args, lines, cnt = [f"%n0: {t(64)} {{rlx.input = \"x\"}}"], [], [0]
    for i in range(1, nodes):
        k = rnd.choice([1, 1, 2, 2, 3])
        srcs = sorted({max(0, i - 1 - int(rnd.expovariate(0.3))) if rnd.random() < 0.8
                       else rnd.randrange(i) for _ in range(k)})
        acc = None
        for j in srcs:
            w = f"%w{len(args)}"
            args.append(f"{w}: tensor<{widths[j]}x{widths[i]}xf32> {{rlx.param = \"w{len(args)}\"}}")
            cnt[0] += 1
            m = f"%m{cnt[0]}"
            lines.append(f"  {m} = rlx_mir.matmul %n{j}, {w} : {t(widths[j])}, tensor<{widths[j]}x{widths[i]}xf32>")
            if acc is None:
                acc = m
            else:
                cnt[0] += 1
                a = f"%a{cnt[0]}"
                lines.append(f"  {a} = rlx_mir.add {acc}, {m} : {t(widths[i])}, {t(widths[i])}")
                acc = a
        lines.append(f"  %n{i} = rlx_mir.relu {acc} : {t(widths[i])}")
    last = nodes - 1
    return (f"func.func @random_dag({', '.join(args)}) -> ({t(widths[last])} {{rlx.output = \"y\"}}) {{\n"
            + "\n".join(lines) + f"\n  return %n{last} : {t(widths[last])}\n}}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    ap.add_argument("--alignment", type=int, default=64)
    args = ap.parse_args()
    tmp = pathlib.Path(tempfile.mkdtemp())
    rows = []
    for cfg in sorted(SHARED.glob("*.json")):
        for mode, gen in [("prefill 2048", ["--seq", "2048"]),
                          ("decode 1 + 2048 KV", ["--kv-cache", "--seq", "1", "--past", "2048"])]:
            text = subprocess.run([str(args.build / "bin" / "rlx-gen"), str(cfg), *gen],
                                  check=True, capture_output=True, text=True).stdout
            rows.append((cfg.stem, mode, plan(args.build, text, args.alignment, tmp,
                                                f"{cfg.stem}-{mode.split()[0]}")))
    rows.append(("wide DAG (1-D U-Net, MIR)", "4096 x 32, 5 levels",
                 plan(args.build, unet_mir(), args.alignment, tmp, "unet")))
    for seed in (1, 2, 3):
        rows.append((f"random DAG, seed {seed} (MIR)", "60 nodes x 256 rows",
                     plan(args.build, random_dag_mir(seed=seed), args.alignment, tmp, f"dag{seed}")))
    layer = subprocess.run([str(args.build / "bin" / "rlx-gen"), str(SHARED / "llama-3.2-1b.json"),
                            "--layer-only", "--seq", "128"], check=True, capture_output=True,
                           text=True).stdout
    rows.append(("llama-3.2-1b, one layer", "prefill 128",
                 plan(args.build, layer, args.alignment, tmp, "layer")))
    # Its backward: loss = Σ layer(x)·r, gradients of all nine weights.
    backward = (ROOT / "test" / "Models" / "llama-layer-backward.mlir").read_text()
    rows.append(("llama-3.2-1b, one layer, backward", "prefill 128",
                 plan(args.build, backward, args.alignment, tmp, "backward",
                      pre=["--convert-rlx-hir-to-mir=fusion-policy=fusable",
                           "--rlx-mir-grad=wrt=n1,wq,wk,wv,wo,n2,wg,wu,wd"])))

    mib = lambda b: f"{b / 2**20:.1f}" if b >= 2**20 else f"{b / 2**20:.3f}"
    out = ["| model | shape | buffers | sum of buffers MiB | lower bound MiB | RLX-MLIR arena MiB | "
           "ratio | original RLX planner MiB | its ratio |", "|---|---|---|---|---|---|---|---|---|"]
    results = []
    for name, mode, p in rows:
        lb, arena = p["lower_bound_bytes"], p["arena_bytes"]
        orig = rlx_original(p["buffers"], args.alignment)
        ratio = arena / lb if lb else 1.0
        out.append(f"| {name} | {mode} | {len(p['buffers'])} | {mib(p['sum_bytes'])} | {mib(lb)} | "
                   f"{mib(arena)} | **{ratio:.3f}** | {mib(orig)} | {orig / lb if lb else 1:.3f} |")
        results.append({"model": name, "shape": mode, "buffers": len(p["buffers"]),
                        "sum_bytes": p["sum_bytes"], "lower_bound_bytes": lb, "arena_bytes": arena,
                        "original_rlx_bytes": orig, "ordering": p["ordering"]})
    header = (f"f32, alignment {args.alignment} bytes; lower bound = largest sum of bytes live at one op "
              f"(with RLX-MLIR's in-place reuse: elementwise outputs and fused_matmul residuals); the original planner is simulated on the "
              f"same buffers and lifetimes without in-place reuse.")
    text = header + "\n\n" + "\n".join(out) + "\n"
    print(text)
    (ROOT / "bench" / "out").mkdir(exist_ok=True)
    (ROOT / "bench" / "out" / "planner.md").write_text(text)
    (ROOT / "bench" / "out" / "planner.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
