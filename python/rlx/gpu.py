"""RLX's GPU path from Python: compile a module into a GPU artifact (cubins,
PTX, the same kernels for the CPU GPU emulator, a manifest with the launch
plan) and run it on the CUDA driver or on the emulator.

    model = rlx.gpu.compile(module, device="emu", dims={"seq": 5})
    outputs = model.run(hidden_states=x, **weights)

``device="emu"`` runs every GPU kernel on this CPU (each GPU thread a fiber;
out-of-bounds accesses and shared-memory races raise RlxError naming the
kernel and thread); ``"cuda"`` needs the CUDA driver (libcuda.so.1);
``"auto"`` takes the GPU when there is one. Packed parameters (merged Q/K/V,
gate|up) are made once, on the device, from the original parameters.
"""
from __future__ import annotations

import ctypes
import json
import os
import pathlib
import shutil
import tempfile
from typing import Mapping, Optional, Sequence

import numpy as np

from ._rlx import Module, RlxError
from . import _rlx
from . import options as _options

__all__ = ["compile", "GpuModel"]

_LIB: Optional[ctypes.CDLL] = None


def _lib() -> ctypes.CDLL:
    global _LIB
    if _LIB is None:
        lib = ctypes.CDLL(str(pathlib.Path(_rlx.__file__).parent / "libRLXGPURuntime.so"))
        P, C, I, Z = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t
        lib.rlx_gpu_open.restype = P
        lib.rlx_gpu_open.argtypes = [C, C, C, Z]
        lib.rlx_gpu_close.argtypes = [P]
        lib.rlx_gpu_last_error.restype = C
        lib.rlx_gpu_last_error.argtypes = [P]
        lib.rlx_gpu_device.restype = C
        lib.rlx_gpu_device.argtypes = [P]
        lib.rlx_gpu_set_buffer.argtypes = [P, C, C, P, Z]
        lib.rlx_gpu_get_buffer.argtypes = [P, C, C, P, Z]
        lib.rlx_gpu_run.argtypes = [P, C]
        lib.rlx_gpu_release_packed_sources.argtypes = [P, C, ctypes.POINTER(ctypes.c_uint64)]
        lib.rlx_gpu_device_bytes.restype = ctypes.c_uint64
        lib.rlx_gpu_device_bytes.argtypes = [P]
        lib.rlx_gpu_time.argtypes = [P, C, I, I, ctypes.POINTER(ctypes.c_double),
                                     ctypes.POINTER(ctypes.c_double)]
        lib.rlx_gpu_set_flush_caches.argtypes = [P, I]
        lib.rlx_gpu_set_trace.argtypes = [P, I]
        lib.rlx_gpu_write_trace.argtypes = [P, C]
        _LIB = lib
    return _LIB


_NUMPY = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i64": np.int64,
          "i32": np.int32, "i16": np.int16, "i8": np.int8, "i1": np.bool_, "ui8": np.uint8}


def _to_buffer(value: np.ndarray, buf: dict) -> np.ndarray:
    """`value` in the buffer's storage, converted only when every element
    converts exactly (the rule of every runner: HostTensor's convertExact):
    bf16 from bfloat16 arrays, its bit patterns (uint16) or floats that are
    bf16 values; f8/f4 and packed FP4 codes as their bytes."""
    a = np.asarray(value)
    if tuple(a.shape) != tuple(buf["shape"]):
        raise RlxError(f"'{buf['name']}' has shape {list(a.shape)}, the model takes {buf['shape']}")
    dt = buf["dtype"]
    if dt == "bf16":
        if a.dtype == np.uint16:
            return np.ascontiguousarray(a)
        if a.dtype.name == "bfloat16":
            return np.ascontiguousarray(a).view(np.uint16)
        f = _exactly(a, np.float32, buf)
        bits = (f.view(np.uint32) >> 16).astype(np.uint16)  # exact values: no rounding
        _check_exact(f, (bits.astype(np.uint32) << 16).view(np.float32), buf)
        return bits
    if dt == "i8" and a.dtype == np.uint8:
        return np.ascontiguousarray(a).view(np.int8)  # bytes stay bytes (FP4 codes)
    if dt in _NUMPY:
        return _exactly(a, _NUMPY[dt], buf)
    return np.ascontiguousarray(a).view(np.uint8)  # f8 / f4 codes, one per byte


def _check_exact(a: np.ndarray, back: np.ndarray, buf: dict) -> None:
    """Raises naming the first element of `a` that `back` (its round trip
    through the buffer's dtype) does not give back."""
    same = (back == a) | (np.isnan(back) & np.isnan(a)) if a.dtype.kind == "f" else back == a
    bad = np.flatnonzero(~same)
    if bad.size:
        i = int(bad[0])
        raise RlxError(f"argument '{buf['name']}' is {buf['dtype']} but the value given is "
                       f"{a.dtype}, and its element {i} ({a.reshape(-1)[i]}) is not exactly "
                       f"a {buf['dtype']} (values convert only when every one converts "
                       "exactly; convert them first)")


