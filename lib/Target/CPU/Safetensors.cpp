//===- Safetensors.cpp - Checkpoints in the safetensors format ------------===//

#include "RLX/Target/CPU/Safetensors.h"
#include "RLX/Target/CPU/Gguf.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstring>
#include <set>

using namespace mlir;
using namespace mlir::rlx;

namespace {

/// RLX's dtype name for a safetensors dtype ("" when unsupported).
std::string dtypeName(StringRef st) {
  return llvm::StringSwitch<std::string>(st)
      .Case("F64", "f64")
      .Case("F32", "f32")
      .Case("F16", "f16")
      .Case("BF16", "bf16")
      .Case("I64", "i64")
      .Case("I32", "i32")
      .Cases({"I8", "U8"}, "i8")
      .Case("BOOL", "i1")
      .Case("F8_E4M3", "f8e4m3fn")
      .Default("");
}

bool isFloat(StringRef dtype) { return dtype.starts_with("f") || dtype == "bf16"; }

/// Reads exactly `dst.size()` bytes at `offset` of an open file.
LogicalResult readAt(llvm::sys::fs::file_t fd, uint64_t offset, MutableArrayRef<char> dst,
                     std::string &why) {
  while (!dst.empty()) {
    llvm::Expected<size_t> n = llvm::sys::fs::readNativeFileSlice(fd, dst, offset);
    if (!n) {
      why = llvm::toString(n.takeError());
      return failure();
    }
    if (*n == 0) {
      why = "the file ends early";
      return failure();
    }
    dst = dst.drop_front(*n);
    offset += *n;
  }
  return success();
}

/// Indexes one .safetensors file into `out`: the header only; no tensor's
/// data is read.
LogicalResult indexFile(StringRef file, CheckpointIndex &out, std::string &error) {
  auto fail = [&](const Twine &why) {
    error = (file + ": " + why).str();
    return failure();
  };
  llvm::Expected<llvm::sys::fs::file_t> fd = llvm::sys::fs::openNativeFileForRead(file);
  if (!fd)
    return fail("cannot read (" + llvm::toString(fd.takeError()) + ")");
  auto closeFd = llvm::make_scope_exit([&] { llvm::sys::fs::closeFile(*fd); });
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(*fd, status))
    return fail("cannot read (" + ec.message() + ")");
  uint64_t fileSize = status.getSize();
  if (fileSize < 8)
    return fail("not a safetensors file (shorter than its 8-byte header length)");
  char lenBytes[8];
  std::string why;
  if (failed(readAt(*fd, 0, lenBytes, why)))
    return fail("cannot read (" + why + ")");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | static_cast<uint8_t>(lenBytes[i]);
  if (headerLen > fileSize - 8)
    return fail("header length " + Twine(headerLen) + " runs past the end of the file");
  // The format's own limit (safetensors rejects larger headers): a corrupt
  // length is an error, not a huge allocation.
  if (headerLen > (uint64_t(100) << 20))
    return fail("header length " + Twine(headerLen) + " is over the format's 100 MB limit");
  std::string headerText(headerLen, '\0');
  if (failed(readAt(*fd, 8, headerText, why)))
    return fail("cannot read (" + why + ")");
  auto header = llvm::json::parse(headerText);
  if (!header)
    return fail("bad JSON header: " + llvm::toString(header.takeError()));
  const llvm::json::Object *entries = header->getAsObject();
  if (!entries)
    return fail("the header is not a JSON object");
  uint64_t dataStart = 8 + headerLen, dataSize = fileSize - dataStart;
  // Sorted names, so errors and results do not depend on hash order.
  std::vector<std::string> names;
  for (const auto &kv : *entries)
    if (kv.first != "__metadata__")
      names.push_back(kv.first.str());
  std::sort(names.begin(), names.end());
  for (const std::string &name : names) {
    const llvm::json::Object *info = entries->getObject(name);
    if (!info)
      return fail("tensor '" + name + "': its entry is not an object");
    std::optional<StringRef> st = info->getString("dtype");
    const llvm::json::Array *shape = info->getArray("shape");
    const llvm::json::Array *offsets = info->getArray("data_offsets");
    if (!st || !shape || !offsets || offsets->size() != 2)
      return fail("tensor '" + name + "': needs dtype, shape and two data_offsets");
    CheckpointTensor t;
    t.file = file.str();
    t.dtype = dtypeName(*st);
    if (t.dtype.empty())
      return fail("tensor '" + name + "': unsupported dtype " + *st);
    for (const llvm::json::Value &d : *shape) {
      std::optional<int64_t> v = d.getAsInteger();
      if (!v || *v < 0)
        return fail("tensor '" + name + "': bad shape entry");
      t.shape.push_back(*v);
    }
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger(), end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin || static_cast<uint64_t>(*end) > dataSize)
      return fail("tensor '" + name + "': data_offsets outside the file's data (" +
                  Twine(dataSize) + " bytes)");
    // Sizes in bytes: overflow-checked product of the dims.
    uint64_t expected = HostTensor::elementBytes(t.dtype);
    for (int64_t d : t.shape)
      if (d != 0 && expected > UINT64_MAX / static_cast<uint64_t>(d))
        return fail("tensor '" + name + "': shape too large");
      else
        expected *= static_cast<uint64_t>(d);
    if (static_cast<uint64_t>(*end - *begin) != expected)
      return fail("tensor '" + name + "': " + Twine(*end - *begin) + " bytes of data, its " +
                  *st + " shape needs " + Twine(expected));
    t.offset = dataStart + static_cast<uint64_t>(*begin);
    t.bytes = expected;
    if (auto [it, inserted] = out.emplace(name, t); !inserted)
      return fail("tensor '" + name + "' is also in " + it->second.file);
  }
  return success();
}

} // namespace

