"""rlx_mir.scatter_add, rlx_mir.cumsum and rlx_mir.topk against numpy on the
CPU and the GPU emulator (the generic path: these ops have no kernel
template), and their reverse-mode, forward-mode and vmap rules against
finite differences and a loop over the batch (test_autodiff's checks)."""
from __future__ import annotations

import numpy as np
import pytest

import rlx
from test_autodiff import build, check_grad, check_vmap, rand, t


def tt(shape, et="f32"):
    return t(shape, et)


def run(device, text, inputs):
    m = rlx.parse(text)
    if device == "cpu":
        return rlx.compile_cpu(m).run(inputs)
    return rlx.gpu.compile(m, device="emu").run(inputs)


def fn(args: dict, results: list, body: str) -> str:
    sig = ", ".join(f'%{n}: {tt(s, et)} {{rlx.input = "{n}"}}' for n, (s, et) in args.items())
    names = ", ".join(f"%r{i}" for i in range(len(results)))
    return (f"func.func @f({sig}) -> ({', '.join(results)}) {{\n  {body}\n"
            f"  return {names} : {', '.join(results)}\n}}\n")


DEVICES = ["cpu", "emu"]


# -- scatter_add --------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("et", ["f32", "i32"])
def test_scatter_add_accumulates_repeated_and_clamps_out_of_range_indices(device, et):
    rng = np.random.default_rng(0)
    dt = np.float32 if et == "f32" else np.int32
    dest = (rng.standard_normal((5, 3)) * 4).astype(dt)
    ids = np.array([[1, 4, 1], [0, 7, -2]], np.int64)  # 7 → 4, -2 → 0 (clamped as gather)
    upd = (rng.standard_normal((2, 3, 3)) * 4).astype(dt)
    text = fn({"d": ((5, 3), et), "i": ((2, 3), "i64"), "u": ((2, 3, 3), et)}, [tt((5, 3), et)],
              f"%r0 = rlx_mir.scatter_add %d[%i], %u : {tt((5, 3), et)}, {tt((2, 3), 'i64')}, "
              f"{tt((2, 3, 3), et)}")
    want = dest.astype(np.float64)
    np.add.at(want, np.clip(ids, 0, 4).reshape(-1), upd.reshape(-1, 3).astype(np.float64))
    got = run(device, text, {"d": dest, "i": ids, "u": upd})["result0"]
    np.testing.assert_allclose(got, want.astype(dt), rtol=1e-6, atol=1e-5)


def test_scatter_add_rules():
    rng = np.random.default_rng(1)
    body = (f"  %y = rlx_mir.scatter_add %d[%i], %u : {t((6, 4))}, {t((2, 3), 'i64')}, "
            f"{t((2, 3, 4))}")
    text = build({"d": ((6, 4), "f64"), "i": ((2, 3), "i64"), "u": ((2, 3, 4), "f64")}, body,
                 "%y", (6, 4))
    inputs = {"d": rand(rng, 6, 4), "i": np.array([[1, 5, 1], [0, 2, 5]], np.int64),
              "u": rand(rng, 2, 3, 4), "R": rand(rng, 6, 4)}
    check_grad(text, inputs, ["d", "u"])
    check_vmap(text, inputs, ["i", "u"])  # batched indices too


def test_embedding_gradient_is_a_scatter_add_without_a_vocabulary_limit():
    """gather's reverse rule is scatter_add: no V×V one-hot constant, so a
    table past the old 8192-row limit differentiates."""
    V = 9000
    body = f"  %y = rlx_mir.gather %e[%ids] : {t((V, 2))}, {t((3,), 'i64')}"
    text = build({"e": ((V, 2), "f64"), "ids": ((3,), "i64")}, body, "%y", (3, 2))
    m = rlx.vjp(rlx.parse(text), wrt=["e"], function="f")
    assert "rlx_mir.scatter_add" in m.text() and "9000x9000" not in m.text()
    rng = np.random.default_rng(2)
    R = rng.standard_normal((3, 2))
    ids = np.array([8999, 5, 8999], np.int64)
    g = rlx.compile_cpu(m, entry="f_grad").run(e=rng.standard_normal((V, 2)), ids=ids, R=R,
                                               d_output=np.array(1.0))["d_e"]
    want = np.zeros((V, 2))
    np.add.at(want, ids, R)
    np.testing.assert_array_equal(g, want)