def _exactly(a: np.ndarray, dtype, buf: dict) -> np.ndarray:
    """`a` as `dtype` when every value converts exactly; else an error."""
    out = np.ascontiguousarray(a, dtype)
    if a.dtype != out.dtype:
        with np.errstate(invalid="ignore", over="ignore"):
            _check_exact(a, out.astype(a.dtype), buf)
    return out


def _empty(buf: dict) -> np.ndarray:
    dt = buf["dtype"]
    np_dt = np.uint16 if dt == "bf16" else _NUMPY.get(dt, np.uint8)
    return np.empty(buf["shape"], np_dt)


class GpuModel:
    """A compiled GPU artifact opened on a device (see :func:`compile`)."""

    def __init__(self, artifact: pathlib.Path, device: str, owned: Optional[str] = None):
        self.artifact = pathlib.Path(artifact)
        self._owned = owned
        self.manifest = json.loads((self.artifact / "manifest.json").read_text())
        err = ctypes.create_string_buffer(2048)
        self._h = _lib().rlx_gpu_open(str(self.artifact).encode(), device.encode(), err, 2048)
        if not self._h:
            raise RlxError(err.value.decode())
        self.device = _lib().rlx_gpu_device(self._h).decode()
        self._fns = {f["name"]: f for f in self.manifest["functions"]}
        # The function run() runs: the artifact's entry; another of its
        # functions by assigning its name (Whisper's "encoder", "decoder").
        self.entry = self.manifest["entry"]
        self._packed: set[str] = set()  # the functions whose parameters are packed

    def __del__(self):
        if getattr(self, "_h", None):
            _lib().rlx_gpu_close(self._h)
            self._h = None
        if getattr(self, "_owned", None):
            shutil.rmtree(self._owned, ignore_errors=True)

    def _buffers(self, fn: str) -> list[dict]:
        return self._fns[fn]["buffers"]

    @property
    def other_parameters(self) -> list[str]:
        """The parameters of the artifact's other functions that the entry
        does not read (Whisper's encoder beside its decoder): load_weights
        skips their checkpoint tensors."""
        own = {a["name"] for a in self.arguments}
        names = {b["name"] for fn in self._fns for b in self._buffers(fn)
                 if b["role"] == "param" and "packed_by" not in b}
        return sorted(names - own)

    @property
    def arguments(self) -> list[dict]:
        """Inputs and parameters by name (packed parameters appear as the
        originals they are made from): name, shape, dtype, is_param."""
        out, seen, packers = [], set(), []
        for b in self._buffers(self.entry):
            if b["role"] == "output":
                continue
            if "packed_by" in b:
                packers.append(b["packed_by"]["function"])
                continue
            seen.add(b["name"])
            out.append(dict(name=b["name"], shape=b["shape"], dtype=b["dtype"],
                            is_param=b["role"] == "param"))
        for p in dict.fromkeys(packers):
            for b in self._buffers(p):
                if b["role"] != "output" and b["name"] not in seen:
                    seen.add(b["name"])
                    out.append(dict(name=b["name"], shape=b["shape"], dtype=b["dtype"],
                                    is_param=True))
        return out

    @property
    def results(self) -> list[dict]:
        return [dict(name=b["name"], shape=b["shape"], dtype=b["dtype"])
                for b in self._buffers(self.entry) if b["role"] == "output"]

    def _check(self, rc: int) -> None:
        if rc:
            raise RlxError(_lib().rlx_gpu_last_error(self._h).decode())

    def _set(self, fn: str, buf: dict, value: np.ndarray) -> None:
        a = _to_buffer(value, buf)
        self._check(_lib().rlx_gpu_set_buffer(self._h, fn.encode(), buf["name"].encode(),
                                              a.ctypes.data, a.nbytes))

    def _get(self, fn: str, buf: dict) -> np.ndarray:
        a = _empty(buf)
        self._check(_lib().rlx_gpu_get_buffer(self._h, fn.encode(), buf["name"].encode(),
                                              a.ctypes.data, a.nbytes))
        return a

    def run(self, inputs: Mapping[str, np.ndarray] | None = None, **kwargs: np.ndarray
            ) -> dict[str, np.ndarray]:
        """Runs the entry function; returns the outputs by name (bf16 as
        float32). Parameters are uploaded by the first run and kept."""
        values = dict(inputs or {}, **kwargs)
        known = {a["name"] for a in self.arguments}
        unknown = sorted(set(values) - known)
        if unknown:
            raise RlxError(f"not arguments of the model: {unknown} (arguments: {sorted(known)})")
        # Every argument by name on the entry: the runtime sets the originals
        # of packed parameters on their packing functions and packs before
        # the run (rlx_gpu_set_buffer); they are uploaded once.
        entry = self._buffers(self.entry)
        bufs = {b["name"]: b for b in entry if b["role"] != "output" and "packed_by" not in b}
        originals = {}
        for p in dict.fromkeys(b["packed_by"]["function"] for b in entry if "packed_by" in b):
            for b in self._buffers(p):
                if b["role"] != "output":
                    originals.setdefault(b["name"], b)
        for name, value in values.items():
            if name in bufs:
                self._set(self.entry, bufs[name], value)
            elif self.entry not in self._packed:
                self._set(self.entry, originals[name], value)
        if self.entry not in self._packed and originals:
            # Packed once; the originals then leave the device (the packed
            # parameters stand in for them: the weights are held once).
            self._check(_lib().rlx_gpu_release_packed_sources(self._h, self.entry.encode(),
                                                              None))
        self._packed.add(self.entry)
        self._check(_lib().rlx_gpu_run(self._h, self.entry.encode()))
        out = {}
        for b in entry:
            if b["role"] == "output":
                a = self._get(self.entry, b)
                if b["dtype"] == "bf16":
                    a = (a.astype(np.uint32) << 16).view(np.float32)
                out[b["name"]] = a
        return out

    __call__ = run

    @property
    def device_bytes(self) -> int:
        """The device memory the artifact holds: constants, arenas, buffers
        (the originals of packed parameters only until the first run has
        packed them)."""
        return int(_lib().rlx_gpu_device_bytes(self._h))

    def invalidate_packed_params(self) -> None:
        """Forgets the packed parameters; the next run packs them again (as
        CompiledModel's, for parameters that changed), from every original
        it is given again."""
        self._packed = set()

    def trace(self, on: bool = True) -> None:
        """Starts (or stops) the kernel timeline: every kernel launch of the
        runs that follow is timed on its own and recorded with its name,
        launch shape and source positions; :meth:`write_trace` saves it."""
        self._check(_lib().rlx_gpu_set_trace(self._h, int(on)))

    def write_trace(self, path: str | os.PathLike) -> None:
        """The recorded kernel timeline as Chrome trace-event JSON (open it
        in https://ui.perfetto.dev or chrome://tracing)."""
        self._check(_lib().rlx_gpu_write_trace(self._h, os.fspath(path).encode()))

    def time(self, warmup: int = 3, iters: int = 20, flush_l2: bool = False) -> dict:
        """Median and minimum milliseconds of the entry (CUDA events on a GPU,
        wall clock on the emulator), after one :meth:`run`. With `flush_l2`
        a buffer twice the L2's size is written before each timed run, so
        inputs come from memory rather than from the previous run's L2."""
        med, mn = ctypes.c_double(), ctypes.c_double()
        self._check(_lib().rlx_gpu_set_flush_caches(self._h, int(flush_l2)))
        self._check(_lib().rlx_gpu_time(self._h, self.entry.encode(), warmup, iters,
                                        ctypes.byref(med), ctypes.byref(mn)))
        return {"median_ms": med.value, "min_ms": mn.value}


