"""Function transforms on MIR modules: reverse mode (:func:`vjp`), forward
mode (:func:`jvp`), Hessian-vector products (:func:`hvp`, forward over
reverse) and :func:`vmap`.

Each returns a new module (the argument is not modified) holding the original
functions plus the transformed one, named as the passes name it:
``<f>_grad`` (``rlx-mir-grad``), ``<f>_jvp`` (``rlx-mir-jvp``),
``<f>_grad_jvp`` (:func:`hvp`) and ``<f>_vmap`` (``rlx-mir-vmap``). Compile
it with ``rlx.compile_cpu(m, entry=name)`` or ``rlx.gpu.compile(m)`` (whose
entry is the last function, the transformed one). Transforms compose: the
module a transform returns is MIR like any other.

HIR is lowered first (``convert-rlx-hir-to-mir{fusion-policy=fusable}``).
The rules are the MIR ops' interfaces; an op without one raises
:class:`rlx.RlxError` naming it.
"""
from __future__ import annotations

from typing import Sequence

from . import Module, parse

__all__ = ["vjp", "jvp", "hvp", "vmap"]


def _copy(module: Module) -> Module:
    m = parse(module.text())
    if "rlx_hir." in m.text():
        m.run_pipeline("convert-rlx-hir-to-mir{fusion-policy=fusable}")
    return m


def _options(**kv) -> str:
    parts = []
    for k, v in kv.items():
        if isinstance(v, (list, tuple)):
            if v:
                parts.append(f"{k}={','.join(v)}")
        elif v not in ("", None):
            parts.append(f"{k}={v}")
    return "{" + " ".join(parts) + "}" if parts else ""


def vjp(module: Module, *, wrt: Sequence[str] = (), function: str = "") -> Module:
    """Adds ``<f>_grad(args, d_output) -> (loss, d_<wrt>...)`` for a function
    returning one scalar (``rlx-mir-grad``)."""
    m = _copy(module)
    m.run_pipeline("rlx-mir-grad" + _options(wrt=list(wrt), function=function))
    return m


def jvp(module: Module, *, wrt: Sequence[str] = (), function: str = "") -> Module:
    """Adds ``<f>_jvp(args, t_<wrt>...) -> (results, t_<result>...)``: the
    directional derivatives of the results along the tangents
    (``rlx-mir-jvp``)."""
    m = _copy(module)
    m.run_pipeline("rlx-mir-jvp" + _options(wrt=list(wrt), function=function))
    return m


def hvp(module: Module, *, wrt: Sequence[str], function: str) -> Module:
    """Adds ``<f>_grad`` and ``<f>_grad_jvp(args, d_output, t_<wrt>...) ->
    (loss, d_<wrt>..., t_loss, t_d_<wrt>...)``: ``t_d_<w>`` is the
    Hessian of the loss applied to the tangents (forward over reverse)."""
    m = vjp(module, wrt=wrt, function=function)
    m.run_pipeline("rlx-mir-jvp" + _options(wrt=list(wrt), function=f"{function}_grad"))
    return m


def vmap(module: Module, batch_size: int, *, axis: int = 0, args: Sequence[str] = (),
         function: str = "") -> Module:
    """Adds ``<f>_vmap``: the function over a new axis of `batch_size` at
    `axis` of the arguments named in `args` (default: every argument that is
    not a parameter) and of every result (``torch.vmap`` with ``in_dims`` =
    `axis` for those arguments, ``None`` for the others, ``out_dims`` =
    `axis`)."""
    m = _copy(module)
    m.run_pipeline("rlx-mir-vmap" + _options(**{"batch-size": int(batch_size), "axis": int(axis)},
                                             args=list(args), function=function))
    return m
