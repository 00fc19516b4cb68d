"""rlx_mir.fft, rfft and irfft against numpy.fft (f64 reference), stft and
istft against torch, on the CPU path and the emulator from one body: cases
F1 and F2 (../shared/cases), every length 1-1024, powers of two to 2^16 and
large primes, every norm mode both ways, rfft/irfft round trips with odd n
and n ≠ the input's length, several axes; reverse mode, forward mode and
vmap by central differences (f64); the verifier's errors. Complex values are
in RLX's block layout (real parts, then imaginary parts, along the last
axis)."""
import os

import numpy as np
import pytest

import rlx

from test_autodiff import build, check_grad
from test_quant_int8 import DEVICES, compile_for, tensor


def block(z):
    """A complex array in the block layout (f32)."""
    return np.concatenate([z.real, z.imag], -1).astype(np.float32)


def unblock(a):
    h = a.shape[-1] // 2
    return a[..., :h].astype(np.float64) + 1j * a[..., h:]


def module(ops):
    """One function: each (name, in_type, op_text, out_type) an input %<name>
    and an output <name>_out computed by op_text from it."""
    args = ", ".join(f'%{n}: {ti} {{rlx.input = "{n}"}}' for n, ti, _, _ in ops)
    outs = ", ".join(f'{to} {{rlx.output = "{n}_out"}}' for n, _, _, to in ops)
    body = "\n".join(f"  %{n}_out = {text.format(x='%' + n)}" for n, _, text, _ in ops)
    rets = ", ".join(f"%{n}_out" for n, _, _, _ in ops)
    types = ", ".join(to for _, _, _, to in ops)
    return f"func.func @f({args}) -> ({outs}) {{\n{body}\n  return {rets} : {types}\n}}"


def fft_op(shape, axes, inverse=False, norm=None):
    t = tensor(shape, "f32")
    flags = (" inverse" if inverse else "") + (f' norm = "{norm}"' if norm else "")
    return t, f"rlx_mir.fft {{x}} axes = {list(axes)}{flags} : {t}", t


def numpy_fft(z, axes, inverse, norm):
    f = np.fft.ifftn if inverse else np.fft.fftn
    return f(z, axes=axes, norm=norm)


def rel_error(got, ref):
    return np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)


def bound(n):
    """The issue's f32 budget: 1e-5 · log2(n)."""
    return 1e-5 * max(1.0, np.log2(n))


@pytest.mark.parametrize("device", DEVICES)
def test_cases_f1_f2(device):
    """Cases F1 and F2: odd-length rfft/irfft, the Hermitian bins irfft
    ignores, the block layout, the three norms, n ≠ the input's length, ortho
    scaling by the transformed axis only."""
    t = lambda *s: tensor(s, "f32")  # noqa: E731
    text = module([
        ("r5", t(5), "rlx_mir.rfft {x} axis = 0 : " + t(5) + " -> " + t(6), t(6)),
        ("i5", t(6), "rlx_mir.irfft {x} axis = 0 n = 5 : " + t(6) + " -> " + t(5), t(5)),
        ("i6", t(8), "rlx_mir.irfft {x} axis = 0 n = 6 : " + t(8) + " -> " + t(6), t(6)),
        ("fb", t(8), "rlx_mir.fft {x} axes = [0] : " + t(8), t(8)),
        ("ff", t(8), 'rlx_mir.fft {x} axes = [0] norm = "forward" : ' + t(8), t(8)),
        ("fo", t(8), 'rlx_mir.fft {x} axes = [0] norm = "ortho" : ' + t(8), t(8)),
        ("rn", t(2), 'rlx_mir.rfft {x} axis = 0 n = 4 norm = "ortho" : ' + t(2) + " -> " + t(6), t(6)),
        ("in", t(6), 'rlx_mir.irfft {x} axis = 0 n = 4 norm = "ortho" : ' + t(6) + " -> " + t(4), t(4)),
        ("o2", t(2, 4), 'rlx_mir.rfft {x} axis = 1 norm = "ortho" : ' + t(2, 4) + " -> " + t(2, 6), t(2, 6)),
    ])
    x14 = np.array([1, 2, 3, 4], np.float32)
    spec6 = np.fft.rfft(np.arange(1, 7.0)) + np.array([2j, 0, 0, 7j])
    inputs = {"r5": np.arange(1, 6, dtype=np.float32), "i5": block(np.fft.rfft(np.arange(1, 6.0))),
              "i6": block(spec6), "fb": block(x14 + 0j), "ff": block(x14 + 0j),
              "fo": block(x14 + 0j), "rn": np.ones(2, np.float32),
              "in": block(np.array([1, 0.5 - 0.5j, 0])),
              "o2": np.arange(8, dtype=np.float32).reshape(2, 4)}
    out = compile_for(device, text).run(inputs)
    close = lambda got, want: np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)  # noqa: E731
    close(unblock(out["r5_out"]), [15, -2.5 + 3.4409548j, -2.5 + 0.8122992j])
    close(out["i5_out"], [1, 2, 3, 4, 5])
    close(out["i6_out"], [1, 2, 3, 4, 5, 6])  # not [1.5, -0.833...]: DC/Nyquist imag ignored
    close(out["fb_out"], [10, -2, -2, -2, 0, 2, 0, -2])  # F1's block layout
    close(unblock(out["ff_out"]), [2.5, -0.5 + 0.5j, -0.5, -0.5 - 0.5j])
    close(unblock(out["fo_out"]), [5, -1 + 1j, -1, -1 - 1j])
    close(unblock(out["rn_out"]), [1, 0.5 - 0.5j, 0])
    close(out["in_out"], [1, 1, 0, 0])
    close(unblock(out["o2_out"])[0], [3, -1 + 1j, -1])


