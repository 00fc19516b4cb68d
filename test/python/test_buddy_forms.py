"""The decoder kernels buddy-mlir writes by hand in TOSA + linalg
(github.com/buddy-compiler/buddy-mlir, examples/BuddyNext: next-norm.mlir,
next-ffn.mlir, next-embedding.mlir, next-rope.mlir, next-gqa-attention.mlir,
read at commit 080e518c): each module here is written for the test in the
same op forms (not copied) at small sizes, with @kernel's timing calls
(@rtclock, vector.print) left out: RLX compiles tensor functions.

Each is raised by rlx-import-to-mir, fused, run by rlx-run on the CPU path and
under the GPU emulator from one test body, and compared with numpy and with
upstream's own lowering of the same text (mlir-opt-22 + mlir-runner, no RLX).
RMSNorm, SwiGLU and attention must be recognized (one kernel each)."""
from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from harness import BUILD, assert_close, run_mlir, run_upstream_all

DEVICES = ["cpu", "emu"]
SHIFT = '  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>'


def dense(a: np.ndarray) -> str:
    return "dense<" + np.array2string(a, separator=", ", threshold=1 << 20,
                                      floatmode="unique").replace("\n", "") + ">"


def ty(a: np.ndarray) -> str:
    et = {"float32": "f32", "int64": "i64"}[str(a.dtype)]
    return "tensor<" + "x".join(map(str, a.shape)) + f"x{et}>"


