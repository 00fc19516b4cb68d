"""The weight split of tensor parallelism from Python: `rlx.shard_weight`
and `rlx.load_weights(..., tp=, rank=)` give each rank the block that
`rlx-mir-shard` and `rlx-run --tp` use (one C++ function,
`tensorParallelSplit`). References are numpy slices written here."""
from __future__ import annotations

import numpy as np
import pytest

import rlx

RNG = np.random.default_rng(0)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def test_split_kinds():
    assert rlx.tensor_parallel_split("model.layers.0.self_attn.q_proj.weight", 2) == \
        {"kind": "column", "dim": 0, "parts": 1}
    assert rlx.tensor_parallel_split("model.layers.0.mlp.down_proj.weight", 2) == \
        {"kind": "row", "dim": 1, "parts": 1}
    assert rlx.tensor_parallel_split("transformer.h.0.attn.c_attn.weight", 2) == \
        {"kind": "packed column", "dim": 1, "parts": 3}
    assert rlx.tensor_parallel_split("model.norm.weight", 1) == \
        {"kind": "replicated", "dim": None, "parts": 1}


def test_column_row_vocab_and_caches():
    q = rand(64, 32)
    np.testing.assert_array_equal(
        rlx.shard_weight("model.layers.0.self_attn.q_proj.weight", q, 1, 2), q[32:64])
    o = rand(32, 64)
    np.testing.assert_array_equal(
        rlx.shard_weight("model.layers.0.self_attn.o_proj.weight", o, 3, 4), o[:, 48:64])
    emb = rand(96, 32)
    np.testing.assert_array_equal(
        rlx.shard_weight("model.embed_tokens.weight", emb, 2, 4), emb[48:72])
    cache = rand(1, 5, 32)
    np.testing.assert_array_equal(rlx.shard_weight("present.0.key", cache, 1, 2),
                                  cache[:, :, 16:32])
    norm = rand(32)
    assert rlx.shard_weight("model.layers.0.input_layernorm.weight", norm, 1, 2) is norm


def test_packed_projections_take_every_part():
    # GPT-2's c_attn: [in, out] with out = q | k | v.
    w = rand(32, 96)
    want = np.concatenate([w[:, 16:32], w[:, 48:64], w[:, 80:96]], axis=1)
    np.testing.assert_array_equal(
        rlx.shard_weight("transformer.h.0.attn.c_attn.weight", w, 1, 2), want)
    b = rand(96)
    np.testing.assert_array_equal(
        rlx.shard_weight("transformer.h.0.attn.c_attn.bias", b, 0, 4),
        np.concatenate([b[0:8], b[32:40], b[64:72]]))
    # Phi-3's gate_up_proj: [out, in] with out = gate | up.
    gu = rand(128, 16)
    np.testing.assert_array_equal(
        rlx.shard_weight("model.layers.0.mlp.gate_up_proj.weight", gu, 2, 4),
        np.concatenate([gu[32:48], gu[96:112]]))


def test_indivisible_split_is_an_error():
    with pytest.raises(rlx.RlxError, match=r"tp = 3 \(rank 0\) does not divide dim 0 \(size 64\) "
                                           r"of 'model.layers.0.self_attn.q_proj.weight'"):
        rlx.shard_weight("model.layers.0.self_attn.q_proj.weight", rand(64, 32), 0, 3)
    # 96 columns of c_attn divide by 6, its parts of 32 do not.
    with pytest.raises(rlx.RlxError, match="3 packed parts"):
        rlx.shard_weight("transformer.h.0.attn.c_attn.weight", rand(8, 96), 0, 6)
    with pytest.raises(rlx.RlxError, match="packed layout RLX does not split"):
        rlx.shard_weight("gpt_neox.layers.0.attention.query_key_value.weight", rand(96, 8), 0, 2)
    with pytest.raises(rlx.RlxError, match="rank 2 of tp = 2 is not a rank"):
        rlx.shard_weight("model.norm.weight", rand(8), 2, 2)


