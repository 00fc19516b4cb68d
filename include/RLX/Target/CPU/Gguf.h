//===- Gguf.h - llama.cpp's GGUF checkpoints --------------------*- C++ -*-===//
//
// A GGUF file (v2/v3, https://github.com/ggml-org/ggml/blob/master/docs/gguf.md):
// "GGUF", a version, the tensor and metadata counts, the metadata (typed
// key/value pairs), the tensor infos (name, dims with ne[0] fastest, ggml
// type, offset into the data), then the data at `general.alignment`
// (default 32). Tensors are F32, F16, BF16 or ggml's quantized blocks; RLX
// reads Q4_0, Q8_0, Q4_K, Q5_K, Q6_K and MXFP4 and dequantizes them to f32
// at load as ggml's dequantize_row_* define them, equal to gguf-py's
// gguf.quants bit for bit (ggml's C may differ in the last bit where its
// compiler fuses a multiply-add).
//
// The llama-family tensors map to their transformers names (token_embd ->
// model.embed_tokens, blk.N.attn_q -> model.layers.N.self_attn.q_proj, ...)
// and the metadata to an HF config.json, so a GGUF file is one more
// checkpoint format for rlx-gen and rlx-run --weights. llama.cpp's converter
// permutes the rows of Llama's q/k projections (rotate-half pairs stored
// interleaved); the reader undoes that, so the model is transformers' own.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_CPU_GGUF_H
#define RLX_TARGET_CPU_GGUF_H

#include "RLX/Target/CPU/Safetensors.h"

#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace mlir::rlx {

/// One tensor info of a GGUF file: shape in numpy order (ne reversed), the
/// ggml type, and where its bytes lie in the file.
struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  uint32_t type = 0;
  uint64_t offset = 0, bytes = 0; ///< Absolute offset in the file.
};

struct GgufFile {
  std::string path;
  uint32_t version = 0;
  /// The metadata: integers, floats, bools, strings and arrays of them as
  /// JSON values (arrays of strings with more than 64 elements are kept as
  /// their length only, e.g. the tokenizer's vocabulary).
  llvm::json::Object metadata;
  std::vector<GgufTensorInfo> tensors;
};

/// Reads a GGUF file's header (metadata and tensor infos; no tensor data).
/// A wrong magic or version, a truncated header, an unknown metadata or
/// tensor type, a size that overflows or a tensor outside the file or off
/// the alignment is an error naming the file (and the key or tensor).
FailureOr<GgufFile> readGgufHeader(StringRef path, std::string &error);

/// The name of ggml type `type` ("q4_K", ...), "" when unknown.
StringRef ggmlTypeName(uint32_t type);
/// Elements and bytes per block of a type RLX reads ({0, 0} otherwise).
std::pair<int64_t, int64_t> ggmlBlock(uint32_t type);

/// Dequantizes `n` elements of ggml type `type` from `raw` into `out`
/// (ggml's dequantize_row_*; equal to gguf.quants.dequantize bit for bit).
/// Types: F32, F16, BF16, Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, MXFP4.
LogicalResult dequantizeGgml(uint32_t type, ArrayRef<uint8_t> raw, int64_t n, float *out,
                             std::string &error);

/// The file's tensors under their transformers names, each to be read as
/// f32 (readCheckpointTensor dequantizes and un-permutes). Errors name a
/// tensor the llama-family mapping does not know or a type RLX cannot read.
FailureOr<CheckpointIndex> indexGguf(StringRef path, std::string &error);

/// An HF config.json (as text) for the GGUF file's model: architecture
/// (llama, mistral's llama, qwen2, qwen3), sizes, heads, RoPE base and
/// scaling, eps, vocabulary (the embedding's rows), tied LM head (no
/// output.weight).
FailureOr<std::string> ggufConfigJson(const GgufFile &file, std::string &error);

/// readCheckpointTensor's reading of a GGUF tensor: the f32 bytes
/// [from, from + dst.size()) of the dequantized (and un-permuted) tensor,
/// reading and dequantizing only the rows that hold them.
LogicalResult readGgufRange(StringRef name, const CheckpointTensor &t, uint64_t from,
                            MutableArrayRef<uint8_t> dst, std::string &error);

} // namespace mlir::rlx

#endif // RLX_TARGET_CPU_GGUF_H
