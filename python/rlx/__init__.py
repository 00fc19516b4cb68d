"""RLX-MLIR: a transformer compiler built on MLIR, from Python.

The compiled extension ``rlx._rlx`` wraps RLX's C++ API; this package adds a
thin Python layer:

- :func:`parse`, :func:`load_bytecode` and :class:`Module` (print, verify,
  bytecode, pass pipelines by text) over one shared :class:`Context`;
- :mod:`rlx.hir`, a builder for HIR functions with shapes checked as each op
  is added (errors are :class:`RlxError` carrying the MLIR diagnostic);
- :mod:`rlx.models`, models from Hugging Face ``config.json`` files (the same
  C++ generator as ``rlx-gen``);
- :func:`compile_cpu`, which JIT-compiles a module (HIR, MIR or LIR) for this
  CPU and runs it on numpy arrays;
- :mod:`rlx.random`, the seeded values ``rlx-run`` generates;
- :func:`vjp`, :func:`jvp`, :func:`hvp` and :func:`vmap`
  (:mod:`rlx.transforms`), function transforms on MIR modules;
- :func:`export_torch` and :func:`from_torch` (:mod:`rlx.frontend`), PyTorch
  modules through torch-mlir's TOSA or linalg into RLX (torch and torch-mlir
  are imported only when they are called).
"""
from __future__ import annotations

import os
import sys
from typing import Mapping, Optional, Sequence

import numpy as np


def _default_blas() -> None:
    """Points the CPU runtime at the OpenBLAS of the `scipy-openblas32` wheel and
    the oneDNN of `onednn-cpu-gomp` (dependencies of this package) unless
    RLX_BLAS / RLX_DNNL_CANDIDATES already name libraries: the runtime opens
    them at load time (lib/Runtime/CPU/Blas.h)."""
    # The onednn-cpu-gomp wheel's library, as a candidate: the runtime still
    # uses it only where it has AVX-512 kernels (RLX_DNNL would force it).
    dnnl = os.path.join(sys.prefix, "lib", "libdnnl.so.3")
    if not os.environ.get("RLX_DNNL_CANDIDATES") and os.path.exists(dnnl):
        os.environ["RLX_DNNL_CANDIDATES"] = dnnl
    if os.environ.get("RLX_BLAS"):
        return
    try:
        import scipy_openblas32 as sob
    except ImportError:
        return
    os.environ["RLX_BLAS"] = os.path.join(sob.get_lib_dir(), sob.get_library(fullname=True))


_default_blas()

from ._rlx import Context, CpuModel as _CpuModel, Module, RlxError  # noqa: F401
from . import _rlx
from . import gpu  # noqa: E402,F401  (rlx.gpu.compile)
from . import options  # noqa: E402,F401  (rlx.options.compile_options)
from . import options as _options  # noqa: E402

__all__ = ["Context", "Module", "RlxError", "default_context", "parse", "load_bytecode",
           "compile_cpu", "CompiledModel", "load_weights", "export_torch", "from_torch",
           "tensor_parallel_split", "shard_weight", "vjp", "jvp", "hvp", "vmap", "options"]

_DEFAULT: Optional[Context] = None


def default_context() -> Context:
    """The context used when a function is not given one (created on first use)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Context()
    return _DEFAULT


def parse(text: str, context: Optional[Context] = None, name: str = "<string>") -> Module:
    """Parses MLIR text (any RLX or upstream dialect). Raises RlxError with the
    parser's located diagnostics on bad input."""
    return _rlx.parse(context or default_context(), text, name)


def load_bytecode(data: bytes, context: Optional[Context] = None) -> Module:
    """Reads a module written by :meth:`Module.bytecode`."""
    return _rlx.load_bytecode(context or default_context(), data)