FailureOr<CheckpointIndex> mlir::rlx::indexSafetensors(StringRef path, std::string &error) {
  if (path.ends_with(".gguf") && !llvm::sys::fs::is_directory(path))
    return indexGguf(path, error);
  CheckpointIndex out;
  if (!llvm::sys::fs::is_directory(path)) {
    if (failed(indexFile(path, out, error)))
      return failure();
    return out;
  }
  SmallString<256> index(path);
  llvm::sys::path::append(index, "model.safetensors.index.json");
  std::vector<std::string> files;
  if (llvm::sys::fs::exists(index)) {
    auto buffer = llvm::MemoryBuffer::getFile(index);
    if (!buffer) {
      error = (index + ": cannot read").str();
      return failure();
    }
    auto json = llvm::json::parse((*buffer)->getBuffer());
    const llvm::json::Object *map =
        json && json->getAsObject() ? json->getAsObject()->getObject("weight_map") : nullptr;
    if (!map) {
      if (!json)
        llvm::consumeError(json.takeError());
      error = (index + ": no \"weight_map\" object").str();
      return failure();
    }
    std::set<std::string> shards;
    std::map<std::string, std::string> expected;
    for (const auto &kv : *map) {
      std::optional<StringRef> shard = kv.second.getAsString();
      if (!shard || shard->contains('/') || shard->contains('\\')) {
        error = (index + ": tensor '" + kv.first.str() + "' has no shard file name").str();
        return failure();
      }
      shards.insert(shard->str());
      expected[kv.first.str()] = shard->str();
    }
    for (const std::string &s : shards) {
      SmallString<256> file(path);
      llvm::sys::path::append(file, s);
      files.push_back(file.str().str());
    }
    for (const std::string &f : files)
      if (failed(indexFile(f, out, error)))
        return failure();
    // The index and the shards must agree.
    for (auto &[name, shard] : expected)
      if (!out.count(name)) {
        error = (index + ": tensor '" + name + "' is not in its shard " + shard).str();
        return failure();
      }
    for (auto &[name, t] : out)
      if (!expected.count(name)) {
        error = t.file + ": tensor '" + name + "' is not in " + index.str().str();
        return failure();
      }
    return out;
  }
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec; it.increment(ec))
    if (StringRef(it->path()).ends_with(".safetensors"))
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    error = (path + ": no model.safetensors.index.json and no .safetensors file").str();
    return failure();
  }
  for (const std::string &f : files)
    if (failed(indexFile(f, out, error)))
      return failure();
  return out;
}

