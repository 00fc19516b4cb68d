"""PyTorch models into RLX, through torch-mlir's FX importer.

    text, inputs, params = rlx.export_torch(module, x, pos, mask)   # TOSA text
    model = rlx.from_torch(module, x, pos, mask)                    # compiled for the CPU
    y = model(x, pos, mask)                                         # numpy or torch in and out

`torch.export` traces the module on the example arguments (static shapes),
torch-mlir lowers the graph to TOSA or linalg on tensors, and RLX's CPU
pipeline raises that into MIR (``rlx-import-to-mir``), fuses and compiles it.

Weights either stay arguments of the function (``weights="args"``, the
default of :func:`from_torch`: ``rlx.param`` carries each one's
``state_dict`` name, so checkpoints bind by name and fusion can pack them)
or are frozen into the module as constants (``weights="frozen"``). Buffers
(RoPE's ``inv_freq``, persistent or not) are always frozen.

torch and torch-mlir are imported only when these functions are called
(``pip install torch torch-mlir==20261001``, or the package's ``torch``
extra); ``import rlx`` never needs them.
"""
from __future__ import annotations

import inspect
import sys
from typing import Sequence

import numpy as np

__all__ = ["export_torch", "from_torch", "TorchModel"]

_TORCH_MLIR_HINT = ("rlx.export_torch / rlx.from_torch need torch-mlir: "
                    "pip install torch-mlir==20261001 (and torch)")


def _import_torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError("rlx.export_torch / rlx.from_torch need PyTorch: pip install torch "
                          "torch-mlir==20261001") from e
    try:
        from torch_mlir import fx, ir  # noqa: F401
        from torch_mlir.compiler_utils import OutputType  # noqa: F401
    except ImportError as e:
        raise ImportError(_TORCH_MLIR_HINT) from e
    return torch


def _to_torch(torch, a):
    if isinstance(a, torch.Tensor):
        return a.detach()
    arr = np.asarray(a)
    if arr.dtype.name == "bfloat16":  # ml_dtypes: torch has no numpy bf16
        return torch.from_numpy(arr.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.array(arr, copy=True))


def _to_numpy(torch, a) -> np.ndarray:
    if isinstance(a, torch.Tensor):
        a = a.detach().cpu()
        if a.dtype in (torch.bfloat16, torch.float16):
            a = a.to(torch.float32)
        return a.numpy()
    return np.asarray(a)


def _input_names(module, n: int) -> list[str]:
    """The forward's positional parameter names for the first `n` arguments;
    ``input_<i>`` where it has none (``*args``) or names repeat."""
    names: list[str] = []
    try:
        sig = inspect.signature(module.forward)
        for p in sig.parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                names.append(p.name)
            else:
                break
    except (TypeError, ValueError):
        pass
    names = names[:n]
    names += [f"input_{i}" for i in range(len(names), n)]
    return names


def _param_names(module) -> list[str]:
    # named_parameters() lists a tied weight once (under its first name).
    return [n for n, _ in module.named_parameters()]


def _exported_program(torch, module, args: tuple):
    """torch.export of `module` on `args`, decomposed with torch-mlir's table,
    with non-persistent buffers made importable: torch.export keeps them in
    ``constants``, not the ``state_dict`` where torch-mlir's frozen import
    looks them up ("Could not find state mapping for buffer", e.g.
    transformers' RoPE ``inv_freq``). They are added to the state dict after
    the decompositions (whose program check rejects them there)."""
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    prog = torch.export.export(module, args, strict=False)
    prog = prog.run_decompositions(get_decomposition_table())
    constants = getattr(prog, "constants", {}) or {}
    state = prog.state_dict
    for name in prog.graph_signature.inputs_to_buffers.values():
        if name not in state and name in constants:
            state[name] = constants[name]
    return prog


def _name_arguments(mlir_module, func_name: str, inputs: Sequence[str],
                    params: Sequence[str]) -> None:
    """Sets ``rlx.input`` / ``rlx.param`` on the arguments of @func_name
    (through torch-mlir's own IR API: the func op's ``arg_attrs``)."""
    from torch_mlir import ir

    with mlir_module.context:
        func = None
        for op in mlir_module.body.operations:
            if op.operation.name == "func.func" and \
                    ir.StringAttr(op.attributes["sym_name"]).value == func_name:
                func = op
                break
        if func is None:
            raise RuntimeError(f"the exported module has no function @{func_name}")
        fn_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        n_args = len(fn_type.inputs)
        roles = [("rlx.input", n) for n in inputs] + [("rlx.param", n) for n in params]
        if n_args != len(roles):
            raise RuntimeError(f"@{func_name} has {n_args} arguments; expected {len(inputs)} "
                               f"inputs and {len(params)} parameters")
        old = None
        if "arg_attrs" in func.attributes:
            old = ir.ArrayAttr(func.attributes["arg_attrs"])
        dicts = []
        for i, (role, name) in enumerate(roles):
            entries = {}
            if old is not None:
                d = ir.DictAttr(old[i])
                for j in range(len(d)):
                    named = d[j]
                    entries[named.name] = named.attr
            entries[role] = ir.StringAttr.get(name)
            dicts.append(ir.DictAttr.get(entries))
        func.attributes["arg_attrs"] = ir.ArrayAttr.get(dicts)