class CompiledModel:
    """A module compiled for the CPU. Call :meth:`run` with numpy arrays by
    argument name (see :attr:`arguments`); it returns the outputs by name."""

    def __init__(self, model: _CpuModel):
        self._model = model

    @property
    def arguments(self) -> list[dict]:
        """What :meth:`run` takes: name, shape, dtype, is_param per argument
        (packed parameters appear as the originals they are made from)."""
        return self._model.arguments

    @property
    def other_parameters(self) -> list[str]:
        """The parameters of the module's other entry points, not compiled
        here (Whisper's ``encoder`` beside its ``decoder``): load_weights
        skips their checkpoint tensors."""
        return self._model.other_parameters

    @property
    def results(self) -> list[dict]:
        return self._model.results

    @property
    def stats(self) -> dict:
        """compile_ms, pack_ms, MIR ops before/after fusion, kernels, arena
        bytes, the BLAS, and ``cpu``: what the code was compiled for."""
        return self._model.stats

    def run(self, inputs: Mapping[str, np.ndarray] | None = None, **kwargs: np.ndarray
            ) -> dict[str, np.ndarray]:
        """Runs the model. Arrays are converted to the model's dtypes (f32
        arrays feed bf16 arguments, rounded to nearest even); bf16 results
        come back as float32.

        Parameters that fusion packs (merged Q/K/V, gate|up) are computed
        from the first run's values and reused by later runs, as weights are
        constants of a compiled model: after changing such a parameter, call
        :meth:`invalidate_packed_params`."""
        arrays = dict(inputs or {}, **kwargs)
        # np.require keeps 0-d arrays 0-d (ascontiguousarray makes them 1-d).
        return self._model.run({k: _as_array(v) for k, v in arrays.items()})

    __call__ = run

    @property
    def packed_sources(self) -> list[str]:
        """The parameters only weight packing reads (q/k/v and gate/up that
        are merged, weights stored transposed): after the first run the
        packed copies stand in for them, so later runs may leave them out
        and the caller may drop its arrays (the weights are then held once).
        :meth:`invalidate_packed_params` needs them again."""
        return list(self._model.packed_sources)

    def invalidate_packed_params(self) -> None:
        """Forgets the packed parameters; the next run packs them again."""
        self._model.invalidate_packed_params()

    def hold_weights(self, params: Mapping[str, np.ndarray]) -> int:
        """Copies `params` (parameter arrays by name) into the model once,
        as :meth:`load_weights` does from a file: :meth:`run` then takes the
        inputs alone and no longer copies the weights on every call (a
        parameter given to run still wins). Later changes to the arrays do
        not reach the model: call again. A name that is no parameter or a
        wrong shape raises RlxError naming it. Returns the bytes held."""
        return self._model.hold_weights({k: _as_array(v) for k, v in params.items()})

    def load_weights(self, path: str | os.PathLike) -> int:
        """Reads every parameter from a Hugging Face safetensors checkpoint
        (a ``.safetensors`` file or a ``save_pretrained`` directory) or a
        GGUF file (``.gguf``, dequantized to f32 row by row) into the
        model, which then holds its weights: :meth:`run` takes the inputs
        alone (a parameter given to run still wins). Each tensor is read
        once into its place, merged q|k|v and gate|up straight into their
        packed slices, and what other packing reads is released once packed:
        the weights are held once, never beside a second copy (unlike
        :func:`load_weights` + :meth:`run`, where the caller's arrays stay).
        bf16/f16 tensors convert to the parameters' float dtype. A missing,
        extra or mis-shaped tensor raises RlxError naming it. Returns the
        bytes of weights held."""
        return self._model.load_weights(os.fspath(path))


