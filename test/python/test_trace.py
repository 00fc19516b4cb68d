"""Kernel timelines (issue 35): `rlx-run --trace` on the CPU path and the
emulator, and `rlx-gpu-run --trace`, write Chrome trace-event JSON that
Perfetto loads: one complete event per kernel run, in order, each with the
kernel's name and the source positions of the ops fused into it; on the
emulator each launch's blocks too (a second track). The example
Llama-3.2-1B layer on both devices from one test body; the events are
checked against the kernels the compiler reports (the CPU path's plan, the
GPU artifact's manifest)."""
import json
import pathlib
import subprocess

import pytest

from harness import BUILD, RLX_RUN

ROOT = pathlib.Path(__file__).resolve().parents[2]
LAYER = ROOT / "examples" / "llama-3.2-1b-layer.mlir"
DEVICES = ["cpu", "emu"]


def load_trace(path, blocks=False):
    """The kernel events of a trace file (tid 0; with `blocks`, the
    emulator's block events on tid 1 too), checked as Perfetto reads the
    JSON object format: complete ("X") events with pid, tid, ts, dur."""
    doc = json.loads(pathlib.Path(path).read_text())
    assert doc["displayTimeUnit"] == "ms"
    meta = [e for e in doc["traceEvents"] if e["ph"] == "M"]
    assert meta and meta[0]["name"] == "process_name"
    events = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    for e in events:
        assert {"name", "cat", "pid", "tid", "ts", "dur", "args"} <= set(e), e
        assert e["dur"] >= 0 and e["ts"] >= 0, e
    # Kernels run one after another, and on the emulator their blocks too:
    # each event starts after the previous began.
    starts = [e["ts"] for e in events]
    assert starts == sorted(starts)
    return events if blocks else [e for e in events if e["tid"] == 0]


def check_block_events(events):
    """The emulator's per-block events (tid 1) after each launch's event:
    as many as its "blocks_traced" says (all of the grid, up to 1024), each
    inside the launch's interval, its block index within the grid."""
    at = 0
    while at < len(events):
        k = events[at]
        assert k["tid"] == 0, k
        grid = [int(d) for d in k["args"]["grid"].split("x")]
        shown, total = (int(v) for v in k["args"]["blocks_traced"].split(" of "))
        assert total == grid[0] * grid[1] * grid[2] and shown == min(total, 1024), k
        blocks = events[at + 1:at + 1 + shown]
        assert len(blocks) == shown and all(b["tid"] == 1 and b["name"] == k["name"] and
                                            b["cat"] == "emu-block" for b in blocks), k
        for i, b in enumerate(blocks):
            x, y, z = (int(v) for v in b["args"]["block"].strip("()").split(","))
            assert x + grid[0] * (y + grid[1] * z) == i and x < grid[0] and y < grid[1], b
            assert k["ts"] <= b["ts"] and b["ts"] + b["dur"] <= k["ts"] + k["dur"] + 1, (k, b)
        at += 1 + shown