def export_torch(module, *example_args, output: str = "tosa", weights: str = "args",
                 func_name: str = "forward") -> tuple[str, list[str], list[str]]:
    """Exports a ``torch.nn.Module`` on `example_args` (torch tensors or numpy
    arrays, positional, static shapes) with torch-mlir's FX importer.

    `output`: ``"tosa"`` or ``"linalg"`` (linalg on tensors). `weights`:
    ``"args"`` makes the parameters arguments after the inputs (the function is
    ``@func_name(*inputs, *params)``; a tied weight appears once), ``"frozen"``
    keeps them as constants of the module (torch-mlir's literals:
    ``dense_resource`` blobs or inline ``dense``). Buffers are always frozen.

    Returns ``(mlir_text, input_names, param_names)``: the inputs are named by
    the forward's parameter names (``input_<i>`` where it has none) and carry
    ``rlx.input``; parameters carry their ``state_dict`` names in ``rlx.param``
    (``param_names`` is empty for frozen weights). The module is put in eval
    mode for the export and traced under ``torch.no_grad()``; its training flag
    is restored afterwards.

    A transformers ``PreTrainedModel`` (e.g. ``LlamaForCausalLM`` on
    ``input_ids``) is called with ``use_cache=False`` and, unless
    ``attention_mask`` is one of the inputs, the causal mask [batch, 1, seq,
    seq] (0 and -inf); its ``ModelOutput`` is flattened to its tensors (the
    logits)."""
    torch = _import_torch()
    from torch_mlir import fx
    from torch_mlir.compiler_utils import OutputType

    kinds = {"tosa": OutputType.TOSA, "linalg": OutputType.LINALG_ON_TENSORS}
    if output not in kinds:
        raise ValueError(f"output must be 'tosa' or 'linalg', not {output!r}")
    if weights not in ("args", "frozen"):
        raise ValueError(f"weights must be 'args' or 'frozen', not {weights!r}")
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"export_torch takes a torch.nn.Module, not {type(module).__name__}")

    args = tuple(_to_torch(torch, a) for a in example_args)
    input_names = _input_names(module, len(args))
    param_names = _param_names(module) if weights == "args" else []

    extra_kwargs = _hf_kwargs(torch, module, input_names)
    was_training = {m: m.training for m in module.modules()}
    try:
        module.eval()
    except NotImplementedError:
        # Graph modules from torch.export (PT2E-quantized ones among them)
        # refuse eval(): the flags themselves, then.
        for m in was_training:
            m.training = False
    try:
        with torch.no_grad():
            traced = _traced_module(torch, module, param_names, len(args), extra_kwargs)
            full_args = args
            if weights == "args":
                params = dict(module.named_parameters())
                full_args += tuple(params[n].detach() for n in param_names)
            prog = _exported_program(torch, traced, full_args)
            # The decompositions ran above (with the buffer fix): none here.
            mlir_module = fx.export_and_import(prog, output_type=kinds[output],
                                               func_name=func_name, decomposition_table={})
    finally:
        for m, flag in was_training.items():
            m.training = flag
    _name_arguments(mlir_module, func_name, input_names, param_names)
    return str(mlir_module), input_names, param_names


def _hf_kwargs(torch, module, input_names: Sequence[str]):
    """Keyword arguments for a transformers model (a ``PreTrainedModel``;
    layers are plain modules), as a function of the inputs, or None:

    - ``use_cache=False``: the default ``DynamicCache`` output is no pytree
      torch.export can flatten;
    - the causal ``attention_mask`` [batch, 1, seq, seq] (0 and -inf) when
      the mask is not one of the inputs: without one, transformers 5 looks
      for packed sequences in the position ids (a cumsum, which torch-mlir's
      linalg output keeps as ``tm_tensor.scan``, a dialect RLX does not
      read); a 4-D mask is used as given, a constant that RLX recognizes as
      attention's causal mask."""
    tf = sys.modules.get("transformers")
    if tf is None or not isinstance(module, getattr(tf, "PreTrainedModel", ())):
        return None
    try:
        params = inspect.signature(module.forward).parameters
    except (TypeError, ValueError):
        return None
    fixed = {"use_cache": False} if "use_cache" in params else {}
    mask = "attention_mask" in params and "attention_mask" not in input_names
    if not fixed and not mask:
        return None

    dtype = getattr(module, "dtype", torch.float32)

    def kwargs(inputs):
        kw = dict(fixed)
        if mask and inputs and inputs[0].dim() >= 2:
            # The causal mask itself ([batch, 1, seq, seq], 0 and -inf), which
            # transformers takes as given: a constant RLX recognizes as
            # attention's causal mask (an all-ones [batch, seq] mask would be
            # expanded in the graph by compares, casts and ands).
            b, s = inputs[0].shape[:2]
            kw["attention_mask"] = torch.full((b, 1, s, s), float("-inf"), dtype=dtype,
                                              device=inputs[0].device).triu(1)
        return kw
    return kwargs