def load_weights(path: str | os.PathLike, model: Optional[CompiledModel] = None, *,
                 tp: int = 1, rank: int = 0,
                 rank_model=None) -> dict[str, np.ndarray]:
    """The tensors of a Hugging Face safetensors checkpoint by name: a
    ``.safetensors`` file, or a directory as ``save_pretrained`` writes it (one
    file, or shards with ``model.safetensors.index.json``). bf16 tensors come
    back as float32 (exactly), f16/f32/integers as they are. A ``.gguf`` file
    (llama.cpp's; llama, qwen2, qwen3) gives its tensors under their
    transformers names, dequantized to float32.

    With `model`, the checkpoint must hold exactly its parameters with their
    shapes: a missing, extra or mis-shaped tensor raises RlxError naming it.
    NVFP4 linears read ModelOpt's tensors as stored (``weight`` U8 codes,
    ``weight_scale`` F8_E4M3, ``weight_scale_2``); their ``input_scale``
    (W4A4's activation scale) is dropped, and so are multi-token-prediction
    heads (``mtp.*``, Qwen3-Next's checkpoints), which the model does not read,
    and the parameters of the module's other entry points (Whisper's
    ``encoder`` and ``decoder`` read one checkpoint).
    With `tp` > 1, each tensor is rank `rank`'s block (:func:`shard_weight`),
    as ``mpirun -np tp rlx-run --tp tp --weights`` gives each rank; `model`
    is then the whole (unsharded) model the checkpoint is checked against,
    and `rank_model` (optional) the rank's own compiled model
    (``rlx.gpu.compile(module, tp=, rank=, ep=)``; anything with
    ``arguments``): each tensor is cut to its argument's
    shape there (:func:`shard_weight` with ``shape``), which stacked MoE
    experts compiled with ``ep`` < tp need.
    Pass the result to :meth:`CompiledModel.run` with the inputs (or let
    the model read its checkpoint itself, once, with
    :meth:`CompiledModel.load_weights`)."""
    if tp < 1 or not 0 <= rank < tp:
        raise RlxError(f"load_weights: rank {rank} of tp = {tp} is not a rank")
    weights = _rlx.read_safetensors(os.fspath(path))
    if model is not None:
        params = {a["name"]: a for a in model.arguments if a["is_param"]}
        other = set(getattr(model, "other_parameters", ()))
        for name, a in params.items():
            if name not in weights:
                raise RlxError(f"parameter '{name}' is not in the checkpoint {path}")
            if list(weights[name].shape) != list(a["shape"]):
                raise RlxError(f"checkpoint tensor '{name}' has shape {list(weights[name].shape)}, "
                               f"the model's parameter {list(a['shape'])}")
        for name in list(weights):
            # ModelOpt NVFP4's activation scale (W4A4); RLX's NVFP4 linears
            # keep activations in float and do not read it.
            if (name.endswith(".input_scale") and
                    name[:-len(".input_scale")] + ".weight_scale_2" in params):
                del weights[name]
            elif name.startswith("mtp.") and name not in params:
                # Multi-token-prediction heads (Qwen3-Next's checkpoints): a
                # draft model the causal LM does not read (transformers
                # ignores them on load too).
                del weights[name]
            elif name in other and name not in params:
                # Another entry point's (Whisper's @encoder and @decoder
                # share one checkpoint).
                del weights[name]
            elif name not in params:
                raise RlxError(f"checkpoint tensor '{name}' is not a parameter of the model")
    if tp > 1:
        shapes = ({a["name"]: a["shape"] for a in rank_model.arguments}
                  if rank_model is not None else {})
        for name in list(weights):
            weights[name] = shard_weight(name, weights[name], rank, tp, shape=shapes.get(name))
    return weights


def tensor_parallel_split(name: str, ndim: int) -> dict:
    """How tensor parallelism splits the tensor `name` (a Hugging Face
    parameter name, or a ``past_key_values.N.key``/``present.N.value`` cache)
    of `ndim` dims: ``{"kind", "dim", "parts"}``. `kind` is ``replicated``,
    ``column``, ``row``, ``vocab``, ``kv_heads``, ``packed column`` (GPT-2's
    ``c_attn``, Phi-3's ``qkv_proj``/``gate_up_proj``: `parts` equal parts) or
    ``packed`` (a layout RLX does not split); `dim` is None when not split.
    The same function as ``rlx-mir-shard`` and ``rlx-run --tp``
    (docs/tensor-parallel.md)."""
    return _rlx.tensor_parallel_split(name, ndim)