def sweep_lengths():
    """Every length 1-1024 with RLX_FFT_LENGTHS=all (minutes on the
    emulator); by default every length to 48 and a spread above it: each
    radix and Bluestein path, odd composites and primes, 1000-1024."""
    if os.environ.get("RLX_FFT_LENGTHS") == "all":
        return list(range(1, 1025))
    spread = [n for n in range(49, 1000) if n % 41 == 7]  # 48, 89, 130, ...: every shape class
    return list(range(1, 49)) + spread + [97, 127, 509, 512, 625, 729, 1000, 1009, 1018, 1023, 1024]


@pytest.mark.parametrize("device", DEVICES)
def test_every_length(device):
    """Lengths 1-1024 (forward, backward norm; see sweep_lengths), 32 per
    function: relative error ≤ 1e-5·log2(n). The CPU path compiles this
    sweep without LLVM optimization (-O3 JIT time is a second per length);
    the optimized code is checked by the other tests."""
    rng = np.random.default_rng(0)
    lengths = sorted(set(sweep_lengths()))
    worst = (0.0, 0)
    for start in range(0, len(lengths), 32):
        chunk = lengths[start:start + 32]
        ops, inputs, refs = [], {}, {}
        for n in chunk:
            t, text, to = fft_op((2 * n,), [0])
            ops.append((f"x{n}", t, text, to))
            z = rng.standard_normal(n) + 1j * rng.standard_normal(n)
            inputs[f"x{n}"], refs[n] = block(z), np.fft.fft(z)
        m = rlx.parse(module(ops))
        model = (rlx.compile_cpu(m, opt_level=0) if device == "cpu"
                 else rlx.gpu.compile(m, device=device))
        out = model.run(inputs)
        worst = max([worst] + [(rel_error(unblock(out[f"x{n}_out"]), refs[n]) / bound(n), n)
                               for n in chunk])
    assert worst[0] <= 1.0, f"n = {worst[1]}: error {worst[0]:.2f} x the budget"


