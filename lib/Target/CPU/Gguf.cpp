//===- Gguf.cpp - llama.cpp's GGUF checkpoints -----------------------------===//

#include "RLX/Target/CPU/Gguf.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstring>
#include <set>

using namespace mlir;
using namespace mlir::rlx;

namespace {

/// A bounds-checked little-endian cursor over the header.
struct Cursor {
  const uint8_t *data;
  uint64_t size, pos = 0;
  std::string why;

  bool need(uint64_t n) {
    if (n > size - pos) {
      why = "the header ends early (at byte " + std::to_string(pos) + ")";
      return false;
    }
    return true;
  }
  template <typename T> bool read(T &v) {
    if (!need(sizeof(T)))
      return false;
    std::memcpy(&v, data + pos, sizeof(T));
    pos += sizeof(T);
    return true;
  }
  bool string(std::string &s) {
    uint64_t n;
    if (!read(n) || !need(n))
      return false;
    s.assign(reinterpret_cast<const char *>(data + pos), n);
    pos += n;
    return true;
  }
};

enum ValueType : uint32_t {
  U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64
};

/// One metadata value of `type` as JSON (arrays of strings longer than 64
/// as their length).
bool readValue(Cursor &c, uint32_t type, llvm::json::Value &out, int depth = 0) {
  auto integer = [&](auto v) {
    if (!c.read(v))
      return false;
    out = static_cast<int64_t>(v);
    return true;
  };
  switch (type) {
  case U8: return integer(uint8_t());
  case I8: return integer(int8_t());
  case U16: return integer(uint16_t());
  case I16: return integer(int16_t());
  case U32: return integer(uint32_t());
  case I32: return integer(int32_t());
  case I64: return integer(int64_t());
  case U64: {
    uint64_t v;
    if (!c.read(v))
      return false;
    if (v > static_cast<uint64_t>(INT64_MAX)) {
      c.why = "a uint64 value above 2^63 - 1";
      return false;
    }
    out = static_cast<int64_t>(v);
    return true;
  }
  case F32: {
    float v;
    if (!c.read(v))
      return false;
    out = static_cast<double>(v);
    return true;
  }
  case F64: {
    double v;
    if (!c.read(v))
      return false;
    out = v;
    return true;
  }
  case BOOL: {
    uint8_t v;
    if (!c.read(v))
      return false;
    out = v != 0;
    return true;
  }
  case STRING: {
    std::string s;
    if (!c.string(s))
      return false;
    out = llvm::json::fixUTF8(s);
    return true;
  }
  case ARRAY: {
    uint32_t elem;
    uint64_t n;
    if (!c.read(elem) || !c.read(n))
      return false;
    if (depth > 0 || elem == ARRAY) {
      c.why = "nested arrays are not supported";
      return false;
    }
    // Every element takes at least one byte: a count past the header is
    // malformed (and never allocated).
    if (!c.need(n))
      return false;
    llvm::json::Array a;
    // RLX reads no array: long ones (a vocabulary, merges, scores) are kept
    // as their length, so a large one costs no memory per element.
    bool keep = n <= (elem == STRING ? 64u : 1024u);
    for (uint64_t i = 0; i < n; ++i) {
      llvm::json::Value v = nullptr;
      if (!readValue(c, elem, v, depth + 1))
        return false;
      if (keep)
        a.push_back(std::move(v));
    }
    out = keep ? llvm::json::Value(std::move(a)) : llvm::json::Value(static_cast<int64_t>(n));
    return true;
  }
  default:
    c.why = "unknown metadata value type " + std::to_string(type);
    return false;
  }
}

} // namespace

