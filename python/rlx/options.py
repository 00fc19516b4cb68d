"""Compile options as keyword arguments.

The options are declared once, in C++ (``include/RLX/Target/CompileOptions.def``):
``rlx.compile_cpu`` and ``rlx.gpu.compile`` take them by their Python name
(the field in snake_case: ``matmul_kernel``, ``opt_level``), ``rlx-run`` and
``rlx-compile`` as flags (``--matmul-kernel``, ``-O``) and the pipelines as
pass options (``rlx-lower-to-nvvm{matmul-kernel=wgmma}``). Unknown names and
bad values raise RlxError naming the option.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from . import _rlx

__all__ = ["compile_options", "as_text", "describe"]


def compile_options() -> list[dict[str, str]]:
    """Every option: name, flag, type, default, help and group (common,
    codegen, cpu, cpu_pipeline, cpu_jit, gpu, gpu_pipeline, gpu_artifact)."""
    return list(_rlx.compile_options())


def as_text(options: Mapping[str, Any]) -> dict[str, str]:
    """The C++ side's text for each value: bools as true/false, sequences
    comma-separated, a dims mapping as name=size bindings; None is left out
    (the default)."""
    out: dict[str, str] = {}
    for name, value in options.items():
        if value is None:
            continue
        if name == "dims" and isinstance(value, Mapping):
            value = [f"{k}={int(v)}" for k, v in value.items()]
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            out[name] = ",".join(str(v) for v in value)
        else:
            out[name] = str(value)
    return out


def describe(groups: Iterable[str]) -> str:
    """A docstring section listing the options of `groups` (indented as the
    docstrings it ends)."""
    wanted = set(groups)
    lines = ["", "Compile options (keyword arguments; include/RLX/Target/CompileOptions.def):", ""]
    for o in compile_options():
        if o["group"] in wanted:
            default = f" (default {o['default']!s})" if o["default"] != "" else ""
            lines.append(f"- ``{o['name']}``: {o['help']}{default}")
    return "\n".join("    " + line if line else line for line in lines)
