"""The Python op builders are generated from the ODS records
(python/gen_op_builders.py at build time): every registered op without
regions has one, with no per-op Python code. Each rlx_mir op's example from
test_every_mir_op is rebuilt through its builder, from the attributes the
parsed example holds (read back here from MLIR's generic form), and must
print the same op."""
from __future__ import annotations

import re

import numpy as np
import pytest

import rlx
from rlx import hir, mir

from test_every_mir_op import EXAMPLES, module_text

# Ops with regions (control flow too), terminators and ops without operands are built with
# Function.emit.
REGION_OPS = {"rlx_mir.elementwise", "rlx_mir.custom_fn", "rlx_mir.yield", "rlx_mir.constant",
              "rlx_mir.if", "rlx_mir.while", "rlx_mir.scan"}


@pytest.mark.parametrize("dialect,module", [("rlx_mir", mir), ("rlx_hir", hir)])
def test_every_region_free_op_has_a_builder(dialect, module):
    ops = set(rlx.default_context().registered_ops(dialect)) - REGION_OPS
    assert ops
    missing = [o for o in sorted(ops) if not callable(getattr(module, o.split(".", 1)[1], None))]
    assert missing == []


def split_top(text):
    """Splits at commas outside <>, [], (), {} and strings."""
    parts, depth, cur, quoted = [], 0, "", False
    for c in text:
        if c == '"':
            quoted = not quoted
        if not quoted and c in "<[({":
            depth += 1
        elif not quoted and c in ">])}":
            depth -= 1
        if c == "," and depth == 0 and not quoted:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur.strip())
    return parts


def python_value(text):
    """An attribute's MLIR text as the builder's Python value (an independent
    reading of MLIR's attribute syntax)."""
    if m := re.fullmatch(r"(-?\d+) : i\d+", text):
        return int(m.group(1))
    if m := re.fullmatch(r"(-?[\d.]+e[+-]\d+) : f\d+", text):
        return float(m.group(1))
    if m := re.fullmatch(r"array<i\d+(?:: (.*))?>", text):
        return [int(v) for v in split_top(m.group(1) or "")]
    if m := re.fullmatch(r"array<f\d+(?:: (.*))?>", text):
        return [float(v) for v in split_top(m.group(1) or "")]
    if m := re.fullmatch(r"#rlx<\w+ (\w+)>", text):
        return m.group(1)
    if text in ("true", "false"):
        return text == "true"
    if m := re.fullmatch(r'"(.*)"', text):
        return m.group(1)
    return text


def generic_op_line(module, op):
    lines = [ln.strip() for ln in module.text(generic=True).splitlines() if f'"{op}"' in ln]
    assert len(lines) == 1, lines
    return lines[0]


def parse_generic(line):
    m = re.fullmatch(r'(?:(.*?) = )?"([\w.]+)"\((.*?)\)(?: <\{(.*)\}>)? : \((.*?)\) -> (.*)', line)
    assert m, line
    operands = [o.strip() for o in m.group(3).split(",") if o.strip()]
    props = {}
    for item in split_top(m.group(4) or ""):
        name, eq, value = item.partition(" = ")
        props[name] = python_value(value) if eq else True
    results = m.group(6).strip()
    results = split_top(results[1:-1]) if results.startswith("(") else [results]
    return operands, props, split_top(m.group(5)), results


def normalized(line):
    """The op without SSA names: `"op"(%0, %1) <{...}> : (...) -> ...`."""
    return re.sub(r"%[\w#]+", "%", line.split(" = ", 1)[1] if line.startswith("%") else line)


BUILDABLE = sorted(op for op in EXAMPLES if op not in REGION_OPS | {"rlx_mir.constant"})


@pytest.mark.parametrize("op", BUILDABLE)
def test_builder_rebuilds_the_example(op):
    original = rlx.parse(module_text(op))
    line = generic_op_line(original, op)
    operand_names, props, operand_types, result_types = parse_generic(line)
    # The operands as function inputs of their types (an example's operand
    # may be another op's result).
    f = hir.Function("f")
    values = {}
    for n, ty in zip(operand_names, operand_types):
        if n not in values:
            dims = ty[len("tensor<"):-1].split("x")
            values[n] = f.input(f"in{len(values)}", [int(d) for d in dims[:-1]], dims[-1])
    builder = getattr(mir, op.split(".", 1)[1])
    kinds = [kind for _, kind in builder.operands]  # ODS order
    operands = [values[o] for o in operand_names]
    if not builder.infers_result_types:
        props["result_types"] = result_types
    segments = props.pop("operandSegmentSizes", None)
    call = []
    if segments is not None:
        it = iter(operands)
        for kind, n in zip(kinds, segments):
            group = [next(it) for _ in range(n)]
            call.append(group if kind == "variadic" else (group[0] if group else None))
    elif kinds == ["variadic"]:
        call = [operands]
    else:
        call = operands
    out = builder(*call, **props)
    out = out if isinstance(out, tuple) else (out,)
    for i, v in enumerate(out):
        f.output(f"r{i}", v)
    built = f.build()
    assert normalized(generic_op_line(built, op)) == normalized(line)


def test_builder_values_run_against_numpy():
    """Builders with enums, unit attributes, optional operands and two
    results, compiled and run."""
    f = hir.Function("f")
    x = f.input("x", (2, 6))
    c = mir.cumsum(x, axis=1, exclusive=True, reverse=True)
    v, i = mir.topk(x, k=2)
    f.output("c", c)
    f.output("v", v)
    f.output("i", i)
    model = rlx.compile_cpu(f.build())
    a = np.random.default_rng(0).standard_normal((2, 6)).astype(np.float32)
    out = model.run(x=a)
    want_c = np.concatenate([np.cumsum(a[:, ::-1], axis=1)[:, ::-1][:, 1:],
                             np.zeros((2, 1), np.float32)], axis=1)
    np.testing.assert_allclose(out["c"], want_c, rtol=1e-6, atol=1e-6)
    order = np.argsort(-a, axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(out["i"], order)
    np.testing.assert_allclose(out["v"], np.take_along_axis(a, order, axis=1))


def test_builder_errors_name_the_calling_line():
    f = hir.Function("f")
    x = f.input("x", (2, 6))
    with pytest.raises(rlx.RlxError, match=r"test_op_builders\.py:\d+: rlx_mir\.cumsum: .*axis"):
        mir.cumsum(x, axis=5)
    with pytest.raises(rlx.RlxError, match="layout must be one of bsd, bshd, bhsd"):
        mir.attention(x, x, x, num_heads=1, num_kv_heads=1, head_dim=6, layout="bogus")
    with pytest.raises(TypeError, match="attribute 'axis' is required|missing"):
        mir.cumsum(x)
    assert not mir.cast.infers_result_types
    with pytest.raises(TypeError, match="result_types"):
        mir.cast(x)
    y = mir.cast(x, result_types=["tensor<2x6xbf16>"])
    assert y.type == "tensor<2x6xbf16>"