@pytest.mark.parametrize("device", DEVICES)
def test_long_lengths_norms_and_inverse(device):
    """Powers of two to 2^16, primes (997, 4099: Bluestein), a product of
    two primes above the radix bound (67·71), each norm, forward and
    inverse."""
    cases = [(2 ** k, False, None) for k in (11, 13, 16)]
    cases += [(997, True, "ortho"), (4099, False, "forward"), (67 * 71, True, None),
              (1 << 12, True, "forward"), (3 ** 7, False, "ortho"), (5 ** 5, True, "backward")]
    rng = np.random.default_rng(1)
    ops, inputs, refs = [], {}, {}
    for i, (n, inverse, norm) in enumerate(cases):
        t, text, to = fft_op((2, 2 * n), [1], inverse, norm)
        ops.append((f"x{i}", t, text, to))
        z = rng.standard_normal((2, n)) + 1j * rng.standard_normal((2, n))
        inputs[f"x{i}"], refs[i] = block(z), numpy_fft(z, [1], inverse, norm or "backward")
    out = compile_for(device, module(ops)).run(inputs)
    for i, (n, inverse, norm) in enumerate(cases):
        err = rel_error(unblock(out[f"x{i}_out"]), refs[i])
        assert err <= bound(n), (n, inverse, norm, err)


@pytest.mark.parametrize("device", DEVICES)
def test_axes_rfft_irfft_round_trips(device):
    """fftn over two axes of a 3-D array (one of them not last), rfft and
    irfft along a middle axis with n cut and padded, odd n round trips."""
    rng = np.random.default_rng(2)
    z = rng.standard_normal((3, 10, 7)) + 1j * rng.standard_normal((3, 10, 7))
    x = rng.standard_normal((4, 9, 5))
    t3 = tensor((3, 10, 14), "f32")
    rt = tensor((4, 9, 5), "f32")
    ops = [("a", t3, f'rlx_mir.fft {{x}} axes = [0, -1] norm = "ortho" : {t3}', t3),
           ("b", t3, f"rlx_mir.fft {{x}} axes = [1] inverse : {t3}", t3),
           ("c", rt, f"rlx_mir.rfft {{x}} axis = 1 : {rt} -> {tensor((4, 5, 10), 'f32')}",
            tensor((4, 5, 10), "f32")),
           ("d", rt, f"rlx_mir.rfft {{x}} axis = 1 n = 6 : {rt} -> {tensor((4, 4, 10), 'f32')}",
            tensor((4, 4, 10), "f32")),
           ("e", rt, f'rlx_mir.rfft {{x}} axis = -1 n = 11 norm = "forward" : {rt} -> '
                     f'{tensor((4, 9, 12), "f32")}', tensor((4, 9, 12), "f32")),
           ("f", tensor((4, 5, 10), "f32"),
            f"rlx_mir.irfft {{x}} axis = 1 n = 9 : {tensor((4, 5, 10), 'f32')} -> {rt}", rt),
           ("g", tensor((4, 9, 12), "f32"),
            f'rlx_mir.irfft {{x}} axis = 2 n = 11 norm = "forward" : {tensor((4, 9, 12), "f32")} -> '
            f'{tensor((4, 9, 11), "f32")}', tensor((4, 9, 11), "f32")),
           ("h", tensor((4, 9, 12), "f32"),
            f'rlx_mir.irfft {{x}} axis = 2 n = 7 : {tensor((4, 9, 12), "f32")} -> '
            f'{tensor((4, 9, 7), "f32")}', tensor((4, 9, 7), "f32"))]
    spec_c = np.fft.rfft(x, axis=1)
    spec_e = np.fft.rfft(x, n=11, axis=-1, norm="forward")
    inputs = {"a": block(z), "b": block(z), "c": x.astype(np.float32), "d": x.astype(np.float32),
              "e": x.astype(np.float32), "f": block(spec_c), "g": block(spec_e),
              "h": block(spec_e)}
    out = compile_for(device, module(ops)).run(inputs)
    check = lambda got, ref: np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())  # noqa: E731
    check(unblock(out["a_out"]), np.fft.fftn(z, axes=(0, 2), norm="ortho"))
    check(unblock(out["b_out"]), np.fft.ifft(z, axis=1))
    check(unblock(out["c_out"]), spec_c)
    check(unblock(out["d_out"]), np.fft.rfft(x, n=6, axis=1))
    check(unblock(out["e_out"]), spec_e)
    check(out["f_out"], x)  # round trip, odd n = 9
    check(out["g_out"], np.pad(x, [(0, 0), (0, 0), (0, 6)]))  # n = 11: the zero-padded signal
    check(out["h_out"], np.fft.irfft(spec_e, n=7, axis=2, norm="backward"))


