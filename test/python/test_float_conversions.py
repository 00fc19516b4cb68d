"""The CPU path's float conversions equal ml_dtypes and numpy bit for bit, on
code compiled for CPUs with and without the instructions for them.

Left to LLVM, f32 → bf16 is x86's vcvtneps2bf16 where the CPU has
AVX512-BF16 (it flushes subnormal inputs to zero) and a call of compiler-rt's
``__truncsfbf2`` elsewhere (which the JIT once could not resolve: bf16 layers
failed on AVX2-only machines); f64 → f16/bf16 is a call on every CPU. The CPU
pipeline writes these conversions as its own integer code
(rlx-expand-low-precision-floats{include-bf16}); f32 ↔ f16 stays F16C's, or
``__truncsfhf2`` / ``__extendhfsf2`` without it, which the CPU runtime exports
(lib/Runtime/Common/SoftFloat.cpp; unittests/SoftFloatTest.cpp checks every
exported builtin). Each case is compiled for this machine (``host``) and for
``x86-64-v3`` (AVX2 + F16C, no AVX-512) and ``x86-64`` (SSE2 only: the f16
calls), so every path runs on any x86-64 machine.

References: ml_dtypes (bfloat16, float8_e4m3fn) and numpy (float16), and for
f64 sources a rounding written here with np.rint. A NaN becomes a quiet NaN
of the same sign with its payload's top bits (vcvtneps2bf16 / vcvtps2ph /
PTX cvt.rn); ml_dtypes makes every NaN one canonical pattern, so NaNs are
checked against that rule.

``python test/python/test_float_conversions.py --exhaustive [CPU...]`` runs
f32 → bf16 on all 2^32 inputs (minutes; not part of CI).
"""
from __future__ import annotations

import platform
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from harness import BUILD, RLX_RUN

sys.path.insert(0, str(BUILD / "python_packages"))  # as conftest.py, for --exhaustive
import rlx  # noqa: E402

# Casting NaN/inf inputs to the references' types warns; the values are checked.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

X86 = platform.machine() in ("x86_64", "AMD64")
CPUS = ["host", "x86-64-v3", "x86-64"] if X86 else ["host"]

NARROWING = """
func.func @main(%x: tensor<{n}x{src}> {{rlx.input = "x"}})
    -> (tensor<{n}xf32>, tensor<{n}xf32>, tensor<{n}xf32>) {{
  %b = rlx_mir.cast %x : tensor<{n}x{src}> to tensor<{n}xbf16>
  %h = rlx_mir.cast %x : tensor<{n}x{src}> to tensor<{n}xf16>
  %e = rlx_mir.cast %x : tensor<{n}x{src}> to tensor<{n}xf8E4M3FN>
  %bw = rlx_mir.cast %b : tensor<{n}xbf16> to tensor<{n}xf32>
  %hw = rlx_mir.cast %h : tensor<{n}xf16> to tensor<{n}xf32>
  %ew = rlx_mir.cast %e : tensor<{n}xf8E4M3FN> to tensor<{n}xf32>
  return %bw, %hw, %ew : tensor<{n}xf32>, tensor<{n}xf32>, tensor<{n}xf32>
}}
"""

LOW_TO_F32 = """
func.func @main(%b: tensor<65536xbf16> {rlx.input = "b"}, %h: tensor<65536xf16> {rlx.input = "h"})
    -> (tensor<65536xf32>, tensor<65536xf32>, tensor<65536xf64>) {
  %bw = rlx_mir.cast %b : tensor<65536xbf16> to tensor<65536xf32>
  %hw = rlx_mir.cast %h : tensor<65536xf16> to tensor<65536xf32>
  %hd = rlx_mir.cast %h : tensor<65536xf16> to tensor<65536xf64>
  return %bw, %hw, %hd : tensor<65536xf32>, tensor<65536xf32>, tensor<65536xf64>
}
"""


def compile_for(text: str, cpu: str):
    try:
        return rlx.compile_cpu(rlx.parse(text), cpu=cpu)
    except rlx.RlxError as e:
        if "lacks" in str(e):
            pytest.skip(f"this machine cannot run code for {cpu}: {e}")
        raise


def run(model, **inputs) -> list[np.ndarray]:
    out = model.run(**inputs)
    return [out[k] for k in sorted(out, key=lambda k: int(k.removeprefix("result")))]


# --- samples ---------------------------------------------------------------

def f32(bits) -> np.ndarray:
    return np.asarray(bits, dtype=np.uint32).view(np.float32)


def specials_f32() -> np.ndarray:
    bits = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
            0x7F800001, 0xFF800001, 0x7FA12345, 0xFFFFFFFF, 0x7FBFFFFF,  # NaNs, quiet and not
            0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,
            0x477FE000, 0x477FEFFF, 0x477FF000, 0xC77FF000,  # f16: 65504, the overflow tie
            0x43E00000, 0x43E80000, 0x43E80001, 0x43F00000]  # E4M3FN: 448, 464, 480
    return f32(bits)


