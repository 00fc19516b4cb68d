"""Expert parallelism: `mpirun -np N rlx-run --tp N` on a mixture-of-experts
model whose experts are stacked (transformers 5's `experts.gate_up_proj`
[E, 2I, H] and `experts.down_proj` [E, H, I], `rlx-gen --stacked-experts`)
gives rank r the experts [r·E/N, (r+1)·E/N) and only those: each rank
computes the rows routed to its experts (a grouped_matmul that skips the
others) and an all-reduce sums the rows, while attention is split by heads
as tensor parallelism splits it.

With `--ep G` < N the experts go to G groups of N/G ranks, each expert
split over its group by intermediate size (ep × tp, rlx-mir-shard{ep}).

Small random-init models of test_moe_models.py's families, their
named_parameters() saved as a checkpoint, run at ep = 2 and 4 on the CPU
path and at ep = 2 under the GPU emulator, and at ep 2 × tp 2 and ep 1 × tp 4
(SPLITS): the logits must equal the
single-process run (rtol = atol = 1e-5) and transformers' (1e-4), and rank 0
must hold only its share of the experts' bytes. Per-expert checkpoint names
(`experts.<e>.w1`, save_pretrained's) are whole on every rank instead."""
from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from harness import assert_close, gen_model

torch = pytest.importorskip("torch")
import test_hf_models as hfm  # noqa: E402
import test_moe_models as moe  # noqa: E402
from test_checkpoints import logits_with_weights  # noqa: E402

MPIRUN = shutil.which("mpirun")
pytestmark = pytest.mark.skipif(
    MPIRUN is None, reason="Open MPI's mpirun is not installed (scripts/setup.sh installs it)")