def test_load_weights_by_rank(tmp_path):
    safetensors = pytest.importorskip("safetensors.numpy")
    tensors = {"model.layers.0.mlp.up_proj.weight": rand(64, 16),
               "model.layers.0.mlp.down_proj.weight": rand(16, 64),
               "model.layers.0.post_attention_layernorm.weight": rand(16)}
    path = tmp_path / "model.safetensors"
    safetensors.save_file(tensors, str(path))
    for rank in range(4):
        got = rlx.load_weights(path, tp=4, rank=rank)
        assert sorted(got) == sorted(tensors)
        np.testing.assert_array_equal(got["model.layers.0.mlp.up_proj.weight"],
                                      tensors["model.layers.0.mlp.up_proj.weight"][16 * rank:16 * (rank + 1)])
        np.testing.assert_array_equal(got["model.layers.0.mlp.down_proj.weight"],
                                      tensors["model.layers.0.mlp.down_proj.weight"][:, 16 * rank:16 * (rank + 1)])
        np.testing.assert_array_equal(got["model.layers.0.post_attention_layernorm.weight"],
                                      tensors["model.layers.0.post_attention_layernorm.weight"])
    with pytest.raises(rlx.RlxError, match="rank 4 of tp = 4 is not a rank"):
        rlx.load_weights(path, tp=4, rank=4)


EXPERTS = """
func.func @experts(%x: tensor<6x8xf32> {rlx.input = "hidden_states"},
                   %gu: tensor<4x16x8xf32> {rlx.param = "model.layers.0.mlp.experts.gate_up_proj"},
                   %down: tensor<4x8x8xf32> {rlx.param = "model.layers.0.mlp.experts.down_proj"},
                   %ids: tensor<6xi64> {rlx.input = "ids"}) -> tensor<6x8xf32> {
  %h = rlx_mir.grouped_matmul %x, %gu, %ids : tensor<6x8xf32>, tensor<4x16x8xf32>, tensor<6xi64>
  %g = rlx_mir.slice %h offsets [0, 0] sizes [-1, 8] strides [1, 1] : tensor<6x16xf32>
  %u = rlx_mir.slice %h offsets [0, 8] sizes [-1, 8] strides [1, 1] : tensor<6x16xf32>
  %a = rlx_mir.silu %g : tensor<6x8xf32>
  %m = rlx_mir.mul %a, %u : tensor<6x8xf32>, tensor<6x8xf32>
  %y = rlx_mir.grouped_matmul %m, %down, %ids : tensor<6x8xf32>, tensor<4x8x8xf32>, tensor<6xi64>
  return %y : tensor<6x8xf32>
}
"""


def test_expert_blocks_under_ep(tmp_path):
    """ep 2 x tp 2 (rlx-mir-shard{tp=4 ep=2}): rank r = 2g + s holds experts
    [2g, 2g + 2), of each its block s of gate and of up side by side, and
    block s of down's input features; load_weights cuts a checkpoint to the
    rank's per-rank program (its argument shapes)."""
    safetensors = pytest.importorskip("safetensors.numpy")
    import rlx.gpu
    gu, down = rand(4, 16, 8), rand(4, 8, 8)
    path = tmp_path / "model.safetensors"
    safetensors.save_file({"model.layers.0.mlp.experts.gate_up_proj": gu,
                           "model.layers.0.mlp.experts.down_proj": down}, str(path))
    module = rlx.parse(EXPERTS)
    for rank in range(4):
        g, s = divmod(rank, 2)
        experts = slice(2 * g, 2 * g + 2)
        want_gu = np.concatenate([gu[experts, 4 * s:4 * s + 4], gu[experts, 8 + 4 * s:8 + 4 * s + 4]],
                                 axis=1)
        want_down = down[experts, :, 4 * s:4 * s + 4]
        np.testing.assert_array_equal(
            rlx.shard_weight("model.layers.0.mlp.experts.gate_up_proj", gu, rank, 4,
                             shape=[2, 8, 8]), want_gu)
        model = rlx.gpu.compile(module, tp=4, ep=2, rank=rank, chip="sm_80")
        got = rlx.load_weights(path, tp=4, rank=rank, rank_model=model)
        np.testing.assert_array_equal(got["model.layers.0.mlp.experts.gate_up_proj"], want_gu)
        np.testing.assert_array_equal(got["model.layers.0.mlp.experts.down_proj"], want_down)
    # ep 1: every expert, block r of each one's intermediate size.
    np.testing.assert_array_equal(
        rlx.shard_weight("model.layers.0.mlp.experts.down_proj", down, 3, 4, shape=[4, 8, 2]),
        down[:, :, 6:8])
    with pytest.raises(rlx.RlxError, match="not a block of tp = 4"):
        rlx.shard_weight("model.layers.0.mlp.experts.down_proj", down, 3, 4, shape=[3, 8, 2])
