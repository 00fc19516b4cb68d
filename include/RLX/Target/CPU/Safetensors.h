//===- Safetensors.h - Checkpoints in the safetensors format ----*- C++ -*-===//
//
// Hugging Face checkpoints (`save_pretrained`): a `.safetensors` file is an
// 8-byte little-endian header length, a JSON header mapping each tensor name
// to {dtype, shape, data_offsets} (offsets into the data that follows) and an
// optional "__metadata__" entry, then the raw row-major data. Sharded
// checkpoints add `model.safetensors.index.json`, whose "weight_map" names the
// shard of every tensor. Format: https://github.com/huggingface/safetensors.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_CPU_SAFETENSORS_H
#define RLX_TARGET_CPU_SAFETENSORS_H

#include "RLX/Target/CPU/HostTensor.h"

#include <map>
#include <set>

namespace mlir::rlx {

/// Where one tensor of a checkpoint lies: its file, the byte offset of its
/// data there and its size, dtype (RLX's name) and shape.
struct CheckpointTensor {
  std::string file, dtype;
  std::vector<int64_t> shape;
  uint64_t offset = 0, bytes = 0;
  /// A GGUF tensor (Gguf.h): its ggml type and stored size; read as f32
  /// (`dtype`, `bytes`) by dequantizing, with the rows of `permuteHeads`
  /// heads un-permuted (Llama's q/k as llama.cpp stores them; 0: none).
  int64_t ggmlType = -1;
  uint64_t storedBytes = 0;
  int64_t permuteHeads = 0;
};
using CheckpointIndex = std::map<std::string, CheckpointTensor>;

/// The tensors of the checkpoint at `path` (as readSafetensors below) from
/// the headers alone: no tensor's data is read, and every check but the
/// reads' is made here. A `.gguf` file is indexed by indexGguf (Gguf.h):
/// its tensors under their transformers names, read as f32.
FailureOr<CheckpointIndex> indexSafetensors(StringRef path, std::string &error);

/// Reads `dst.size()` bytes of tensor `name`'s data (the checkpoint's
/// dtype), from its byte `from` on, straight into `dst`; a range past the
/// tensor or a short file is an error naming the tensor.
LogicalResult readCheckpointTensor(StringRef name, const CheckpointTensor &t,
                                   MutableArrayRef<uint8_t> dst, std::string &error,
                                   uint64_t from = 0);
/// The tensor as a HostTensor of the checkpoint's dtype.
FailureOr<HostTensor> loadCheckpointTensor(StringRef name, const CheckpointTensor &t,
                                           std::string &error);

/// Every tensor of the checkpoint at `path`: a `.safetensors` file; a
/// directory with `model.safetensors.index.json` (its weight_map's shards,
/// each tensor where the index says it is); or a directory of `.safetensors`
/// files. dtypes F64, F32, F16, BF16, I64, I32, I8, U8 (as i8: NVFP4 codes),
/// BOOL (i1) and F8_E4M3 (f8e4m3fn). A malformed header, an offset outside
/// the file, a size that does not match the shape, an unknown dtype or a name
/// in two files is an error naming the file and the tensor.
FailureOr<std::map<std::string, HostTensor>> readSafetensors(StringRef path,
                                                             std::string &error);

/// Binds a checkpoint's tensors to a model's parameters by name. `params`
/// gives each parameter's name, dtype and shape; every parameter must be in
/// the checkpoint with that shape, and every tensor of the checkpoint must be
/// a parameter (errors name them). Floats are converted to the parameter's
/// float dtype (bf16/f16 widen exactly to f32; narrowing rounds to nearest
/// even); other dtypes must match. Everything is checked before any data is
/// read; then each tensor is read once, into `values` or, for a parameter
/// with `into`, straight to that address (its bytes in the parameter's
/// dtype: a slice of a packed tensor the caller lays out). With
/// `intoStride`, a 2-D parameter [n, k] goes there transposed: element
/// (j, c) to into[c * intoStride + j] (in elements; columns of a [K, N]
/// tensor).
struct ParamSpec {
  std::string name, dtype;
  std::vector<int64_t> shape;
  uint8_t *into = nullptr;
  int64_t intoStride = 0;
};
LogicalResult bindCheckpoint(const CheckpointIndex &checkpoint,
                             ArrayRef<ParamSpec> params,
                             std::map<std::string, HostTensor> &values, std::string &error);

/// A packed parameter that is its 2-D sources laid end to end: merged q|k|v
/// or gate|up, a concat along dim 0 of parameters nothing but that concat
/// reads; with `transposed`, that concat's (or one parameter's) transpose,
/// the [K, N] form of kn-weights. Its pack function computes only such
/// tensors. A loader may read the sources straight into their rows (or,
/// transposed, columns) in this order and give the result to
/// CpuModel::setPacked instead of passing the sources: the weights are then
/// never held twice, not even while packing.
struct PackedConcat {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::vector<std::string> sources;
  bool transposed = false;
};

/// Lays out the `concats` whose sources are all among `params` (in the
/// packed tensor's dtype, sizes adding up, not placed already): allocates
/// each packed tensor into `packed` by name and points its sources'
/// ParamSpec::into (with intoStride when transposed) at their rows or
/// columns there, so bindCheckpoint reads them straight into place. Returns
/// the names of the sources so placed (they get no entry of their own).
std::set<std::string> placeConcats(ArrayRef<PackedConcat> concats,
                                   std::vector<ParamSpec> &params,
                                   std::map<std::string, HostTensor> &packed);

} // namespace mlir::rlx

#endif // RLX_TARGET_CPU_SAFETENSORS_H
