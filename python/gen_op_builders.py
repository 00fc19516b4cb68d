"""Generates a Python builder module for one dialect from its ODS records.

    llvm-tblgen --dump-json -I include -I <mlir include> MIROps.td -o mir.json
    python gen_op_builders.py mir.json --dialect rlx_mir -o rlx/mir.py

Every op without regions or successors gets a function named by its
mnemonic: operands positional in ODS order (an Optional one defaults to None,
a Variadic one takes a sequence), attributes keyword-only by their ODS names
(optional and default-valued ones default to None, which leaves them out so
the op's own default applies), and ``result_types`` for ops whose result
types are not inferred. The op's summary and description are its docstring.
Values are written as MLIR attribute text by the attribute's ODS kind
(integer and float attributes with their type, unit, string, dense arrays,
enums as their case names, elements from numpy arrays); any other attribute
takes MLIR attribute text. The build runs this (python/CMakeLists.txt), so an
op added in TableGen appears in Python with no new code.
"""
from __future__ import annotations

import argparse
import json
import keyword
import sys
import textwrap


def superclasses(records, name):
    return records[name].get("!superclasses", [])


def trait_names(records, traits):
    out = set()
    stack = [t["def"] for t in traits or []]
    while stack:
        n = stack.pop()
        if n in out:
            continue
        out.add(n)
        r = records.get(n, {})
        for key in ("traits",):
            for t in r.get(key) or []:
                stack.append(t["def"])
    return out


def is_attr(records, name):
    sup = superclasses(records, name)
    return ("Attr" in sup or "AttrConstraint" in sup) and "TypeConstraint" not in sup


def attr_kind(records, name):
    """(kind, detail, optional) for an attribute constraint record."""
    optional = False
    r = records[name]
    sup = superclasses(records, name)
    while True:
        if "OptionalAttr" in sup or "DefaultValuedAttr" in sup or \
                "DefaultValuedOptionalAttr" in sup:
            optional = True
        base = r.get("baseAttr")
        if not base or not any(s in sup for s in ("OptionalAttr", "DefaultValuedAttr",
                                                  "DefaultValuedOptionalAttr", "ConfinedAttr")):
            break
        name = base["def"]
        r = records[name]
        sup = superclasses(records, name)
    storage = (r.get("storageType") or "").strip()
    if name == "UnitAttr" or storage == "::mlir::UnitAttr":
        return ("unit", None, True)
    if storage == "::mlir::BoolAttr":
        return ("bool", None, optional)
    if "EnumAttr" in sup and r.get("enum"):
        enum = records[r["enum"]["def"]]
        cases = [records[c["def"]]["str"] for c in enum.get("enumerants", [])]
        dialect = records[r["dialect"]["def"]]["name"]
        return ("enum", (dialect, r["mnemonic"], cases), optional)
    if storage == "::mlir::IntegerAttr":
        vt = r.get("valueType")
        width = records[vt["def"]].get("bitwidth", 64) if vt else 64
        return ("int", f"i{width}", optional)
    if storage == "::mlir::FloatAttr":
        vt = r.get("valueType")
        width = records[vt["def"]].get("bitwidth", 64) if vt else 64
        return ("float", f"f{width}", optional)
    if storage == "::mlir::StringAttr":
        return ("str", None, optional)
    if storage.startswith("::mlir::Dense") and storage.endswith("ArrayAttr"):
        elem = storage[len("::mlir::Dense"):-len("ArrayAttr")].lower()
        return ("dense_array", "i1" if elem == "bool" else elem, optional)
    if storage == "::mlir::TypeAttr":
        return ("type", None, optional)
    if storage == "::mlir::ElementsAttr" or "ElementsAttrBase" in sup:
        return ("elements", None, optional)
    return ("text", None, optional)


def operand_kind(records, name):
    sup = superclasses(records, name)
    if "Variadic" in sup:
        return "variadic"
    if "Optional" in sup:
        return "optional"
    return "single"


def py_name(name):
    return name + "_" if keyword.iskeyword(name) or name in ("result_types",) else name