def fused(text: str, weights: str = "auto") -> tuple[str, str]:
    """rlx-opt's raised and fused module, and its remarks (weight arguments
    taken as parameters, as rlx-run does for one run)."""
    proc = subprocess.run([str(BUILD / "bin" / "rlx-opt"), "-", "--convert-elementwise-to-linalg",
                           f"--rlx-import-to-mir=weights={weights}", "--rlx-mir-fuse=report=true",
                           "-o", "-"], input=text, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def compute_ops(remarks: str) -> int:
    """The compute ops @kernel has after fusion (rlx-mir-fuse's report)."""
    m = re.search(r"fusion of @kernel: .*compute ops \d+ -> (\d+)", remarks)
    assert m, remarks
    return int(m.group(1))


def upstream(kernel: str, args: list[np.ndarray], results: list[str]) -> list[np.ndarray]:
    """@kernel run by upstream's lowering on constants, every result printed."""
    lines = ["func.func private @printMemrefF32(tensor<*xf32>)", "func.func @main() {"]
    for i, a in enumerate(args):
        lines.append(f"  %a{i} = arith.constant {dense(a)} : {ty(a)}")
    names = ", ".join(f"%r{i}" for i in range(len(results)))
    lines.append(f"  {names} = call @kernel({', '.join(f'%a{i}' for i in range(len(args)))}) : "
                 f"({', '.join(ty(a) for a in args)}) -> ({', '.join(results)})")
    for i, r in enumerate(results):
        lines.append(f"  %u{i} = tensor.cast %r{i} : {r} to tensor<*xf32>")
        lines.append(f"  call @printMemrefF32(%u{i}) : (tensor<*xf32>) -> ()")
    lines += ["  return", "}"]
    return run_upstream_all(kernel + "\n".join(lines) + "\n")


def run_kernel(kernel: str, args: list[np.ndarray], device: str) -> list[np.ndarray]:
    out = run_mlir(kernel, {f"arg{i}": a for i, a in enumerate(args)},
                   extra=("--device", device))
    return [out[f"result{i}"] for i in range(len(out))]


def check(kernel: str, args: list[np.ndarray], refs: list[np.ndarray], device: str,
          rtol: float = 1e-5) -> None:
    """RLX on `device` equals numpy (`refs`) and upstream's lowering."""
    got = run_kernel(kernel, args, device)
    theirs = upstream(kernel, args, [ty(r.astype(np.float32)) for r in refs])
    assert len(got) == len(refs) == len(theirs)
    for g, r, t in zip(got, refs, theirs):
        atol = rtol * max(1.0, float(np.sqrt(np.mean(np.square(r)))))
        assert_close(g, r, rtol=rtol, atol=atol)
        assert_close(g.reshape(-1), t, rtol=rtol, atol=atol)


# --- next-norm: residual add + RMSNorm (pow by fpowi, mean as sum × 1/D) ---

D = 16


def norm_kernel() -> str:
    t = f"tensor<1x1x{D}xf32>"
    r = "tensor<1x1x1xf32>"
    return f"""#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @kernel(%x: {t}, %res: {t}, %w: tensor<{D}xf32>) -> {t} {{
{SHIFT}
  %h = tosa.add %x, %res : ({t}, {t}) -> {t}
  %e = tensor.empty() : {t}
  %two = arith.constant 2 : i32
  %sq = linalg.generic {{indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}} ins(%h : {t}) outs(%e : {t}) {{
  ^bb0(%in: f32, %out: f32):
    %p = math.fpowi %in, %two : f32, i32
    linalg.yield %p : f32
  }} -> {t}
  %sum = tosa.reduce_sum %sq {{axis = 2 : i32}} : ({t}) -> {r}
  %n = "tosa.const"() <{{values = dense<{D}.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %inv = tosa.reciprocal %n : (tensor<1xf32>) -> tensor<1xf32>
  %s0 = tosa.const_shape {{values = dense<[1, 1, 1]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %inv3 = tosa.reshape %inv, %s0 : (tensor<1xf32>, !tosa.shape<3>) -> {r}
  %mean = tosa.mul %inv3, %sum, %shift : ({r}, {r}, tensor<1xi8>) -> {r}
  %eps = "tosa.const"() <{{values = dense<9.99999997E-7> : {r}}}> : () -> {r}
  %v = tosa.add %mean, %eps : ({r}, {r}) -> {r}
  %rs = tosa.rsqrt %v : ({r}) -> {r}
  %y = tosa.mul %h, %rs, %shift : ({t}, {r}, tensor<1xi8>) -> {t}
  %s1 = tosa.const_shape {{values = dense<[1, 1, {D}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %w3 = tosa.reshape %w, %s1 : (tensor<{D}xf32>, !tosa.shape<3>) -> {t}
  %o = tosa.mul %w3, %y, %shift : ({t}, {t}, tensor<1xi8>) -> {t}
  return %o : {t}
}}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_norm_is_one_residual_rms_norm(device):
    rng = np.random.default_rng(1)
    x, res = (rng.standard_normal((1, 1, D)).astype(np.float32) for _ in range(2))
    w = (1 + 0.1 * rng.standard_normal(D)).astype(np.float32)
    text = norm_kernel()
    if device == "cpu":
        out, remarks = fused(text)
        assert out.count("rlx_mir.residual_rms_norm") == 1, out
        assert compute_ops(remarks) == 1, remarks
    h = (x + res).astype(np.float64)
    ref = h / np.sqrt(np.mean(h * h, -1, keepdims=True) + 1e-6) * w
    check(text, [x, res, w], [ref], device)


# --- next-ffn: silu(x·W1) ⊙ (x·W3) · W2 + residual, weights as arguments ---

F = 40


def ffn_kernel(shared: bool) -> str:
    """buddy's signature (gate and up read two inputs) or, `shared`, one
    input for both: only the latter is SwiGLU."""
    x2, x3, h = f"tensor<1x{D}xf32>", f"tensor<1x1x{D}xf32>", f"tensor<1x1x{F}xf32>"
    up_in = "%x" if shared else "%x3"
    args = (f"%x: {x2}, %w1: tensor<{D}x{F}xf32>, " + ("" if shared else f"%xu: {x3}, ") +
            f"%w3: tensor<{D}x{F}xf32>, %w2: tensor<{F}x{D}xf32>, %res: {x3}")
    reshape_up = "" if shared else (
        f"  %s1 = tosa.const_shape {{values = dense<[1, {D}]> : tensor<2xindex>}} : () -> !tosa.shape<2>\n"
        f"  %x3 = tosa.reshape %xu, %s1 : ({x3}, !tosa.shape<2>) -> {x2}\n")
    return f"""func.func @kernel({args}) -> {x3} {{
{SHIFT}
  %z1 = arith.constant dense<0.000000e+00> : tensor<1x{F}xf32>
  %g = linalg.matmul {{cast = #linalg.type_fn<cast_signed>}} ins(%x, %w1 : {x2}, tensor<{D}x{F}xf32>) outs(%z1 : tensor<1x{F}xf32>) -> tensor<1x{F}xf32>
  %s0 = tosa.const_shape {{values = dense<[1, 1, {F}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %g3 = tosa.reshape %g, %s0 : (tensor<1x{F}xf32>, !tosa.shape<3>) -> {h}
  %sg = tosa.sigmoid %g3 : ({h}) -> {h}
  %act = tosa.mul %g3, %sg, %shift : ({h}, {h}, tensor<1xi8>) -> {h}
{reshape_up}  %z2 = arith.constant dense<0.000000e+00> : tensor<1x{F}xf32>
  %u = linalg.matmul {{cast = #linalg.type_fn<cast_signed>}} ins({up_in}, %w3 : {x2}, tensor<{D}x{F}xf32>) outs(%z2 : tensor<1x{F}xf32>) -> tensor<1x{F}xf32>
  %u3 = tosa.reshape %u, %s0 : (tensor<1x{F}xf32>, !tosa.shape<3>) -> {h}
  %m = tosa.mul %act, %u3, %shift : ({h}, {h}, tensor<1xi8>) -> {h}
  %s2 = tosa.const_shape {{values = dense<[1, {F}]> : tensor<2xindex>}} : () -> !tosa.shape<2>
  %m2 = tosa.reshape %m, %s2 : ({h}, !tosa.shape<2>) -> tensor<1x{F}xf32>
  %z3 = arith.constant dense<0.000000e+00> : {x2}
  %d = linalg.matmul {{cast = #linalg.type_fn<cast_signed>}} ins(%m2, %w2 : tensor<1x{F}xf32>, tensor<{F}x{D}xf32>) outs(%z3 : {x2}) -> {x2}
  %s3 = tosa.const_shape {{values = dense<[1, 1, {D}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %d3 = tosa.reshape %d, %s3 : ({x2}, !tosa.shape<3>) -> {x3}
  %o = tosa.add %res, %d3 : ({x3}, {x3}) -> {x3}
  return %o : {x3}
}}
"""


@pytest.mark.parametrize("shared", [True, False], ids=["swiglu", "two-inputs"])
@pytest.mark.parametrize("device", DEVICES)
def test_ffn_swiglu_with_weight_arguments_packed_once(device, shared):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, D)).astype(np.float32)
    xu = rng.standard_normal((1, 1, D)).astype(np.float32)
    w1 = (rng.standard_normal((D, F)) / np.sqrt(D)).astype(np.float32)
    w3 = (rng.standard_normal((D, F)) / np.sqrt(D)).astype(np.float32)
    w2 = (rng.standard_normal((F, D)) / np.sqrt(F)).astype(np.float32)
    res = rng.standard_normal((1, 1, D)).astype(np.float32)
    text = ffn_kernel(shared)
    args = [x, w1, w3, w2, res] if shared else [x, w1, xu, w3, w2, res]
    if device == "cpu":
        out, remarks = fused(text)
        weights = "arg1, arg2, arg3" if shared else "arg1, arg3, arg4"
        assert f"{weights} are read only as matmul weights and biases" in remarks, remarks
        # SwiGLU only when gate and up read the same input; its gate|up
        # weight is concatenated once, by the pack function.
        assert ("activation silu glu" in out) == shared, out
        assert ("@kernel_pack_params" in out) == shared, out
        kernel = out[out.index("func.func @kernel("):]
        assert "rlx_mir.concat" not in kernel, out
    xd = x.astype(np.float64)
    up_in = xd if shared else xu.reshape(1, D).astype(np.float64)
    g = xd @ w1
    ref = ((g / (1 + np.exp(-g))) * (up_in @ w3)) @ w2 + res.reshape(1, D)
    check(text, args, [ref.reshape(1, 1, D)], device)


def test_weight_arguments_option():
    """By default the candidates are named in a remark and stay inputs
    (packing would read the first run's values: wrong for a caller that
    passes new ones every run); weights=none is silent; positions and name
    patterns name them; a position past the arguments is an error."""
    text = ffn_kernel(True)
    base = [str(BUILD / "bin" / "rlx-opt"), "-", "-o", "-"]

    def opt(weights):
        option = f"--rlx-import-to-mir=weights={weights}" if weights else "--rlx-import-to-mir"
        return subprocess.run(base + [option, "--rlx-mir-fuse"],
                              input=text, capture_output=True, text=True)
    default = opt(None)
    assert default.returncode == 0 and "rlx.param" not in default.stdout, default.stdout
    assert "arg1, arg2, arg3 are read only as matmul weights and biases but are inputs" in default.stderr
    none = opt("none")
    assert none.returncode == 0 and "rlx.param" not in none.stdout, none.stdout
    assert "rlx_mir.concat" in none.stdout and "read only as matmul" not in none.stderr
    named = opt("1,arg[2]")
    assert named.returncode == 0, named.stderr
    assert 'rlx.param = "arg1"' in named.stdout and '"arg2"' in named.stdout
    assert 'rlx.param = "arg3"' not in named.stdout
    bad = opt("9")
    assert bad.returncode != 0 and "names argument 9, but no function has more than 5" in bad.stderr, bad.stderr


# --- next-embedding: ids cast i64 → i32, tosa.gather on the [1, V, D] table ---

V, S = 50, 6


def embedding_kernel() -> str:
    return f"""func.func @kernel(%table: tensor<{V}x{D}xf32>, %ids: tensor<1x{S}xi64>) -> tensor<1x{S}x{D}xf32> {{
  %i = tosa.cast %ids : (tensor<1x{S}xi64>) -> tensor<1x{S}xi32>
  %s0 = tosa.const_shape {{values = dense<[1, {V}, {D}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %t = tosa.reshape %table, %s0 : (tensor<{V}x{D}xf32>, !tosa.shape<3>) -> tensor<1x{V}x{D}xf32>
  %g = tosa.gather %t, %i : (tensor<1x{V}x{D}xf32>, tensor<1x{S}xi32>) -> tensor<1x{S}x{D}xf32>
  return %g : tensor<1x{S}x{D}xf32>
}}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_embedding_through_a_cast_of_the_ids(device):
    rng = np.random.default_rng(3)
    table = rng.standard_normal((V, D)).astype(np.float32)
    ids = np.array([[0, 7, 49, 3, 3, 21]], np.int64)
    text = embedding_kernel()
    if device == "cpu":
        out, _ = fused(text)
        assert "rlx_mir.gather" in out and "tosa." not in out, out
    check(text, [table, ids], [table[ids]], device)
    # The ids are checked against the table through the cast: 2^32 + 5
    # would wrap to row 5.
    for bad in (V, 2**32 + 5, -1):
        wrong = ids.copy()
        wrong[0, 2] = bad
        with pytest.raises(RuntimeError, match=f"arg1.*{bad}.*{V}"):
            run_kernel(text, [table, wrong], device)


# --- next-rope: positions gather cos/sin, rotate_half by slices ---

H, HD, MAXS = 2, 8, 12


def rope_kernel() -> str:
    x = f"tensor<1x{S}x{H * HD}xf32>"
    x4, t4 = f"tensor<1x{S}x{H}x{HD}xf32>", f"tensor<1x{H}x{S}x{HD}xf32>"
    cache, c4 = f"tensor<1x1x{MAXS}x{HD}xf32>", f"tensor<1x1x{S}x{HD}xf32>"
    half, tab = f"tensor<1x{H}x{S}x{HD // 2}xf32>", f"tensor<{S}x{HD}xf32>"
    g3 = f"tensor<1x{S}x{HD}xf32>"
    lines = [
        "#drop1 = affine_map<(d0, d1, d2) -> (d0, 0, d1, d2)>",
        "#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>",
        "#drop0 = affine_map<(d0, d1) -> (0, d0, d1)>",
        "#id2 = affine_map<(d0, d1) -> (d0, d1)>",
        "#pos = affine_map<(d0, d1, d2) -> (d0, d1)>",
        f"func.func @kernel(%q: {x}, %k: {x}, %cos: {cache}, %sin: {cache}, %ids: tensor<1x{S}xi64>) -> ({t4}, {t4}) {{",
        SHIFT,
        f"  %s0 = tosa.const_shape {{values = dense<[1, {S}, {H}, {HD}]> : tensor<4xindex>}} : () -> !tosa.shape<4>",
        f"  %s1 = tosa.const_shape {{values = dense<[1, 1, {S}, {HD}]> : tensor<4xindex>}} : () -> !tosa.shape<4>",
    ]
    tables = {}
    for name in ("cos", "sin"):
        lines += [
            f"  %{name}_s = tensor.extract_slice %{name}[0, 0, 0, 0] [1, 1, {S}, {HD}] [1, 1, 1, 1] : {cache} to {c4}",
            f"  %{name}_e1 = tensor.empty() : {g3}",
            f"  %{name}_3 = linalg.generic {{indexing_maps = [#drop1, #id3], iterator_types = [\"parallel\", \"parallel\", \"parallel\"]}} ins(%{name}_s : {c4}) outs(%{name}_e1 : {g3}) {{",
            "  ^bb0(%in: f32, %out: f32):",
            "    linalg.yield %in : f32",
            f"  }} -> {g3}",
            f"  %{name}_e2 = tensor.empty() : {tab}",
            f"  %{name}_2 = linalg.generic {{indexing_maps = [#drop0, #id2], iterator_types = [\"parallel\", \"parallel\"]}} ins(%{name}_3 : {g3}) outs(%{name}_e2 : {tab}) {{",
            "  ^bb0(%in: f32, %out: f32):",
            "    linalg.yield %in : f32",
            f"  }} -> {tab}",
            f"  %{name}_e3 = tensor.empty() : {g3}",
            f"  %{name}_g = linalg.generic {{indexing_maps = [#pos, #id3], iterator_types = [\"parallel\", \"parallel\", \"parallel\"]}} ins(%ids : tensor<1x{S}xi64>) outs(%{name}_e3 : {g3}) {{",
            "  ^bb0(%in: i64, %out: f32):",
            "    %row = arith.index_cast %in : i64 to index",
            "    %col = linalg.index 2 : index",
            f"    %v = tensor.extract %{name}_2[%row, %col] : {tab}",
            "    linalg.yield %v : f32",
            f"  }} -> {g3}",
            f"  %{name}_4 = tosa.reshape %{name}_g, %s1 : ({g3}, !tosa.shape<4>) -> {c4}",
        ]
        tables[name] = f"%{name}_4"
    outs = []
    for name in ("q", "k"):
        lines += [
            f"  %{name}_r = tosa.reshape %{name}, %s0 : ({x}, !tosa.shape<4>) -> {x4}",
            f"  %{name}_t = tosa.transpose %{name}_r {{perms = array<i32: 0, 2, 1, 3>}} : ({x4}) -> {t4}",
            f"  %{name}_c = tosa.mul %{name}_t, %cos_4, %shift : ({t4}, {c4}, tensor<1xi8>) -> {t4}",
            f"  %{name}_lo = tensor.extract_slice %{name}_t[0, 0, 0, 0] [1, {H}, {S}, {HD // 2}] [1, 1, 1, 1] : {t4} to {half}",
            f"  %{name}_hi = tensor.extract_slice %{name}_t[0, 0, 0, {HD // 2}] [1, {H}, {S}, {HD // 2}] [1, 1, 1, 1] : {t4} to {half}",
            f"  %{name}_zp = \"tosa.const\"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>",
            f"  %{name}_n = tosa.negate %{name}_hi, %{name}_zp, %{name}_zp : ({half}, tensor<1xf32>, tensor<1xf32>) -> {half}",
            f"  %{name}_e = tensor.empty() : {t4}",
            f"  %{name}_i1 = tensor.insert_slice %{name}_n into %{name}_e[0, 0, 0, 0] [1, {H}, {S}, {HD // 2}] [1, 1, 1, 1] : {half} into {t4}",
            f"  %{name}_rot = tensor.insert_slice %{name}_lo into %{name}_i1[0, 0, 0, {HD // 2}] [1, {H}, {S}, {HD // 2}] [1, 1, 1, 1] : {half} into {t4}",
            f"  %{name}_s = tosa.mul %{name}_rot, %sin_4, %shift : ({t4}, {c4}, tensor<1xi8>) -> {t4}",
            f"  %{name}_o = tosa.add %{name}_c, %{name}_s : ({t4}, {t4}) -> {t4}",
        ]
        outs.append(f"%{name}_o")
    lines += [f"  return {', '.join(outs)} : {t4}, {t4}", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("device", DEVICES)
def test_rope_gathers_positions_and_rotates_half(device):
    rng = np.random.default_rng(4)
    q, k = (rng.standard_normal((1, S, H * HD)).astype(np.float32) for _ in range(2))
    pos = np.arange(MAXS)[:, None] / (10000.0 ** (np.arange(HD // 2) * 2.0 / HD))
    ang = np.concatenate([pos, pos], -1)
    cos = np.cos(ang).astype(np.float32)[None, None]
    sin = np.sin(ang).astype(np.float32)[None, None]
    ids = np.array([[3, 0, 5, 1, 4, 2]], np.int64)  # rows of the [S, D] slice
    text = rope_kernel()
    if device == "cpu":
        out, _ = fused(text)
        assert "tosa." not in out and "linalg." not in out, out

    def rotated(x):
        x4 = x.reshape(1, S, H, HD).transpose(0, 2, 1, 3).astype(np.float64)
        c, s = cos[0, 0, :S][ids[0]], sin[0, 0, :S][ids[0]]
        rot = np.concatenate([-x4[..., HD // 2:], x4[..., :HD // 2]], -1)
        return x4 * c + rot * s
    check(text, [q, k, cos, sin, ids], [rotated(q), rotated(k)], device)


# --- next-gqa-attention: decode, heads folded into a rank-3 batch ---

HQ, KV, SK = 6, 2, 16


def gqa_kernel() -> str:
    g = HQ // KV
    q4, kv4 = f"tensor<1x{HQ}x1x{HD}xf32>", f"tensor<1x{KV}x{SK}x{HD}xf32>"
    kv5, rep5 = f"tensor<1x{KV}x1x{SK}x{HD}xf32>", f"tensor<1x{KV}x{g}x{SK}x{HD}xf32>"
    full4, full4t = f"tensor<1x{HQ}x{SK}x{HD}xf32>", f"tensor<1x{HQ}x{HD}x{SK}xf32>"
    q3, kv3, sc = f"tensor<{HQ}x1x{HD}xf32>", f"tensor<{HQ}x{SK}x{HD}xf32>", f"tensor<{HQ}x1x{SK}xf32>"
    red = f"tensor<{HQ}x1x1xf32>"
    scale = np.float32(1 / np.sqrt(HD))
    return f"""func.func @kernel(%q: {q4}, %kc: {kv4}, %vc: {kv4}, %mask: tensor<1x1x1x{SK}xf32>) -> {q4} {{
  %s5 = tosa.const_shape {{values = dense<[1, {KV}, 1, {SK}, {HD}]> : tensor<5xindex>}} : () -> !tosa.shape<5>
  %s4 = tosa.const_shape {{values = dense<[1, {HQ}, {SK}, {HD}]> : tensor<4xindex>}} : () -> !tosa.shape<4>
  %k5 = tosa.reshape %kc, %s5 : ({kv4}, !tosa.shape<5>) -> {kv5}
  %zk = "tosa.const"() <{{values = dense<0.000000e+00> : {rep5}}}> : () -> {rep5}
  %kr = tosa.add %k5, %zk : ({kv5}, {rep5}) -> {rep5}
  %k4 = tosa.reshape %kr, %s4 : ({rep5}, !tosa.shape<4>) -> {full4}
  %v5 = tosa.reshape %vc, %s5 : ({kv4}, !tosa.shape<5>) -> {kv5}
  %zv = "tosa.const"() <{{values = dense<0.000000e+00> : {rep5}}}> : () -> {rep5}
  %vr = tosa.add %v5, %zv : ({kv5}, {rep5}) -> {rep5}
  %v4 = tosa.reshape %vr, %s4 : ({rep5}, !tosa.shape<4>) -> {full4}
  %zero = arith.constant 0.000000e+00 : f32
  %zm = tensor.splat %zero : tensor<1x{SK}xf32>
  %sm2 = tosa.const_shape {{values = dense<[1, {SK}]> : tensor<2xindex>}} : () -> !tosa.shape<2>
  %m2 = tosa.reshape %mask, %sm2 : (tensor<1x1x1x{SK}xf32>, !tosa.shape<2>) -> tensor<1x{SK}xf32>
  %m = tosa.add %zm, %m2 : (tensor<1x{SK}xf32>, tensor<1x{SK}xf32>) -> tensor<1x{SK}xf32>
  %kt = tosa.transpose %k4 {{perms = array<i32: 0, 1, 3, 2>}} : ({full4}) -> {full4t}
  %sq3 = tosa.const_shape {{values = dense<[{HQ}, 1, {HD}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %qh = tosa.reshape %q, %sq3 : ({q4}, !tosa.shape<3>) -> {q3}
  %ktt = tosa.transpose %kt {{perms = array<i32: 0, 1, 3, 2>}} : ({full4t}) -> {full4}
  %sk3 = tosa.const_shape {{values = dense<[{HQ}, {SK}, {HD}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %kh = tosa.reshape %ktt, %sk3 : ({full4}, !tosa.shape<3>) -> {kv3}
  %acc = arith.constant dense<0.000000e+00> : {sc}
  %qk = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>] ins(%qh, %kh : {q3}, {kv3}) outs(%acc : {sc}) -> {sc}
  %c = arith.constant {float(scale)!r} : f32
  %cs = tensor.splat %c : {sc}
  %shift = "tosa.const"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %scaled = tosa.mul %qk, %cs, %shift : ({sc}, {sc}, tensor<1xi8>) -> {sc}
  %sm3 = tosa.const_shape {{values = dense<[1, 1, {SK}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %m3 = tosa.reshape %m, %sm3 : (tensor<1x{SK}xf32>, !tosa.shape<3>) -> tensor<1x1x{SK}xf32>
  %s = tosa.add %scaled, %m3 : ({sc}, tensor<1x1x{SK}xf32>) -> {sc}
  %mx = tosa.reduce_max %s {{axis = 2 : i32}} : ({sc}) -> {red}
  %d = tosa.sub %s, %mx : ({sc}, {red}) -> {sc}
  %ex = math.exp %d : {sc}
  %sum = tosa.reduce_sum %ex {{axis = 2 : i32}} : ({sc}) -> {red}
  %l = tosa.log %sum : ({red}) -> {red}
  %lse = tosa.add %mx, %l : ({red}, {red}) -> {red}
  %x = tosa.sub %s, %lse : ({sc}, {red}) -> {sc}
  %p = math.exp %x : {sc}
  %vh = tosa.reshape %v4, %sk3 : ({full4}, !tosa.shape<3>) -> {kv3}
  %za = "tosa.const"() <{{values = dense<0.000000e+00> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %zb = "tosa.const"() <{{values = dense<0.000000e+00> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %o = tosa.matmul %p, %vh, %za, %zb : ({sc}, {kv3}, tensor<1xf32>, tensor<1xf32>) -> {q3}
  %s4o = tosa.const_shape {{values = dense<[1, {HQ}, 1, {HD}]> : tensor<4xindex>}} : () -> !tosa.shape<4>
  %o4 = tosa.reshape %o, %s4o : ({q3}, !tosa.shape<4>) -> {q4}
  return %o4 : {q4}
}}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_gqa_decode_attention_is_one_kernel(device):
    rng = np.random.default_rng(5)
    q = rng.standard_normal((1, HQ, 1, HD)).astype(np.float32)
    k, v = (rng.standard_normal((1, KV, SK, HD)).astype(np.float32) for _ in range(2))
    mask = np.where(np.arange(SK) < SK - 4, 0.0, -1e9).astype(np.float32).reshape(1, 1, 1, SK)
    text = gqa_kernel()
    if device == "cpu":
        out, remarks = fused(text)
        assert out.count("rlx_mir.attention") == 1, out
        assert "heads = 6, kv_heads = 2" in out, out
        assert "linalg." not in out and "math." not in out and "tosa." not in out, out
    kk = np.repeat(k[0], HQ // KV, axis=0).astype(np.float64)  # [HQ, SK, HD]
    vv = np.repeat(v[0], HQ // KV, axis=0).astype(np.float64)
    s = q[0].astype(np.float64) @ kk.transpose(0, 2, 1) * np.float32(1 / np.sqrt(HD)) + mask[0, 0]
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    check(text, [q, k, v, mask], [(p @ vv)[None]], device)


# --- DeepSeek-R1-Distill (Qwen2) decoder layers as buddy-mlir imports them ---
# (examples/BuddyDeepSeekR1: the prefill subgraph0 its import script writes,
# read at the commit above in its stored annotated copy): RoPE tables as
# cos/sin of inv_freq ⊗ positions repeated along a new axis, q/k/v as
# transposed-weight tosa.matmul + bias, rotate_half by linalg.negf and
# insert_slice, GQA by an add of zeros, Kᵀ as its own transpose,
# head-batched rank-3 scores, softmax through log-sum-exp, o/gate/up/down by
# linalg.matmul on a zero constant. Small: one or two layers.

LS, LD, LH, LKV, LHD, LF = 6, 32, 4, 2, 8, 48


class Text:
    """An SSA-numbered function body."""

    def __init__(self):
        self.lines, self.n = [], 0

    def op(self, rhs: str) -> str:
        self.n += 1
        self.lines.append(f"  %v{self.n} = {rhs}")
        return f"%v{self.n}"

    def shape(self, dims) -> str:
        return self.op(f"tosa.const_shape {{values = dense<[{', '.join(map(str, dims))}]> : "
                       f"tensor<{len(dims)}xindex>}} : () -> !tosa.shape<{len(dims)}>")

    def reshape(self, x: str, src, dst) -> str:
        return self.op(f"tosa.reshape {x}, {self.shape(dst)} : ({tt(src)}, !tosa.shape<{len(dst)}>) -> {tt(dst)}")

    def zeros(self, dims) -> str:
        return self.op(f'"tosa.const"() <{{values = dense<0.000000e+00> : {tt(dims)}}}> : () -> {tt(dims)}')

    def mul(self, a, b, sa, sb, out) -> str:
        sh = self.op('"tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>')
        return self.op(f"tosa.mul {a}, {b}, {sh} : ({tt(sa)}, {tt(sb)}, tensor<1xi8>) -> {tt(out)}")

    def binary(self, name, a, b, sa, sb, out) -> str:
        return self.op(f"tosa.{name} {a}, {b} : ({tt(sa)}, {tt(sb)}) -> {tt(out)}")

    def transpose(self, x, src, perm) -> str:
        dst = [src[p] for p in perm]
        return self.op(f"tosa.transpose {x} {{perms = array<i32: {', '.join(map(str, perm))}>}} : "
                       f"({tt(src)}) -> {tt(dst)}")


def tt(dims, et="f32") -> str:
    return "tensor<" + "x".join(map(str, dims)) + f"x{et}>"


def rms_norm(t: Text, x: str, w: str) -> str:
    s3, r = [1, LS, LD], [1, LS, 1]
    e = t.op(f"tensor.empty() : {tt(s3)}")
    two = t.op("arith.constant 2 : i32")
    t.n += 1
    sq = f"%v{t.n}"
    t.lines += [f"  {sq} = linalg.generic {{indexing_maps = [#id3, #id3], iterator_types = [\"parallel\", \"parallel\", \"parallel\"]}} ins({x} : {tt(s3)}) outs({e} : {tt(s3)}) {{",
                "  ^bb0(%in: f32, %out: f32):",
                f"    %p = math.fpowi %in, {two} : f32, i32",
                "    linalg.yield %p : f32",
                f"  }} -> {tt(s3)}"]
    sm = t.op(f"tosa.reduce_sum {sq} {{axis = 2 : i32}} : ({tt(s3)}) -> {tt(r)}")
    n = t.op(f'"tosa.const"() <{{values = dense<{LD}.0> : tensor<1xf32>}}> : () -> tensor<1xf32>')
    inv = t.op(f"tosa.reciprocal {n} : (tensor<1xf32>) -> tensor<1xf32>")
    mean = t.mul(t.reshape(inv, [1], [1, 1, 1]), sm, [1, 1, 1], r, r)
    eps = t.op(f'"tosa.const"() <{{values = dense<9.99999997E-7> : {tt(r)}}}> : () -> {tt(r)}')
    rs = t.op(f"tosa.rsqrt {t.binary('add', mean, eps, r, r, r)} : ({tt(r)}) -> {tt(r)}")
    y = t.mul(x, rs, s3, r, s3)
    return t.mul(t.reshape(w, [LD], [1, 1, LD]), y, [1, 1, LD], s3, s3)


def projection(t: Text, x: str, w: str, b: str, n: int) -> str:
    """x [1, S, D] · wᵀ + b as tosa.matmul on the transposed weight."""
    x2 = t.reshape(x, [1, LS, LD], [LS, LD])
    wt = t.transpose(w, [n, LD], [1, 0])
    z = t.zeros([1])
    mm = t.op(f"tosa.matmul {t.reshape(x2, [LS, LD], [1, LS, LD])}, {t.reshape(wt, [LD, n], [1, LD, n])}, {z}, {z} : "
              f"({tt([1, LS, LD])}, {tt([1, LD, n])}, tensor<1xf32>, tensor<1xf32>) -> {tt([1, LS, n])}")
    y = t.binary("add", t.reshape(b, [n], [1, n]), t.reshape(mm, [1, LS, n], [LS, n]), [1, n], [LS, n], [LS, n])
    return t.reshape(y, [LS, n], [1, LS, n])


def linear(t: Text, x: str, w: str, k: int, n: int) -> str:
    """x [1, S, k] · wᵀ as linalg.matmul on a zero constant."""
    wt = t.transpose(w, [n, k], [1, 0])
    x2 = t.reshape(x, [1, LS, k], [LS, k])
    z = t.op(f"arith.constant dense<0.000000e+00> : {tt([LS, n])}")
    mm = t.op(f"linalg.matmul {{cast = #linalg.type_fn<cast_signed>}} ins({x2}, {wt} : {tt([LS, k])}, {tt([k, n])}) "
              f"outs({z} : {tt([LS, n])}) -> {tt([LS, n])}")
    return t.reshape(mm, [LS, n], [1, LS, n])


def rope(t: Text, x: str, heads: int, cos: str, sin: str) -> str:
    h4 = [1, heads, LS, LHD]
    half = [1, heads, LS, LHD // 2]
    xh = t.transpose(t.reshape(x, [1, LS, heads * LHD], [1, LS, heads, LHD]), [1, LS, heads, LHD], [0, 2, 1, 3])
    c = t.mul(xh, cos, h4, [1, 1, LS, LHD], h4)
    lo = t.op(f"tensor.extract_slice {xh}[0, 0, 0, 0] [1, {heads}, {LS}, {LHD // 2}] [1, 1, 1, 1] : {tt(h4)} to {tt(half)}")
    hi = t.op(f"tensor.extract_slice {xh}[0, 0, 0, {LHD // 2}] [1, {heads}, {LS}, {LHD // 2}] [1, 1, 1, 1] : {tt(h4)} to {tt(half)}")
    e = t.op(f"tensor.empty() : {tt(half)}")
    neg = t.op(f"linalg.negf ins({hi} : {tt(half)}) outs({e} : {tt(half)}) -> {tt(half)}")
    e2 = t.op(f"tensor.empty() : {tt(h4)}")
    i1 = t.op(f"tensor.insert_slice {neg} into {e2}[0, 0, 0, 0] [1, {heads}, {LS}, {LHD // 2}] [1, 1, 1, 1] : {tt(half)} into {tt(h4)}")
    rot = t.op(f"tensor.insert_slice {lo} into {i1}[0, 0, 0, {LHD // 2}] [1, {heads}, {LS}, {LHD // 2}] [1, 1, 1, 1] : {tt(half)} into {tt(h4)}")
    return t.binary("add", c, t.mul(rot, sin, h4, [1, 1, LS, LHD], h4), h4, h4, h4)


def repeat_kv(t: Text, x: str) -> str:
    g = LH // LKV
    x5 = t.reshape(x, [1, LKV, LS, LHD], [1, LKV, 1, LS, LHD])
    r = t.binary("add", x5, t.zeros([1, LKV, g, LS, LHD]), [1, LKV, 1, LS, LHD], [1, LKV, g, LS, LHD], [1, LKV, g, LS, LHD])
    r = t.op(f"tosa.identity {r} : ({tt([1, LKV, g, LS, LHD])}) -> {tt([1, LKV, g, LS, LHD])}")
    return t.reshape(r, [1, LKV, g, LS, LHD], [1, LH, LS, LHD])


def deepseek_layers(n_layers: int) -> str:
    t = Text()
    args = [f"%x: {tt([1, LS, LD])}", f"%mask: {tt([1, 1, LS, LS])}", f"%inv_freq: {tt([LHD // 2])}"]
    for i in range(n_layers):
        args += [f"%ln1_{i}: {tt([LD])}", f"%wq{i}: {tt([LD, LD])}", f"%bq{i}: {tt([LD])}",
                 f"%wk{i}: {tt([LKV * LHD, LD])}", f"%bk{i}: {tt([LKV * LHD])}",
                 f"%wv{i}: {tt([LKV * LHD, LD])}", f"%bv{i}: {tt([LKV * LHD])}", f"%wo{i}: {tt([LD, LD])}",
                 f"%ln2_{i}: {tt([LD])}", f"%wg{i}: {tt([LF, LD])}", f"%wu{i}: {tt([LF, LD])}",
                 f"%wd{i}: {tt([LD, LF])}"]
    # The tables: cos/sin(inv_freq ⊗ positions), repeated along a new axis.
    h2 = LHD // 2
    f3 = t.binary("add", t.reshape("%inv_freq", [h2], [1, h2, 1]), t.zeros([1, h2, 1]), [1, h2, 1], [1, h2, 1], [1, h2, 1])
    pos = t.op(f'"tosa.const"() <{{values = dense<[{", ".join(map(str, range(LS)))}]> : tensor<{LS}xi64>}}> : () -> tensor<{LS}xi64>')
    posf = t.op(f"tosa.cast {pos} : (tensor<{LS}xi64>) -> {tt([LS])}")
    p3 = t.reshape(posf, [LS], [1, 1, LS])
    z = t.zeros([1])
    ang = t.op(f"tosa.matmul {f3}, {p3}, {z}, {z} : ({tt([1, h2, 1])}, {tt([1, 1, LS])}, tensor<1xf32>, tensor<1xf32>) -> {tt([1, h2, LS])}")
    ang = t.reshape(t.transpose(ang, [1, h2, LS], [0, 2, 1]), [1, LS, h2], [1, LS, 1, h2])
    both = t.binary("add", ang, t.zeros([1, LS, 2, h2]), [1, LS, 1, h2], [1, LS, 2, h2], [1, LS, 2, h2])
    both = t.op(f"tosa.identity {both} : ({tt([1, LS, 2, h2])}) -> {tt([1, LS, 2, h2])}")
    emb = t.reshape(both, [1, LS, 2, h2], [1, LS, LHD])
    tabs = []
    for fn in ("cos", "sin"):
        v = t.op(f"math.{fn} {emb} : {tt([1, LS, LHD])}")
        one = t.op("arith.constant dense<1.000000e+00> : tensor<1xf32>")
        v = t.mul(v, t.reshape(one, [1], [1, 1, 1]), [1, LS, LHD], [1, 1, 1], [1, LS, LHD])
        tabs.append(t.reshape(v, [1, LS, LHD], [1, 1, LS, LHD]))
    mask2 = t.reshape("%mask", [1, 1, LS, LS], [LS, LS])
    zero = t.op("arith.constant 0.000000e+00 : f32")
    mask2 = t.binary("add", t.op(f"tensor.splat {zero} : {tt([LS, LS])}"), mask2, [LS, LS], [LS, LS], [LS, LS])
    mask3 = t.reshape(mask2, [LS, LS], [1, LS, LS])
    h = "%x"
    hs, sc = [1, LS, LD], [LH, LS, LS]
    for i in range(n_layers):
        xn = rms_norm(t, h, f"%ln1_{i}")
        q = rope(t, projection(t, xn, f"%wq{i}", f"%bq{i}", LD), LH, *tabs)
        k = rope(t, projection(t, xn, f"%wk{i}", f"%bk{i}", LKV * LHD), LKV, *tabs)
        v = projection(t, xn, f"%wv{i}", f"%bv{i}", LKV * LHD)
        v = t.transpose(t.reshape(v, [1, LS, LKV * LHD], [1, LS, LKV, LHD]), [1, LS, LKV, LHD], [0, 2, 1, 3])
        kr, vr = repeat_kv(t, k), repeat_kv(t, v)
        kt = t.transpose(kr, [1, LH, LS, LHD], [0, 1, 3, 2])
        q3 = t.reshape(q, [1, LH, LS, LHD], [LH, LS, LHD])
        k3 = t.reshape(kt, [1, LH, LHD, LS], [LH, LHD, LS])
        z = t.zeros([1])
        s = t.op(f"tosa.matmul {q3}, {k3}, {z}, {z} : ({tt([LH, LS, LHD])}, {tt([LH, LHD, LS])}, tensor<1xf32>, tensor<1xf32>) -> {tt(sc)}")
        c = t.op(f"arith.constant {float(np.float32(1 / np.sqrt(LHD)))!r} : f32")
        s = t.mul(s, t.op(f"tensor.splat {c} : {tt(sc)}"), sc, sc, sc)
        s = t.binary("add", s, mask3, sc, [1, LS, LS], sc)
        red = [LH, LS, 1]
        mx = t.op(f"tosa.reduce_max {s} {{axis = 2 : i32}} : ({tt(sc)}) -> {tt(red)}")
        ex = t.op(f"math.exp {t.binary('sub', s, mx, sc, red, sc)} : {tt(sc)}")
        sm = t.op(f"tosa.reduce_sum {ex} {{axis = 2 : i32}} : ({tt(sc)}) -> {tt(red)}")
        lse = t.binary("add", mx, t.op(f"tosa.log {sm} : ({tt(red)}) -> {tt(red)}"), red, red, red)
        p = t.op(f"math.exp {t.binary('sub', s, lse, sc, red, sc)} : {tt(sc)}")
        v3 = t.reshape(vr, [1, LH, LS, LHD], [LH, LS, LHD])
        o = t.op(f"tosa.matmul {p}, {v3}, {z}, {z} : ({tt(sc)}, {tt([LH, LS, LHD])}, tensor<1xf32>, tensor<1xf32>) -> {tt([LH, LS, LHD])}")
        o = t.transpose(t.reshape(o, [LH, LS, LHD], [1, LH, LS, LHD]), [1, LH, LS, LHD], [0, 2, 1, 3])
        o = t.reshape(o, [1, LS, LH, LHD], hs)
        h = t.binary("add", h, linear(t, o, f"%wo{i}", LD, LD), hs, hs, hs)
        xn = rms_norm(t, h, f"%ln2_{i}")
        g = linear(t, xn, f"%wg{i}", LD, LF)
        fs = [1, LS, LF]
        act = t.mul(g, t.op(f"tosa.sigmoid {g} : ({tt(fs)}) -> {tt(fs)}"), fs, fs, fs)
        m = t.mul(act, linear(t, xn, f"%wu{i}", LD, LF), fs, fs, fs)
        h = t.binary("add", h, linear(t, m, f"%wd{i}", LF, LD), hs, hs, hs)
    return ("#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>\n"
            f"func.func @kernel({', '.join(args)}) -> {tt(hs)} {{\n" + "\n".join(t.lines) +
            f"\n  return {h} : {tt(hs)}\n}}\n")


def deepseek_weights(n_layers: int, rng) -> list[np.ndarray]:
    def w(*shape, scale=None):
        return (rng.standard_normal(shape) * (scale or 1 / np.sqrt(shape[-1]))).astype(np.float32)
    x = rng.standard_normal((1, LS, LD)).astype(np.float32)
    mask = np.triu(np.full((LS, LS), -3.4028234663852886e38, np.float32), 1)[None, None]
    inv_freq = (1.0 / (10000.0 ** (np.arange(0, LHD, 2) / LHD))).astype(np.float32)
    args = [x, mask, inv_freq]
    for _ in range(n_layers):
        args += [1 + w(LD, scale=0.1), w(LD, LD), w(LD, scale=0.1), w(LKV * LHD, LD),
                 w(LKV * LHD, scale=0.1), w(LKV * LHD, LD), w(LKV * LHD, scale=0.1), w(LD, LD),
                 1 + w(LD, scale=0.1), w(LF, LD), w(LF, LD), w(LD, LF)]
    return args


def numpy_qwen2(args: list[np.ndarray], n_layers: int) -> np.ndarray:
    """The Qwen2 decoder layer (HF modeling_qwen2), in float64."""
    x, mask, inv_freq = (a.astype(np.float64) for a in args[:3])
    ang = np.arange(LS)[:, None] * inv_freq[None]
    cos, sin = np.cos(np.concatenate([ang, ang], -1)), np.sin(np.concatenate([ang, ang], -1))

    def norm(h, w):
        return h / np.sqrt(np.mean(h * h, -1, keepdims=True) + 1e-6) * w

    def rot(xh):
        return xh * cos + np.concatenate([-xh[..., LHD // 2:], xh[..., :LHD // 2]], -1) * sin

    h = x[0]
    for i in range(n_layers):
        ln1, wq, bq, wk, bk, wv, bv, wo, ln2, wg, wu, wd = (a.astype(np.float64) for a in args[3 + 12 * i:15 + 12 * i])
        xn = norm(h, ln1)
        q = (xn @ wq.T + bq).reshape(LS, LH, LHD).transpose(1, 0, 2)
        k = (xn @ wk.T + bk).reshape(LS, LKV, LHD).transpose(1, 0, 2)
        v = (xn @ wv.T + bv).reshape(LS, LKV, LHD).transpose(1, 0, 2)
        q, k = rot(q), rot(k)
        k, v = np.repeat(k, LH // LKV, 0), np.repeat(v, LH // LKV, 0)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(LHD) + mask[0, 0]
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        o = (p @ v).transpose(1, 0, 2).reshape(LS, LD)
        h = h + o @ wo.T
        xn = norm(h, ln2)
        g = xn @ wg.T
        h = h + ((g / (1 + np.exp(-g))) * (xn @ wu.T)) @ wd.T
    return h[None]


def test_deepseek_layer_is_five_kernels():
    """Each decoder layer adds 5 compute ops: q|k|v with its RMSNorm, bias
    and RoPE; attention; o with the residual; gate|up with the RMSNorm and
    SwiGLU; down with the residual (the RoPE tables and the mask are computed
    once, before the first layer). Weights and biases, plain arguments, are
    packed once."""
    counts = []
    for n in (1, 2):
        out, remarks = fused(deepseek_layers(n))
        counts.append(compute_ops(remarks))
        kernel = out[out.index("func.func @kernel("):]
        assert kernel.count("rlx_mir.attention") == n, out
        assert kernel.count("activation silu glu") == n and kernel.count("rope(") == n, out
        assert kernel.count("norm rms_norm") == 2 * n, out
        assert "rlx_mir.concat" not in kernel and "tosa." not in kernel and "linalg." not in kernel.split("rlx_mir.attention")[-1], out
    assert counts[1] - counts[0] == 5, counts


@pytest.mark.parametrize("device", DEVICES)
def test_deepseek_layer_computes_qwen2(device):
    args = deepseek_weights(1, np.random.default_rng(6))
    ref = numpy_qwen2(args, 1)
    check(deepseek_layers(1), args, [ref], device, rtol=2e-5)


def test_python_runs_with_new_weight_arguments_each_time():
    """A compiled model keeps weight-like arguments as inputs by default:
    each run computes with the values it is given (packing them would reuse
    the first run's)."""
    import rlx
    model = rlx.compile_cpu(rlx.parse(ffn_kernel(True)))
    assert not any(a["is_param"] for a in model.arguments), model.arguments
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, D)).astype(np.float32)
    res = rng.standard_normal((1, 1, D)).astype(np.float32)
    for _ in range(2):
        w1, w3 = ((rng.standard_normal((D, F)) / np.sqrt(D)).astype(np.float32) for _ in range(2))
        w2 = (rng.standard_normal((F, D)) / np.sqrt(F)).astype(np.float32)
        got = model.run(arg0=x, arg1=w1, arg2=w3, arg3=w2, arg4=res)["result0"]
        g = x.astype(np.float64) @ w1
        ref = ((g / (1 + np.exp(-g))) * (x @ w3.astype(np.float64))) @ w2 + res.reshape(1, D)
        assert_close(got, ref.reshape(1, 1, D), rtol=1e-5, atol=1e-5)
