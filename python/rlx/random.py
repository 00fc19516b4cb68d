"""RLX's seeded values, bit-for-bit the numbers rlx-run generates.

Element ``i`` of tensor ``name`` under ``seed`` is a standard normal value by
Box-Muller on two splitmix64 draws of the stream ``seed ^ fnv1a64(name)``:
``rlx::SeededStream`` (``include/RLX/Target/CPU/HostTensor.h``), the one
generator, which this module calls. rlx-run fills arguments it was not given
with these values, scaled by the same rules as :func:`argument_values`, so a
NumPy reference can rebuild the same weights without passing files around.
"""

from __future__ import annotations

import numpy as np

from . import _rlx


def _normal_range(seed: int, name: str, start: int, stop: int) -> np.ndarray:
    return _rlx.seeded_normal(seed & ((1 << 64) - 1), name, start, stop)


def normal(seed: int, name: str, n: int, dtype=np.float64, chunk: int = 1 << 22) -> np.ndarray:
    """``n`` standard normal values of tensor ``name`` (computed in float64,
    returned as ``dtype``), generated in chunks to bound memory."""
    out = np.empty(n, dtype)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        out[start:stop] = _normal_range(seed, name, start, stop)
    return out


def uniform_int(seed: int, name: str, n: int, bound: int) -> np.ndarray:
    return _rlx.seeded_uniform_int(seed & ((1 << 64) - 1), name, n, bound)


def _is_norm_weight(name: str) -> bool:
    return name.endswith("weight") and ("norm" in name or "ln_" in name)


def argument_values(name: str, shape, dtype=np.float32, is_param: bool = False,
                    seed: int = 0, position_offset: int = 0,
                    index_bound: int = 0) -> np.ndarray:
    """The values rlx-run generates for an argument it was not given.

    Parameters: 1-D ``*norm*``/``ln_*`` weights ``1 + 0.1 z``, other 1-D
    ``0.1 z``, matrices ``z / sqrt(shape[-1])``. Float inputs ``z``. Integer
    inputs named ``*position*`` count up from ``position_offset`` along the
    last axis; other integer inputs are uniform in [0, 1000), or in
    [0, min(index_bound, 1000)) when they index a table of ``index_bound``
    rows (the argument's ``rlx.index_bound``).
    """
    shape = tuple(shape)
    n = int(np.prod(shape)) if shape else 1
    if np.issubdtype(np.dtype(dtype), np.integer):
        if "position" in name:
            last = shape[-1] if shape else 1
            v = position_offset + (np.arange(n) % last)
        else:
            v = uniform_int(seed, name, n, min(index_bound, 1000) if index_bound > 0 else 1000)
        return v.reshape(shape).astype(dtype)
    if not is_param or len(shape) == 0:
        return normal(seed, name, n).reshape(shape).astype(dtype)
    if len(shape) == 1:
        z = normal(seed, name, n)
        return ((1.0 if _is_norm_weight(name) else 0.0) + 0.1 * z).reshape(shape).astype(dtype)
    # Matrices: scale chunk by chunk in float64, then round once (as rlx-run does).
    out = np.empty(n, dtype)
    chunk = 1 << 22
    scale = 1.0 / np.sqrt(shape[-1])
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        out[start:stop] = _normal_range(seed, name, start, stop) * scale
    return out.reshape(shape)