@pytest.mark.parametrize("device", DEVICES)
def test_row_forms_in_every_type(device):
    """The transforms the GPU path runs as its shared-memory row kernel
    (along the last axis; decomposed on the CPU path), in each element type:
    an rfft cutting its rows (n < the stored length), an inverse fft in f64,
    an rfft in f16 and an irfft in bf16 (inputs the narrow types hold
    exactly; they compute in f32 and round once)."""
    rng = np.random.default_rng(9)
    exact16 = lambda v: v.astype(np.float16).astype(np.float32)  # noqa: E731
    exactbf = lambda v: (v.astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)  # noqa: E731
    x = rng.standard_normal((3, 10)).astype(np.float32)
    z = rng.standard_normal((2, 12)) + 1j * rng.standard_normal((2, 12))
    h = exact16(rng.standard_normal((2, 16)))
    spec = exactbf(rng.standard_normal((2, 10)))
    ops = [("cut", tensor((3, 10), "f32"), f"rlx_mir.rfft {{x}} axis = 1 n = 6 : "
            f"{tensor((3, 10), 'f32')} -> {tensor((3, 8), 'f32')}", tensor((3, 8), "f32")),
           ("d64", tensor((2, 24), "f64"), f'rlx_mir.fft {{x}} axes = [1] inverse norm = "ortho" : '
            f"{tensor((2, 24), 'f64')}", tensor((2, 24), "f64")),
           ("h16", tensor((2, 16), "f16"), f"rlx_mir.rfft {{x}} axis = -1 : {tensor((2, 16), 'f16')}"
            f" -> {tensor((2, 18), 'f16')}", tensor((2, 18), "f16")),
           ("b16", tensor((2, 10), "bf16"), f"rlx_mir.irfft {{x}} axis = 1 n = 8 : "
            f"{tensor((2, 10), 'bf16')} -> {tensor((2, 8), 'bf16')}", tensor((2, 8), "bf16"))]
    out = compile_for(device, module(ops)).run(
        {"cut": x, "d64": np.concatenate([z.real, z.imag], -1), "h16": h.astype(np.float16),
         "b16": spec})
    check = lambda got, ref, tol: np.testing.assert_allclose(  # noqa: E731
        np.asarray(got).astype(np.result_type(got, np.float64)), ref, rtol=0,
        atol=tol * np.abs(ref).max())
    check(unblock(out["cut_out"]), np.fft.rfft(x.astype(np.float64), n=6, axis=1), 1e-5)
    check(unblock(np.asarray(out["d64_out"], np.float64)), np.fft.ifft(z, axis=1, norm="ortho"),
          1e-12)
    check(unblock(np.asarray(out["h16_out"], np.float32)), np.fft.rfft(h.astype(np.float64)), 2e-3)
    check(out["b16_out"], np.fft.irfft(unblock(spec), n=8, axis=1), 1.6e-2)


def test_gradients_jvp_vmap():
    """Reverse mode (the adjoint transforms), forward mode and vmap of each
    op by central differences in f64, with n cut and padded and every norm."""
    t = lambda *s: tensor(s, "f64")  # noqa: E731
    rng = np.random.default_rng(3)

    def check(in_shape, body, out_shape):
        feeds = {"x": rng.standard_normal(in_shape), "R": rng.standard_normal(out_shape)}
        check_grad(build({"x": (in_shape, "f64")}, body, "%y", out_shape), feeds, ["x"])

    check((3, 10), f'  %w = rlx_mir.fft %x axes = [0, 1] norm = "ortho" : {t(3, 10)}\n'
                   f'  %y = rlx_mir.fft %w axes = [1] inverse norm = "forward" : {t(3, 10)}', (3, 10))
    for n, norm in ((7, "backward"), (4, "ortho"), (10, "forward")):
        bins = n // 2 + 1
        check((2, 6, 3), f'  %y = rlx_mir.rfft %x axis = 1 n = {n} norm = "{norm}" : '
                         f'{t(2, 6, 3)} -> {t(2, bins, 6)}', (2, bins, 6))
        check((2, 4, 6), f'  %y = rlx_mir.irfft %x axis = 1 n = {n} norm = "{norm}" : '
                         f'{t(2, 4, 6)} -> {t(2, n, 3)}', (2, n, 3))
    check((5, 8), f"  %y = rlx_mir.irfft %x axis = -1 n = 9 : {t(5, 8)} -> {t(5, 9)}", (5, 9))
    check((5, 8), f"  %y = rlx_mir.rfft %x axis = -1 n = 5 : {t(5, 8)} -> {t(5, 6)}", (5, 6))