FailureOr<GgufFile> mlir::rlx::readGgufHeader(StringRef path, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = (path + ": cannot read (" + buffer.getError().message() + ")").str();
    return failure();
  }
  auto fail = [&](const Twine &why) {
    error = (path + ": " + why).str();
    return failure();
  };
  const llvm::MemoryBuffer &mb = **buffer;
  Cursor c{reinterpret_cast<const uint8_t *>(mb.getBufferStart()), mb.getBufferSize()};
  GgufFile f;
  f.path = path.str();
  char magic[4];
  if (!c.read(magic) || std::memcmp(magic, "GGUF", 4) != 0)
    return fail("not a GGUF file (no \"GGUF\" magic)");
  uint64_t tensorCount, kvCount;
  if (!c.read(f.version) || (f.version != 2 && f.version != 3))
    return fail("GGUF version " + Twine(f.version) + " (RLX reads versions 2 and 3)");
  if (!c.read(tensorCount) || !c.read(kvCount))
    return fail(c.why);
  // Each entry takes more than 8 bytes: larger counts are malformed.
  if (tensorCount > c.size / 8 || kvCount > c.size / 8)
    return fail("tensor or metadata count larger than the file");
  for (uint64_t i = 0; i < kvCount; ++i) {
    std::string key;
    uint32_t type;
    llvm::json::Value v = nullptr;
    if (!c.string(key) || !c.read(type))
      return fail("metadata entry " + Twine(i) + ": " + c.why);
    if (!llvm::json::isUTF8(key))
      return fail("metadata entry " + Twine(i) + ": its key '" + llvm::json::fixUTF8(key) +
                  "' is not UTF-8");
    if (!readValue(c, type, v))
      return fail("metadata '" + key + "': " + c.why);
    if (f.metadata.find(key) != f.metadata.end())
      return fail("metadata '" + key + "' given twice");
    f.metadata[key] = std::move(v);
  }
  uint64_t alignment = 32;
  if (const llvm::json::Value *a = f.metadata.get("general.alignment")) {
    std::optional<int64_t> v = a->getAsInteger();
    if (!v || *v < 1 || *v > (1 << 20) || (*v & (*v - 1)))
      return fail("general.alignment must be a power of two up to 2^20");
    alignment = *v;
  }
  std::set<std::string> names;
  uint64_t expected = 0;
  for (uint64_t i = 0; i < tensorCount; ++i) {
    GgufTensorInfo t;
    uint32_t dims;
    if (!c.string(t.name) || !c.read(dims))
      return fail("tensor info " + Twine(i) + ": " + c.why);
    if (!llvm::json::isUTF8(t.name))
      return fail("tensor info " + Twine(i) + ": its name '" + llvm::json::fixUTF8(t.name) +
                  "' is not UTF-8");
    auto tfail = [&](const Twine &why) { return fail("tensor '" + t.name + "': " + why); };
    if (dims < 1 || dims > 4)
      return tfail(Twine(dims) + " dims (GGUF tensors have 1 to 4)");
    std::vector<int64_t> ne(dims);
    uint64_t count = 1;
    for (uint32_t d = 0; d < dims; ++d) {
      uint64_t n;
      if (!c.read(n))
        return tfail(c.why);
      if (n == 0 || n > (1ull << 40) || count > (1ull << 48) / n)
        return tfail("dim " + Twine(n) + " is zero or too large");
      ne[d] = static_cast<int64_t>(n);
      count *= n;
    }
    t.shape.assign(ne.rbegin(), ne.rend());
    uint64_t rel;
    if (!c.read(t.type) || !c.read(rel))
      return tfail(c.why);
    auto [block, size] = ggmlBlock(t.type);
    if (!block)
      return tfail("ggml type " + Twine(t.type) +
                   " (RLX reads f32, f16, bf16, q4_0, q8_0, q4_K, q5_K, q6_K and mxfp4)");
    if (ne[0] % block)
      return tfail("rows of " + Twine(ne[0]) + " elements are not whole " +
                   ggmlTypeName(t.type) + " blocks of " + Twine(block));
    t.bytes = count / block * size;
    // As llama.cpp's reader: each tensor starts where the one before ends,
    // padded to the alignment (so tensors never share bytes, and the f32
    // they are read as is bounded by the file's size).
    if (rel != expected)
      return tfail("offset " + Twine(rel) + ", expected " + Twine(expected) +
                   " (tensors follow each other, each padded to the alignment " +
                   Twine(alignment) + ")");
    expected += (t.bytes + alignment - 1) / alignment * alignment;
    t.offset = rel;
    if (!names.insert(t.name).second)
      return tfail("given twice");
    f.tensors.push_back(std::move(t));
  }
  uint64_t data = (c.pos + alignment - 1) / alignment * alignment;
  for (GgufTensorInfo &t : f.tensors) {
    if (t.offset > c.size || data > c.size - t.offset || t.bytes > c.size - data - t.offset)
      return fail("tensor '" + t.name + "': its " + Twine(t.bytes) + " bytes at offset " +
                  Twine(t.offset) + " lie outside the file");
    t.offset += data;
  }
  return f;
}

