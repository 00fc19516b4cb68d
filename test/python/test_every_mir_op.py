"""Every registered rlx_mir op runs on the CPU and on the GPU emulator
(sm_90a) with equal results: once through its kernel template, once down
the generic path (rlx-gpu-generic-kernels: the op's linalg lowering, one
kernel per linalg op). The op list comes from the registered dialect, so a
new op without an example here fails `test_every_op_has_an_example`.
The CPU path is checked against numpy per op in test_mir_ops.py."""
from __future__ import annotations

import re
import zlib

import ml_dtypes  # noqa: F401  (f8 inputs)
import numpy as np
import pytest

import rlx


def t(shape, et="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


F = (2, 3, 8)
UNARY = ["neg", "exp", "log", "sqrt", "rsqrt", "reciprocal", "abs", "tanh", "sigmoid", "silu",
         "gelu", "gelu_tanh", "relu", "erf", "sin", "cos"]
POSITIVE = {"log", "sqrt", "rsqrt", "reciprocal", "pow"}
BINARY = ["add", "sub", "mul", "div", "max", "min", "pow"]

# op -> (arguments {name: (shape, dtype)}, result types, body without return)
EXAMPLES: dict[str, tuple[dict, list, str]] = {}
for op in UNARY:
    EXAMPLES[f"rlx_mir.{op}"] = ({"x": (F, "f32")}, [t(F)], f"%r0 = rlx_mir.{op} %x : {t(F)}")
for op in BINARY:
    EXAMPLES[f"rlx_mir.{op}"] = ({"x": (F, "f32"), "y": ((3, 1), "f32")}, [t(F)],
                                 f"%r0 = rlx_mir.{op} %x, %y : {t(F)}, {t((3, 1))}")
Q, KV = (1, 5, 16), (1, 6, 8)
EXAMPLES.update({
    "rlx_mir.cast": ({"x": (F, "f32")}, [t(F, "bf16")], f"%r0 = rlx_mir.cast %x : {t(F)} to {t(F, 'bf16')}"),
    "rlx_mir.select": ({"c": (F, "i1"), "x": (F, "f32"), "y": ((8,), "f32")}, [t(F)],
                       f"%r0 = rlx_mir.select %c, %x, %y : {t(F, 'i1')}, {t(F)}, {t((8,))}"),
    "rlx_mir.constant": ({"x": ((4,), "f32")}, [t((4,))],
                         f"%c = rlx_mir.constant dense<[1.0, -2.0, 3.5, 0.25]> : {t((4,))}\n"
                         f"  %r0 = rlx_mir.mul %x, %c : {t((4,))}, {t((4,))}"),
    "rlx_mir.broadcast": ({"x": ((3, 1), "f32")}, [t((2, 3, 5))],
                          f"%r0 = rlx_mir.broadcast %x [2, 3, 5] : {t((3, 1))}"),
    "rlx_mir.causal_mask": ({"x": ((2, 4, 6), "f32")}, [t((2, 4, 6))],
                            f"%r0 = rlx_mir.causal_mask %x window = 3 : {t((2, 4, 6))}"),
    "rlx_mir.elementwise": ({"x": (F, "f32"), "y": ((8,), "f32")}, [t(F), t(F)],
                            f"%r0, %r1 = rlx_mir.elementwise ins(%x, %y : {t(F)}, {t((8,))}) -> {t(F)}, {t(F)} {{\n"
                            "  ^bb0(%a: f32, %b: f32):\n"
                            "    %m = arith.mulf %a, %b : f32\n    %e = math.tanh %m : f32\n"
                            "    rlx_mir.yield %m, %e : f32, f32\n  }"),
    "rlx_mir.matmul": ({"x": ((2, 5, 8), "f32"), "w": ((6, 8), "f32")}, [t((2, 5, 6))],
                       f"%r0 = rlx_mir.matmul %x, %w transpose_b : {t((2, 5, 8))}, {t((6, 8))}"),
    "rlx_mir.reduce": ({"x": (F, "f32")}, [t((2, 1, 8))],
                       f"%r0 = rlx_mir.reduce max %x axes = [1] keep_dims : {t(F)}"),
    "rlx_mir.softmax": ({"x": (F, "f32")}, [t(F)], f"%r0 = rlx_mir.softmax %x axis = 1 : {t(F)}"),
    "rlx_mir.rms_norm": ({"x": (F, "f32"), "w": ((8,), "f32")}, [t(F)],
                         f"%r0 = rlx_mir.rms_norm %x, %w eps = 1.0e-05 : {t(F)}, {t((8,))}"),
    "rlx_mir.layer_norm": ({"x": (F, "f32"), "w": ((8,), "f32"), "b": ((8,), "f32")}, [t(F)],
                           f"%r0 = rlx_mir.layer_norm %x weight(%w : {t((8,))}) bias(%b : {t((8,))}) "
                           f"eps = 1.0e-05 : {t(F)}"),
    "rlx_mir.residual_rms_norm": ({"x": (F, "f32"), "r": (F, "f32"), "w": ((8,), "f32")}, [t(F), t(F)],
                                  f"%r0, %r1 = rlx_mir.residual_rms_norm %x, %r, %w eps = 1.0e-05 : "
                                  f"{t(F)}, {t(F)}, {t((8,))}"),
    "rlx_mir.attention": ({"q": (Q, "f32"), "k": (KV, "f32"), "v": (KV, "f32")}, [t(Q)],
                          f"%r0 = rlx_mir.attention %q, %k, %v heads = 4, kv_heads = 2, head_dim = 4 "
                          f"causal : {t(Q)}, {t(KV)}, {t(KV)}"),
    "rlx_mir.attention_partial": ({"q": (Q, "f32"), "k": (KV, "f32"), "v": (KV, "f32")},
                                  [t((3, 1, 4, 5, 4)), t((3, 1, 4, 5))],
                                  f"%r0, %r1 = rlx_mir.attention_partial %q, %k, %v heads = 4, kv_heads = 2, "
                                  f"head_dim = 4 causal kv_splits = 3 : {t(Q)}, {t(KV)}, {t(KV)}"),
    "rlx_mir.attention_combine": ({"o": ((3, 1, 2, 4, 5), "f32"), "l": ((3, 1, 2, 4), "f32")},
                                  [t((1, 4, 10))],
                                  f"%r0 = rlx_mir.attention_combine %o, %l : {t((3, 1, 2, 4, 5))}, "
                                  f"{t((3, 1, 2, 4))} -> {t((1, 4, 10))}"),
    "rlx_mir.reshape": ({"x": (F, "f32")}, [t((6, 8))],
                        f"%e = rlx_mir.exp %x : {t(F)}\n  %r0 = rlx_mir.reshape %e [6, 8] : {t(F)}"),
    "rlx_mir.transpose": ({"x": (F, "f32")}, [t((8, 2, 3))],
                          f"%r0 = rlx_mir.transpose %x [2, 0, 1] : {t(F)}"),
    "rlx_mir.slice": ({"x": (F, "f32")}, [t((2, 2, 3))],
                      f"%e = rlx_mir.exp %x : {t(F)}\n"
                      f"  %r0 = rlx_mir.slice %e offsets [0, 1, 1] sizes [2, 2, 3] strides [1, 1, 2] : {t(F)}"),
    "rlx_mir.concat": ({"x": (F, "f32"), "y": ((2, 1, 8), "f32")}, [t((2, 4, 8))],
                       f"%r0 = rlx_mir.concat %x, %y axis = 1 : {t(F)}, {t((2, 1, 8))}"),
    "rlx_mir.gather": ({"e": ((7, 4), "f32"), "ids": ((2, 3), "i64")}, [t((2, 3, 4))],
                       f"%r0 = rlx_mir.gather %e[%ids] : {t((7, 4))}, {t((2, 3), 'i64')}"),
    "rlx_mir.rope": ({"x": ((1, 5, 16), "f32"), "c": ((5, 2), "f32"), "s": ((5, 2), "f32")},
                     [t((1, 5, 16))],
                     f"%r0 = rlx_mir.rope %x, %c, %s head_dim = 8 rotary_dim = 4 : "
                     f"{t((1, 5, 16))}, {t((5, 2))}, {t((5, 2))}"),
    "rlx_mir.fused_matmul": ({"x": ((3, 6), "f32"), "w": ((8, 6), "f32"), "g": ((6,), "f32"),
                              "b": ((8,), "f32"), "r": ((3, 4), "f32")}, [t((3, 4))],
                             f"%r0 = rlx_mir.fused_matmul %x, %w transpose_b norm rms_norm eps = 1.0e-05 "
                             f"norm_weight(%g : {t((6,))}) bias(%b : {t((8,))}) activation silu glu "
                             f"residual(%r : {t((3, 4))}) : {t((3, 6))}, {t((8, 6))}"),
    "rlx_mir.nvfp4_quantize": ({"x": ((4, 32), "f32")}, [t((4, 32))],
                               f"%w, %s, %g = rlx_mir.nvfp4_quantize %x : {t((4, 32))}\n"
                               f"  %r0 = rlx_mir.nvfp4_dequantize %w, %s, %g : {t((4, 16), 'i8')}, "
                               f"{t((4, 2), 'f8E4M3FN')}, tensor<f32>"),
    "rlx_mir.nvfp4_dequantize": ({"x": ((4, 32), "f32")}, [t((4, 32))], "same as nvfp4_quantize"),
    "rlx_mir.mxfp4_dequantize": ({"b": ((2, 3, 2, 16), "i8"), "s": ((2, 3, 2), "i8")},
                                 [t((2, 3, 64))],
                                 f"%r0 = rlx_mir.mxfp4_dequantize %b, %s : {t((2, 3, 2, 16), 'i8')}, "
                                 f"{t((2, 3, 2), 'i8')}"),
    "rlx_mir.quantize": ({"x": (F, "f32"), "sc": ((3,), "f32"), "zp": ((3,), "i8")}, [t(F, "i8")],
                         f"%r0 = rlx_mir.quantize %x, %sc, %zp axis = 1 quant_min = -127 : "
                         f"{t(F)}, {t((3,))}, {t((3,), 'i8')}"),
    "rlx_mir.dequantize": ({"q": (F, "i8"), "sc": ((2, 3, 2), "f32")}, [t(F)],
                           f"%r0 = rlx_mir.dequantize %q, %sc axis = 2 group_size = 4 unsigned : "
                           f"{t(F, 'i8')}, {t((2, 3, 2))}"),
    "rlx_mir.fake_quantize": ({"x": (F, "f32"), "sc": ((3,), "f32")}, [t(F)],
                              f"%r0 = rlx_mir.fake_quantize %x, %sc axis = 1 quant_min = -8 "
                              f"quant_max = 7 : {t(F)}, {t((3,))}"),
    "rlx_mir.causal_conv1d": ({"x": ((2, 3, 5), "f32"), "w": ((3, 4), "f32"), "b": ((3,), "f32"),
                               "s": ((2, 3, 4), "f32")}, [t((2, 3, 5)), t((2, 3, 4))],
                              f"%r0, %r1 = rlx_mir.causal_conv1d %x, %w bias(%b : {t((3,))}) "
                              f"state(%s : {t((2, 3, 4))}) activation = \"silu\" : {t((2, 3, 5))}, "
                              f"{t((3, 4))}"),
    "rlx_mir.conv": ({"x": ((1, 4, 8), "f32"), "w": ((6, 2, 3), "f32"), "b": ((6,), "f32")},
                     [t((1, 6, 4))],
                     f"%r0 = rlx_mir.conv %x, %w bias(%b : {t((6,))}) stride = [2] padding = [1] "
                     f"groups = 2 : {t((1, 4, 8))}, {t((6, 2, 3))} -> {t((1, 6, 4))}"),
    "rlx_mir.fft": ({"x": ((3, 10), "f32")}, [t((3, 10))],
                    f'%r0 = rlx_mir.fft %x axes = [0, 1] inverse norm = "ortho" : {t((3, 10))}'),
    "rlx_mir.rfft": ({"x": ((3, 7), "f32")}, [t((3, 10))],
                     f"%r0 = rlx_mir.rfft %x axis = 1 n = 9 : {t((3, 7))} -> {t((3, 10))}"),
    "rlx_mir.irfft": ({"x": ((4, 6), "f32")}, [t((5, 3))],
                      f"%r0 = rlx_mir.irfft %x axis = 0 n = 5 : {t((4, 6))} -> {t((5, 3))}"),
    "rlx_mir.stft": ({"x": ((2, 21), "f32"), "w": ((6,), "f32")}, [t((2, 5, 12))],
                     f"%r0 = rlx_mir.stft %x, %w n_fft = 8 hop_length = 4 center : {t((2, 21))}, "
                     f"{t((6,))} -> {t((2, 5, 12))}"),
    "rlx_mir.istft": ({"s": ((2, 5, 10), "f32"), "w": ((6,), "f32")}, [t((2, 12))],
                      f"%r0 = rlx_mir.istft %s, %w n_fft = 8 hop_length = 2 center length = 12 : "
                      f"{t((2, 5, 10))}, {t((6,))} -> {t((2, 12))}"),
    "rlx_mir.selective_scan": ({"u": ((1, 3, 5), "f32"), "dt": ((1, 3, 5), "f32"), "a": ((3, 2), "f32"),
                                "bm": ((1, 2, 5), "f32"), "cm": ((1, 2, 5), "f32"), "d": ((3,), "f32"),
                                "s": ((1, 3, 2), "f32")}, [t((1, 3, 5)), t((1, 3, 2))],
                               f"%r0, %r1 = rlx_mir.selective_scan %u, %dt, %a, %bm, %cm D(%d : {t((3,))}) "
                               f"state(%s : {t((1, 3, 2))}) delta_softplus chunk_size = 2 : {t((1, 3, 5))}, "
                               f"{t((1, 3, 5))}, {t((3, 2))}, {t((1, 2, 5))}, {t((1, 2, 5))}"),
    "rlx_mir.ssd_scan": ({"x": ((1, 5, 4, 2), "f32"), "dt": ((1, 5, 4), "f32"), "a": ((4,), "f32"),
                          "bm": ((1, 5, 2, 3), "f32"), "cm": ((1, 5, 2, 3), "f32"), "d": ((4,), "f32"),
                          "s": ((1, 4, 2, 3), "f32")}, [t((1, 5, 4, 2)), t((1, 4, 2, 3))],
                         f"%r0, %r1 = rlx_mir.ssd_scan %x, %dt, %a, %bm, %cm D(%d : {t((4,))}) "
                         f"state(%s : {t((1, 4, 2, 3))}) dt_softplus chunk_size = 2 : {t((1, 5, 4, 2))}, "
                         f"{t((1, 5, 4))}, {t((4,))}, {t((1, 5, 2, 3))}, {t((1, 5, 2, 3))}"),
    "rlx_mir.gated_delta_rule": ({"q": ((1, 5, 2, 3), "f32"), "k": ((1, 5, 2, 3), "f32"),
                                  "v": ((1, 5, 2, 4), "f32"), "g": ((1, 5, 2), "f32"),
                                  "beta": ((1, 5, 2), "f32"), "s": ((1, 2, 3, 4), "f32")},
                                 [t((1, 5, 2, 4)), t((1, 2, 3, 4))],
                                 f"%r0, %r1 = rlx_mir.gated_delta_rule %q, %k, %v, %g, %beta "
                                 f"state(%s : {t((1, 2, 3, 4))}) use_qk_l2norm chunk_size = 2 : "
                                 f"{t((1, 5, 2, 3))}, {t((1, 5, 2, 3))}, {t((1, 5, 2, 4))}, "
                                 f"{t((1, 5, 2))}, {t((1, 5, 2))}"),
    "rlx_mir.observe_minmax": ({"x": (F, "f32"), "lo": ((3,), "f32"), "hi": ((3,), "f32")},
                               [t((3,)), t((3,))],
                               f"%r0, %r1 = rlx_mir.observe_minmax %x running(%lo, %hi : {t((3,))}, {t((3,))}) axis = 1 "
                               f"averaging_constant = 2.5e-01 : {t(F)}"),
    "rlx_mir.choose_qparams": ({"x": (F, "f32")}, [t(F)],
                               f"%lo, %hi = rlx_mir.observe_minmax %x : {t(F)}\n"
                               f"  %s, %z = rlx_mir.choose_qparams %lo, %hi quant_min = -8 quant_max = 7 "
                               f": tensor<f32>\n"
                               f"  %r0 = rlx_mir.fake_quantize %x, %s, %z quant_min = -8 quant_max = 7 "
                               f": {t(F)}, tensor<f32>, tensor<i8>"),
    "rlx_mir.nvfp4_block_scales": ({"x": ((128, 64), "f32"), "a": ((2, 64), "f32")}, [t((2, 128))],
                                   f"%w, %s, %g = rlx_mir.nvfp4_quantize %x : {t((128, 64))}\n"
                                   f"  %b = rlx_mir.nvfp4_block_scales %s : {t((128, 4), 'f8E4M3FN')}\n"
                                   f"  %r0 = rlx_mir.nvfp4_matmul %a, %w, %b, %g : {t((2, 64))}, "
                                   f"{t((128, 32), 'i8')}, {t((1, 1, 32, 16), 'f8E4M3FN')}, tensor<f32>"),
    "rlx_mir.scatter_add": ({"d": ((5, 3), "f32"), "i": ((4,), "i64"), "u": ((4, 3), "f32")}, [t((5, 3))],
                            f"%r0 = rlx_mir.scatter_add %d[%i], %u : {t((5, 3))}, {t((4,), 'i64')}, "
                            f"{t((4, 3))}"),
    "rlx_mir.qmatmul": ({"qa": ((3, 8), "i8"), "qb": ((5, 8), "i8")}, [t((3, 5), "i32")],
                        f"%r0 = rlx_mir.qmatmul %qa, %qb transpose_b rhs_zero_point = 1 : "
                        f"{t((3, 8), 'i8')}, {t((5, 8), 'i8')}"),
    "rlx_mir.lora_matmul": ({"x": ((2, 3, 4), "f32"), "w": ((5, 4), "f32"), "la": ((2, 2, 4), "f32"),
                             "lb": ((2, 5, 2), "f32"), "ids": ((2, 3), "i64")}, [t((2, 3, 5))],
                            f"%r0 = rlx_mir.lora_matmul %x, %w, %la, %lb adapters(%ids : "
                            f"{t((2, 3), 'i64')}) scales = [2.0, 0.5] : {t((2, 3, 4))}, {t((5, 4))}, "
                            f"{t((2, 2, 4))}, {t((2, 5, 2))}"),
    "rlx_mir.group_norm": ({"x": ((2, 4, 3), "f32"), "w": ((4,), "f32"), "b": ((4,), "f32")},
                           [t((2, 4, 3))],
                           f"%r0 = rlx_mir.group_norm %x weight(%w : {t((4,))}) bias(%b : {t((4,))}) "
                           f"num_groups = 2 eps = 1.0e-05 : {t((2, 4, 3))}"),
    "rlx_mir.cumsum": ({"x": (F, "f32")}, [t(F)],
                       f"%r0 = rlx_mir.cumsum %x axis = 1 exclusive : {t(F)}"),
    "rlx_mir.topk": ({"x": (F, "f32")}, [t((2, 3, 3)), t((2, 3, 3), "i64")],
                     f"%r0, %r1 = rlx_mir.topk %x k = 3 : {t(F)}"),
    "rlx_mir.grouped_matmul": ({"x": ((5, 8), "f32"), "w": ((3, 6, 8), "f32"),
                                "ids": ((5,), "i64")}, [t((5, 6))],
                               f"%r0 = rlx_mir.grouped_matmul %x, %w, %ids : {t((5, 8))}, "
                               f"{t((3, 6, 8))}, {t((5,), 'i64')}"),
    "rlx_mir.random_uniform": ({"o": ((), "i64")}, [t((3, 5))],
                               f"%r0 = rlx_mir.random_uniform %o seed = 7 shape = [3, 5] "
                               f": tensor<i64> -> {t((3, 5))}"),
    "rlx_mir.sample": ({"x": (F, "f32"), "u": ((2, 3), "f32")}, [t((2, 3), "i64")],
                       f"%r0 = rlx_mir.sample %x, %u temperature = 0.5 top_k = 5 top_p = 0.9 "
                       f"min_p = 0.01 : {t(F)}, {t((2, 3))}"),
    "rlx_mir.custom_fn": ({"x": ((2, 8), "f32"), "w": ((8, 3), "f32")}, [t((2, 3))],
                          f"%r0 = rlx_mir.custom_fn \"proj_tanh\" ins(%x, %w : {t((2, 8))}, {t((8, 3))}) "
                          f"-> {t((2, 3))} {{\n"
                          f"  ^bb0(%a: {t((2, 8))}, %b: {t((8, 3))}):\n"
                          f"    %m = rlx_mir.matmul %a, %b : {t((2, 8))}, {t((8, 3))}\n"
                          f"    %h = rlx_mir.tanh %m : {t((2, 3))}\n"
                          f"    rlx_mir.yield %h : {t((2, 3))}\n  }}"),
})
# Control flow (test_control_flow.py checks them against numpy).
EXAMPLES.update({
    "rlx_mir.if": ({"p": ((), "i1"), "x": ((2, 8), "f32")}, [t((2, 8))],
                   f"%r0 = rlx_mir.if %p : tensor<i1> ins(%x : {t((2, 8))}) -> {t((2, 8))} {{\n"
                   f"  ^bb0(%a: {t((2, 8))}):\n    %e = rlx_mir.exp %a : {t((2, 8))}\n"
                   f"    rlx_mir.yield %e : {t((2, 8))}\n  }} else {{\n"
                   f"  ^bb0(%a: {t((2, 8))}):\n    %n = rlx_mir.neg %a : {t((2, 8))}\n"
                   f"    rlx_mir.yield %n : {t((2, 8))}\n  }}"),
    "rlx_mir.while": ({"x": ((3,), "f32")}, [t((3,)), t((), "i64")],
                      f"%r0, %r1 = rlx_mir.while ins(%x : {t((3,))}) max_iterations = 4 "
                      f"-> {t((3,))}, tensor<i64> cond {{\n"
                      f"  ^bb0(%a: {t((3,))}):\n"
                      f"    %s = rlx_mir.reduce sum %a axes = [0] : {t((3,))}\n"
                      f"    %lt = rlx_mir.elementwise ins(%s : tensor<f32>) -> tensor<i1> {{\n"
                      f"    ^bb0(%v: f32):\n      %c = arith.constant 20.0 : f32\n"
                      f"      %b = arith.cmpf olt, %v, %c : f32\n      rlx_mir.yield %b : i1\n    }}\n"
                      f"    rlx_mir.yield %lt : tensor<i1>\n  }} do {{\n"
                      f"  ^bb0(%a: {t((3,))}):\n    %e = rlx_mir.abs %a : {t((3,))}\n"
                      f"    %two = rlx_mir.constant dense<2.0> : tensor<f32>\n"
                      f"    %y = rlx_mir.add %e, %two : {t((3,))}, tensor<f32>\n"
                      f"    rlx_mir.yield %y : {t((3,))}\n  }}"),
    "rlx_mir.scan": ({"h": ((2, 4), "f32"), "x": ((5, 2, 4), "f32"), "w": ((4, 4), "f32")},
                     [t((2, 4)), t((5, 2, 4))],
                     f"%r0, %r1 = rlx_mir.scan init(%h : {t((2, 4))}) xs(%x : {t((5, 2, 4))}) "
                     f"consts(%w : {t((4, 4))}) reverse -> {t((2, 4))}, {t((5, 2, 4))} {{\n"
                     f"  ^bb0(%c: {t((2, 4))}, %xt: {t((2, 4))}, %wk: {t((4, 4))}):\n"
                     f"    %m = rlx_mir.matmul %c, %wk : {t((2, 4))}, {t((4, 4))}\n"
                     f"    %s = rlx_mir.add %m, %xt : {t((2, 4))}, {t((2, 4))}\n"
                     f"    %n = rlx_mir.tanh %s : {t((2, 4))}\n"
                     f"    rlx_mir.yield %n, %s : {t((2, 4))}, {t((2, 4))}\n  }}"),
})
EXAMPLES["rlx_mir.nvfp4_dequantize"] = EXAMPLES["rlx_mir.nvfp4_quantize"]
EXAMPLES["rlx_mir.nvfp4_matmul"] = EXAMPLES["rlx_mir.nvfp4_block_scales"]

# Ops that only exist inside another op's region.
NESTED = {"rlx_mir.yield"}
# Ops whose linalg lowering is a host loop over heads (scf.forall), which the
# generic path does not turn into kernels: their templates run them.
HOST_LOOPS = {"rlx_mir.attention", "rlx_mir.attention_partial"}


def module_text(op):
    args, results, body = EXAMPLES[op]
    sig = ", ".join(f'%{n}: {t(s, et)} {{rlx.input = "{n}"}}' for n, (s, et) in args.items())
    names = ", ".join(f"%r{i}" for i in range(len(results)))
    return (f"func.func @f({sig}) -> ({', '.join(results)}) {{\n  {body}\n"
            f"  return {names} : {', '.join(results)}\n}}\n")


def inputs_for(op):
    rng = np.random.default_rng(zlib.crc32(op.encode()))
    out = {}
    for name, (shape, et) in EXAMPLES[op][0].items():
        if et == "i1":
            out[name] = rng.random(shape) > 0.5
        elif et == "i64":
            out[name] = rng.integers(0, 5, shape).astype(np.int64)
        elif et == "i8":
            # Bytes; MXFP4's E8M0 scales (s) near 2^0.
            lo, hi = (117, 137) if name == "s" else (-128, 128)
            out[name] = rng.integers(lo, hi, shape).astype(np.int8)
        else:
            x = rng.standard_normal(shape).astype(np.float32)
            out[name] = np.abs(x) + 0.5 if op.split(".")[1] in POSITIVE else x
    return out


def test_every_op_has_an_example():
    ops = set(rlx.default_context().registered_ops("rlx_mir")) - NESTED
    assert ops, "no rlx_mir ops registered"
    assert sorted(ops - set(EXAMPLES)) == [], "ops without an example"
    assert sorted(set(EXAMPLES) - ops) == [], "examples of ops that do not exist"


def close(got, want, op):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, op
    scale = max(1.0, np.nanmax(np.abs(np.where(np.isinf(want), 0, want))))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * scale, err_msg=op)