def _traced_module(torch, module, names: list[str], n_inputs: int, kwargs_fn):
    """What torch.export traces: `module` itself, or a module whose forward is
    ``(*inputs, *params)`` calling `module` with the given parameter values
    (``torch.func.functional_call``) when `names` are given, with the keyword
    arguments ``kwargs_fn(inputs)`` where there is one."""
    if not names and kwargs_fn is None:
        return module

    class Traced(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.module = module

        def forward(self, *args):
            inputs, params = args[:n_inputs], args[n_inputs:]
            kw = kwargs_fn(inputs) if kwargs_fn is not None else {}
            if names:
                return torch.func.functional_call(self.module, dict(zip(names, params)),
                                                  inputs, kw)
            return self.module(*inputs, **kw)

    return Traced()


class TorchModel:
    """A PyTorch module compiled by RLX for the CPU (made by :func:`from_torch`).

    Call it with the inputs positionally, as the example arguments were given
    (numpy arrays or torch tensors): it returns numpy arrays, or torch tensors
    when the inputs were torch tensors; one output bare, several as a tuple.
    The parameters are the module's values when :func:`from_torch` ran
    (converted to float32 once; on the CPU path held by the compiled model,
    so calls do not copy them); :meth:`refresh_params` reads them again."""

    def __init__(self, module, compiled, mlir: str, input_names: list[str],
                 param_names: list[str]):
        self.module = module
        self.compiled = compiled
        self.mlir = mlir
        self.input_names = input_names
        self.param_names = param_names
        self._params: dict[str, np.ndarray] = {}
        self.refresh_params()

    def refresh_params(self) -> None:
        """Reads the module's current parameter values (after training or
        loading a checkpoint into the module). With ``weights="frozen"`` the
        values are constants of the compiled module: export again instead."""
        torch = _import_torch()
        values = dict(self.module.named_parameters())
        # Copies: a float32 torch tensor's numpy view would share its memory,
        # so the module's later in-place updates would reach some weights
        # (those read as they are) and not others (packed ones).
        self._params = {n: np.array(_to_numpy(torch, values[n]), dtype=np.float32, order="C",
                                    copy=True)
                        for n in self.param_names}
        self.compiled.invalidate_packed_params()
        # A CPU model holds them (copied once, not on every call); the GPU
        # path takes them with each run.
        self._held = hasattr(self.compiled, "hold_weights")
        if self._held:
            self.compiled.hold_weights(self._params)
            self._params = {}

    def run(self, *args) -> dict[str, np.ndarray]:
        """The outputs by name (``result<i>``), numpy arrays."""
        if len(args) != len(self.input_names):
            raise TypeError(f"the model takes {len(self.input_names)} inputs "
                            f"({', '.join(self.input_names)}), got {len(args)}")
        torch = None
        if any(type(a).__module__.startswith("torch") for a in args):
            torch = _import_torch()
        feeds = {n: (_to_numpy(torch, a) if torch is not None else np.asarray(a))
                 for n, a in zip(self.input_names, args)}
        if not self._held:
            feeds.update(self._params)
        return self.compiled.run(feeds)

    def __call__(self, *args):
        out = self.run(*args)
        values = [out[r["name"]] for r in self.compiled.results]
        if any(type(a).__module__.startswith("torch") for a in args):
            torch = _import_torch()
            values = [torch.from_numpy(np.ascontiguousarray(v)) for v in values]
        return values[0] if len(values) == 1 else tuple(values)


def from_torch(module, *example_args, output: str = "tosa", weights: str = "args",
               func_name: str = "forward", device: str = "cpu", **compile_kwargs) -> TorchModel:
    """Exports `module` (:func:`export_torch`), parses the text and compiles
    it: for this CPU with ``device="cpu"`` (:func:`rlx.compile_cpu`, which
    takes `compile_kwargs`: fusion_policy, fuse, blas, opt_level, ...), or
    for the GPU path with ``device="emu"``, ``"cuda"`` or ``"auto"``
    (:func:`rlx.gpu.compile`: chip, features, ...). Returns a callable
    :class:`TorchModel` with ``.compiled`` (the CompiledModel or GpuModel),
    ``.mlir`` (the exported text) and ``.param_names``."""
    from . import compile_cpu, parse

    text, input_names, param_names = export_torch(module, *example_args, output=output,
                                                  weights=weights, func_name=func_name)
    parsed = parse(text, name=f"<torch {type(module).__name__}>")
    if device == "cpu":
        compiled = compile_cpu(parsed, entry=func_name, **compile_kwargs)
    else:
        from . import gpu

        compiled = gpu.compile(parsed, device=device, **compile_kwargs)
    return TorchModel(module, compiled, text, input_names, param_names)