def midpoints(values: np.ndarray) -> np.ndarray:
    """The midpoints between consecutive finite `values` (sorted, as f64),
    with their f32 neighbours: the inputs whose rounding is a tie or next to
    one."""
    v = np.unique(values[np.isfinite(values)].astype(np.float64))
    mid = ((v[:-1] + v[1:]) / 2).astype(np.float32)  # exact: one more bit than the format
    return np.concatenate([mid, np.nextafter(mid, np.float32(np.inf)),
                           np.nextafter(mid, np.float32(-np.inf))])


def f32_sample() -> np.ndarray:
    """Every f32 exponent and top mantissa pattern with the low halves that
    decide bf16 rounding (0, 1, tie - 1, tie, tie + 1, all ones), the ties of
    f16 and E4M3FN and their neighbours, 2^18 uniformly random bit patterns
    (NaN payloads among them) and the special values."""
    hi = np.arange(1 << 16, dtype=np.uint32) << 16
    lows = np.array([0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF], dtype=np.uint32)
    dense = f32((hi[:, None] | lows[None, :]).ravel())
    f16_values = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    e4m3_values = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn)
    rng = np.random.default_rng(0)
    random = f32(rng.integers(0, 1 << 32, size=1 << 18, dtype=np.uint64).astype(np.uint32))
    return np.concatenate([dense, midpoints(f16_values), midpoints(e4m3_values), random,
                           specials_f32()])


# --- what the conversions must give ----------------------------------------

def quiet_nan_rule(x_bits: np.ndarray, src_mant: int, dst_exp: int, dst_mant: int,
                   src_width: int) -> np.ndarray:
    """The NaN a narrowing gives: sign, all-ones exponent, the payload's top
    bits and the quiet bit."""
    sign = (x_bits >> (src_width - 1)) & 1
    payload = (x_bits & ((1 << src_mant) - 1)) >> (src_mant - dst_mant)
    return ((sign << (dst_exp + dst_mant)) | (((1 << dst_exp) - 1) << dst_mant) | payload
            | (1 << (dst_mant - 1)))


def expect_bits(got_f32: np.ndarray, x: np.ndarray, want: np.ndarray, np_type, exp: int,
                mant: int, what: str):
    """`got_f32` (the narrow result widened exactly to f32) against `want`
    (the narrow type from the reference) bit for bit; NaNs by the quiet-NaN
    rule."""
    got = got_f32.astype(np_type).view(np.uint16)  # exact: the value is in np_type
    width = x.dtype.itemsize * 8
    x_bits = x.view(np.uint32 if width == 32 else np.uint64).astype(np.uint64)
    nan = np.isnan(x)
    want_bits = want.view(np.uint16).astype(np.uint64)
    want_bits[nan] = quiet_nan_rule(x_bits[nan], 23 if width == 32 else 52, exp, mant, width)
    # The widened NaN carries the narrow payload (exact widening): read it back.
    got_f32_bits = got_f32.view(np.uint32).astype(np.uint64)
    got_bits = got.astype(np.uint64)
    got_bits[nan] = (((got_f32_bits[nan] >> 31) << (exp + mant)) | (((1 << exp) - 1) << mant)
                     | ((got_f32_bits[nan] & 0x7FFFFF) >> (23 - mant)))
    bad = np.flatnonzero(got_bits != want_bits)
    assert bad.size == 0, (
        f"{what}: {bad.size} of {x.size} differ, e.g. " + ", ".join(
            f"x={x_bits[i]:#x} got {got_bits[i]:#06x} want {want_bits[i]:#06x}" for i in bad[:6]))


def round_f64(x: np.ndarray, mant: int, min_exp: int, max_finite: float) -> np.ndarray:
    """f64 → a binary format with `mant` stored mantissa bits, smallest normal
    exponent `min_exp`: one rounding to nearest even (np.rint), past the
    largest finite value ±inf. An independent model of IEEE narrowing."""
    with np.errstate(over="ignore", invalid="ignore"):
        _, e = np.frexp(x)  # |x| = m · 2^e, 0.5 <= m < 1
        quantum = np.ldexp(1.0, np.maximum(e - 1, min_exp) - mant)
        r = np.rint(x / quantum) * quantum
        return np.where(np.abs(r) > max_finite, np.copysign(np.inf, x), r)


