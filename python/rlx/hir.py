"""A builder for rlx_hir functions, with shapes checked as each op is added.

Each op call asks the C++ side to parse and verify the op on its operand
types (the same verifiers and type inference as ``rlx-opt``), so a bad shape
or attribute raises :class:`rlx.RlxError` right there, with the MLIR
diagnostic and the Python line that made the op::

    from rlx import hir
    f = hir.Function("mlp")
    x = f.input("hidden_states", (1, "seq", 64))          # "seq": a symbolic dim
    g, u, d = f.param("gate", (128, 64)), f.param("up", (128, 64)), f.param("down", (64, 128))
    f.output("out", hir.swiglu(x, g, u, d))
    module = f.build()                                      # an rlx.Module

Shapes are tuples of ints (static) and strings (dynamic dims with that name,
bound later by ``compile_cpu(dims=...)`` or the input shapes). Dtypes are
MLIR element types: ``"f32"``, ``"bf16"``, ``"f16"``, ``"i64"``, ...
"""
from __future__ import annotations

import inspect
import os
import re
from dataclasses import dataclass
from typing import Optional, Sequence, Union

from . import Context, Module, RlxError, _rlx, default_context

Dim = Union[int, str]


def _float(v: float) -> str:
    return f"{float(v):.17e}"


# Modules whose frames are not the user's line (the builders themselves).
_BUILDER_MODULES = {__name__, "rlx.mir", "rlx._hir_ops", "rlx._opbuild"}


def _caller_loc():
    """The user's frame that made the op and its MLIR location text."""
    frame = inspect.currentframe()
    caller = frame.f_back if frame else None
    while caller is not None and caller.f_globals.get("__name__") in _BUILDER_MODULES:
        caller = caller.f_back
    if caller is None:
        return None, ""
    path = os.path.abspath(caller.f_code.co_filename).replace('"', "'")
    return caller, f' loc("{path}":{caller.f_lineno}:0)'


def _at_caller(e: RlxError, caller, op_name: str) -> RlxError:
    """The error pointing at the Python line that made the op, not the probe text."""
    where = f"{caller.f_code.co_filename}:{caller.f_lineno}" if caller else "<unknown>"
    detail = re.sub(r"^<rlx\.hir>:\d+:\d+: ", "", str(e).split("\n", 1)[-1], flags=re.M)
    return RlxError(f"{where}: {op_name}: {detail.strip()}")


def tensor_type(shape: Sequence[Dim], dtype: str) -> str:
    """``tensor<1x?x2048xf32>`` for ``(1, "seq", 2048), "f32"``."""
    dims = "".join(("?" if isinstance(d, str) else str(int(d))) + "x" for d in shape)
    return f"tensor<{dims}{dtype}>"


@dataclass(frozen=True)
class Value:
    """A value of a Function: an argument or an op result."""
    function: "Function"
    name: str   # SSA name without the %
    type: str   # MLIR type, e.g. tensor<1x?x64xf32>

    @property
    def shape(self) -> tuple:
        """Static dims as ints, dynamic ones as None."""
        body = self.type[len("tensor<"):-1].split("x")[:-1]
        return tuple(None if d == "?" else int(d) for d in body)

    @property
    def dtype(self) -> str:
        return self.type[len("tensor<"):-1].split("x")[-1]

    def __add__(self, other: "Value") -> "Value":
        return add(self, other)


