#!/usr/bin/env python3
"""Seed corpora (and, with --dicts, the dictionaries) for the libFuzzer
targets of tools/rlx-fuzz, made from the repository's own tests.

  fuzz-seeds.py --build BUILD --out DIR [--targets mlir,json,npy,hfconfig,...]
  fuzz-seeds.py --dicts          (rewrites tools/rlx-fuzz/dicts/*.dict)

Seeds, one file per input, named by content hash, in DIR/<target>:
  mlir      every `// -----` chunk of test/**/*.mlir, the .mlir parts of
            split-file tests, examples/*.mlir, rlx-gen models (HIR) and the
            example at each stage (MIR, fused, LIR, planned), a few as
            bytecode; each with the [selector][param] header of
            rlx-fuzz-mlir.cpp prepended in several variants
  json      the JSON parts of test/Target/RLXJSON/*.test, every JSON module
            test/python/test_rlx_json.py hands to --import-rlx-json (captured
            by running it with a recording rlx-translate), and
            --export-rlx-hir-json / --export-rlx-lir-json of the examples,
            of rlx-gen models and of the HIR test chunks
  npy       .npy files written by numpy: every dtype readNpy knows
            (incl. ml_dtypes bfloat16 / float8_e4m3fn), 0-d, empty, 1-3-d,
            format versions 1.0/2.0/3.0, and some it must reject (Fortran
            order, big endian, object, complex)
  hfconfig  ../shared/models/*.json and test/Models/Inputs/*.json with the
            options byte of rlx-fuzz-hfconfig.cpp prepended in several
            variants
  safetensors  checkpoints of every dtype rlx-run reads, with metadata, empty,
            and truncated / trailing / oversized ones
  gguf      GGUF files from gguf-py's writer: every block type RLX reads,
            a llama layer's names, truncated ones and version 2
  manifest  manifest.json of rlx-compile artifacts (an add, the example layer)
  gpu-npy   the dtype selector of rlx-fuzz-gpu-npy.cpp + .npy files
  gen-sizes the options byte + eight int64 sizes, small, Llama-3.2-1B's and
            the audit's (2^40 layers, a vocabulary of 1e15, negative)
The tools come from BUILD/bin (any build; the sanitizer build works).
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
DICTS = ROOT / "tools" / "rlx-fuzz" / "dicts"


def shared_dir() -> pathlib.Path | None:
    for c in (os.environ.get("RLX_SHARED_DIR"), ROOT.parent / "shared", "/work/shared"):
        if c and (pathlib.Path(c) / "models").is_dir():
            return pathlib.Path(c)
    return None


class Corpus:
    def __init__(self, out: pathlib.Path):
        self.out = out
        out.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def add(self, data: bytes | str):
        if isinstance(data, str):
            data = data.encode()
        name = hashlib.sha1(data).hexdigest()
        p = self.out / name
        if not p.exists():
            p.write_bytes(data)
            self.count += 1


def run(cmd, stdin: bytes | str | None = None, timeout=120) -> bytes | None:
    if isinstance(stdin, str):
        stdin = stdin.encode()
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    try:
        p = subprocess.run(cmd, input=stdin, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None
    return p.stdout if p.returncode == 0 else None


# --------------------------------------------------------------------------
# Test inputs


def mlir_chunks() -> list[str]:
    """Every `// -----` chunk of the .mlir tests and examples, and the .mlir
    parts of split-file tests."""
    chunks = []
    files = sorted((ROOT / "test").rglob("*.mlir")) + sorted((ROOT / "examples").glob("*.mlir"))
    for f in files:
        for chunk in re.split(r"^// -----.*$", f.read_text(errors="replace"), flags=re.M):
            if chunk.strip():
                chunks.append(chunk)
    for f in sorted((ROOT / "test").rglob("*.test")):
        for name, part in split_file_parts(f):
            if name.endswith(".mlir"):
                chunks.append(part)
    return chunks


def split_file_parts(f: pathlib.Path):
    """(name, text) of each `#--- name` / `//--- name` part (split-file)."""
    text = f.read_text(errors="replace")
    parts = re.split(r"^(?:#|//)--- (\S+)\s*$", text, flags=re.M)
    for i in range(1, len(parts) - 1, 2):
        yield parts[i], parts[i + 1]


def gen_models(build: pathlib.Path) -> list[str]:
    """Small rlx-gen models of every shared config (HIR text)."""
    out = []
    shared = shared_dir()
    configs = sorted(shared.glob("models/*.json")) if shared else []
    configs += sorted((ROOT / "test" / "Models" / "Inputs").glob("*.json"))
    small = ["--set", "hidden_size=64", "--set", "intermediate_size=96", "--set",
             "vocab_size=128", "--set", "num_attention_heads=4", "--set",
             "num_key_value_heads=2", "--set", "head_dim=16"]
    for c in configs:
        for extra in ([], ["--kv-cache"], ["--layer-only"], ["--nvfp4-weights"]):
            gen = [str(build / "bin" / "rlx-gen"), str(c), "--layers", "1", *extra]
            text = run(gen + small) or run(gen)
            if text:
                out.append(text.decode())
    return out


def stages(build: pathlib.Path, hir: str) -> list[str]:
    """`hir` lowered to MIR (both policies), fused, specialized, LIR, planned."""
    opt = str(build / "bin" / "rlx-opt")
    out = []
    mir = run([opt, "-", "--convert-rlx-hir-to-mir=fusion-policy=fusable"], hir)
    direct = run([opt, "-", "--convert-rlx-hir-to-mir"], hir)
    for m in (mir, direct):
        if m:
            out.append(m.decode())
    if mir:
        fused = run([opt, "-", "--rlx-mir-fuse", "--rlx-mir-specialize=dims=seq=4,past_seq=8"], mir)
        if fused:
            out.append(fused.decode())
            lirt = run([opt, "-", "--convert-rlx-mir-to-lir"], fused)
            if lirt:
                out.append(lirt.decode())
                lir = run([opt, "-", "--rlx-lir-bufferize", "--rlx-lir-plan-buffers"], lirt)
                if lir:
                    out.append(lir.decode())
        grad = run([opt, "-", "--rlx-mir-grad"], mir)
        if grad:
            out.append(grad.decode())
    return out


# --------------------------------------------------------------------------
# mlir


def mlir_headers(text: str) -> list[bytes]:
    """The [selector][param] variants for one input (rlx-fuzz-mlir.cpp)."""
    h = int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)
    variants = [(0, 0), (0, 1), (0, 2), (1, 0), (2, 0), (3, 0), (4, 0x24), (4, 0x84),
                (5, 0), (5, 8), (6, 0), (6, 0x4b), (7, 0), (8, 0), (9, 0), (9, 3),
                (10, 0), (10, 3), (11, h % 18), (11, (h >> 8) % 18)]
    return [bytes([s, p]) for s, p in variants]


def seeds_mlir(build: pathlib.Path, corpus: Corpus):
    texts = mlir_chunks()
    models = gen_models(build)
    texts += models
    example = (ROOT / "examples" / "llama-3.2-1b-layer.mlir").read_text()
    for hir in [example] + models[:4]:
        texts += stages(build, hir)
    for t in texts:
        for h in mlir_headers(t):
            corpus.add(h + t.encode())
    # Bytecode of a few modules (the parser reads bytecode too).
    opt = str(build / "bin" / "rlx-opt")
    for t in [example] + stages(build, example):
        bc = run([opt, "-", "-emit-bytecode"], t)
        if bc:
            for h in (b"\x00\x00", b"\x00\x02", b"\x03\x00", b"\x06\x00"):
                corpus.add(h + bc)


# --------------------------------------------------------------------------
# json


RECORDER = r"""#!/bin/sh
# Records what is handed to --import-rlx-json, then runs the real tool.
for a in "$@"; do
  if [ "$a" = "--import-rlx-json" ]; then
    f=$(mktemp "%(dir)s/json.XXXXXXXX")
    cat > "$f"
    exec "%(real)s" "$@" < "$f"
  fi
