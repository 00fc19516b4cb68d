"""GGUF checkpoints (llama.cpp's format), written by the `gguf` PyPI package:
every tensor RLX reads (Q8_0 by gguf's own quantizer; Q4_K, Q5_K, Q6_K,
Q4_0 and MXFP4 as random valid blocks, since gguf-py quantizes only some
types) equals `gguf.quants.dequantize` bit for bit, with Llama's q/k rows
un-permuted as llama.cpp's converter permuted them; case I3 of
../shared/cases literally; and a small Llama (and Qwen2) from `rlx-gen
--gguf FILE` + `rlx-run --weights FILE` gives transformers' logits on the
dequantized weights, on the CPU path and the emulator."""
from __future__ import annotations

import numpy as np
import pytest

import rlx
from harness import BUILD, RLX_GEN
from test_checkpoints import logits_with_weights

gguf = pytest.importorskip("gguf")
torch = pytest.importorskip("torch")
import subprocess  # noqa: E402

import transformers  # noqa: E402

from gguf import GGMLQuantizationType as Q  # noqa: E402
from gguf.quants import dequantize, quantize  # noqa: E402

SIZES = {Q.Q4_0: (32, 18), Q.Q8_0: (32, 34), Q.Q4_K: (256, 144), Q.Q5_K: (256, 176),
         Q.Q6_K: (256, 210), Q.MXFP4: (32, 17)}


def f16(v):
    return np.array([v], np.float16).view(np.uint8)


def random_blocks(qtype, shape, rng):
    """Valid blocks of `qtype` for a [rows, cols] tensor: random codes,
    scales small enough that the model stays finite."""
    block, size = SIZES[qtype]
    n = int(np.prod(shape)) // block
    raw = rng.integers(0, 256, (n, size), dtype=np.uint8)
    d = lambda: np.repeat(f16(2.0 ** -9)[None], n, 0)  # noqa: E731
    if qtype in (Q.Q4_K, Q.Q5_K):
        raw[:, 0:2], raw[:, 2:4] = d(), d()
    elif qtype == Q.Q6_K:
        raw[:, 208:210] = d()
    elif qtype in (Q.Q4_0, Q.Q8_0):
        raw[:, 0:2] = d()
    elif qtype == Q.MXFP4:
        raw[:, 0] = rng.integers(118, 124, n)
    return raw.reshape(shape[0], -1)