@pytest.mark.parametrize("op,message", [
    ("rlx_mir.fft %x axes = [0] : tensor<3x5xf32>", "complex in the block layout"),
    ("rlx_mir.fft %x axes = [] : tensor<3x4xf32>", "at least one axis"),
    ("rlx_mir.fft %x axes = [1, -1] : tensor<3x4xf32>", "must not repeat"),
    ("rlx_mir.fft %x axes = [2] : tensor<3x4xf32>", "axis"),
    ('rlx_mir.fft %x axes = [0] norm = "half" : tensor<3x4xf32>', "norm must be"),
    ("rlx_mir.rfft %x axis = 0 n = 0 : tensor<3x4xf32> -> tensor<1x8xf32>", "n >= 1"),
    ("rlx_mir.irfft %x axis = 1 : tensor<3x2xf32> -> tensor<3x0xf32>", "at least 2 bins"),
    ("rlx_mir.rfft %x axis = 1 : tensor<3x4xf32> -> tensor<3x4xf32>", "tensor<3x6xf32>"),
])
def test_verifier(op, message):
    shape = op.split(": ")[-1].split(" ->")[0]
    out = op.split("-> ")[-1] if "->" in op else shape
    text = f"func.func @f(%x: {shape}) -> {out} {{\n  %y = {op}\n  return %y : {out}\n}}"
    with pytest.raises(rlx.RlxError, match=message):
        rlx.parse(text)


@pytest.mark.parametrize("et", ["bf16", "f16"])
def test_low_precision_gradients(et):
    """rfft/irfft in bf16 and f16: the derivative chains compute in f32 (their
    constants too) and round once; the gradient equals the f64 one within
    the element type's precision."""
    rng = np.random.default_rng(4)
    # Values the element type holds exactly (bf16: the top 16 bits of an f32).
    exact = ((lambda v: (v.view(np.uint32) & 0xFFFF0000).view(np.float32)) if et == "bf16"
             else (lambda v: v.astype(np.float16).astype(np.float32)))
    x = exact(rng.standard_normal((3, 8)).astype(np.float32))
    r = exact(rng.standard_normal((3, 6)).astype(np.float32))
    grads = {}
    for t_et in (et, "f64"):
        t = lambda *s: tensor(s, t_et)  # noqa: E731
        body = (f"  %s = rlx_mir.rfft %x axis = 1 n = 10 : {t(3, 8)} -> {t(3, 12)}\n"
                f"  %y = rlx_mir.irfft %s axis = 1 n = 6 : {t(3, 12)} -> {t(3, 6)}")
        m = rlx.parse(build({"x": ((3, 8), t_et)}, body, "%y", (3, 6), et=t_et))
        m.run_pipeline("rlx-mir-grad{wrt=x}")
        feeds = {"x": x.astype(np.float64) if t_et == "f64" else x,
                 "R": r.astype(np.float64) if t_et == "f64" else r,
                 "d_output": np.array(1.0, np.float64 if t_et == "f64" else np.float32)}
        grads[t_et] = np.asarray(rlx.compile_cpu(m, entry="f_grad").run(feeds)["d_x"], np.float64)
    ref = grads["f64"]
    np.testing.assert_allclose(grads[et], ref, rtol=0, atol=3e-2 * np.abs(ref).max())