# -- cumsum -------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [1, -1])
def test_cumsum_modes(device, exclusive, reverse, axis):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 4)).astype(np.float32)
    flags = (" exclusive" if exclusive else "") + (" reverse" if reverse else "")
    text = fn({"x": ((2, 5, 4), "f32")}, [tt((2, 5, 4))],
              f"%r0 = rlx_mir.cumsum %x axis = {axis}{flags} : {tt((2, 5, 4))}")
    xd = x.astype(np.float64)
    a = axis % 3
    if reverse:
        xd = np.flip(xd, a)
    want = np.cumsum(xd, a)
    if exclusive:
        want = want - xd
    if reverse:
        want = np.flip(want, a)
    got = run(device, text, {"x": x})["result0"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_cumsum_of_integers_and_bf16(device):
    import ml_dtypes
    x = np.array([[3, -1, 7, 2]], np.int32)
    text = fn({"x": ((1, 4), "i32")}, [tt((1, 4), "i32")],
              f"%r0 = rlx_mir.cumsum %x axis = 1 : {tt((1, 4), 'i32')}")
    np.testing.assert_array_equal(run(device, text, {"x": x})["result0"], np.cumsum(x, 1))
    # bf16 accumulates in f32 and rounds each output once.
    xb = (np.arange(1, 65, dtype=np.float32) / 7).astype(ml_dtypes.bfloat16).reshape(1, 64)
    text = fn({"x": ((1, 64), "bf16")}, [tt((1, 64), "bf16")],
              f"%r0 = rlx_mir.cumsum %x axis = 1 : {tt((1, 64), 'bf16')}")
    want = np.cumsum(xb.astype(np.float64), 1).astype(np.float32).astype(ml_dtypes.bfloat16)
    got = run(device, text, {"x": xb})["result0"]
    np.testing.assert_array_equal(np.asarray(got, np.float32), want.astype(np.float32))


@pytest.mark.parametrize("flags", ["", " exclusive reverse"])
def test_cumsum_rules(flags):
    rng = np.random.default_rng(4)
    body = f"  %y = rlx_mir.cumsum %x axis = 0{flags} : {t((5, 3))}"
    text = build({"x": ((5, 3), "f64")}, body, "%y", (5, 3))
    check_grad(text, {"x": rand(rng, 5, 3), "R": rand(rng, 5, 3)}, ["x"])


# -- topk ---------------------------------------------------------------------

def numpy_topk(x, k):
    """torch.topk's order: NaN first, then descending, ties by lower index."""
    flat = x.reshape(-1, x.shape[-1])
    vals, idx = [], []
    for row in flat:
        order = sorted(range(len(row)), key=lambda i: (not np.isnan(row[i]),
                                                        0.0 if np.isnan(row[i]) else -row[i], i))
        idx.append(order[:k])
        vals.append(row[order[:k]])
    shape = x.shape[:-1] + (k,)
    return np.array(vals).reshape(shape), np.array(idx, np.int64).reshape(shape)


@pytest.mark.parametrize("device", DEVICES)
def test_topk_order_ties_and_nan(device):
    x = np.array([[[1.0, 3.0, 3.0, -2.0, np.nan, 0.5, 3.0, 7.0]],
                  [[0.0, -0.0, 2.0, 2.0, 1.0, np.nan, np.nan, -5.0]]], np.float32)
    text = fn({"x": ((2, 1, 8), "f32")}, [tt((2, 1, 4)), tt((2, 1, 4), "i64")],
              f"%r0, %r1 = rlx_mir.topk %x k = 4 : {tt((2, 1, 8))}")
    got = run(device, text, {"x": x})
    want_v, want_i = numpy_topk(x, 4)
    np.testing.assert_array_equal(got["result1"], want_i)
    np.testing.assert_array_equal(got["result0"], want_v)


@pytest.mark.parametrize("device", DEVICES)
def test_topk_random_rows(device):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 40)).astype(np.float32)
    text = fn({"x": ((3, 40), "f32")}, [tt((3, 7)), tt((3, 7), "i64")],
              f"%r0, %r1 = rlx_mir.topk %x k = 7 : {tt((3, 40))}")
    got = run(device, text, {"x": x})
    want_v, want_i = numpy_topk(x, 7)
    np.testing.assert_array_equal(got["result1"], want_i)
    np.testing.assert_array_equal(got["result0"], want_v)


def test_topk_rules():
    rng = np.random.default_rng(6)
    body = f"  %y, %i = rlx_mir.topk %x k = 3 : {t((2, 6))}"
    text = build({"x": ((2, 6), "f64")}, body, "%y", (2, 3))
    check_grad(text, {"x": rand(rng, 2, 6), "R": rand(rng, 2, 3)}, ["x"])


def test_index_op_errors_are_diagnostics():
    bad = {
        f"%y, %i = rlx_mir.topk %x k = 9 : {tt((2, 8))}": "topk k = 9 must be in [1, 8]",
        f"%y = rlx_mir.cumsum %x axis = 2 : {tt((2, 8))}": "axis",
        f"%y = rlx_mir.scatter_add %x[%i], %x : {tt((2, 8))}, {tt((3,), 'i64')}, {tt((2, 8))}":
            "scatter_add updates must be indices.shape + dest.shape[1:] = 3x8, got 2x8",
    }
    for body, message in bad.items():
        text = (f"func.func @f(%x: {tt((2, 8))}, %i: {tt((3,), 'i64')}) {{\n  {body}\n"
                "  return\n}\n")
        with pytest.raises(rlx.RlxError) as e:
            rlx.parse(text)
        assert message in str(e.value), (body, str(e.value))