def launcher(ep):
    return (MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", str(ep))


@pytest.fixture(scope="module", params=["mixtral", "olmoe", "qwen2_moe"])
def stacked(request, tmp_path_factory):
    """The family's model, its stacked checkpoint and config, the module
    text, the single-process logits and the experts' bytes."""
    from safetensors.torch import save_file
    model = moe.hf_model(request.param)
    tmp = tmp_path_factory.mktemp(f"ep-{request.param}")
    params = {n: p.detach().contiguous() for n, p in model.named_parameters()}
    (tmp / "w").mkdir()
    save_file(params, tmp / "w" / "model.safetensors")
    (tmp / "config.json").write_text(model.config.to_json_string())
    text = gen_model(tmp / "config.json", "--stacked-experts")
    ids = hfm.token_ids(hfm.PREFILL, seed=6)
    (tmp / "one").mkdir()
    proc = logits_with_weights(text, tmp / "w", ids, tmp / "one")
    assert proc.returncode == 0, proc.stderr
    expert_bytes = sum(p.numel() * 4 for n, p in params.items()
                       if n.endswith(("experts.gate_up_proj", "experts.down_proj")))
    total = int(re.search(r"weights: (\d+) bytes", proc.stdout).group(1))
    return dict(family=request.param, model=model, ckpt=tmp / "w", text=text, ids=ids,
                single=np.load(tmp / "one" / "out" / "logits.npy"), expert_bytes=expert_bytes,
                total=total, experts=model.config.to_dict().get("num_local_experts") or
                model.config.num_experts)


# (tp, ep): expert parallelism alone (ep = tp: whole experts per rank), and
# ep × tp at 4 ranks (`--tp 4 --ep 2`: experts on 2 groups of 2 ranks, each
# expert split over its group by intermediate size, gate|up by output
# feature part by part and down by input feature, everything else over the
# 4 ranks; `--ep 1`: every expert split over all 4).
SPLITS = [(2, 2, "cpu"), (4, 4, "cpu"), (2, 2, "emu"), (4, 2, "cpu"), (4, 1, "cpu"),
          (4, 2, "emu")]


@pytest.mark.parametrize("tp,ep,device", SPLITS)
def test_expert_parallel_equals_one_process(stacked, tp, ep, device, tmp_path):
    """Equal to one process and to transformers; still one all-reduce per MoE
    layer (the down projection's partial rows); rank 0 holds its share of
    the experts' bytes (1/tp of them: 1/ep of the experts, 1/(tp/ep) of
    each)."""
    if stacked["experts"] % ep:
        pytest.skip(f"{stacked['experts']} experts over {ep} groups")
    if device == "emu" and (stacked["family"] == "olmoe" or
                            (ep < tp and stacked["family"] != "mixtral")):
        pytest.skip("fewer families on the emulator keep the suite's budget")
    flags = ("--tp", str(tp)) + (("--ep", str(ep)) if ep < tp else ())
    proc = logits_with_weights(stacked["text"], stacked["ckpt"], stacked["ids"], tmp_path,
                               flags + ("--device", device), launcher(tp))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"tensor parallel: {tp} ranks (Open MPI)" in proc.stdout
    assert (f"expert parallel: {ep} groups of {tp // ep} ranks" in proc.stdout) == (ep < tp)
    got = np.load(tmp_path / "out" / "logits.npy")
    assert_close(got, stacked["single"], rtol=1e-5, atol=1e-5)
    hfm.close(got, moe.reference_logits(stacked["model"], stacked["ids"]),
              f"{stacked['family']} tp={tp} ep={ep} {device}")
    if stacked["family"] != "olmoe":  # (OLMoE's full-width q/k norms reduce statistics too)
        assert collectives(stacked, device) in proc.stdout
    if device == "cpu":
        held = int(re.search(r"weights: (\d+) bytes on this rank", proc.stdout).group(1))
        assert held <= stacked["total"] - stacked["expert_bytes"] * (tp - 1) // tp, proc.stdout


def collectives(stacked, device):
    """The runner's line for the collectives of one step of the family's
    prefill. One all-reduce per MoE layer (the down projection's rows,
    [T·k, H]): the gate|up rows stay with their expert's ranks. Besides: the
    vocab-parallel embedding, o_proj, a dense layer's down_proj and
    Qwen2-MoE's shared expert ([T, H] each), and the LM head's logits (an
    all-gather on the GPU, a zero-padded all-reduce on the CPU)."""
    cfg = stacked["model"].config
    T, H, V, k = hfm.PREFILL, cfg.hidden_size, cfg.vocab_size, cfg.num_experts_per_tok
    layers = cfg.num_hidden_layers
    dense = len(getattr(cfg, "mlp_only_layers", []) or [])
    moe_layers = layers - dense
    shared = moe_layers if stacked["family"] == "qwen2_moe" else 0
    count = 1 + layers + moe_layers + shared + dense
    reduced = 4 * T * H * (1 + layers + k * moe_layers + shared + dense)
    if device == "cpu":
        count, reduced = count + 1, reduced + 4 * T * V
    return f"collectives per step: {count} all-reduce(s), {reduced} bytes reduced"


def test_per_expert_names_are_whole_on_every_rank(tmp_path):
    """save_pretrained's per-expert tensors are not split as the dense MLP's
    gate/up/down would be: each rank holds every expert."""
    model = moe.hf_model("qwen2_moe")
    model.save_pretrained(tmp_path / "ckpt")
    ids = hfm.token_ids(hfm.PREFILL, seed=7)
    text = gen_model(tmp_path / "ckpt" / "config.json")
    proc = logits_with_weights(text, tmp_path / "ckpt", ids, tmp_path, ("--tp", "2"),
                               launcher(2))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hfm.close(np.load(tmp_path / "out" / "logits.npy"), moe.reference_logits(model, ids),
              "qwen2_moe per-expert names tp=2")
    # Rank 0 holds every expert's tensors among its replicated bytes.
    experts = sum(p.numel() * 4 for n, p in model.named_parameters()
                  if n.endswith(("experts.gate_up_proj", "experts.down_proj")))
    replicated = int(re.search(r"on this rank \(split \d+, replicated (\d+)\)",
                               proc.stdout).group(1))
    assert replicated >= experts, proc.stdout


@pytest.mark.parametrize("tp,ep", [(2, 2), (4, 4), (4, 2)])
def test_llama4_expert_parallel(tp, ep, tmp_path):
    """Llama-4's stacked [E, H, 2I] experts split by expert, with the routing
    weight on the experts' inputs (a row routed elsewhere is a zero row
    here), its shared expert row-parallel and its chunked / NoPE attention
    split by head: equal to one process and to transformers. At ep 2 × tp 2
    each expert is split over its group along the intermediate dim, which
    is dim 2 of gate_up_proj and dim 1 of down_proj in this layout (found
    through the transposes to the grouped_matmuls)."""
    model = moe.hf_model("llama4_text")
    model.save_pretrained(tmp_path / "ckpt")
    ids = hfm.token_ids(hfm.PREFILL, seed=10)
    text = gen_model(tmp_path / "ckpt" / "config.json")
    (tmp_path / "one").mkdir()
    proc = logits_with_weights(text, tmp_path / "ckpt", ids, tmp_path / "one")
    assert proc.returncode == 0, proc.stderr
    proc = logits_with_weights(text, tmp_path / "ckpt", ids, tmp_path,
                               ("--tp", str(tp), "--ep", str(ep)), launcher(tp))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = np.load(tmp_path / "out" / "logits.npy")
    assert_close(got, np.load(tmp_path / "one" / "out" / "logits.npy"), rtol=1e-5, atol=1e-5)
    hfm.close(got, moe.reference_logits(model, ids), f"llama4 tp={tp} ep={ep}")


def test_experts_not_divisible_is_a_diagnostic(stacked, tmp_path):
    if stacked["family"] != "qwen2_moe":
        pytest.skip("one family")
    proc = logits_with_weights(stacked["text"], stacked["ckpt"], stacked["ids"], tmp_path,
                               ("--tp", "4"), launcher(4))
    assert proc.returncode != 0
    assert re.search(r"tp = 4 does not divide dim 0 \(size 6\) of "
                     r"'model\.layers\.0\.mlp\.experts\.gate_up_proj' \(expert-parallel, "
                     r"num_experts\)", proc.stderr), proc.stderr
