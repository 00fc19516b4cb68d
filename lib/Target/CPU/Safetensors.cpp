//===- Safetensors.cpp - Checkpoints in the safetensors format ------------===//

#include "RLX/Target/CPU/Safetensors.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
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

/// Reads one .safetensors file into `out`.
LogicalResult readFile(StringRef file, std::map<std::string, HostTensor> &out,
                       std::map<std::string, std::string> &origin, std::string &error) {
  auto fail = [&](const Twine &why) {
    error = (file + ": " + why).str();
    return failure();
  };
  auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail("cannot read (" + buffer.getError().message() + ")");
  StringRef bytes = (*buffer)->getBuffer();
  if (bytes.size() < 8)
    return fail("not a safetensors file (shorter than its 8-byte header length)");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | static_cast<uint8_t>(bytes[i]);
  if (headerLen > bytes.size() - 8)
    return fail("header length " + Twine(headerLen) + " runs past the end of the file");
  auto header = llvm::json::parse(bytes.substr(8, headerLen));
  if (!header)
    return fail("bad JSON header: " + llvm::toString(header.takeError()));
  const llvm::json::Object *entries = header->getAsObject();
  if (!entries)
    return fail("the header is not a JSON object");
  StringRef data = bytes.substr(8 + headerLen);
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
    HostTensor t;
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
    if (!begin || !end || *begin < 0 || *end < *begin || static_cast<uint64_t>(*end) > data.size())
      return fail("tensor '" + name + "': data_offsets outside the file's data (" +
                  Twine(data.size()) + " bytes)");
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
    t.data.assign(data.begin() + *begin, data.begin() + *end);
    if (auto [it, inserted] = origin.emplace(name, file.str()); !inserted)
      return fail("tensor '" + name + "' is also in " + it->second);
    out[name] = std::move(t);
  }
  return success();
}

} // namespace

FailureOr<std::map<std::string, HostTensor>>
mlir::rlx::readSafetensors(StringRef path, std::string &error) {
  std::map<std::string, HostTensor> out;
  std::map<std::string, std::string> origin;
  if (!llvm::sys::fs::is_directory(path)) {
    if (failed(readFile(path, out, origin, error)))
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
      if (failed(readFile(f, out, origin, error)))
        return failure();
    // The index and the shards must agree.
    for (auto &[name, shard] : expected)
      if (!out.count(name)) {
        error = (index + ": tensor '" + name + "' is not in its shard " + shard).str();
        return failure();
      }
    for (auto &[name, file] : origin)
      if (!expected.count(name)) {
        error = file + ": tensor '" + name + "' is not in " + index.str().str();
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
    if (failed(readFile(f, out, origin, error)))
      return failure();
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

LogicalResult mlir::rlx::bindCheckpoint(std::map<std::string, HostTensor> checkpoint,
                                        ArrayRef<ParamSpec> params,
                                        std::map<std::string, HostTensor> &values,
                                        std::string &error) {
  auto shapeText = [](ArrayRef<int64_t> s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i)
      r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
  };
  std::set<std::string> names;
  for (const ParamSpec &p : params) {
    names.insert(p.name);
    auto it = checkpoint.find(p.name);
    if (it == checkpoint.end()) {
      error = "parameter '" + p.name + "' is not in the checkpoint";
      return failure();
    }
    HostTensor &t = it->second;
    if (t.shape != p.shape) {
      error = "checkpoint tensor '" + p.name + "' has shape " + shapeText(t.shape) +
              ", the model's parameter " + shapeText(p.shape);
      return failure();
    }
    if (t.dtype != p.dtype) {
      if (!isFloat(t.dtype) || !isFloat(p.dtype) || t.dtype == "f8e4m3fn" ||
          p.dtype == "f8e4m3fn") {
        error = "checkpoint tensor '" + p.name + "' is " + t.dtype + ", the model's parameter " +
                p.dtype;
        return failure();
      }
      t = convert(t, p.dtype);
    }
    values[p.name] = std::move(t);
  }
  for (auto &[name, t] : checkpoint)
    if (!names.count(name) && !isUnusedNvfp4InputScale(name, names)) {
      error = "checkpoint tensor '" + name + "' is not a parameter of the model";
      return failure();
    }
  return success();
}