@pytest.mark.parametrize("device", DEVICES)
def test_layer_trace(device, tmp_path):
    trace = tmp_path / "layer.json"
    r = subprocess.run([str(RLX_RUN), str(LAYER), "--dims", "seq=5", "--device", device,
                        "--repeat", "2", "--trace", str(trace)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    events = load_trace(trace)
    assert events, "no kernel events"
    assert {e["cat"] for e in events} == {device}
    # The first run packs the weights (their kernels once, first), then two
    # timed runs of the same kernels in the same order.
    names = [e["name"] for e in events]
    packing = [n for n in names if "pack_params" in n]
    assert names[:len(packing)] == packing, names
    names = names[len(packing):]
    assert names and len(names) % 2 == 0 and names[:len(names) // 2] == names[len(names) // 2:], names
    per_run = len(names) // 2
    # The layer's ops come from the example file: every kernel names the
    # lines of the ops fused into it (some fused kernels several).
    for e in events:
        locs = e["args"].get("locations", [])
        assert locs and all(l.startswith(str(LAYER) + ":") or "llama-3.2-1b-layer.mlir:" in l
                            for l in locs), e
    lines = {l for e in events for l in e["args"]["locations"]}
    assert len(lines) >= per_run // 2, lines
    assert any(len(e["args"]["locations"]) > 1 for e in events), "no fused kernel"
    if device == "emu":
        # Launch shapes as the GPU runtime launched them, and each launch's
        # blocks as the emulator ran them.
        assert all("x" in e["args"]["grid"] and "x" in e["args"]["block"] for e in events)
        check_block_events(load_trace(trace, blocks=True))
        doc = json.loads(trace.read_text())
        assert {(e["tid"], e["args"]["name"]) for e in doc["traceEvents"]
                if e["name"] == "thread_name"} == {(0, "kernels"), (1, "blocks")}


def test_gpu_run_trace_matches_manifest(tmp_path):
    """rlx-gpu-run --trace on an artifact: one event per launch of the
    manifest's entry function, named and located as the manifest says."""
    art = tmp_path / "art"
    r = subprocess.run([str(BUILD / "bin" / "rlx-compile"), str(LAYER), "-o", str(art),
                        "--dims", "seq=3", "--no-cubin"], capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    manifest = json.loads((art / "manifest.json").read_text())
    fn = next(f for f in manifest["functions"] if f["name"] == manifest["entry"])
    kernels = {k["name"]: k for k in manifest["kernels"]}
    launched = [l["kernel"] for l in fn["launches"] if "kernel" in l]
    trace = tmp_path / "t.json"
    r = subprocess.run([str(BUILD / "bin" / "rlx-gpu-run"), str(art), "--device", "emu",
                        "--zero-missing", "--trace", str(trace)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    events = load_trace(trace)
    # The packing functions' launches come first (the first run packs).
    packing = [e for e in events if e["args"]["function"] != fn["name"]]
    assert all("pack_params" in e["args"]["function"] for e in packing), packing
    events = events[len(packing):]
    assert [e["name"] for e in events] == launched
    for e in events:
        assert e["args"]["locations"] == kernels[e["name"]]["locations"], e
        assert e["args"]["function"] == fn["name"]


def test_python_gpu_model_trace_and_flushed_timing(tmp_path):
    """rlx.gpu.GpuModel: trace() records the launches of the runs that
    follow (the rms_norm's two kernels here, as the manifest lists them),
    write_trace() writes them, time(flush_l2=True) runs on the emulator and
    its timed runs are not traced."""
    import numpy as np

    import rlx
    src = tmp_path / "m.mlir"
    src.write_text("""func.func @f(%x: tensor<3x37xf32> {rlx.input = "x"}, %g: tensor<37xf32> {rlx.param = "g"}) -> tensor<3x37xf32> {
  %y = rlx_mir.rms_norm %x, %g eps = 1.0e-05 : tensor<3x37xf32>, tensor<37xf32>
  %z = rlx_mir.mul %y, %y : tensor<3x37xf32>, tensor<3x37xf32>
  return %z : tensor<3x37xf32>
}""")
    model = rlx.gpu.compile(rlx.parse(src.read_text()), device="emu",
                            artifact_dir=tmp_path / "art")
    x = np.ones((3, 37), np.float32)
    g = np.ones(37, np.float32)
    model.trace()
    model.run(x=x, g=g)
    model.run(x=x, g=g)
    model.time(warmup=0, iters=2, flush_l2=True)
    model.write_trace(tmp_path / "t.json")
    events = load_trace(tmp_path / "t.json")
    manifest = json.loads((tmp_path / "art" / "manifest.json").read_text())
    launched = [l["kernel"] for f in manifest["functions"] if f["name"] == "f"
                for l in f["launches"] if "kernel" in l]
    assert [e["name"] for e in events] == launched * 2
    assert all(e["cat"] == "emu" for e in events)
