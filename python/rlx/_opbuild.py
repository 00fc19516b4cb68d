"""What the generated op builders (``rlx.mir``, ``rlx._hir_ops``; made by
python/gen_op_builders.py from the ODS records) call: Python values to MLIR
attribute text by the attribute's ODS kind, and the op in generic form added
to the function its operands belong to."""
from __future__ import annotations

import math
import struct
from typing import Any, Sequence

import numpy as np

from ._rlx import RlxError


def _float_text(v: float, ftype: str) -> str:
    v = float(v)
    if math.isfinite(v):
        return f"{v:.17e} : {ftype}"  # MLIR float literals need the point
    # MLIR spells non-finite floats by their bits.
    if ftype == "f32":
        return f"0x{struct.unpack('<I', struct.pack('<f', v))[0]:08X} : f32"
    if ftype == "f64":
        return f"0x{struct.unpack('<Q', struct.pack('<d', v))[0]:016X} : f64"
    raise ValueError(f"a non-finite {ftype} attribute takes MLIR attribute text")


def _string_text(s: str) -> str:
    out = []
    for b in s.encode("utf-8"):
        c = chr(b)
        out.append(c if 32 <= b < 127 and c not in '"\\' else f"\\{b:02X}")
    return '"' + "".join(out) + '"'


_NP_TO_MLIR = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
               "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "ui8",
               "bool": "i1"}


def _elements_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    a = np.ascontiguousarray(v)
    et = _NP_TO_MLIR.get(a.dtype.name)
    if et is None:
        raise TypeError(f"no MLIR element type for numpy dtype {a.dtype}")
    shape = "x".join(str(d) for d in a.shape)
    ttype = f"tensor<{shape + 'x' if shape else ''}{et}>"
    if a.dtype == np.bool_:
        a = a.astype(np.uint8)
    return f'dense<"0x{a.tobytes().hex().upper()}"> : {ttype}'


def attribute_text(name: str, kind: str, detail: Any, value: Any) -> str | None:
    """The attribute's MLIR text, or None for a unit attribute that is off."""
    if kind == "unit":
        return name if value else None
    if kind == "bool":
        return f"{name} = {'true' if value else 'false'}"
    if kind == "int":
        if isinstance(value, bool) or int(value) != value:
            raise TypeError(f"{name} must be an integer, got {value!r}")
        return f"{name} = {int(value)} : {detail}"
    if kind == "float":
        return f"{name} = {_float_text(value, detail)}"
    if kind == "str":
        return f"{name} = {_string_text(str(value))}"
    if kind == "dense_array":
        if detail == "i1":
            items = ", ".join("true" if x else "false" for x in value)
        elif detail.startswith("f"):
            items = ", ".join(f"{float(x):.17e}" for x in value)
        else:
            items = ", ".join(str(int(x)) for x in value)
        return f"{name} = array<{detail}{': ' + items if items else ''}>"
    if kind == "enum":
        dialect, mnemonic, cases = detail
        if value not in cases:
            raise ValueError(f"{name} must be one of {', '.join(cases)}, got {value!r}")
        return f"{name} = #{dialect}<{mnemonic} {value}>"
    if kind == "type":
        return f"{name} = {value}"
    if kind == "elements":
        return f"{name} = {_elements_text(value)}"
    if not isinstance(value, str):
        raise TypeError(f"{name} takes MLIR attribute text, got {type(value).__name__}")
    return f"{name} = {value}"


def build_op(op_name: str, operands: Sequence[tuple], attrs: Sequence[tuple],
             result_kinds: Sequence[str], result_types: Sequence[str] | None, *,
             segmented: bool):
    flat, segments = [], []
    for name, kind, value in operands:
        if kind == "single":
            if value is None:
                raise TypeError(f"{op_name}: operand '{name}' is required")
            group = [value]
        elif kind == "optional":
            group = [] if value is None else [value]
        else:
            group = list(value or [])
        flat += group
        segments.append(len(group))
    if not flat:
        raise TypeError(f"{op_name} has no operands to say which function it belongs to "
                        f"(use Function.emit)")
    props = []
    for name, kind, detail, optional, value in attrs:
        if value is None:
            if not optional:
                raise TypeError(f"{op_name}: attribute '{name}' is required")
            continue
        try:
            text = attribute_text(name, kind, detail, value)
        except (TypeError, ValueError) as e:
            raise RlxError(f"{op_name}: {e}") from None
        if text is not None:
            props.append(text)
    if segmented:
        props.append(f"operandSegmentSizes = array<i32: {', '.join(map(str, segments))}>")
    if result_types is None and "variadic" in result_kinds:
        raise TypeError(f"{op_name} has variadic results: give result_types")
    results = flat[0].function._emit_generic(op_name, flat, props, result_types)
    return results[0] if len(results) == 1 else tuple(results)
