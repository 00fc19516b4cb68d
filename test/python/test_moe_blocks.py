"""rlx_hir.moe_router and rlx_hir.moe_experts against transformers' own
modules (the routers and sparse MoE blocks of Mixtral, Qwen2-MoE, Qwen3-MoE,
OLMoE, DeepSeek-V3, gpt-oss and Llama-4) and the field cases M1/M5, on cpu and emu
from one test body. Routing decisions must be identical: a wrong expert is a
failure, not a tolerance."""
from __future__ import annotations

import numpy as np
import pytest

import rlx
from rlx import hir, mir

DEVICES = ["cpu", "emu"]
H, E = 32, 8


def compile_on(module, device):
    return rlx.compile_cpu(module) if device == "cpu" else rlx.gpu.compile(module, device=device)


def torch_router(family, **kw):
    """transformers' router module for `family` (random weights, seeded), the
    router op's attributes that mean the same, and a function giving
    transformers' (weights, ids) for tokens [T, H]."""
    import torch
    import transformers as tf
    torch.manual_seed(0)
    if family == "mixtral":
        from transformers.models.mixtral.modeling_mixtral import MixtralTopKRouter
        r = MixtralTopKRouter(tf.MixtralConfig(hidden_size=H, num_local_experts=E,
                                               num_experts_per_tok=2))
        attrs = dict(top_k=2, norm_topk_prob=True)
    elif family in ("qwen2_moe", "qwen3_moe", "olmoe"):
        mod = __import__(f"transformers.models.{family}.modeling_{family}", fromlist=["x"])
        name = {"qwen2_moe": "Qwen2Moe", "qwen3_moe": "Qwen3Moe", "olmoe": "Olmoe"}[family]
        norm = kw.get("norm", False)
        cfg = getattr(tf, name + "Config")(hidden_size=H, num_experts=E, num_experts_per_tok=3,
                                           norm_topk_prob=norm)
        r = getattr(mod, name + "TopKRouter")(cfg)
        attrs = dict(top_k=3, norm_topk_prob=norm)
    elif family == "deepseek_v3":
        from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3TopkRouter
        cfg = tf.DeepseekV3Config(hidden_size=H, n_routed_experts=E, num_experts_per_tok=3,
                                  n_group=4, topk_group=2, routed_scaling_factor=2.5,
                                  norm_topk_prob=True)
        r = DeepseekV3TopkRouter(cfg)
        with torch.no_grad():
            r.e_score_correction_bias.copy_(torch.randn(E) * 0.1)
        attrs = dict(top_k=3, scoring="sigmoid", norm_topk_prob=True, routed_scaling_factor=2.5,
                     n_group=4, topk_group=2)
    elif family == "llama4":
        from transformers.models.llama4.modeling_llama4 import Llama4Router
        r = Llama4Router(tf.Llama4TextConfig(hidden_size=H, num_local_experts=E,
                                             num_experts_per_tok=2))
        attrs = dict(top_k=2, scoring="sigmoid")
    elif family == "gpt_oss":
        from transformers.models.gpt_oss.modeling_gpt_oss import GptOssTopKRouter
        r = GptOssTopKRouter(tf.GptOssConfig(hidden_size=H, num_local_experts=E,
                                             num_experts_per_tok=4))
        attrs = dict(top_k=4, scoring="topk_softmax")
    with torch.no_grad():
        for p in r.parameters():
            if p.dim() == 2 or family == "gpt_oss":
                p.copy_(torch.randn_like(p) * 0.5)

    def reference(tokens):
        with torch.no_grad():
            out = r(torch.from_numpy(tokens))
        if family == "llama4":
            # Llama4Router: dense [T, E] scores (the sigmoid of the top-k
            # logits, 0 elsewhere) and the logits; its choice is their top k.
            ids = torch.topk(out[1], 2, dim=1).indices
            return out[0].gather(1, ids).float().numpy(), ids.numpy()
        return out[1].float().numpy(), out[2].numpy()
    params = {n: p.detach().numpy().copy() for n, p in r.named_parameters()}
    if family == "deepseek_v3":
        params["e_score_correction_bias"] = r.e_score_correction_bias.numpy().copy()
    return params, attrs, reference