class Function:
    """A func.func being built: inputs, params, ops, outputs."""

    def __init__(self, name: str = "forward", context: Optional[Context] = None):
        self.name = name
        self.context = context or default_context()
        self._args: list[tuple[Value, str]] = []   # (value, attribute dict text)
        self._lines: list[str] = []
        self._outputs: list[tuple[str, Value]] = []
        self._count = 0

    def _arg(self, role: str, name: str, shape: Sequence[Dim], dtype: str) -> Value:
        v = Value(self, f"arg{len(self._args)}", tensor_type(shape, dtype))
        attrs = f'rlx.{role} = "{name}"'
        if any(isinstance(d, str) for d in shape):
            names = ", ".join(f'"{d}"' if isinstance(d, str) else '""' for d in shape)
            attrs += f", rlx.dim_names = [{names}]"
        self._args.append((v, "{" + attrs + "}"))
        return v

    def input(self, name: str, shape: Sequence[Dim], dtype: str = "f32") -> Value:
        """A graph input (activations, positions, token ids, KV cache)."""
        return self._arg("input", name, shape, dtype)

    def param(self, name: str, shape: Sequence[Dim], dtype: str = "f32") -> Value:
        """A weight (HF parameter name); compile_cpu packs merged weights once."""
        return self._arg("param", name, shape, dtype)

    def output(self, name: str, value: Value) -> None:
        """Returns `value` under `name` (rlx.output)."""
        self._check(value)
        self._outputs.append((name, value))

    def _check(self, *values: Optional[Value]) -> None:
        for v in values:
            if v is not None and v.function is not self:
                raise ValueError(f"%{v.name} belongs to function @{v.function.name}, not @{self.name}")

    def emit(self, template: str, operands: Sequence[Value], num_results: int = 1) -> list[Value]:
        """Adds one op. `template` is the op's text with ``{0}``, ``{1}`` ...
        for the operands (e.g. ``"rlx_mir.add {0}, {1} : {t0}, {t1}"``, where
        ``{tN}`` is operand N's type). Returns the results, typed by the op's
        own inference; raises RlxError when the op does not verify. The
        generated builders (:mod:`rlx.mir`, this module's op functions) need
        no template."""
        self._check(*operands)
        caller, loc = _caller_loc()
        types = {f"t{i}": v.type for i, v in enumerate(operands)}
        probe_results = ", ".join(f"%r{i}" for i in range(num_results))
        probe = template.format(*[f"%a{i}" for i in range(len(operands))], **types)
        try:
            result_types = _rlx.infer_result_types(self.context, [v.type for v in operands],
                                                   f"  {probe_results} = {probe}{loc}")
        except RlxError as e:
            raise _at_caller(e, caller, template.split()[0]) from None
        return self._add_line(lambda args: template.format(*args, **types), operands,
                              result_types, loc)

    def _emit_generic(self, op_name: str, operands: Sequence[Value], props: Sequence[str],
                      result_types: Optional[Sequence[str]]) -> list[Value]:
        """Adds ``"op_name"(operands) <{props}>`` in generic form (what the
        generated builders call); result types from the op's inference unless
        given."""
        for v in operands:
            if not isinstance(v, Value):
                raise TypeError(f"{op_name}: operands are Values of a Function, got "
                                f"{type(v).__name__}")
        self._check(*operands)
        caller, loc = _caller_loc()
        attrs = f" <{{{', '.join(props)}}}>" if props else ""
        in_types = ", ".join(v.type for v in operands)

        def text(args):
            return f'"{op_name}"({", ".join(args)}){attrs} : ({in_types})'

        try:
            types = _rlx.infer_generic_result_types(
                self.context, [v.type for v in operands],
                text([f"%a{i}" for i in range(len(operands))]),
                None if result_types is None else [str(t) for t in result_types])
        except RlxError as e:
            raise _at_caller(e, caller, op_name) from None
        return self._add_line(lambda args: f"{text(args)} -> ({', '.join(types)})", operands,
                              types, loc)

    def _add_line(self, text, operands: Sequence[Value], result_types: Sequence[str],
                  loc: str) -> list[Value]:
        names = [f"v{self._count + i}" for i in range(len(result_types))]
        self._count += len(result_types)
        lhs = f"{', '.join('%' + n for n in names)} = " if names else ""
        self._lines.append(f"  {lhs}{text([f'%{v.name}' for v in operands])}{loc}")
        return [Value(self, n, t) for n, t in zip(names, result_types)]

    def text(self) -> str:
        """The function as MLIR text."""
        if not self._outputs:
            raise ValueError(f"@{self.name} has no outputs (call output())")
        params = ",\n    ".join(f"%{v.name}: {v.type} {attrs}" for v, attrs in self._args)
        results = ", ".join(f'{v.type} {{rlx.output = "{n}"}}' for n, v in self._outputs)
        ret = ", ".join(f"%{v.name}" for _, v in self._outputs)
        ret_types = ", ".join(v.type for _, v in self._outputs)
        body = "\n".join(self._lines)
        return (f"func.func @{self.name}(\n    {params})\n    -> ({results}) {{\n{body}\n"
                f"  return {ret} : {ret_types}\n}}\n")

    def build(self) -> Module:
        """A verified rlx.Module holding this function."""
        module = _rlx.parse(self.context, self.text(), f"<rlx.hir @{self.name}>")
        module.verify()
        return module


def _fn(*values: Optional[Value]) -> Function:
    for v in values:
        if v is not None:
            return v.function
    raise ValueError("no operands")


