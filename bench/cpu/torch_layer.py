"""The Llama decoder layer of bench_cpu.py as a torch module, for PyTorch eager
and for IREE (exported by torch-mlir, compiled by iree-compile for llvm-cpu).

Both baselines run this one module on the same weights: PyTorch calls it under
``inference_mode``; IREE gets it through ``torch_mlir.fx.export_and_import``
(linalg-on-tensors, weights frozen into the module as constants, which is
torch-mlir's default and lets IREE pack them at compile time), compiled for
the host CPU and run by IREE's ``local-task`` driver with as many workers as
the other implementations have threads.
"""
import numpy as np
import torch
import torch.nn.functional as F


class LlamaLayer(torch.nn.Module):
    """One Llama decoder layer (RMSNorm, GQA attention with RoPE, SwiGLU MLP):
    the formulas of bench_cpu.numpy_layer, in torch. ``forward(x, pos)`` is a
    causal prefill; ``forward(x, pos, past_key, past_value)`` a step against a
    KV history laid out as the RLX layer's inputs ([1, past, num_kv_heads·head_dim])."""

    def __init__(self, weights, freqs, num_heads, num_kv_heads, head_dim, eps):
        super().__init__()
        for name, value in weights.items():
            self.register_buffer(name.replace(".", "_"), torch.from_numpy(value))
        self.register_buffer("inv_freq", torch.from_numpy(freqs))
        self.h, self.hkv, self.d, self.eps = num_heads, num_kv_heads, head_dim, eps

    def w(self, name):
        return getattr(self, name.replace(".", "_"))

    def rms(self, t, g):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + self.eps) * g

    def rope(self, t, heads, c, sn):
        b, s, _ = t.shape
        t = t.view(b, s, heads, self.d).transpose(1, 2)
        a, bb = t[..., : self.d // 2], t[..., self.d // 2:]
        return torch.cat([a * c - bb * sn, bb * c + a * sn], -1)

    def forward(self, x, pos, past_key=None, past_value=None):
        s = x.shape[1]
        ang = pos[:, None].float() * self.inv_freq[None, :]
        c, sn = ang.cos(), ang.sin()
        h = self.rms(x, self.w("input_layernorm.weight"))
        q = self.rope(F.linear(h, self.w("self_attn.q_proj.weight")), self.h, c, sn)
        k = self.rope(F.linear(h, self.w("self_attn.k_proj.weight")), self.hkv, c, sn)
        v = F.linear(h, self.w("self_attn.v_proj.weight")).view(1, s, self.hkv, self.d)
        v = v.transpose(1, 2)
        if past_key is not None:
            k = torch.cat([past_key.view(1, -1, self.hkv, self.d).transpose(1, 2), k], 2)
            v = torch.cat([past_value.view(1, -1, self.hkv, self.d).transpose(1, 2), v], 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=past_key is None and s > 1,
                                           enable_gqa=True)
        r = x + F.linear(a.transpose(1, 2).reshape(1, s, self.h * self.d),
                         self.w("self_attn.o_proj.weight"))
        n = self.rms(r, self.w("post_attention_layernorm.weight"))
        mlp = (F.silu(F.linear(n, self.w("mlp.gate_proj.weight"))) *
               F.linear(n, self.w("mlp.up_proj.weight")))
        return r + F.linear(mlp, self.w("mlp.down_proj.weight"))


def torch_fn(layer, args):
    """PyTorch eager: one call of the layer on the given numpy inputs."""
    targs = [torch.from_numpy(a) for a in args]

    @torch.inference_mode()
    def run():
        return layer(*targs)

    return run


def iree_versions():
    from importlib.metadata import version
    return (f"iree-base-compiler {version('iree-base-compiler')}, torch-mlir "
            f"{version('torch-mlir')}")


def iree_fn(layer, args, threads, workdir):
    """IREE: the layer exported by torch-mlir (linalg-on-tensors, weights frozen
    as constants), compiled for llvm-cpu with the host CPU's features, run by
    the local-task driver with `threads` workers. Returns a callable that runs
    one step on the given inputs (already on the device) and returns numpy."""
    import iree.compiler as ireec
    import iree.runtime as ireert
    from torch_mlir import fx

    with torch.inference_mode(False), torch.no_grad():
        module = fx.export_and_import(layer, *[torch.from_numpy(a) for a in args],
                                      output_type="linalg-on-tensors", func_name="main")
    source = workdir / "layer.linalg.mlir"
    with open(source, "w") as f:
        module.operation.print(file=f, large_elements_limit=None)
    del module
    vmfb = ireec.compile_file(str(source), target_backends=["llvm-cpu"],
                              extra_args=["--iree-llvmcpu-target-cpu=host"])
    source.unlink()
    config = ireert.Config("local-task")
    ctx = ireert.SystemContext(config=config)
    ctx.add_vm_module(ireert.VmModule.copy_buffer(ctx.instance, vmfb))
    main = ctx.modules.module["main"]
    device_args = [ireert.asdevicearray(config.device, a) for a in args]

    def run():
        return np.asarray(main(*device_args))

    return run


def set_iree_threads(threads):
    """IREE's worker count (before the first context is made)."""
    import iree.runtime as ireert
    ireert.flags.parse_flags(f"--task_topology_max_group_count={threads}")