//===----------------------------------------------------------------------===//
// The llama family's names and config
//===----------------------------------------------------------------------===//

/// general.architecture values RLX maps, with their transformers classes.
static std::optional<std::pair<StringRef, StringRef>> hfArchitecture(StringRef arch) {
  if (arch == "llama")
    return std::pair{StringRef("LlamaForCausalLM"), StringRef("llama")};
  if (arch == "qwen2")
    return std::pair{StringRef("Qwen2ForCausalLM"), StringRef("qwen2")};
  if (arch == "qwen3")
    return std::pair{StringRef("Qwen3ForCausalLM"), StringRef("qwen3")};
  return std::nullopt;
}

static FailureOr<StringRef> architecture(const GgufFile &f, std::string &error) {
  std::optional<StringRef> arch = f.metadata.getString("general.architecture");
  if (!arch || !hfArchitecture(*arch)) {
    error = f.path + ": general.architecture " +
            (arch ? "'" + arch->str() + "'" : std::string("missing")) +
            " (RLX maps llama, qwen2 and qwen3)";
    return failure();
  }
  return *arch;
}

/// The transformers name of a GGUF tensor ("" when it has none).
static std::string hfName(StringRef name) {
  static const std::pair<StringRef, StringRef> global[] = {
      {"token_embd.weight", "model.embed_tokens.weight"},
      {"output_norm.weight", "model.norm.weight"},
      {"output.weight", "lm_head.weight"}};
  for (auto [g, h] : global)
    if (name == g)
      return h.str();
  static const std::pair<StringRef, StringRef> layer[] = {
      {"attn_norm", "input_layernorm"},      {"attn_q", "self_attn.q_proj"},
      {"attn_k", "self_attn.k_proj"},        {"attn_v", "self_attn.v_proj"},
      {"attn_output", "self_attn.o_proj"},   {"attn_q_norm", "self_attn.q_norm"},
      {"attn_k_norm", "self_attn.k_norm"},   {"ffn_norm", "post_attention_layernorm"},
      {"ffn_gate", "mlp.gate_proj"},         {"ffn_up", "mlp.up_proj"},
      {"ffn_down", "mlp.down_proj"}};
  if (!name.consume_front("blk."))
    return "";
  auto [index, rest] = name.split('.');
  unsigned n;
  if (index.getAsInteger(10, n) || std::to_string(n) != index)
    return "";
  auto [module, kind] = rest.rsplit('.');
  if (kind != "weight" && kind != "bias")
    return "";
  for (auto [g, h] : layer)
    if (module == g)
      return ("model.layers." + Twine(n) + "." + h + "." + kind).str();
  return "";
}

static std::optional<int64_t> metaInt(const GgufFile &f, StringRef arch, StringRef key) {
  return f.metadata.getInteger((arch + "." + key).str());
}