def to_gguf_rows(w, heads):
    """llama.cpp's LlamaModel.permute: transformers' rotate-half rows of each
    head stored interleaved."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def from_gguf_rows(w, heads):
    return w.reshape(heads, w.shape[0] // heads // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


LAYER_NAMES = {"self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm","input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q",
               "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
               "self_attn.o_proj": "attn_output", "post_attention_layernorm": "ffn_norm",
               "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}


def gguf_name(hf):
    if hf == "model.embed_tokens.weight":
        return "token_embd.weight"
    if hf == "model.norm.weight":
        return "output_norm.weight"
    if hf == "lm_head.weight":
        return "output.weight"
    _, _, i, rest = hf.split(".", 3)
    module, kind = rest.rsplit(".", 1)
    return f"blk.{i}.{LAYER_NAMES[module]}.{kind}"


def write_model_gguf(path, arch, cfg, state, qtype_of, rng):
    """The model's tensors as a GGUF file; returns {hf name: dequantized f32}
    (what the GGUF holds, in transformers' layout)."""
    w = gguf.GGUFWriter(str(path), arch)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    theta = getattr(cfg, "rope_theta", None) or cfg.rope_parameters["rope_theta"]
    w.add_rope_freq_base(theta)
    if getattr(cfg, "head_dim", None):
        w.add_key_length(cfg.head_dim)
        w.add_value_length(cfg.head_dim)
    held = {}
    for name, t in state.items():
        if name == "lm_head.weight" and cfg.tie_word_embeddings:
            continue  # the embedding (a tied head: no output.weight in the file)
        a = t.detach().numpy().astype(np.float32)
        heads = None
        if arch == "llama" and (".q_proj." in name or ".k_proj." in name):
            heads = cfg.num_attention_heads if ".q_proj." in name else cfg.num_key_value_heads
            a = to_gguf_rows(a, heads)
        qtype = qtype_of(name, a) if a.ndim == 2 else None
        if qtype is None:
            w.add_tensor(gguf_name(name), a)
            stored = a
        elif qtype == Q.F16:
            w.add_tensor(gguf_name(name), a.astype(np.float16))
            stored = a.astype(np.float16).astype(np.float32)
        elif qtype == Q.BF16:
            import ml_dtypes
            bits = a.astype(ml_dtypes.bfloat16).view(np.uint8)
            w.add_tensor(gguf_name(name), bits, raw_dtype=Q.BF16)
            stored = a.astype(ml_dtypes.bfloat16).astype(np.float32)
        else:
            raw = quantize(a, qtype) if qtype == Q.Q8_0 else random_blocks(qtype, a.shape, rng)
            w.add_tensor(gguf_name(name), raw, raw_dtype=qtype)
            stored = dequantize(raw, qtype).reshape(a.shape)
        held[name] = from_gguf_rows(stored, heads) if heads else stored
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return held


def small_config(arch):
    kw = dict(vocab_size=128, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
              rms_norm_eps=1e-5, tie_word_embeddings=False, rope_theta=50000.0)
    if arch == "llama":
        return transformers.LlamaConfig(**kw, head_dim=64), transformers.LlamaForCausalLM
    if arch == "qwen3":
        # head_dim 128 is not hidden / heads (64): the file's key_length says
        # it; a tied head (no output.weight).
        kw.update(tie_word_embeddings=True)
        return transformers.Qwen3Config(**kw, head_dim=128), transformers.Qwen3ForCausalLM
    return transformers.Qwen2Config(**kw), transformers.Qwen2ForCausalLM


MIXES = {
    "q8_0": lambda name, a: Q.Q8_0,
    "q4_k-q6_k": lambda name, a: Q.Q6_K if ("down_proj" in name or "embed" in name) else Q.Q4_K,
    "q5_k-q4_0-mxfp4": lambda name, a: (Q.Q5_K if "proj" in name and "down" not in name
                                        else Q.MXFP4 if "down" in name else Q.Q4_0),
    "f16-bf16": lambda name, a: Q.BF16 if "mlp" in name else Q.F16,
}


@pytest.fixture(scope="module", params=[("llama", "q8_0"), ("llama", "q4_k-q6_k"),
                                        ("llama", "q5_k-q4_0-mxfp4"), ("qwen2", "q4_k-q6_k"),
                                        ("llama", "f16-bf16"), ("qwen3", "q4_k-q6_k")],
                ids=lambda p: "-".join(p))
def gguf_model(request, tmp_path_factory):
    arch, mix = request.param
    cfg, cls = small_config(arch)
    torch.manual_seed(0)
    model = cls(cfg).eval()
    path = tmp_path_factory.mktemp("gguf") / f"{arch}-{mix}.gguf"
    held = write_model_gguf(path, arch, cfg, model.state_dict(), MIXES[mix],
                            np.random.default_rng(5))
    with torch.no_grad():
        model.load_state_dict({k: torch.from_numpy(v) for k, v in held.items()}, strict=False)
        if cfg.tie_word_embeddings:
            assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    return model, path, held


def test_every_tensor_equals_gguf_dequantize_bit_for_bit(gguf_model):
    model, path, held = gguf_model
    got = rlx.load_weights(path)
    assert sorted(got) == sorted(held)
    assert ("lm_head.weight" in got) != model.config.tie_word_embeddings
    for name, want in held.items():
        assert got[name].dtype == np.float32, name
        np.testing.assert_array_equal(got[name], want, err_msg=name)


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_logits_equal_transformers_on_the_dequantized_weights(gguf_model, device, tmp_path):
    model, path, held = gguf_model
    proc = subprocess.run([str(RLX_GEN), "--gguf", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    ids = np.random.default_rng(1).integers(0, 128, (1, 9), dtype=np.int64)
    run = logits_with_weights(proc.stdout, path, ids, tmp_path, ("--device", device))
    assert run.returncode == 0, run.stderr
    assert "generated" not in run.stdout, run.stdout
    with torch.no_grad():
        want = model(input_ids=torch.from_numpy(ids)).logits.numpy()
    got = np.load(tmp_path / "out" / "logits.npy")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.parametrize("qtype", list(SIZES))
def test_dequantize_with_arbitrary_scales_is_bit_exact(qtype, tmp_path):
    """Scales that are not powers of two (random finite f16 d and dmin, any
    E8M0 exponent): each product rounds, so the operation order shows."""
    rng = np.random.default_rng(int(qtype))
    raw = random_blocks(qtype, (8, 512), rng)
    block, size = SIZES[qtype]
    blocks = raw.reshape(-1, size)
    d = lambda: rng.uniform(1e-3, 2.0, len(blocks)).astype(np.float16).view(np.uint8).reshape(-1, 2)  # noqa: E731
    if qtype in (Q.Q4_K, Q.Q5_K):
        blocks[:, 0:2], blocks[:, 2:4] = d(), d()
    elif qtype == Q.Q6_K:
        blocks[:, 208:210] = d()
    elif qtype in (Q.Q4_0, Q.Q8_0):
        blocks[:, 0:2] = d()
    else:
        blocks[:, 0] = rng.integers(0, 256, len(blocks))
    write_raw(tmp_path / "s.gguf", {"blk.0.ffn_up.weight": (raw, qtype)})
    got = rlx.load_weights(tmp_path / "s.gguf")["model.layers.0.mlp.up_proj.weight"]
    want = dequantize(raw, qtype).reshape(8, 512)
    assert np.isfinite(want).all() or qtype == Q.MXFP4
    np.testing.assert_array_equal(got, want)


def q4k_case_block():
    """Case I3's super-block: d = 0.5, dmin = 0.25, the sub-block scales and
    mins packed as quantize_row_q4_K does, code e = (3e + e//16) mod 16."""
    sc = [1, 2, 3, 4, 33, 45, 50, 63]
    mn = [0, 5, 10, 15, 20, 40, 60, 62]
    s = np.zeros(12, np.uint8)
    for j in range(8):
        if j < 4:
            s[j], s[j + 4] = sc[j], mn[j]
        else:
            s[j + 4] = (sc[j] & 0xF) | ((mn[j] & 0xF) << 4)
            s[j - 4] |= (sc[j] >> 4) << 6
            s[j] |= (mn[j] >> 4) << 6
    assert bytes(s).hex(" ").upper() == "81 82 C3 C4 40 85 CA CF 41 8D C2 EF"
    codes = [(3 * e + e // 16) % 16 for e in range(256)]
    qs = np.zeros(128, np.uint8)
    for e, q in enumerate(codes):
        c, l = divmod(e, 64)
        if l < 32:
            qs[32 * c + l] |= q
        else:
            qs[32 * c + l - 32] |= q << 4
    assert bytes(qs[:4]).hex(" ").upper() == "20 53 86 B9"
    return np.concatenate([f16(0.5), f16(0.25), s, qs])


def test_case_i3_q4_k_super_block(tmp_path):
    block = q4k_case_block()
    w = gguf.GGUFWriter(str(tmp_path / "i3.gguf"), "llama")
    w.add_tensor("blk.0.ffn_down.weight", block.reshape(1, 144),
                 raw_dtype=Q.Q4_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    y = rlx.load_weights(tmp_path / "i3.gguf")["model.layers.0.mlp.down_proj.weight"][0]
    at = [0, 1, 31, 32, 33, 63, 64, 127, 128, 191, 192, 255]
    np.testing.assert_array_equal(y[at], [0, 1.5, 7, 0.75, 3.75, -1.25, 3.5, 4.25, 127, 170, 285,
                                          362.5])
    assert y.sum() == 22424
    np.testing.assert_array_equal(y, dequantize(block.reshape(1, 144), Q.Q4_K).reshape(256))


@pytest.mark.parametrize("qtype", [Q.Q8_0, Q.MXFP4])
def test_one_dimensional_block_tensor_is_one_row(qtype, tmp_path):
    """A 1-D tensor of a block type (here a norm weight of two blocks) is
    one row of whole blocks, dequantized as gguf does; a quantized q/k bias,
    whose rows llama.cpp permutes one by one, is refused (rlx-fuzz-gguf's
    finding: each element was taken for a row of 0 bytes)."""
    rng = np.random.default_rng(3)
    raw = random_blocks(qtype, (1, 64), rng).reshape(-1)
    write_raw(tmp_path / "n.gguf", {"output_norm.weight": (raw, qtype)})
    got = rlx.load_weights(tmp_path / "n.gguf")["model.norm.weight"]
    np.testing.assert_array_equal(got, dequantize(raw, qtype).reshape(64))
    write_raw(tmp_path / "b.gguf", {"blk.0.attn_q.bias": (raw, qtype)},
              uint32s=[("llama.attention.head_count", 2)])
    with pytest.raises(rlx.RlxError, match="bias cannot have its q/k rows permuted"):
        rlx.load_weights(tmp_path / "b.gguf")


def write_raw(path, tensors, arch="llama", uint32s=()):
    """A GGUF file of `tensors` (an array, or (raw bytes, ggml type) for a
    quantized one) with the u32 metadata `uint32s` ((key, value) pairs)."""
    w = gguf.GGUFWriter(str(path), arch)
    for key, value in uint32s:
        w.add_uint32(key, value)
    for name, a in tensors.items():
        if isinstance(a, tuple):
            w.add_tensor(name, a[0], raw_dtype=a[1])
        else:
            w.add_tensor(name, a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.mark.parametrize("mutate,message", [
    (lambda b: b"GGUX" + b[4:], "no \"GGUF\" magic"),
    (lambda b: b[:4] + (7).to_bytes(4, "little") + b[8:], "GGUF version 7"),
    (lambda b: b[:40], "ends early"),
    (lambda b: b[: len(b) - 64], "outside the file"),
])
def test_malformed_files_are_named(tmp_path, mutate, message):
    write_raw(tmp_path / "ok.gguf", {"blk.0.attn_norm.weight": np.ones(64, np.float32)})
    (tmp_path / "bad.gguf").write_bytes(mutate((tmp_path / "ok.gguf").read_bytes()))
    with pytest.raises(rlx.RlxError, match=message):
        rlx.load_weights(tmp_path / "bad.gguf")


def test_unknown_tensor_and_architecture_are_named(tmp_path):
    write_raw(tmp_path / "a.gguf", {"blk.0.mystery.weight": np.ones(64, np.float32)})
    with pytest.raises(rlx.RlxError, match="'blk.0.mystery.weight' has no transformers name"):
        rlx.load_weights(tmp_path / "a.gguf")
    write_raw(tmp_path / "b.gguf", {"blk.0.attn_norm.weight": np.ones(64, np.float32)}, arch="rwkv6")
    with pytest.raises(rlx.RlxError, match="general.architecture 'rwkv6'"):
        rlx.load_weights(tmp_path / "b.gguf")


MUTATE = r"""
import sys, numpy as np, rlx
good = open(sys.argv[1], "rb").read()
rng = np.random.default_rng(int(sys.argv[2]))
for i in range(int(sys.argv[3])):
    b = bytearray(good)
    kind = i % 4
    if kind == 0:    # flip bytes in the header
        for p in rng.integers(0, min(len(b), 600), 4):
            b[p] = rng.integers(0, 256)
    elif kind == 1:  # cut
        b = b[: rng.integers(0, len(b))]
    elif kind == 2:  # an 8-byte field set to an edge value
        p = int(rng.integers(0, min(len(b), 600) - 8))
        edge = [0, 1, 2**31, 2**63 - 1, 2**64 - 1][int(rng.integers(0, 5))]
        b[p:p + 8] = edge.to_bytes(8, "little")
    else:            # flip anywhere
        for p in rng.integers(0, len(b), 16):
            b[p] ^= 1 << int(rng.integers(0, 8))
    open(sys.argv[4], "wb").write(bytes(b))
    try:
        rlx.load_weights(sys.argv[4])
    except rlx.RlxError:
        pass
print("survived")
"""


def test_mutated_files_are_rejected_or_read_never_a_crash(gguf_model, tmp_path):
    """A small fuzz in the suite (the libFuzzer target rlx-fuzz-gguf runs
    in the sanitizer stage): 300 mutants of the model file through
    rlx.load_weights and 20 through rlx-gen --gguf, in child processes,
    end with an error or a result, never a signal."""
    _, path, _ = gguf_model
    import os
    import sys
    # The child imports the build's package as conftest.py does here.
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python_packages"))
    proc = subprocess.run([sys.executable, "-c", MUTATE, str(path), "3", "300",
                           str(tmp_path / "m.gguf")], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0 and "survived" in proc.stdout, proc.stderr[-2000:]
    good = path.read_bytes()
    rng = np.random.default_rng(4)
    for i in range(20):
        b = bytearray(good)
        for p in rng.integers(0, min(len(b), 800), 6):
            b[p] = rng.integers(0, 256)
        (tmp_path / "g.gguf").write_bytes(bytes(b))
        gen = subprocess.run([str(RLX_GEN), "--gguf", str(tmp_path / "g.gguf")],
                             capture_output=True, text=True, timeout=120)
        assert gen.returncode in (0, 1), (i, gen.returncode, gen.stderr[-2000:])


def tiny_header_file(path, **meta):
    w = gguf.GGUFWriter(str(path), "qwen2")
    for k, v in dict({"qwen2.embedding_length": 64, "qwen2.block_count": 1,
                      "qwen2.feed_forward_length": 128, "qwen2.attention.head_count": 4,
                      "qwen2.attention.layer_norm_rms_epsilon": 1e-6}, **meta).items():
        if isinstance(v, str):
            w.add_string(k, v)
        elif isinstance(v, float):
            w.add_float32(k, v)
        else:
            w.add_uint32(k, v)
    w.add_tensor("token_embd.weight", np.zeros((8, 64), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.mark.parametrize("meta,message", [
    ({"qwen2.expert_count": 8}, "mixture-of-experts GGUF files are not mapped"),
    ({"qwen2.rope.dimension_count": 8}, "partial rotary embeddings are not mapped"),
    ({"qwen2.rope.scaling.type": "yarn", "qwen2.rope.scaling.factor": 4.0},
     "RoPE scaling 'yarn' is not mapped"),
    ({"split.count": 3}, "a shard of a split GGUF"),
    ({"qwen2.rope.scaling.factor": -2.0}, "a negative RoPE scaling factor"),
])
def test_metadata_rlx_cannot_map_is_refused(meta, message, tmp_path):
    path = tiny_header_file(tmp_path / "m.gguf", **meta)
    proc = subprocess.run([str(RLX_GEN), "--gguf", str(path)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr


@pytest.mark.parametrize("meta,factor", [
    ({}, None),
    ({"qwen2.rope.scaling.factor": 4.0}, 4.0),          # the type defaults to linear
    ({"qwen2.rope.scale_linear": 2.0}, 2.0),            # the older key
    ({"qwen2.rope.scaling.type": "linear", "qwen2.rope.scaling.factor": 0.0}, None),
])
def test_rope_scaling_resolves_as_llama_cpp(meta, factor, tmp_path):
    path = tiny_header_file(tmp_path / "m.gguf", **meta)
    proc = subprocess.run([str(RLX_GEN), "--gguf", str(path)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    if factor is None:
        assert "rope_scaling" not in proc.stdout
    else:
        assert f"factor = {factor:.6e}" in proc.stdout or f"factor = {factor}" in proc.stdout, \
            [l for l in proc.stdout.splitlines() if "rope" in l][:3]