LogicalResult mlir::rlx::readCheckpointTensor(StringRef name, const CheckpointTensor &t,
                                              MutableArrayRef<uint8_t> dst, std::string &error,
                                              uint64_t from) {
  auto fail = [&](const Twine &why) {
    error = (t.file + ": tensor '" + name + "': " + why).str();
    return failure();
  };
  if (from > t.bytes || dst.size() > t.bytes - from)
    return fail("read of " + Twine(dst.size()) + " bytes from byte " + Twine(from) +
                ", it has " + Twine(t.bytes));
  if (t.ggmlType >= 0) // GGUF: the rows of the range, dequantized.
    return readGgufRange(name, t, from, dst, error);
  llvm::Expected<llvm::sys::fs::file_t> fd = llvm::sys::fs::openNativeFileForRead(t.file);
  if (!fd)
    return fail("cannot read (" + llvm::toString(fd.takeError()) + ")");
  auto closeFd = llvm::make_scope_exit([&] { llvm::sys::fs::closeFile(*fd); });
  std::string why;
  if (failed(readAt(*fd, t.offset + from,
                    MutableArrayRef<char>(reinterpret_cast<char *>(dst.data()), dst.size()), why)))
    return fail("cannot read its data (" + why + ")");
  return success();
}

FailureOr<HostTensor> mlir::rlx::loadCheckpointTensor(StringRef name, const CheckpointTensor &t,
                                                      std::string &error) {
  HostTensor out;
  out.dtype = t.dtype;
  out.shape = t.shape;
  out.data.resize(t.bytes);
  if (failed(readCheckpointTensor(name, t, out.data, error)))
    return failure();
  return out;
}

FailureOr<std::map<std::string, HostTensor>>
mlir::rlx::readSafetensors(StringRef path, std::string &error) {
  FailureOr<CheckpointIndex> index = indexSafetensors(path, error);
  if (failed(index))
    return failure();
  std::map<std::string, HostTensor> out;
  for (const auto &[name, t] : *index) {
    FailureOr<HostTensor> tensor = loadCheckpointTensor(name, t, error);
    if (failed(tensor))
      return failure();
    out[name] = std::move(*tensor);
  }
  return out;
}

/// ModelOpt's NVFP4 checkpoints carry `<linear>.input_scale`, the activation
/// scale of W4A4 kernels. RLX's NVFP4 linears (`<linear>.weight_scale_2` is
/// a parameter) keep activations in their float type and do not read it.
static bool isUnusedNvfp4InputScale(StringRef name, const std::set<std::string> &params) {
  if (!name.consume_back(".input_scale"))
    return false;
  return params.count((name + ".weight_scale_2").str()) != 0;
}

/// Multi-token-prediction heads (`mtp.*`, Qwen3-Next's checkpoints): a
/// draft model for speculative decoding that the causal LM does not read
/// (transformers ignores them on load too), when the model has no such
/// parameter.
static bool isUnreadMtpHead(StringRef name) { return name.starts_with("mtp."); }

/// dst[k * stride + j] = t[j, k] for a 2-D `t` of `E`-byte elements, in
/// tiles (both sides stay in cache).
template <typename E>
static void transposeTiles(const HostTensor &t, uint8_t *dst, int64_t stride) {
  int64_t rows = t.shape[0], cols = t.shape[1];
  const auto *src = reinterpret_cast<const E *>(t.data.data());
  auto *out = reinterpret_cast<E *>(dst);
  constexpr int64_t tile = 32;
  for (int64_t j0 = 0; j0 < rows; j0 += tile)
    for (int64_t k0 = 0; k0 < cols; k0 += tile)
      for (int64_t k = k0; k < std::min(cols, k0 + tile); ++k)
        for (int64_t j = j0; j < std::min(rows, j0 + tile); ++j)
          out[k * stride + j] = src[j * cols + k];
}

static void transposeInto(const HostTensor &t, uint8_t *dst, int64_t stride) {
  switch (HostTensor::elementBytes(t.dtype)) {
  case 1:
    return transposeTiles<uint8_t>(t, dst, stride);
  case 2:
    return transposeTiles<uint16_t>(t, dst, stride);
  case 4:
    return transposeTiles<uint32_t>(t, dst, stride);
  default:
    return transposeTiles<uint64_t>(t, dst, stride);
  }
}