@pytest.mark.parametrize("cpu", CPUS)
def test_f32_to_bf16_f16_e4m3_bit_for_bit(cpu):
    x = f32_sample()
    model = compile_for(NARROWING.format(src="f32", n=x.size), cpu)
    bw, hw, ew = run(model, x=x)
    expect_bits(bw, x, x.astype(ml_dtypes.bfloat16), ml_dtypes.bfloat16, 8, 7, f"bf16 ({cpu})")
    expect_bits(hw, x, x.astype(np.float16), np.float16, 5, 10, f"f16 ({cpu})")
    # rlx_mir.cast to E4M3FN saturates at ±448 (cvt.rn.satfinite; its
    # documented semantics), then rounds as ml_dtypes does; NaN keeps its sign.
    with np.errstate(invalid="ignore"):
        want = np.clip(x, -448, 448).astype(ml_dtypes.float8_e4m3fn)
    got = ew.astype(ml_dtypes.float8_e4m3fn)  # exact, NaN stays NaN with its sign
    bad = np.flatnonzero(got.view(np.uint8) != want.view(np.uint8))
    assert bad.size == 0, [(hex(x.view(np.uint32)[i]), hex(got.view(np.uint8)[i]),
                            hex(want.view(np.uint8)[i])) for i in bad[:6]]


@pytest.mark.parametrize("cpu", CPUS)
def test_f64_to_bf16_f16_e4m3_rounds_once(cpu):
    """f64 → bf16/f16/E4M3FN goes through f32 rounded to odd, so each rounds
    once (an f32 rounded to nearest would turn values just past a tie into
    ties; LLVM's own f64 → bf16/f16 is a compiler-rt call per element)."""
    rng = np.random.default_rng(1)
    bf16_ties = midpoints(np.arange(1 << 16, dtype=np.uint16).view(ml_dtypes.bfloat16))
    f16_ties = midpoints(np.arange(1 << 16, dtype=np.uint16).view(np.float16))
    e4m3_ties = midpoints(np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn))
    ties = np.concatenate([bf16_ties, f16_ties, e4m3_ties]).astype(np.float64)
    tiny = np.ldexp(1.0, -40)
    x = np.concatenate([ties, ties * (1 + tiny), ties * (1 - tiny),
                        rng.standard_normal(1 << 16) * np.exp2(rng.integers(-140, 128, 1 << 16)),
                        specials_f32().astype(np.float64),
                        np.array([np.nan, -np.nan, 1e300, -1e300, 5e-324, 65519.99999999, 65520.0])])
    model = compile_for(NARROWING.format(src="f64", n=x.size), cpu)
    bw, hw, ew = run(model, x=x)
    want_bf16 = round_f64(x, 7, -126, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max))
    want_f16 = round_f64(x, 10, -14, 65504.0)
    # E4M3FN: saturated at ±448 (rlx_mir.cast), NaN keeps its sign.
    want_e4m3 = round_f64(np.clip(x, -448, 448), 3, -6, 448.0)
    want_e4m3 = np.where(np.isnan(x), np.copysign(np.nan, x), want_e4m3)
    np.testing.assert_array_equal(np.isnan(ew), np.isnan(want_e4m3))
    np.testing.assert_array_equal(np.signbit(ew), np.signbit(want_e4m3))
    ok = ~np.isnan(want_e4m3)
    bad = np.flatnonzero(ok & (ew.astype(np.float64) != want_e4m3))
    assert bad.size == 0, ("e4m3", cpu, [(repr(x[i]), ew[i], want_e4m3[i]) for i in bad[:6]])
    np.testing.assert_array_equal(np.isnan(bw), np.isnan(x))
    np.testing.assert_array_equal(np.isnan(hw), np.isnan(x))
    finite = ~np.isnan(x)
    for got, want, name in ((bw, want_bf16, "bf16"), (hw, want_f16, "f16")):
        bad = np.flatnonzero(finite & (got.astype(np.float64) != want))
        assert bad.size == 0, (name, cpu, [(repr(x[i]), got[i], want[i]) for i in bad[:6]])
        # Signed zeros too.
        np.testing.assert_array_equal(np.signbit(got[finite]), np.signbit(want[finite]))
    # numpy's own f64 → f16 rounds once as well.
    np.testing.assert_array_equal(hw[finite].astype(np.float16), x[finite].astype(np.float16))