def doc_text(record, op_name):
    summary = (record.get("summary") or "").strip()
    desc = textwrap.dedent(record.get("description") or "").strip()
    body = f"``{op_name}``: {summary}" if summary else f"``{op_name}``"
    if desc:
        body += "\n\n" + desc
    return body.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def generate(records, dialect):
    ops = []
    for name in records["!instanceof"]["Op"]:
        r = records[name]
        d = records[r["opDialect"]["def"]]
        if d.get("name") != dialect:
            continue
        # Ops with regions, terminators and ops without operands (no function
        # to add them to: Function.emit builds those).
        if r["regions"]["args"] or r["successors"]["args"] or \
                "Terminator" in trait_names(records, r.get("traits")) or \
                not [a for a, _ in r["arguments"]["args"] if not is_attr(records, a["def"])]:
            continue
        ops.append((r["opName"], name))
    ops.sort()
    out = [f'"""Builders for every {dialect} op without regions, generated from its ODS',
           "records by python/gen_op_builders.py at build time (do not edit).",
           "",
           "Each function adds its op to the function its operands belong to",
           "(:class:`rlx.hir.Function`) and returns its result, or a tuple of them;",
           'the op is verified as it is added (RlxError at the calling line)."""',
           "from __future__ import annotations",
           "",
           "from ._opbuild import build_op as _build_op",
           "",
           "__all__ = [" + ", ".join(repr(py_name(o)) for o, _ in ops) + "]",
           ""]
    for mnemonic, name in ops:
        r = records[name]
        full = f"{dialect}.{mnemonic}"
        traits = trait_names(records, r.get("traits"))
        segmented = "AttrSizedOperandSegments" in traits
        operands, attrs = [], []
        for arg, arg_name in r["arguments"]["args"]:
            if is_attr(records, arg["def"]):
                attrs.append((arg_name, *attr_kind(records, arg["def"])))
            else:
                operands.append((arg_name, operand_kind(records, arg["def"])))
        results = [(n, operand_kind(records, a["def"])) for a, n in r["results"]["args"]]
        params, seen_default = [], False
        for n, kind in operands:
            if kind == "optional" or seen_default:
                params.append(f"{py_name(n)}=None")
                seen_default = True
            else:
                params.append(py_name(n))
        kw = []
        for n, kind, detail, optional in attrs:
            kw.append(f"{py_name(n)}=None" if optional else py_name(n))
        # InferTypeOp traits, or the type constraints ODS infers results from.
        infers = any(t.startswith(("InferTypeOp", "SameOperandsAndResultType", "AllTypesMatch"))
                     or records.get(t, {}).get("cppInterfaceName") == "InferTypeOpInterface"
                     for t in traits)
        # Result types: given where the op does not infer them.
        kw.append("result_types=None" if infers else "result_types")
        sig = ", ".join(params + ["*"] + kw)
        out.append("")
        out.append(f"def {py_name(mnemonic)}({sig}):")
        out.append('    """' + doc_text(r, full).replace("\n", "\n    ") + '\n    """')
        ops_list = ", ".join(f"({n!r}, {kind!r}, {py_name(n)})" for n, kind in operands)
        attr_list = ", ".join(
            f"({n!r}, {kind!r}, {detail!r}, {optional!r}, {py_name(n)})"
            for n, kind, detail, optional in attrs)
        out.append(f"    return _build_op({full!r}, [{ops_list}], [{attr_list}], "
                   f"{[k for _, k in results]!r}, result_types, segmented={segmented!r})")
        out.append("")
        out.append(f"{py_name(mnemonic)}.op_name = {full!r}")
        out.append(f"{py_name(mnemonic)}.operands = {tuple(operands)!r}  # (ODS name, kind)")
        out.append(f"{py_name(mnemonic)}.infers_result_types = {infers!r}")
    return "\n".join(out) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("json", help="llvm-tblgen --dump-json output")
    p.add_argument("--dialect", required=True, help="the dialect's name (rlx_mir)")
    p.add_argument("-o", "--output", required=True)
    args = p.parse_args(argv)
    with open(args.json, encoding="utf-8") as f:
        records = json.load(f)
    text = generate(records, args.dialect)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