LogicalResult mlir::rlx::bindCheckpoint(const CheckpointIndex &checkpoint,
                                        ArrayRef<ParamSpec> params,
                                        std::map<std::string, HostTensor> &values,
                                        std::string &error) {
  auto shapeText = [](ArrayRef<int64_t> s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i)
      r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
  };
  // Every name, shape and dtype is checked before any data is read.
  std::set<std::string> names;
  for (const ParamSpec &p : params) {
    names.insert(p.name);
    auto it = checkpoint.find(p.name);
    if (it == checkpoint.end()) {
      error = "parameter '" + p.name + "' is not in the checkpoint";
      return failure();
    }
    const CheckpointTensor &t = it->second;
    if (t.shape != p.shape) {
      error = "checkpoint tensor '" + p.name + "' has shape " + shapeText(t.shape) +
              ", the model's parameter " + shapeText(p.shape);
      return failure();
    }
    if (t.dtype != p.dtype && (!isFloat(t.dtype) || !isFloat(p.dtype) ||
                               t.dtype == "f8e4m3fn" || p.dtype == "f8e4m3fn")) {
      error = "checkpoint tensor '" + p.name + "' is " + t.dtype + ", the model's parameter " +
              p.dtype;
      return failure();
    }
  }
  for (const auto &[name, t] : checkpoint)
    if (!names.count(name) && !isUnusedNvfp4InputScale(name, names) && !isUnreadMtpHead(name)) {
      error = "checkpoint tensor '" + name + "' is not a parameter of the model";
      return failure();
    }
  // Then each tensor is read once, into its place: one tensor in flight
  // beyond what is bound (its converted copy, when the dtypes differ).
  for (const ParamSpec &p : params) {
    const CheckpointTensor &t = checkpoint.at(p.name);
    if (p.into && p.intoStride) {
      // Transposed: a band of rows at a time (a few MiB in flight).
      if (t.shape.size() != 2) {
        error = "parameter '" + p.name + "' is placed transposed but is not 2-D";
        return failure();
      }
      int64_t rows = t.shape[0], cols = t.shape[1];
      uint64_t rowBytes = cols * HostTensor::elementBytes(t.dtype);
      int64_t band = std::max<int64_t>(1, (8 << 20) / std::max<uint64_t>(1, rowBytes));
      for (int64_t r0 = 0; r0 < rows; r0 += band) {
        HostTensor chunk;
        chunk.dtype = t.dtype;
        chunk.shape = {std::min(band, rows - r0), cols};
        chunk.data.resize(chunk.shape[0] * rowBytes);
        if (failed(readCheckpointTensor(p.name, t, chunk.data, error, r0 * rowBytes)))
          return failure();
        if (t.dtype != p.dtype)
          chunk = convert(chunk, p.dtype);
        transposeInto(chunk, p.into + r0 * HostTensor::elementBytes(p.dtype), p.intoStride);
      }
      continue;
    }
    if (p.into && !p.intoStride && t.dtype == p.dtype) {
      if (failed(readCheckpointTensor(p.name, t, MutableArrayRef<uint8_t>(p.into, t.bytes),
                                      error)))
        return failure();
      continue;
    }
    FailureOr<HostTensor> read = loadCheckpointTensor(p.name, t, error);
    if (failed(read))
      return failure();
    HostTensor bound = t.dtype == p.dtype ? std::move(*read) : convert(*read, p.dtype);
    if (p.into)
      std::memcpy(p.into, bound.data.data(), bound.data.size());
    else
      values[p.name] = std::move(bound);
  }
  return success();
}

std::set<std::string> mlir::rlx::placeConcats(ArrayRef<PackedConcat> concats,
                                              std::vector<ParamSpec> &params,
                                              std::map<std::string, HostTensor> &packed) {
  std::set<std::string> placed;
  for (const PackedConcat &c : concats) {
    std::vector<ParamSpec *> parts;
    for (const std::string &s : c.sources) {
      auto it = llvm::find_if(params, [&](const ParamSpec &p) { return p.name == s; });
      if (it == params.end() || it->dtype != c.dtype || it->into || it->shape.size() != 2)
        break;
      parts.push_back(&*it);
    }
    std::optional<uint64_t> total = tensorBytes(c.dtype, c.shape);
    uint64_t sum = 0;
    for (ParamSpec *p : parts)
      sum += tensorBytes(p->dtype, p->shape).value_or(0);
    if (parts.size() != c.sources.size() || !total || sum != *total || c.shape.size() != 2 ||
        llvm::any_of(parts, [&](ParamSpec *p) {
          return p->shape[1] != c.shape[c.transposed ? 0 : 1];
        }))
      continue;
    HostTensor &t = packed[c.name] = HostTensor::zeros(c.dtype, c.shape);
    // Rows one after another; transposed, columns side by side.
    uint64_t offset = 0;
    for (ParamSpec *p : parts) {
      p->into = t.data.data() + offset;
      if (c.transposed) {
        p->intoStride = c.shape[1];
        offset += p->shape[0] * HostTensor::elementBytes(c.dtype);
      } else {
        offset += *tensorBytes(p->dtype, p->shape);
      }
      placed.insert(p->name);
    }
  }
  return placed;
}