def test_new_ops_from_python_without_new_code():
    """rlx.hir.Function.emit builds any registered op from its text, typed by
    the op's own shape rule: the new ops need no Python of their own."""
    from rlx.hir import Function
    f = Function("f")
    x = f.input("x", (2, 6))
    values, indices = f.emit("rlx_mir.topk {0} k = 2 : {t0}", [x], num_results=2)
    assert values.shape == (2, 2) and indices.dtype == "i64"
    c, = f.emit("rlx_mir.cumsum {0} axis = 1 : {t0}", [x])
    f.output("v", values)
    f.output("i", indices)
    f.output("c", c)
    rng = np.random.default_rng(7)
    xv = rng.standard_normal((2, 6)).astype(np.float32)
    out = rlx.compile_cpu(f.build()).run(x=xv)
    want_v, want_i = numpy_topk(xv, 2)
    np.testing.assert_array_equal(out["i"], want_i)
    np.testing.assert_array_equal(out["v"], want_v)
    np.testing.assert_allclose(out["c"], np.cumsum(xv, 1), rtol=1e-6, atol=1e-6)
    with pytest.raises(rlx.RlxError, match="topk k = 9 must be in"):
        f.emit("rlx_mir.topk {0} k = 9 : {t0}", [x], num_results=2)


def test_cpu_topk_and_cumsum_are_the_runtimes_sort_and_running_sum():
    """On the CPU path f32/f64 topk and cumsum call the runtime (a partial
    sort, a running sum: O(V log k), O(V)), not their quadratic linalg forms."""
    import subprocess
    from harness import BUILD
    text = fn({"x": ((3, 10), "f32"), "y": ((3, 10), "f64"), "z": ((3, 10), "bf16")},
              [tt((3, 4)), tt((3, 4), "i64"), tt((3, 10)), tt((3, 10), "f64"),
               tt((3, 10), "bf16")],
              f"%r0, %r1 = rlx_mir.topk %x k = 4 : {tt((3, 10))}\n"
              f"  %r2 = rlx_mir.cumsum %x axis = 1 : {tt((3, 10))}\n"
              f"  %r3 = rlx_mir.cumsum %y axis = 0 reverse : {tt((3, 10), 'f64')}\n"
              f"  %r4 = rlx_mir.cumsum %z axis = 1 : {tt((3, 10), 'bf16')}")
    out = subprocess.run([str(BUILD / "bin" / "rlx-opt"), "--rlx-lower-to-cpu"], input=text,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    calls = [ln for ln in out.stdout.splitlines() if "llvm.call @_mlir_ciface_rlx_cpu" in ln]
    # f32 topk and cumsum, f64 cumsum; bf16's cumsum (f32 sums of bf16) keeps its loops.
    assert sorted(c.split("@")[1].split("(")[0] for c in calls) == [
        "_mlir_ciface_rlx_cpu_cumsum_f32", "_mlir_ciface_rlx_cpu_cumsum_f64",
        "_mlir_ciface_rlx_cpu_topk_f32"], calls


@pytest.mark.parametrize("et", ["f32", "f64"])
def test_cpu_topk_of_long_rows(et):
    """A 100,000-wide row sorted whole (k = V) and a top-50, with many ties
    and NaNs: numpy's stable order (NaN first, larger first, lower index)."""
    rng = np.random.default_rng(8)
    np_type = np.float32 if et == "f32" else np.float64
    x = np.round(rng.standard_normal((2, 100_000)) * 20).astype(np_type)
    x[0, rng.choice(100_000, 50, replace=False)] = np.nan
    for k in (100_000, 50):
        text = fn({"x": ((2, 100_000), et)}, [tt((2, k), et), tt((2, k), "i64")],
                  f"%r0, %r1 = rlx_mir.topk %x k = {k} : {tt((2, 100_000), et)}")
        got = run("cpu", text, {"x": x})
        key = np.where(np.isnan(x), -np.inf, -x)  # NaN first, then descending
        order = np.lexsort((np.arange(x.shape[1])[None].repeat(2, 0), key, ~np.isnan(x)))
        order = order[:, :k]
        np.testing.assert_array_equal(got["result1"], order)
        np.testing.assert_array_equal(got["result0"], np.take_along_axis(x, order, 1))


@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, False), (False, True),
                                               (True, True)])
def test_cpu_cumsum_of_long_axes(exclusive, reverse):
    """f64 prefix sums over 200,000 elements along a strided axis (axis 0 of
    [200000, 3]): numpy's sequential sums, in the order the mode adds."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((200_000, 3))
    flags = (" exclusive" if exclusive else "") + (" reverse" if reverse else "")
    text = fn({"x": ((200_000, 3), "f64")}, [tt((200_000, 3), "f64")],
              f"%r0 = rlx_mir.cumsum %x axis = 0{flags} : {tt((200_000, 3), 'f64')}")
    got = run("cpu", text, {"x": x})["result0"]
    y = x[::-1] if reverse else x
    want = np.cumsum(y, axis=0)
    if exclusive:
        want = np.concatenate([np.zeros((1, 3)), want[:-1]])
    want = want[::-1] if reverse else want
    np.testing.assert_array_equal(got, want)