def compile(module: Module, *, device: str = "emu",
            artifact_dir: str | os.PathLike | None = None, **options) -> GpuModel:
    """Compiles `module` (HIR, MIR or LIR; not modified) into a GPU artifact
    and opens it on `device` ("emu", "cuda" or "auto"). The artifact is kept
    in `artifact_dir` when given (deployable with rlx-gpu-run), else in a
    temporary directory. Cubins need ptxas; by default (`cubin` not given)
    they are built unless the device is the emulator.
    `matmul_kernel`, `attention_kernel`, `kv_splits`, `split_k` and
    `tensor_cores` are rlx-compile's options: a kernel named is used where it
    applies, elsewhere the heuristic's with a remark (`strict_kernels=True`:
    an error). Ops without a kernel template take the generic path (their
    linalg lowering); `generic_kernels` names ops (``"rlx_mir.softmax"``)
    sent that way even where a template exists. Raises RlxError with the
    compiler's diagnostics, and for an option that is not one of these or a
    value it cannot take.
    """
    owned = None
    if artifact_dir is None:
        owned = tempfile.mkdtemp(prefix="rlx-gpu-")
        artifact_dir = os.path.join(owned, "artifact")
    if options.get("cubin") is None:
        options["cubin"] = device != "emu"
    try:
        _rlx.write_gpu_artifact(module, str(artifact_dir), _options.as_text(options))
    except Exception:
        if owned:
            shutil.rmtree(owned, ignore_errors=True)
        raise
    return GpuModel(pathlib.Path(artifact_dir), device, owned)


if compile.__doc__:  # not under python -OO
    compile.__doc__ += _options.describe(("common", "codegen", "gpu", "gpu_artifact"))