def shard_weight(name: str, array, rank: int, tp: int, *,
                 shape: Optional[Sequence[int]] = None) -> np.ndarray:
    """Rank `rank`'s block of the whole tensor `name` under tensor
    parallelism of `tp` ranks: `array` itself when replicated, else the
    contiguous block ``[rank·size/tp, (rank+1)·size/tp)`` of the split dim,
    or for a packed projection block `rank` of every part, side by side
    (packed parts are equal: q|k|v of a GQA ``qkv_proj`` is not split).
    `shape` is the tensor's shape in the per-rank program (the rank's
    compiled model's argument): with it, stacked MoE experts compiled with
    ``ep`` < tp get their expert block and their block of each expert's
    intermediate size (``rlx-mir-shard{ep}``), and a tensor the program
    takes whole stays whole.
    RlxError when tp does not divide the split dim (or its parts)."""
    array = np.asarray(array)
    if tp < 1 or not 0 <= rank < tp:
        raise RlxError(f"shard_weight: rank {rank} of tp = {tp} is not a rank")
    split = _rlx.tensor_parallel_split(name, array.ndim)
    if split["kind"] == "packed" and tp > 1:
        raise RlxError(f"'{name}' is a packed layout RLX does not split under tensor parallelism")
    if shape is not None and array.ndim > 0:
        # A dynamic per-rank dim: whole, or the split dim's block.
        shape = [d if d is not None and d >= 0 else
                 (array.shape[i] // tp if i == split["dim"] else array.shape[i])
                 for i, d in enumerate(shape)]
        region = _rlx.tensor_parallel_region(name, list(array.shape), shape, rank, tp)
        for dim, runs in enumerate(region):
            if len(runs) != 1 or runs[0] != (0, array.shape[dim]):
                index = [slice(None)] * array.ndim
                array = np.concatenate([array[tuple(index[:dim] + [slice(b, e)])]
                                        for b, e in runs], axis=dim)
        return np.ascontiguousarray(array)
    if split["dim"] is None or tp == 1:
        return array
    dim = split["dim"]
    runs = _rlx.tensor_parallel_runs(name, array.ndim, array.shape[dim], rank, tp)
    index = [slice(None)] * array.ndim
    blocks = []
    for begin, end in runs:
        index[dim] = slice(begin, end)
        blocks.append(array[tuple(index)])
    return np.ascontiguousarray(np.concatenate(blocks, axis=dim))


def _as_array(v) -> np.ndarray:
    a = np.require(v, requirements="C")
    # ml_dtypes arrays have no numpy type code: bfloat16 goes in as float32
    # (exact; the model rounds it back to the same bf16), one-byte floats
    # (float8_e4m3fn scales) as their bytes.
    if a.dtype.name == "bfloat16":
        return a.astype(np.float32)
    return a.view(np.uint8) if a.dtype.kind == "V" and a.dtype.itemsize == 1 else a


def compile_cpu(module: Module, *, entry: str = "",
                input_shapes: Mapping[str, Sequence[int]] | None = None,
                **options) -> CompiledModel:
    """JIT-compiles `module` for this CPU: HIR → MIR → fusion → LIR with an
    arena plan → LLVM (the rlx-lower-to-cpu pipeline).

    Symbolic dims (``seq``, ``past_seq``) are bound by the `dims` option or
    from `input_shapes` (argument name → shape). The module is not modified.

    `cpu` names the CPU the code is for: ``"host"`` (this machine, the
    default unless ``$RLX_CPU`` names another) or an LLVM x86-64 name such as
    ``"x86-64-v3"``, ``"znver3"``, ``"skylake-avx512"``; `mattr` adds or
    removes features as llc's ``-mattr`` does (``"-avx512bf16,+f16c"``;
    with neither given, ``$RLX_CPU_MATTR``). The code runs here, so a target with a
    feature this CPU lacks is refused. ``stats["cpu"]`` says what it was.
    Raises RlxError with the diagnostics when compilation fails, and for an
    option that is not one of these or a value it cannot take.
    """
    runtime_dir = os.path.dirname(os.path.abspath(_rlx.__file__))
    shapes = {k: [int(d) for d in v] for k, v in (input_shapes or {}).items()}
    return CompiledModel(_CpuModel.compile(module, entry, _options.as_text(options), shapes,
                                           runtime_dir))


if compile_cpu.__doc__:  # not under python -OO
    compile_cpu.__doc__ += _options.describe(("common", "codegen", "cpu", "cpu_jit"))


def export_torch(module, *example_args, output: str = "tosa", weights: str = "args",
                 func_name: str = "forward"):
    """A ``torch.nn.Module`` as MLIR text through torch-mlir:
    ``(mlir_text, input_names, param_names)``. See :func:`rlx.frontend.export_torch`."""
    from .frontend import export_torch as impl
    return impl(module, *example_args, output=output, weights=weights, func_name=func_name)


def from_torch(module, *example_args, output: str = "tosa", weights: str = "args",
               **compile_kwargs):
    """A ``torch.nn.Module`` exported and compiled for this CPU (or, with
    ``device="emu"|"cuda"``, for the GPU path), callable on numpy arrays or
    torch tensors. See :func:`rlx.frontend.from_torch`."""
    from .frontend import from_torch as impl
    return impl(module, *example_args, output=output, weights=weights, **compile_kwargs)


from .transforms import hvp, jvp, vjp, vmap  # noqa: E402  (needs parse above)