FailureOr<CheckpointIndex> mlir::rlx::indexGguf(StringRef path, std::string &error) {
  auto f = readGgufHeader(path, error);
  if (failed(f))
    return failure();
  auto arch = architecture(*f, error);
  if (failed(arch))
    return failure();
  std::optional<int64_t> heads = metaInt(*f, *arch, "attention.head_count");
  int64_t kvHeads = metaInt(*f, *arch, "attention.head_count_kv").value_or(heads.value_or(0));
  CheckpointIndex out;
  for (const GgufTensorInfo &t : f->tensors) {
    if (t.name == "rope_freqs.weight") {
      error = path.str() + ": tensor 'rope_freqs.weight': RoPE frequency factors (llama3 "
                           "scaling as llama.cpp stores it) are not supported";
      return failure();
    }
    std::string name = hfName(t.name);
    if (name.empty()) {
      error = path.str() + ": tensor '" + t.name + "' has no transformers name in the " +
              arch->str() + " mapping";
      return failure();
    }
    CheckpointTensor c;
    c.file = path.str();
    c.dtype = "f32";
    c.shape = t.shape;
    c.offset = t.offset;
    c.storedBytes = t.bytes;
    c.ggmlType = t.type;
    int64_t count = 1;
    for (int64_t d : t.shape)
      count *= d;
    c.bytes = count * 4;
    // convert_hf_to_gguf.py's LlamaModel permutes q/k rows per head.
    bool q = StringRef(t.name).ends_with(".attn_q.weight") ||
             StringRef(t.name).ends_with(".attn_q.bias");
    bool k = StringRef(t.name).ends_with(".attn_k.weight") ||
             StringRef(t.name).ends_with(".attn_k.bias");
    if (*arch == "llama" && (q || k)) {
      if (t.shape.size() == 1 && ggmlBlock(t.type).first > 1) {
        error = path.str() + ": tensor '" + t.name + "': a " + ggmlTypeName(t.type).str() +
                " bias cannot have its q/k rows permuted (its blocks span several rows)";
        return failure();
      }
      c.permuteHeads = q ? heads.value_or(0) : kvHeads;
      if (c.permuteHeads < 1 || c.permuteHeads > t.shape[0] / 2 || t.shape[0] % 2 ||
          (t.shape[0] / 2) % c.permuteHeads) {
        error = path.str() + ": tensor '" + t.name + "': " + Twine(t.shape[0]).str() +
                " rows are not head_count pairs of halves (llama.attention.head_count" +
                (q ? "" : "_kv") + " = " + std::to_string(c.permuteHeads) + ")";
        return failure();
      }
    }
    if (!out.emplace(name, std::move(c)).second) {
      error = path.str() + ": tensor '" + t.name + "' maps to '" + name +
              "', which another tensor maps to too";
      return failure();
    }
  }
  return out;
}