@pytest.mark.parametrize("device", DEVICES)
def test_stft_against_torch(device):
    """rlx_mir.stft against torch.stft (return_complex, onesided): centred
    with reflect padding and a Hann window (Whisper's 400/160 on 1 s of
    audio), not centred, a window shorter than n_fft, normalized, one
    signal and a batch."""
    import torch
    rng = np.random.default_rng(5)
    cases = [("w", (16000,), 400, 160, 400, True, False), ("a", (2, 50), 16, 4, 16, False, False),
             ("b", (3, 37), 12, 5, 7, True, True), ("c", (29,), 8, 3, 8, True, False)]
    ops, inputs, refs = [], {}, {}
    for name, shape, nfft, hop, win, center, normalized in cases:
        x = rng.standard_normal(shape).astype(np.float32)
        w = torch.hann_window(win, dtype=torch.float64).numpy().astype(np.float32)
        ref = torch.stft(torch.from_numpy(x.astype(np.float64)), nfft, hop, win_length=win,
                         window=torch.from_numpy(w.astype(np.float64)), center=center,
                         pad_mode="reflect", normalized=normalized, onesided=True,
                         return_complex=True).numpy()
        out_t = tensor(ref.shape[:-1] + (2 * ref.shape[-1],), "f32")
        flags = (" center" if center else "") + (" normalized" if normalized else "")
        ops.append((name, tensor(shape, "f32"),
                    f"rlx_mir.stft {{x}}, %{name}_w n_fft = {nfft} hop_length = {hop}{flags} : "
                    f"{tensor(shape, 'f32')}, {tensor((win,), 'f32')} -> {out_t}", out_t))
        inputs[name], inputs[f"{name}_w"], refs[name] = x, w, ref
    text = module(ops)
    # The windows are inputs too.
    text = text.replace("func.func @f(", "func.func @f(" + ", ".join(
        f'%{n}_w: {tensor((c[4],), "f32")} {{rlx.input = "{n}_w"}}' for n, c in
        zip([c[0] for c in cases], cases)) + ", ", 1)
    out = compile_for(device, text).run(inputs)
    for name, *_ in cases:
        got, ref = unblock(out[f"{name}_out"]), refs[name]
        assert got.shape == ref.shape, name
        np.testing.assert_allclose(got, ref, rtol=0, atol=2e-5 * np.abs(ref).max(), err_msg=name)