def _scaling_text(scaling: Optional[dict]) -> Optional[str]:
    """HF's ``rope_scaling`` dict (llama3, linear or yarn) as #rlx.rope_scaling
    text. yarn's attention factor is ``attention_factor`` when given, else
    HF's ``0.1·ln(factor) + 1``; its mscale/mscale_all_dim form is what
    ``rlx-gen`` reads from a config (here: give ``attention_factor``)."""
    if not scaling:
        return None
    yarn = scaling.get("rope_type") == "yarn"
    if yarn and scaling.get("mscale") and scaling.get("mscale_all_dim") and \
            "attention_factor" not in scaling:
        raise ValueError("yarn with mscale/mscale_all_dim: give attention_factor")
    if scaling.get("factor") is None:
        raise ValueError(f"{scaling.get('rope_type')} rope scaling needs a factor")
    if yarn and "original_max_position_embeddings" not in scaling:
        raise ValueError("yarn rope scaling needs original_max_position_embeddings")
    fields = [f"rope_type = {scaling['rope_type']}", f"factor = {_float(scaling['factor'])}"]
    # transformers' `beta_fast or 32`, `beta_slow or 1`: 0 means the default.
    betas = {"beta_fast": 32.0, "beta_slow": 1.0} if yarn else {}
    for key in ("low_freq_factor", "high_freq_factor", "beta_fast", "beta_slow",
                "attention_factor"):
        value = scaling.get(key)
        if key in betas and not value:
            value = None
        if value is not None:
            fields.append(f"{key} = {_float(value)}")
    if "original_max_position_embeddings" in scaling:
        fields.append("original_max_position_embeddings = "
                      f"{int(scaling['original_max_position_embeddings'])}")
    if "truncate" in scaling:
        fields.append(f"truncate = {'true' if scaling['truncate'] else 'false'}")
    return "#rlx.rope_scaling<" + ", ".join(fields) + ">"


def _mask_kind(causal: bool, window: Optional[int], chunk: Optional[int] = None) -> str:
    if chunk is not None:
        if window is not None:
            raise ValueError("attention takes a window or a chunk size, not both")
        return "chunked"
    return "sliding_window" if window is not None else ("causal" if causal else "none")


def linear(x: Value, weight: Value, bias: Optional[Value] = None, activation: str = "none",
           layout: str = "out_in") -> Value:
    """``act(x · Wᵀ + b)`` (PyTorch nn.Linear). x ``[..., K]``; weight ``[N, K]``
    (``layout="in_out"``: ``[K, N]``, GPT-2 Conv1D); bias ``[N]``. Result ``[..., N]``."""
    return _ops.linear(x, weight, bias, activation=activation, layout=layout)


def rms_norm(x: Value, weight: Value, eps: float = 1e-5) -> Value:
    """HF LlamaRMSNorm over the last axis: ``x · rsqrt(mean(x²) + eps) · weight``."""
    return _ops.rms_norm(x, weight, eps=eps)


def residual_rms_norm(x: Value, residual: Value, weight: Value, eps: float = 1e-5
                      ) -> tuple[Value, Value]:
    """``s = x + residual; (rms_norm(s) · weight, s)``: the normalized value and the sum."""
    return _ops.residual_rms_norm(x, residual, weight, eps=eps)


def layer_norm(x: Value, weight: Optional[Value] = None, bias: Optional[Value] = None,
               eps: float = 1e-5) -> Value:
    """PyTorch LayerNorm over the last axis with optional affine weight and bias."""
    return _ops.layer_norm(x, weight, bias, eps=eps)


def swiglu(x: Value, gate: Value, up: Value, down: Value, activation: str = "silu",
           layout: str = "out_in") -> Value:
    """``(act(x·Wgateᵀ) ⊙ (x·Wupᵀ))·Wdownᵀ`` (HF LlamaMLP). gate/up ``[I, H]``, down ``[H, I]``."""
    return _ops.swiglu(x, gate, up, down, activation=activation, layout=layout)


def attention(q: Value, k: Value, v: Value, num_heads: int, num_kv_heads: int, head_dim: int, *,
              causal: bool = False, window: Optional[int] = None, mask: Optional[Value] = None,
              scale: Optional[float] = None, softcap: Optional[float] = None,
              layout: str = "bsd", sinks: Optional[Value] = None,
              chunk: Optional[int] = None) -> Value:
    """Scaled dot-product attention with GQA (``num_heads`` query heads share
    ``num_kv_heads`` K/V heads). ``causal`` is bottom-right aligned; ``window``
    makes it sliding-window (each query sees itself and the window-1 keys
    before it); ``chunk`` makes it chunked (each query sees the keys of its
    own chunk of ``chunk`` positions up to itself, Llama-4); ``mask`` is a
    boolean or additive mask. Layout ``bsd``: q
    ``[B, Sq, H·D]``, k/v ``[B, Sk, Hkv·D]``. ``sinks`` ``[num_heads]``:
    gpt-oss's per-head sink logit in every row's softmax denominator."""
    return _ops.attention(q, k, v, mask, sinks, num_heads=num_heads, num_kv_heads=num_kv_heads,
                          head_dim=head_dim, mask_kind=_mask_kind(causal, window, chunk),
                          window=window if chunk is None else chunk, scale=scale,
                          softcap=softcap, layout=layout)