done
exec "%(real)s" "$@"
"""


def captured_python_json(build: pathlib.Path) -> list[str]:
    """Every JSON module test/python/test_rlx_json.py imports, captured by a
    recording rlx-translate in a shadow build directory."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        shadow = tmp / "build"
        (shadow / "bin").mkdir(parents=True)
        rec = tmp / "rec"
        rec.mkdir()
        for entry in build.iterdir():
            if entry.name != "bin":
                (shadow / entry.name).symlink_to(entry)
        for tool in (build / "bin").iterdir():
            (shadow / "bin" / tool.name).symlink_to(tool)
        (shadow / "bin" / "rlx-translate").unlink()
        script = shadow / "bin" / "rlx-translate"
        script.write_text(RECORDER % {"dir": rec, "real": build / "bin" / "rlx-translate"})
        script.chmod(0o755)
        env = dict(os.environ)
        env["RLX_BUILD_DIR"] = str(shadow)
        env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "--no-header", "-p",
                        "no:cacheprovider", str(ROOT / "test" / "python" / "test_rlx_json.py")],
                       env=env, capture_output=True, timeout=1800)
        for f in sorted(rec.iterdir()):
            out.append(f.read_text(errors="replace"))
    return out


def seeds_json(build: pathlib.Path, corpus: Corpus):
    for f in sorted((ROOT / "test").rglob("*.test")):
        for name, part in split_file_parts(f):
            if name.endswith(".json"):
                corpus.add(part)
    for text in captured_python_json(build):
        corpus.add(text)
    tr = str(build / "bin" / "rlx-translate")
    opt = str(build / "bin" / "rlx-opt")
    example = (ROOT / "examples" / "llama-3.2-1b-layer.mlir").read_text()
    hirs = [example] + gen_models(build)
    hirs += [c for c in mlir_chunks() if "rlx_hir." in c or "rlx_mir." in c]
    for hir in hirs:
        j = run([tr, "--export-rlx-hir-json"], hir)
        if j:
            corpus.add(j)
    for hir in [example] + gen_models(build)[:6]:
        lir = run([opt, "-", "--convert-rlx-hir-to-mir", "--rlx-mir-fuse",
                   "--rlx-mir-specialize=dims=seq=4,past_seq=8", "--convert-rlx-mir-to-lir",
                   "--rlx-lir-bufferize", "--rlx-lir-plan-buffers"], hir)
        if lir:
            j = run([tr, "--export-rlx-lir-json"], lir)
            if j:
                corpus.add(j)