LogicalResult mlir::rlx::readGgufRange(StringRef name, const CheckpointTensor &t,
                                       uint64_t from, MutableArrayRef<uint8_t> dst,
                                       std::string &error) {
  auto fail = [&](const Twine &why) {
    error = (t.file + ": tensor '" + name + "': " + why).str();
    return failure();
  };
  if (dst.empty())
    return success();
  // Rows are independent (whole blocks): only the rows that hold
  // [from, from + dst.size()) are read (pread) and dequantized. A 1-D
  // tensor of a block type (a quantized norm weight) is one row: its
  // blocks run along its only dim.
  bool oneBlockRow = t.shape.size() == 1 && ggmlBlock(t.ggmlType).first > 1;
  int64_t rows = t.shape.empty() || oneBlockRow ? 1 : t.shape[0];
  int64_t count = static_cast<int64_t>(t.bytes / 4);
  int64_t cols = count / rows;
  uint64_t rowF32 = 4 * cols, rowStored = t.storedBytes / rows;
  int64_t r0 = from / rowF32, r1 = (from + dst.size() + rowF32 - 1) / rowF32;
  int64_t hd = t.permuteHeads ? rows / t.permuteHeads : 0;
  // Transformers' row r as stored: h·hd + p·hd/2 + i is at h·hd + 2i + p.
  auto stored = [&](int64_t r) {
    if (!hd)
      return r;
    int64_t h = r / hd, j = r % hd, p = j / (hd / 2), i = j % (hd / 2);
    return h * hd + 2 * i + p;
  };
  llvm::Expected<llvm::sys::fs::file_t> fd = llvm::sys::fs::openNativeFileForRead(t.file);
  if (!fd)
    return fail("cannot read (" + llvm::toString(fd.takeError()) + ")");
  auto closeFd = llvm::make_scope_exit([&] { llvm::sys::fs::closeFile(*fd); });
  // Consecutive stored rows are read together (all of them without a
  // permutation), in bounded chunks.
  int64_t chunkRows = std::max<int64_t>(1, (4 << 20) / std::max<uint64_t>(1, rowStored));
  std::vector<uint8_t> raw;
  std::vector<float> values;
  for (int64_t r = r0; r < r1;) {
    int64_t n = 1;
    while (r + n < r1 && n < chunkRows && stored(r + n) == stored(r) + n)
      ++n;
    raw.resize(n * rowStored);
    MutableArrayRef<char> buf(reinterpret_cast<char *>(raw.data()), raw.size());
    uint64_t at = t.offset + stored(r) * rowStored;
    while (!buf.empty()) {
      llvm::Expected<size_t> got = llvm::sys::fs::readNativeFileSlice(*fd, buf, at);
      if (!got)
        return fail("cannot read its data (" + llvm::toString(got.takeError()) + ")");
      if (*got == 0)
        return fail("cannot read its data (the file ends early)");
      buf = buf.drop_front(*got);
      at += *got;
    }
    values.resize(n * cols);
    std::string why;
    if (failed(dequantizeGgml(t.ggmlType, raw, n * cols, values.data(), why)))
      return fail(why);
    // The part of these rows inside the range.
    uint64_t lo = std::max<uint64_t>(from, r * rowF32);
    uint64_t hi = std::min<uint64_t>(from + dst.size(), (r + n) * rowF32);
    std::memcpy(dst.data() + (lo - from),
                reinterpret_cast<const uint8_t *>(values.data()) + (lo - r * rowF32), hi - lo);
    r += n;
  }
  return success();
}