@pytest.mark.parametrize("cpu", CPUS)
def test_bf16_f16_widening_is_exact(cpu):
    """Every bf16 and f16 bit pattern widened (f16 → f32 is __extendhfsf2
    without F16C): numpy's and ml_dtypes' values, NaN payloads kept."""
    codes = np.arange(1 << 16, dtype=np.uint16)
    b, h = codes.view(ml_dtypes.bfloat16), codes.view(np.float16)
    model = compile_for(LOW_TO_F32, cpu)
    bw, hw, hd = run(model, b=b, h=h)
    # bf16 inputs arrive as f32 and are rounded back: exact for every code.
    np.testing.assert_array_equal(bw.view(np.uint32), codes.astype(np.uint32) << 16 |
                                  np.where(np.isnan(b.astype(np.float32)), 1 << 22, 0))
    finite = ~np.isnan(h)
    np.testing.assert_array_equal(hw[finite], h[finite].astype(np.float32))
    np.testing.assert_array_equal(hd[finite], h[finite].astype(np.float64))
    np.testing.assert_array_equal(np.signbit(hw), np.signbit(h))
    assert np.isnan(hw[~finite]).all() and np.isnan(hd[~finite]).all()
    # Payload: f16 mantissa bits at the top of f32's, quiet bit set.
    payload = (hw.view(np.uint32)[~finite] >> 13) & 0x3FF
    np.testing.assert_array_equal(payload, (codes[~finite] & 0x3FF) | 0x200)


def test_rlx_run_cpu_option(tmp_path):
    """rlx-run --cpu / --mattr: the code is for that CPU (said in the output)
    and gives the same bits; names this machine cannot run, unknown names and
    malformed lists are errors, and so is --cpu on the GPU path."""
    x = f32_sample()[:4096]
    (tmp_path / "m.mlir").write_text(NARROWING.format(src="f32", n=x.size))
    np.save(tmp_path / "x.npy", x)
    base = [str(RLX_RUN), str(tmp_path / "m.mlir"), "--input", f"x={tmp_path / 'x.npy'}"]
    cpu = "x86-64-v3" if X86 else "host"
    target = [f"--cpu={cpu}"] + (["--mattr=-f16c"] if X86 else [])
    proc = subprocess.run(base + target + ["--output-dir", str(tmp_path / "out")],
                          capture_output=True, text=True)
    if X86 and "lacks" in proc.stderr:
        pytest.skip(proc.stderr)
    assert proc.returncode == 0, proc.stderr
    assert "code for: " + cpu in proc.stdout, proc.stdout
    got = np.load(tmp_path / "out" / "result0.npy")
    expect_bits(got, x, x.astype(ml_dtypes.bfloat16), ml_dtypes.bfloat16, 8, 7, "rlx-run bf16")
    for args, message in ((["--cpu=pentium-9000"], "is not an x86-64 CPU LLVM knows"
                           if X86 else "host only"),
                          (["--mattr=avx2"], "is not +feature or -feature"),
                          (["--mattr=+no-such-feature"], "is not a feature LLVM knows"),
                          (["--cpu=x86-64-v3", "--device=emu"], "--device=cpu")):
        proc = subprocess.run(base + args, capture_output=True, text=True)
        assert proc.returncode == 1 and message in proc.stderr, (args, proc.stderr)
        assert "Stack dump" not in proc.stderr


def test_compile_cpu_refuses_features_this_cpu_lacks():
    """The JIT's code runs here: a feature this CPU does not have is refused
    by name instead of an illegal instruction."""
    if not X86:
        pytest.skip("x86 only")
    flags = open("/proc/cpuinfo").read()
    for feature, flag in (("avx512f", "avx512f"), ("avx512bf16", "avx512_bf16"),
                          ("avx512fp16", "avx512_fp16"), ("avxvnni", "avx_vnni")):
        if f" {flag}" not in flags:
            break
    else:
        pytest.skip("this CPU has every feature tried")
    with pytest.raises(rlx.RlxError, match=f"lacks .*{feature}"):
        rlx.compile_cpu(rlx.parse(NARROWING.format(src="f32", n=4)), mattr="+" + feature)


def exhaustive(cpus: list[str]) -> None:
    """f32 → bf16 on all 2^32 inputs, 2^24 at a time."""
    n = 1 << 24
    for cpu in cpus:
        model = rlx.compile_cpu(rlx.parse(NARROWING.format(src="f32", n=n)), cpu=cpu)
        for chunk in range(1 << 8):
            x = f32(np.arange(chunk << 24, (chunk + 1) << 24, dtype=np.uint64).astype(np.uint32))
            bw = run(model, x=x)[0]
            expect_bits(bw, x, x.astype(ml_dtypes.bfloat16), ml_dtypes.bfloat16, 8, 7,
                        f"bf16 ({cpu}), inputs {chunk << 24:#010x}..")
            if chunk % 32 == 31:
                print(f"{cpu}: inputs up to {((chunk + 1) << 24) - 1:#010x} agree", flush=True)
        print(f"{cpu}: all 2^32 f32 inputs give ml_dtypes' bf16 (NaNs by the quiet-NaN rule)",
              flush=True)


if __name__ == "__main__":
    if "--exhaustive" not in sys.argv:
        sys.exit("usage: test_float_conversions.py --exhaustive [CPU...] (pytest runs the rest)")
    exhaustive([a for a in sys.argv[1:] if a != "--exhaustive"] or CPUS)