# --------------------------------------------------------------------------
# npy


def seeds_npy(corpus: Corpus):
    import numpy as np
    try:
        import ml_dtypes
    except ImportError:
        ml_dtypes = None

    def save(a, version=None):
        buf = io.BytesIO()
        if version is None:
            np.save(buf, a, allow_pickle=False)
        else:
            np.lib.format.write_array(buf, a, version=version, allow_pickle=False)
        corpus.add(buf.getvalue())

    rng = np.random.default_rng(0)
    shapes = [(), (0,), (1,), (5,), (2, 3), (2, 0, 3), (1, 2, 3), (2, 2, 2, 2)]
    dtypes = [np.float32, np.float64, np.float16, np.int64, np.int32, np.int8, np.uint8, np.bool_]
    if ml_dtypes is not None:
        dtypes += [ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn]
    for dt in dtypes:
        for shp in shapes:
            a = (rng.standard_normal(shp) * 3).astype(dt)
            save(a)
        save(np.zeros((3,), dtype=dt), version=(2, 0))
        save(np.zeros((3,), dtype=dt), version=(3, 0))
    # Values at the edges.
    save(np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, 3.4e38], dtype=np.float32))
    save(np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max], dtype=np.int64))
    # What readNpy must reject with a message.
    save(np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
    save(np.arange(4, dtype=">f4"))
    save(np.arange(4, dtype=np.complex64))
    save(np.arange(4, dtype=np.uint16))
    save(np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))