def build_router(params, attrs, tokens):
    f = hir.Function("router")
    x = f.input("x", tokens)
    w = f.input("w", params["weight"].shape)
    bias = f.input("b", (E,)) if "bias" in params else None
    corr = f.input("c", (E,)) if "e_score_correction_bias" in params else None
    weights, ids = hir.moe_router(x, w, bias, corr, **attrs)
    f.output("weights", weights)
    f.output("ids", ids)
    feeds = {"w": params["weight"]}
    if bias is not None:
        feeds["b"] = params["bias"]
    if corr is not None:
        feeds["c"] = params["e_score_correction_bias"]
    return f.build(), feeds


ROUTERS = [("mixtral", {}), ("qwen2_moe", {}), ("qwen3_moe", {"norm": True}), ("olmoe", {}),
           ("deepseek_v3", {}), ("gpt_oss", {}), ("llama4", {})]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("family,kw", ROUTERS, ids=[r[0] for r in ROUTERS])
def test_routing_decisions_match_transformers(device, family, kw):
    """10,000 random tokens (2,000 on the emulator): the same experts, in
    the same order where transformers sorts them, and the same weights."""
    params, attrs, reference = torch_router(family, **kw)
    n = 10_000 if device == "cpu" else 2_000
    tokens = np.random.default_rng(1).standard_normal((n, H)).astype(np.float32)
    module, feeds = build_router(params, attrs, (n, H))
    got = compile_on(module, device).run(x=tokens, **feeds)
    want_w, want_ids = reference(tokens)
    got_w, got_ids = got["weights"], got["ids"]
    assert got_ids.dtype == np.int64 and got_w.dtype == np.float32
    if family == "deepseek_v3":
        # torch.topk(sorted=False): compare each token's experts as a set.
        order_g, order_w = np.argsort(got_ids, 1), np.argsort(want_ids, 1)
        got_ids, got_w = np.take_along_axis(got_ids, order_g, 1), np.take_along_axis(got_w, order_g, 1)
        want_ids = np.take_along_axis(want_ids, order_w, 1)
        want_w = np.take_along_axis(want_w, order_w, 1)
    wrong = np.flatnonzero((got_ids != want_ids).any(1))
    assert wrong.size == 0, f"{wrong.size} tokens routed differently, first {wrong[:5]}"
    np.testing.assert_allclose(got_w, want_w, rtol=1e-5, atol=1e-6 * np.abs(want_w).max())