def istft_case(rng, batch, nfft, hop, win, center, normalized, length, frames, signal, window):
    """(spectrogram, window, torch.istft's f64 result or None where torch
    refuses): the spectrogram is stft's of `signal` or random; `window` is
    torch's window function's name."""
    import torch
    w = getattr(torch, f"{window}_window")(win, dtype=torch.float64).numpy().astype(np.float32)
    kw = dict(win_length=win, window=torch.from_numpy(w.astype(np.float64)), center=center,
              normalized=normalized, onesided=True)
    if signal is not None:
        spec = torch.stft(torch.from_numpy(signal.astype(np.float64)), nfft, hop,
                          return_complex=True, pad_mode="reflect", **kw).numpy()
    else:
        shape = batch + (nfft // 2 + 1, frames)
        spec = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    spec = unblock(block(spec))  # what the f32 input holds
    try:
        ref = torch.istft(torch.from_numpy(spec), nfft, hop, length=length, **kw).numpy()
    except RuntimeError:
        ref = None
    return block(spec), w, ref


@pytest.mark.parametrize("device", DEVICES)
def test_istft_against_torch(device):
    """rlx_mir.istft against torch.istft (onesided): Whisper's 400/160 round
    trip of 1 s of noise back to the signal; not centred (a Hamming window,
    non-zero at its ends); a window shorter than n_fft; normalized;
    `length` past the signal (zero padding) and short of it; a batch; a
    constant window; and a window whose envelope vanishes inside the
    result, which torch refuses and RLX poisons with NaN there."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal(16000).astype(np.float32)
    # name, batch, n_fft, hop, win, center, normalized, length, frames, signal, window
    cases = [("w", (), 400, 160, 400, True, False, 16000, 101, x, "hann"),
             ("a", (2,), 16, 4, 16, False, False, None, 6, None, "hamming"),
             ("b", (3,), 12, 3, 7, True, True, None, 8, None, "hann"),
             ("c", (), 8, 2, 8, True, False, 15, 4, None, "hann"),
             ("s", (), 16, 4, 16, True, False, 20, 8, None, "hann"),
             ("k", (2,), 10, 5, 10, True, False, None, 5, None, "hann"),
             ("z", (), 8, 2, 8, False, False, None, 4, None, "hann")]
    ops, inputs, refs, consts = [], {}, {}, {}
    for name, batch, nfft, hop, win, center, normalized, length, frames, signal, wfn in cases:
        spec, w, ref = istft_case(rng, batch, nfft, hop, win, center, normalized, length,
                                  frames, signal, wfn)
        out_shape = batch + ((length if length else
                              nfft + hop * (frames - 1) - (2 * (nfft // 2) if center else 0)),)
        flags = ((" center" if center else "") + (" normalized" if normalized else "")
                 + (f" length = {length}" if length else ""))
        ti, to = tensor(spec.shape, "f32"), tensor(out_shape, "f32")
        ops.append((name, ti, f"rlx_mir.istft {{x}}, %{name}_w n_fft = {nfft} hop_length = {hop}"
                    f"{flags} : {ti}, {tensor((win,), 'f32')} -> {to}", to))
        inputs[name], refs[name] = spec, ref
        if name == "k":  # the window a constant in the module
            consts[name] = w
        else:
            inputs[f"{name}_w"] = w
    text = module(ops)
    text = text.replace("func.func @f(", "func.func @f(" + ", ".join(
        f'%{c[0]}_w: {tensor((c[4],), "f32")} {{rlx.input = "{c[0]}_w"}}' for c in cases
        if c[0] not in consts) + ", ", 1)
    body = "".join(f"  %{n}_w = rlx_mir.constant dense<[{', '.join(map(repr, w.tolist()))}]> : "
                   f"{tensor(w.shape, 'f32')}\n" for n, w in consts.items())
    text = text.replace("{\n", "{\n" + body, 1)
    out = compile_for(device, text).run(inputs)
    for name, *_ in cases:
        got, ref = out[f"{name}_out"].astype(np.float64), refs[name]
        if name == "z":
            # Not centred, a periodic Hann window is 0 at k = 0: torch
            # refuses the first sample, RLX gives NaN there and values
            # elsewhere.
            assert ref is None and np.isnan(got[0]) and np.isfinite(got[1:]).all(), got
            continue
        assert got.shape == ref.shape, name
        np.testing.assert_allclose(got, ref, rtol=0, atol=2e-5 * np.abs(ref).max(), err_msg=name)
    np.testing.assert_allclose(out["w_out"], x, rtol=0, atol=2e-5 * np.abs(x).max())


def test_istft_gradient():
    """The istft chain (irfft, window, overlap-add gather, envelope)
    differentiated in the spectrogram and the window: central differences
    in f64, reverse and forward mode and vmap."""
    t = lambda *s: tensor(s, "f64")  # noqa: E731
    rng = np.random.default_rng(8)
    body = (f"  %y = rlx_mir.istft %s, %w n_fft = 8 hop_length = 2 center length = 9 : "
            f"{t(2, 5, 10)}, {t(6)} -> {t(2, 9)}")
    feeds = {"s": rng.standard_normal((2, 5, 10)), "w": rng.uniform(0.5, 1.5, 6),
             "R": rng.standard_normal((2, 9))}
    check_grad(build({"s": ((2, 5, 10), "f64"), "w": ((6,), "f64")}, body, "%y", (2, 9)),
               feeds, ["s", "w"], vmap_args=["s"])


def test_stft_gradient():
    """The stft chain (gather, window, rfft) differentiated: central
    differences in f64, reverse and forward mode and vmap."""
    t = lambda *s: tensor(s, "f64")  # noqa: E731
    rng = np.random.default_rng(6)
    body = f"  %y = rlx_mir.stft %x, %w n_fft = 8 hop_length = 3 center : {t(2, 20)}, {t(6)} -> {t(2, 5, 14)}"
    feeds = {"x": rng.standard_normal((2, 20)), "w": rng.standard_normal(6),
             "R": rng.standard_normal((2, 5, 14))}
    check_grad(build({"x": ((2, 20), "f64"), "w": ((6,), "f64")}, body, "%y", (2, 5, 14)),
               feeds, ["x", "w"], vmap_args=["x"])