# --------------------------------------------------------------------------
# safetensors, manifest, gpu-npy, gen-sizes


def _safetensors(tensors: dict, metadata: dict | None = None) -> bytes:
    import numpy as np
    codes = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64",
             np.dtype(np.float16): "F16", np.dtype(np.int64): "I64", np.dtype(np.int32): "I32",
             np.dtype(np.int8): "I8", np.dtype(np.uint8): "U8", np.dtype(np.bool_): "BOOL",
             np.dtype(np.uint16): "BF16"}
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, a in tensors.items():
        raw = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": codes[a.dtype], "shape": list(a.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return len(h).to_bytes(8, "little") + h + data


def seeds_safetensors(corpus: Corpus):
    import numpy as np
    rng = np.random.default_rng(0)
    corpus.add(_safetensors({"w": rng.standard_normal((2, 3)).astype(np.float32)}))
    corpus.add(_safetensors({"model.norm.weight": np.ones(4, np.float32),
                             "model.embed_tokens.weight": np.zeros((8, 4), np.uint16),
                             "ids": np.arange(3, dtype=np.int64)}, {"format": "pt"}))
    for dt in (np.float64, np.float16, np.int32, np.int8, np.uint8, np.bool_):
        corpus.add(_safetensors({"t": np.zeros((3,), dt), "s": np.ones((), dt)}))
    corpus.add(_safetensors({}))
    good = _safetensors({"a": np.ones(2, np.float32)})
    corpus.add(good[:12])                       # truncated header
    corpus.add(good + b"\x00" * 4)              # trailing data
    corpus.add((2**63).to_bytes(8, "little") + good[8:])  # header length beyond the file


def _gguf(tensors: dict, arch: str | None = "llama", meta: dict | None = None) -> bytes:
    """A GGUF file from gguf-py's writer: name -> float array, or (raw
    bytes, ggml type) for quantized blocks."""
    import tempfile

    import gguf
    with tempfile.TemporaryDirectory() as d:
        path = pathlib.Path(d) / "seed.gguf"
        w = gguf.GGUFWriter(str(path), arch) if arch else gguf.GGUFWriter(str(path), "llama")
        for k, v in (meta or {}).items():
            w.add_uint32(k, v)
        for name, t in tensors.items():
            if isinstance(t, tuple):
                w.add_tensor(name, t[0], raw_dtype=t[1])
            else:
                w.add_tensor(name, t)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        return path.read_bytes()