FailureOr<std::string> mlir::rlx::ggufConfigJson(const GgufFile &f, std::string &error) {
  auto arch = architecture(f, error);
  if (failed(arch))
    return failure();
  auto [cls, modelType] = *hfArchitecture(*arch);
  auto key = [&](StringRef k) { return arch->str() + "." + k.str(); };
  auto fail = [&](const Twine &why) {
    error = (f.path + ": " + why).str();
    return failure();
  };
  // A present key of the wrong kind (llama.cpp's per-layer arrays, for one)
  // is an error, never the default.
  std::string bad;
  auto integer = [&](StringRef k) -> std::optional<int64_t> {
    const llvm::json::Value *v = f.metadata.get(key(k));
    if (!v)
      return std::nullopt;
    if (!v->getAsInteger() || *v->getAsInteger() < 1) {
      bad = key(k);
      return std::nullopt;
    }
    return v->getAsInteger();
  };
  auto number = [&](StringRef k) -> std::optional<double> {
    const llvm::json::Value *v = f.metadata.get(key(k));
    if (!v)
      return std::nullopt;
    if (!v->getAsNumber() || !std::isfinite(*v->getAsNumber())) {
      bad = key(k);
      return std::nullopt;
    }
    return v->getAsNumber();
  };
  auto hidden = integer("embedding_length"), layers = integer("block_count"),
       ffn = integer("feed_forward_length"), heads = integer("attention.head_count");
  auto kvHeads = integer("attention.head_count_kv"), keyLength = integer("attention.key_length");
  auto valueLength = integer("attention.value_length"), ropeDims = integer("rope.dimension_count");
  auto context = integer("context_length"), experts = integer("expert_count");
  auto eps = number("attention.layer_norm_rms_epsilon"), theta = number("rope.freq_base");
  auto factor = number("rope.scaling.factor"), legacy = number("rope.scale_linear");
  auto attnFactor = number("rope.scaling.attn_factor");
  if (!bad.empty())
    return fail("metadata '" + bad + "' is not a positive (finite) number, or is per layer");
  for (auto [v, k] : {std::pair{hidden, "embedding_length"}, std::pair{layers, "block_count"},
                      std::pair{ffn, "feed_forward_length"},
                      std::pair{heads, "attention.head_count"}})
    if (!v)
      return fail("metadata '" + key(k) + "' is missing");
  if (!eps)
    return fail("metadata '" + key("attention.layer_norm_rms_epsilon") + "' is missing");
  // What would change the model without RLX building it.
  if (experts && *experts > 0)
    return fail(key("expert_count") + " = " + Twine(*experts) +
                ": mixture-of-experts GGUF files are not mapped");
  if (auto split = f.metadata.getInteger("split.count"); split && *split > 1)
    return fail("a shard of a split GGUF (split.count = " + Twine(*split) +
                "); merge it first (llama-gguf-split --merge)");
  int64_t headDim = keyLength.value_or(*hidden / *heads);
  if (valueLength && *valueLength != headDim)
    return fail(key("attention.value_length") + " differs from the key length");
  if (ropeDims && *ropeDims != headDim)
    return fail(key("rope.dimension_count") + " = " + Twine(*ropeDims) +
                ": partial rotary embeddings are not mapped (head_dim " + Twine(headDim) + ")");
  if (attnFactor && *attnFactor != 1.0)
    return fail(key("rope.scaling.attn_factor") + " is not mapped");
  const GgufTensorInfo *embed = nullptr;
  bool hasOutput = false;
  for (const GgufTensorInfo &t : f.tensors) {
    if (t.name == "token_embd.weight")
      embed = &t;
    hasOutput |= t.name == "output.weight";
  }
  if (!embed || embed->shape.size() != 2)
    return fail("no 2-D token_embd.weight (the vocabulary size comes from it)");
  llvm::json::Object c{
      {"architectures", llvm::json::Array{cls}},
      {"model_type", modelType},
      {"hidden_size", *hidden},
      {"num_hidden_layers", *layers},
      {"intermediate_size", *ffn},
      {"num_attention_heads", *heads},
      {"num_key_value_heads", kvHeads.value_or(*heads)},
      {"head_dim", headDim},
      {"vocab_size", embed->shape[0]},
      {"max_position_embeddings", context.value_or(4096)},
      {"hidden_act", "silu"},
      {"tie_word_embeddings", !hasOutput},
      {"rms_norm_eps", *eps},
      {"rope_theta", theta.value_or(10000.0)},
  };
  // RoPE scaling as llama.cpp resolves it: the type defaults to linear, the
  // factor comes from rope.scaling.factor or the older rope.scale_linear,
  // and a factor of 0 (or 1) is no scaling.
  std::optional<StringRef> type = f.metadata.getString(key("rope.scaling.type"));
  std::optional<double> scale = factor ? factor : legacy;
  if (scale && *scale < 0)
    return fail("a negative RoPE scaling factor");
  if (type && *type != "none" && *type != "linear")
    return fail("RoPE scaling '" + *type + "' is not mapped (RLX maps linear)");
  if ((!type || *type == "linear") && scale && *scale != 0.0 && *scale != 1.0)
    c["rope_scaling"] = llvm::json::Object{{"rope_type", "linear"}, {"factor", *scale}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(c));
  return text;
}