def rope(x: Value, head_dim: int, positions: Optional[Value] = None,
         tables: Optional[tuple[Value, Value]] = None, theta: float = 10000.0,
         rotary_dim: Optional[int] = None, style: str = "neox",
         scaling: Optional[dict] = None) -> Value:
    """Rotary position embedding on x ``[B, S, H·head_dim]`` from integer
    ``positions`` ``[S]``/``[B, S]`` (frequencies from ``theta`` and the HF
    ``rope_scaling`` dict: llama3, linear or yarn) or from ``tables=(cos, sin)``."""
    if positions is None and tables is None:
        raise ValueError("rope needs positions or tables")
    cos, sin = tables if positions is None else (None, None)
    return _ops.rope(x, positions, cos, sin, head_dim=head_dim, rotary_dim=rotary_dim,
                     theta=theta if positions is not None else None, style=style,
                     scaling=_scaling_text(scaling))


def qk_norm(x: Value, weight: Value, head_dim: int, eps: float = 1e-6) -> Value:
    """Per-head RMSNorm of x ``[..., H·head_dim]`` with weight ``[head_dim]`` (Qwen3)."""
    return _ops.qk_norm(x, weight, head_dim=head_dim, eps=eps)


def embedding(ids: Value, table: Value) -> Value:
    """``table[ids]``: ids ``[...]`` integers, table ``[V, H]``; result ``[..., H]``."""
    return _ops.embedding(ids, table)


def add(a: Value, b: Value) -> Value:
    """Elementwise sum with numpy broadcasting (rlx_mir.add; HIR may hold MIR ops)."""
    from . import mir
    return mir.add(a, b)


def decoder_layer(x: Value, positions: Value, weights: Sequence[Value], *, num_heads: int,
                  num_kv_heads: int, head_dim: int, eps: float = 1e-5, theta: float = 10000.0,
                  qk_norm: Optional[tuple[Value, Value]] = None,
                  cache: Optional[tuple[Value, Value]] = None, scaling: Optional[dict] = None,
                  window: Optional[int] = None, activation: str = "silu"
                  ) -> tuple[Value, Value, Value]:
    """One pre-norm decoder layer (HF LlamaDecoderLayer; Qwen3 with ``qk_norm``;
    Mistral with ``window``). `weights`: input_norm, q, k, v, o, post_norm,
    gate, up, down. Returns (hidden states, present key, present value)."""
    if len(weights) != 9:
        raise ValueError("decoder_layer needs 9 weights: input_norm, q, k, v, o, post_norm, gate, up, down")
    q_norm, k_norm = qk_norm if qk_norm is not None else (None, None)
    past_key, past_value = cache if cache is not None else (None, None)
    y, k, v = _ops.decoder_layer(
        x, positions, *weights, q_norm, k_norm, past_key, past_value, num_heads=num_heads,
        num_kv_heads=num_kv_heads, head_dim=head_dim, eps=eps, theta=theta,
        scaling=_scaling_text(scaling), mask=None if window is None else "sliding_window",
        window=window, activation=activation)
    return y, k, v


def log_mel_spectrogram(x: Value, n_mels: int = 80, *, n_fft: int = 400, hop_length: int = 160,
                        sampling_rate: int = 16000, n_samples: Optional[int] = 480000,
                        f_min: Optional[float] = None, f_max: Optional[float] = None) -> Value:
    """Whisper's log-mel features (transformers' ``WhisperFeatureExtractor``)
    of raw samples ``[L]`` or ``[B, L]``: zero-padded or trimmed to
    ``n_samples`` (None: as given), result ``[B?, n_mels, frames]``. The
    defaults are Whisper's (30 s at 16 kHz, 80 mels, 0-8000 Hz)."""
    return _ops.log_mel_spectrogram(x, n_fft=n_fft, hop_length=hop_length, n_mels=n_mels,
                                    sampling_rate=sampling_rate, n_samples=n_samples,
                                    f_min=f_min, f_max=f_max)


# Every rlx_hir op's builder, generated from its ODS record (operands
# positional, attributes by their ODS names); the functions above are the
# shorter spellings of some of them and take their names.
from . import _hir_ops as _ops  # noqa: E402

__all__ = ["Function", "Value", "tensor_type", "linear", "rms_norm", "residual_rms_norm",
           "layer_norm", "swiglu", "attention", "rope", "qk_norm", "embedding", "add",
           "decoder_layer", "log_mel_spectrogram", "RlxError"]
for _name in _ops.__all__:
    if _name not in globals():
        globals()[_name] = getattr(_ops, _name)
        __all__.append(_name)
del _name