def torch_moe_block(family):
    """transformers' sparse MoE block with random weights and the pieces RLX
    needs: the router's attributes and the stacked expert weights."""
    import torch
    import transformers as tf
    torch.manual_seed(0)
    if family == "mixtral":
        from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock
        block = MixtralSparseMoeBlock(tf.MixtralConfig(hidden_size=H, intermediate_size=24,
                                                       num_local_experts=E,
                                                       num_experts_per_tok=2))
        attrs = dict(top_k=2, norm_topk_prob=True)
    else:
        mod = __import__(f"transformers.models.{family}.modeling_{family}", fromlist=["x"])
        name = {"qwen2_moe": "Qwen2Moe", "qwen3_moe": "Qwen3Moe", "olmoe": "Olmoe"}[family]
        extra = dict(shared_expert_intermediate_size=20) if family == "qwen2_moe" else {}
        cfg = getattr(tf, name + "Config")(hidden_size=H, num_experts=E, num_experts_per_tok=2,
                                           moe_intermediate_size=24, intermediate_size=24,
                                           norm_topk_prob=family == "qwen3_moe", **extra)
        block = getattr(mod, name + "SparseMoeBlock")(cfg)
        attrs = dict(top_k=2, norm_topk_prob=family == "qwen3_moe")
    with torch.no_grad():
        for p in block.parameters():
            p.copy_(torch.randn_like(p) * 0.3)
    return block, attrs


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("family", ["mixtral", "qwen2_moe", "qwen3_moe", "olmoe"])
def test_sparse_moe_block_matches_transformers(device, family):
    """router + experts (+ Qwen2-MoE's sigmoid-gated shared expert, written
    with rlx_hir.swiglu and linear) equal the block's output."""
    import torch
    block, attrs = torch_moe_block(family)
    sd = {k: v.detach().numpy().copy() for k, v in block.state_dict().items()}
    x = np.random.default_rng(2).standard_normal((2, 7, H)).astype(np.float32)
    f = hir.Function("moe")
    xi = f.input("x", x.shape)
    names = ["gate.weight", "experts.gate_up_proj", "experts.down_proj"]
    if family == "qwen2_moe":
        names += ["shared_expert.gate_proj.weight", "shared_expert.up_proj.weight",
                  "shared_expert.down_proj.weight", "shared_expert_gate.weight"]
    p = {n: f.input(n.replace(".", "_"), sd[n].shape) for n in names}
    weights, ids = hir.moe_router(xi, p["gate.weight"], **attrs)
    y = hir.moe_experts(xi, weights, ids, p["experts.gate_up_proj"], p["experts.down_proj"])
    if family == "qwen2_moe":
        shared = hir.swiglu(xi, p["shared_expert.gate_proj.weight"],
                            p["shared_expert.up_proj.weight"], p["shared_expert.down_proj.weight"])
        gate = hir.linear(xi, p["shared_expert_gate.weight"], activation="sigmoid")
        y = mir.add(y, mir.mul(gate, shared))
    f.output("y", y)
    got = compile_on(f.build(), device).run(x=x, **{n.replace(".", "_"): sd[n] for n in names})["y"]
    with torch.no_grad():
        want = block(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("device", DEVICES)
def test_gpt_oss_mlp_matches_transformers(device):
    """GptOssMLP: the router with its bias (top-k, softmax over the k), the
    experts' biases and clamped SwiGLU (a limit small enough to clamp many
    values). Its [E, H, 2I] gate_up with gate and up interleaved is put in
    moe_experts' [E, 2I, H] layout here (rlx-gen does it in the graph)."""
    import torch
    import transformers as tf
    from transformers.models.gpt_oss.modeling_gpt_oss import GptOssMLP
    torch.manual_seed(0)
    cfg = tf.GptOssConfig(hidden_size=H, intermediate_size=24, num_local_experts=E,
                          num_experts_per_tok=3, swiglu_limit=0.8)
    block = GptOssMLP(cfg)
    with torch.no_grad():
        for p in block.parameters():
            p.copy_(torch.randn_like(p) * 0.3)
    sd = {k: v.detach().numpy().copy() for k, v in block.state_dict().items()}
    gu = sd["experts.gate_up_proj"]                       # [E, H, 2I], gate/up interleaved
    params = {"router_w": sd["router.weight"], "router_b": sd["router.bias"],
              "gu": np.concatenate([gu[..., ::2], gu[..., 1::2]], -1).transpose(0, 2, 1).copy(),
              "gu_b": np.concatenate([sd["experts.gate_up_proj_bias"][:, ::2],
                                      sd["experts.gate_up_proj_bias"][:, 1::2]], -1),
              "d": sd["experts.down_proj"].transpose(0, 2, 1).copy(),
              "d_b": sd["experts.down_proj_bias"]}
    x = np.random.default_rng(3).standard_normal((2, 9, H)).astype(np.float32)
    f = hir.Function("moe")
    xi = f.input("x", x.shape)
    p = {n: f.input(n, a.shape) for n, a in params.items()}
    weights, ids = hir.moe_router(xi, p["router_w"], p["router_b"], top_k=3,
                                  scoring="topk_softmax")
    y = hir.moe_experts(xi, weights, ids, p["gu"], p["d"], p["gu_b"], p["d_b"],
                        swiglu_alpha=cfg.swiglu_alpha, swiglu_limit=cfg.swiglu_limit)
    f.output("y", y)
    got = compile_on(f.build(), device).run(x=x, **params)["y"]
    with torch.no_grad():
        want = block(torch.from_numpy(x))[0].numpy()
        # The clamp bites: without it the block's output is another one.
        block.experts.limit = 1e9
        unclamped = block(torch.from_numpy(x))[0].numpy()
    assert np.abs(unclamped - want).max() > 0.1 * np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("top_k", [1, 2])
def test_llama4_moe_matches_transformers(device, top_k):
    """Llama4TextMoe: top-k of the router logits, their sigmoid scaling
    each chosen expert's input (moe_experts weights_on_input), plus the
    always-on shared expert. transformers runs every expert on every token
    (unchosen ones on a zero input); RLX only the chosen. Its [E, H, 2I]
    gate_up (gate columns, then up) and [E, I, H] down are transposed here
    (the model generator does it in the graph)."""
    import torch
    import transformers as tf
    from transformers.models.llama4.modeling_llama4 import Llama4TextMoe
    torch.manual_seed(0)
    cfg = tf.Llama4TextConfig(hidden_size=H, intermediate_size=24, num_local_experts=E,
                              num_experts_per_tok=top_k)
    block = Llama4TextMoe(cfg)
    with torch.no_grad():
        for p in block.parameters():
            p.copy_(torch.randn_like(p) * 0.3)
    sd = {k: v.detach().numpy().copy() for k, v in block.state_dict().items()}
    params = {"router_w": sd["router.weight"],
              "gu": sd["experts.gate_up_proj"].transpose(0, 2, 1).copy(),
              "d": sd["experts.down_proj"].transpose(0, 2, 1).copy(),
              "sg": sd["shared_expert.gate_proj.weight"], "su": sd["shared_expert.up_proj.weight"],
              "sd": sd["shared_expert.down_proj.weight"]}
    x = np.random.default_rng(4).standard_normal((2, 9, H)).astype(np.float32)

    def build(on_input):
        f = hir.Function("moe")
        xi = f.input("x", x.shape)
        p = {n: f.input(n, a.shape) for n, a in params.items()}
        weights, ids = hir.moe_router(xi, p["router_w"], top_k=top_k, scoring="sigmoid")
        y = hir.moe_experts(xi, weights, ids, p["gu"], p["d"], weights_on_input=on_input)
        f.output("y", mir.add(y, hir.swiglu(xi, p["sg"], p["su"], p["sd"])))
        return compile_on(f.build(), device).run(x=x, **params)["y"]
    got = build(True)
    with torch.no_grad():
        want = block(torch.from_numpy(x))[0].reshape(x.shape).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())
    # Weighting the output instead is another block.
    assert np.abs(build(False) - want).max() > 0.05 * np.abs(want).max()