@pytest.mark.parametrize("path", ["template", "generic"])
@pytest.mark.parametrize("op", sorted(EXAMPLES))
def test_op_runs_on_cpu_and_emu_with_equal_results(op, path):
    m = rlx.parse(module_text(op))
    x = inputs_for(op)
    if path == "generic" and op in HOST_LOOPS:
        with pytest.raises(rlx.RlxError, match="host op 'scf.forall' would not run there"):
            rlx.gpu.compile(m, device="emu", fuse=False, generic_kernels=[op])
        return
    cpu = rlx.compile_cpu(m, fuse=False).run(x)
    emu = rlx.gpu.compile(m, device="emu", fuse=False,
                          generic_kernels=[op] if path == "generic" else []).run(x)
    assert cpu.keys() == emu.keys()
    for k in cpu:
        close(emu[k], cpu[k], f"{op} {k}")


@pytest.mark.parametrize("op", sorted(EXAMPLES))
def test_op_round_trips_through_rlx_json(op):
    """RLX JSON knows no op by hand beyond the original format's: every other
    op travels as its MLIR text (the exporter's Mlir escape), so a new op
    round-trips with no new code. A node of the format has one output, so
    multi-result ops are a located export error."""
    import subprocess
    from harness import BUILD
    tool = str(BUILD / "bin" / "rlx-translate")
    text = module_text(op)
    out = subprocess.run([tool, "--export-rlx-hir-json"], input=text, capture_output=True,
                         text=True, timeout=60)
    if re.search(r"%\w+(, %\w+)+ = rlx_mir\.", text):  # a multi-result op in the example
        assert out.returncode != 0 and "has no RLX JSON form" in out.stderr, out.stderr
        return
    assert out.returncode == 0, out.stderr
    back = subprocess.run([tool, "--import-rlx-json"], input=out.stdout, capture_output=True,
                          text=True, timeout=60)
    assert back.returncode == 0, back.stderr
    x = inputs_for(op)
    want = rlx.compile_cpu(rlx.parse(text), fuse=False).run(x)
    got = rlx.compile_cpu(rlx.parse(back.stdout), fuse=False).run(x)
    assert len(got) == len(want) == 1
    close(next(iter(got.values())), next(iter(want.values())), op)


@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
def test_every_op_assembles_on_the_generic_path(chip, tmp_path):
    """Every op's generic-path kernels go through ptxas for sm_80 and sm_90a:
    one module with each example as its own function, each of which gets a
    cubin (a kernel ptxas rejects fails the compile)."""
    ops = [op for op in sorted(EXAMPLES) if op not in HOST_LOOPS]
    text = "".join(module_text(op).replace("func.func @f(", f"func.func @f{i}(")
                   for i, op in enumerate(ops))
    g = rlx.gpu.compile(rlx.parse(text), device="emu", chip=chip, cubin=True, fuse=False,
                        generic_kernels=ops)
    names = sorted(f["name"] for f in g.manifest["functions"])
    assert names == sorted(f"f{i}" for i in range(len(ops)))
    missing = [ops[int(n[1:])] for n in names
               if not (g.artifact / f"{n}_kernels.{chip}.cubin").is_file()]
    assert missing == [], f"no {chip} cubin for {missing}"