def seeds_gguf(corpus: Corpus):
    import numpy as np
    try:
        from gguf import GGMLQuantizationType as Q
    except ImportError:
        return
    rng = np.random.default_rng(0)
    sizes = {Q.Q4_0: (32, 18), Q.Q8_0: (32, 34), Q.Q4_K: (256, 144), Q.Q5_K: (256, 176),
             Q.Q6_K: (256, 210), Q.MXFP4: (32, 17)}
    meta = {"llama.attention.head_count": 2, "llama.attention.head_count_kv": 1,
            "llama.embedding_length": 256, "llama.block_count": 1,
            "llama.feed_forward_length": 256}
    for q, (block, size) in sizes.items():
        raw = rng.integers(0, 256, (2, (256 // block) * size), dtype=np.uint8)
        corpus.add(_gguf({"blk.0.ffn_down.weight": (raw, q)}, meta=meta))
    corpus.add(_gguf({"token_embd.weight": np.ones((4, 32), np.float32),
                      "blk.0.attn_q.weight": np.ones((8, 32), np.float16),
                      "blk.0.attn_k.weight": np.ones((4, 32), np.float32),
                      "output_norm.weight": np.ones(32, np.float32)}, meta=meta))
    good = _gguf({"blk.0.attn_norm.weight": np.ones(8, np.float32)})
    corpus.add(good[:24])                       # truncated counts
    corpus.add(good[: len(good) - 16])          # data cut short
    corpus.add(good[:4] + (2).to_bytes(4, "little") + good[8:])  # version 2


def seeds_manifest(build: pathlib.Path, corpus: Corpus):
    modules = [
        'func.func @f(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {\n'
        '  %c = rlx_mir.add %a, %b : tensor<4x8xf32>, tensor<8xf32>\n'
        '  return %c : tensor<4x8xf32>\n}\n',
        (ROOT / "examples" / "llama-3.2-1b-layer.mlir").read_text(),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for i, text in enumerate(modules):
            src = pathlib.Path(tmp) / f"m{i}.mlir"
            src.write_text(text)
            out = pathlib.Path(tmp) / f"a{i}"
            run([str(build / "bin" / "rlx-compile"), str(src), "-o", str(out), "--chip",
                 "sm_90a", "--no-cubin", "--no-emulator", "--dims", "seq=4"], timeout=600)
            m = out / "manifest.json"
            if m.exists():
                corpus.add(m.read_bytes())
                doc = json.loads(m.read_text())
                doc["functions"] = doc.get("functions", [])[:1]
                corpus.add(json.dumps(doc))


def seeds_gpu_npy(corpus: Corpus):
    import numpy as np
    dtypes = [np.float32, np.float16, np.float64, np.uint16, np.int64, np.int32, np.int16,
              np.int8, np.uint8, np.bool_, np.uint8, np.uint8, np.uint8]
    for sel, dt in enumerate(dtypes):
        for shape in [(3,), (2, 4), (0,)]:
            buf = io.BytesIO()
            np.save(buf, np.zeros(shape, dt), allow_pickle=False)
            corpus.add(bytes([sel]) + buf.getvalue())


def seeds_gen_sizes(corpus: Corpus):
    import struct
    for opt in (0, 1, 2, 4):
        for sizes in [(64, 2, 4, 2, 16, 128, 256, 128), (2048, 16, 32, 8, 64, 8192, 128256, 131072),
                      (64, 1 << 40, 4, 2, 16, 128, 256, 128), (64, 2, 4, 2, 16, 128, 10**15, 128),
                      (-3, 2, 4, 2, 16, 128, 256, 128), (64, 2, 3, 2, 16, 128, 256, 128)]:
            corpus.add(bytes([opt]) + struct.pack("<8q", *sizes))


# --------------------------------------------------------------------------
# hfconfig


def seeds_hfconfig(corpus: Corpus):
    shared = shared_dir()
    configs = sorted(shared.glob("models/*.json")) if shared else []
    configs += sorted((ROOT / "test" / "Models" / "Inputs").glob("*.json"))
    texts = [c.read_text() for c in configs]
    # The configs the lit tests write inline.
    for f in sorted((ROOT / "test" / "Models").glob("*.test")):
        for name, part in split_file_parts(f):
            if name.endswith(".json"):
                texts.append(part)
    for t in texts:
        for opt in (0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x65, 0xff):
            corpus.add(bytes([opt]) + t.encode())


# --------------------------------------------------------------------------
# Dictionaries


def dict_line(s: str) -> str:
    out = []
    for ch in s.encode():
        if ch in (0x22, 0x5c) or ch < 0x20 or ch > 0x7e:
            out.append("\\x%02x" % ch)
        else:
            out.append(chr(ch))
    return '"' + "".join(out) + '"'


def write_dict(name: str, words, header: str):
    words = sorted(set(w for w in words if w and len(w) <= 64))
    DICTS.mkdir(parents=True, exist_ok=True)
    with open(DICTS / name, "w") as f:
        f.write("# " + header + "\n# Generated by scripts/fuzz-seeds.py --dicts; do not edit.\n")
        for w in words:
            f.write(dict_line(w) + "\n")
    print(f"{DICTS / name}: {len(words)} entries")


def string_literals(paths) -> set[str]:
    out = set()
    for p in paths:
        for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', p.read_text(errors="replace")):
            s = m.group(1)
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", s):
                out.add(s)
    return out


def make_dicts():
    inc = ROOT / "include" / "RLX"
    words = set()
    for td, dialect in (("HIR/IR/HIROps.td", "rlx_hir"), ("MIR/IR/MIROps.td", "rlx_mir"),
                        ("LIR/IR/LIROps.td", "rlx_lir")):
        text = (inc / "Dialect" / td).read_text()
        for m in re.finditer(r'(?:def|defm|class)\s+\w+[^:\n]*:\s*\w+<"([a-z_0-9.]+)"', text):
            words.add(f"{dialect}.{m.group(1)}")
    for td in inc.rglob("*.td"):
        text = td.read_text()
        words.update(re.findall(r"`([a-z_][a-z_0-9]*)`", text))
        words.update(re.findall(r'EnumAttrCase<"\w+",\s*\d+,\s*"(\w+)"', text))
    # Attribute names and MLIR syntax the tests use.
    for f in (ROOT / "test").rglob("*.mlir"):
        text = f.read_text(errors="replace")
        words.update(re.findall(r"\b(rlx(?:_hir|_mir|_lir)?\.[a-z_]+)\b", text))
        words.update(re.findall(r"#rlx\.[a-z_]+", text))
    words.update(["func.func", "return", "tensor<", "memref<", "dense<", "dense_resource<",
                  "xf32>", "xf16>", "xbf16>", "xi64>", "xi8>", "xf8E4M3FN>", "xf4E2M1FN>",
                  "?x", "0x", "-> ", ": ", "%arg0", "%0", "{", "}", "(", ")", "[", "]", "<", ">",
                  "= ", ", ", "loc(", "attributes", "module", "private", "arith.constant",
                  "tensor.empty", "linalg.matmul", "linalg.generic", "tosa.", "memref.view",
                  "heads", "kv_heads", "head_dim", "causal", "eps", "axes", "keep_dims",
                  "transpose_b", "\"rlx.input\"", "\"rlx.param\"", "\"rlx.output\"",
                  "rlx.dim_names", "[\"\", \"seq\", \"\"]", "seq", "past_seq", "-9223372036854775808",
                  "9223372036854775807", "4294967296", "nan", "inf", "0.0", "1.0e-05"])
    write_dict("mlir.dict", words,
               "rlx-fuzz-mlir: RLX op names, assembly keywords, enum values, attribute names")

    jwords = string_literals(sorted((ROOT / "lib" / "Target" / "RLXJSON").glob("*.cpp")))
    jwords = {f'"{w}"' for w in jwords} | jwords
    jwords.update(['{"Static": ', '{"Dynamic": ', '"dims": [', '"dtype": "F32"', "null", "true",
                   "false", "[]", "{}", ": ", ", ", "-1", "0", "1", "4294967296",
                   "9223372036854775807", "-9223372036854775808", "1e308", "0.5"])
    write_dict("json.dict", jwords, "rlx-fuzz-json: keys and variant names of the RLX JSON format")

    hwords = string_literals(sorted((ROOT / "lib" / "ModelGen").glob("*.cpp")))
    hwords = {f'"{w}"' for w in hwords} | hwords
    hwords.update(["null", "true", "false", "[]", "{}", ": ", ", ", "-1", "0", "1", "1e-05",
                   "4294967296", "9223372036854775807", "1e308", "0.5", '"architectures": [',
                   '"rope_scaling": {', '"rope_type": "llama3"', '"layer_types": ['])
    write_dict("hfconfig.dict", hwords,
               "rlx-fuzz-hfconfig: Hugging Face config.json keys and values parseHFConfig reads")

    nwords = ["\x93NUMPY", "\x01\x00", "\x02\x00", "\x03\x00", "{'descr': ", "'descr'",
              "'fortran_order': ", "False", "True", "'shape': ", "(", ")", ", ", ",)", "}",
              "'<f4'", "'<f8'", "'<f2'", "'<i8'", "'<i4'", "'|i1'", "'|b1'", "'|u1'", "'|V2'",
              "'|V1'", "'>f4'", "'=f4'", "'<u2'", "'<c8'", "'|O'", "[('a', '<f4')]", "\n",
              "0", "1", "-1", "4294967296", "9223372036854775807", "18446744073709551615"]
    write_dict("npy.dict", nwords, "rlx-fuzz-npy: .npy magic and header syntax")
    write_dict("gpu-npy.dict", nwords, "rlx-fuzz-gpu-npy: .npy magic and header syntax")

    swords = ['"dtype"', '"shape"', '"data_offsets"', '"__metadata__"', '"format"', '"pt"',
              '"F64"', '"F32"', '"F16"', '"BF16"', '"I64"', '"I32"', '"I8"', '"U8"', '"BOOL"',
              '"F8_E4M3"', '"I16"', "{", "}", "[", "]", ": ", ", ", "0", "1", "-1",
              "4294967296", "18446744073709551615", "\x00\x00\x00\x00\x00\x00\x00"]
    write_dict("safetensors.dict", swords,
               "rlx-fuzz-safetensors: safetensors header keys and dtypes")

    gwords = ["GGUF", "\x03\x00\x00\x00", "general.architecture", "general.alignment", "llama",
              "qwen2", "qwen3", "token_embd.weight", "output.weight", "output_norm.weight",
              "blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.ffn_down.weight",
              "llama.attention.head_count", "llama.attention.head_count_kv",
              "llama.embedding_length", "llama.rope.scaling.type", "rope_freqs.weight",
              "\x0c\x00\x00\x00", "\x0e\x00\x00\x00", "\x27\x00\x00\x00",
              "\x09\x00\x00\x00"]
    write_dict("gguf.dict", gwords, "rlx-fuzz-gguf: GGUF magic, keys, names and type ids")

    mwords = string_literals([ROOT / "lib" / "Runtime" / "GPU" / "Manifest.cpp"])
    mwords = {f'"{w}"' for w in mwords} | mwords
    mwords.update(["null", "true", "false", "[]", "{}", ": ", ", ", "-1", "0", "1",
                   "4294967296", "281474976710656", "18446744073709551615", '"f32"', '"bf16"',
                   '"f4E2M1FN"', '"input"', '"param"', '"output"', '{"buffer": 0}',
                   '{"constant": "c"}'])
    write_dict("manifest.dict", mwords, "rlx-fuzz-manifest: GPU manifest.json keys and values")

    gwords = ["\x00" * 8, "\x01" + "\x00" * 7, "\x00\x10" + "\x00" * 6, "\x7f" * 8,
              "\x00" * 7 + "\x40"]
    write_dict("gen-sizes.dict", gwords, "rlx-fuzz-gen-sizes: int64 sizes at the edges")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(ROOT / "build-fuzz"))
    ap.add_argument("--out")
    ap.add_argument("--targets",
                    default="mlir,json,npy,hfconfig,safetensors,gguf,manifest,gpu-npy,gen-sizes")
    ap.add_argument("--dicts", action="store_true")
    args = ap.parse_args()
    if args.dicts:
        make_dicts()
        if not args.out:
            return 0
    if not args.out:
        ap.error("--out is required")
    build = pathlib.Path(args.build).resolve()
    out = pathlib.Path(args.out)
    for t in args.targets.split(","):
        corpus = Corpus(out / t)
        {"mlir": lambda: seeds_mlir(build, corpus), "json": lambda: seeds_json(build, corpus),
         "npy": lambda: seeds_npy(corpus), "hfconfig": lambda: seeds_hfconfig(corpus),
         "safetensors": lambda: seeds_safetensors(corpus),
         "gguf": lambda: seeds_gguf(corpus),
         "manifest": lambda: seeds_manifest(build, corpus),
         "gpu-npy": lambda: seeds_gpu_npy(corpus),
         "gen-sizes": lambda: seeds_gen_sizes(corpus)}[t]()
        total = len(list(corpus.out.iterdir()))
        print(f"{t}: {total} seeds in {corpus.out} ({corpus.count} new)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