def scaling_experts():
    """Four experts over H = 2, I = 1 where expert e maps x = [1, 2] to
    (e + 1)·x: relu(gate·x) = relu(x0) = 1, up·x = (e + 1)·x0, down = [1, 2]."""
    gate_up = np.stack([np.array([[1, 0], [e + 1, 0]], np.float32) for e in range(4)])
    down = np.tile(np.array([[1], [2]], np.float32), (4, 1, 1))
    return gate_up, down


@pytest.mark.parametrize("device", DEVICES)
def test_case_m1_router_normalisation(device):
    """../shared/cases M1: softmax over all experts first, then top-k, with
    and without norm_topk_prob (expert e scales x by e + 1)."""
    gate_up, down = scaling_experts()
    # x = [1, 2] against router rows [l, 0] gives the case's logits l.
    router = np.stack([np.array([2, 1, 0, -1], np.float32), np.zeros(4, np.float32)], 1)
    for norm, want_w, want_y in [(True, [0.7310586, 0.2689414], [1.2689414, 2.5378828]),
                                 (False, [0.6439143, 0.2368828], [1.1176799, 2.2353598])]:
        f = hir.Function("m1")
        x, w = f.input("x", (1, 2)), f.input("w", (4, 2))
        gu, d = f.input("gu", gate_up.shape), f.input("d", down.shape)
        weights, ids = hir.moe_router(x, w, top_k=2, norm_topk_prob=norm)
        f.output("weights", weights)
        f.output("ids", ids)
        f.output("y", hir.moe_experts(x, weights, ids, gu, d, activation="relu"))
        got = compile_on(f.build(), device).run(x=np.array([[1, 2]], np.float32), w=router,
                                                gu=gate_up, d=down)
        np.testing.assert_array_equal(got["ids"], [[0, 1]])
        np.testing.assert_allclose(got["weights"][0], want_w, rtol=1e-6)
        np.testing.assert_allclose(got["y"][0], want_y, rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_case_m5_top2_combine(device):
    """M5: x = [1, 2] through experts 0 and 3 with weights 0.75 and 0.25
    (expert e scales x by e + 1): [1.75, 3.5]."""
    gate_up, down = scaling_experts()
    f = hir.Function("m5")
    x = f.input("x", (1, 2))
    w, ids = f.input("w", (1, 2)), f.input("ids", (1, 2), "i64")
    gu, d = f.input("gu", gate_up.shape), f.input("d", down.shape)
    f.output("y", hir.moe_experts(x, w, ids, gu, d, activation="relu"))
    got = compile_on(f.build(), device).run(
        x=np.array([[1, 2]], np.float32), w=np.array([[0.75, 0.25]], np.float32),
        ids=np.array([[0, 3]], np.int64), gu=gate_up, d=down)["y"]
    np.testing.assert_allclose(got[0], [1.75, 3.5], rtol=1e-6)


@pytest.mark.parametrize("attrs,message", [
    (dict(top_k=0), r"top_k must be in \[1, E = 8\], got 0"),
    (dict(top_k=9), r"top_k must be in \[1, E = 8\], got 9"),
    (dict(top_k=2, n_group=3, topk_group=1), "must split the 8 experts"),
    (dict(top_k=2, n_group=4), "both n_group and topk_group"),
    (dict(top_k=5, n_group=4, topk_group=2), "more than the 4 experts"),
    (dict(top_k=2, routed_scaling_factor=0.0), "positive and finite"),
    (dict(top_k=2, scoring="topk_softmax", n_group=2, topk_group=1), "softmax or sigmoid"),
])
def test_router_verifier(attrs, message):
    f = hir.Function("f")
    x, w = f.input("x", (3, H)), f.input("w", (E, H))
    with pytest.raises(rlx.RlxError, match=message):
        hir.moe_router(x, w, **attrs)


def test_experts_verifier():
    f = hir.Function("f")
    x = f.input("x", (3, H))
    w, ids = f.input("w", (3, 2)), f.input("ids", (3, 2), "i64")
    gu, d = f.input("gu", (E, 48, H)), f.input("d", (E, H, 24))
    with pytest.raises(rlx.RlxError, match=r"down must be \[E, H, I\] = \[8, 32, 24\]"):
        hir.moe_experts(x, w, ids, gu, f.input("d2", (E, H, 20)))
    with pytest.raises(rlx.RlxError, match="middle dim is odd"):
        hir.moe_experts(x, w, ids, f.input("gu2", (E, 47, H)), d)
    with pytest.raises(rlx.RlxError, match=r"weights and ids must both be \[..., k\]"):
        hir.moe_experts(x, w, f.input("ids2", (3, 3), "i64"), gu, d)
    with pytest.raises(rlx.RlxError, match="activation must be"):
        hir.moe_experts(x, w, ids, gu, d, activation="tanh")
    with pytest.raises(rlx.RlxError, match="gate_up_bias must be 8x48 of the experts. element type, got 8x24"):
        hir.moe_experts(x, w, ids, gu, d, f.input("b", (E, 24)))
    with pytest.raises(rlx.RlxError, match="down_bias must be 8x32"):
        hir.moe_experts(x, w, ids, gu, d, None, f.input("b2", (E, 24)))
    with pytest.raises(rlx.RlxError, match="swiglu_limit needs swiglu_alpha"):
        hir.moe_experts(x, w, ids, gu, d, swiglu_limit=7.0)
    with pytest.raises(rlx.RlxError, match="swiglu_limit must be positive"):
        hir.moe_experts(x, w, ids, gu, d, swiglu_alpha=1.702, swiglu_limit=0.0)
    with pytest.raises(rlx.RlxError, match="activation must be silu"):
        hir.moe_experts(x, w, ids, gu, d, activation="gelu", swiglu_alpha=1.702)
