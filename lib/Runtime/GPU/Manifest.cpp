//===- Manifest.cpp - Parse and validate manifest.json --------------------===//
//
// The manifest is input we do not control (a stale artifact, a hand edit, a
// fuzzer), so every access checks the JSON type first and every error names
// the field as a path, e.g. "kernels[1].block[2]". Unknown fields are ignored
// so that a newer compiler can add optional ones.
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/GPU/Manifest.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>

namespace rlx::gpu {
namespace {

using json = nlohmann::json;

// Sizes above this are rejected: no GPU has that much memory, and it keeps
// every sum and product below in range of uint64_t.
constexpr uint64_t kMaxBytes = uint64_t(1) << 48;

struct Failure {
  std::string message;
};

[[noreturn]] void fail(const std::string &path, const std::string &what) {
  throw Failure{path + ": " + what};
}

std::string sub(const std::string &path, const char *key) {
  return path.empty() ? std::string(key) : path + "." + key;
}
std::string idx(const std::string &path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

const json &field(const json &obj, const std::string &path, const char *key) {
  auto it = obj.find(key);
  if (it == obj.end())
    fail(sub(path, key), "missing");
  return *it;
}

const json *optField(const json &obj, const char *key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

const json &object(const json &v, const std::string &path) {
  if (!v.is_object())
    fail(path, "expected an object");
  return v;
}

const json &array(const json &v, const std::string &path) {
  if (!v.is_array())
    fail(path, "expected an array");
  return v;
}

std::string string(const json &v, const std::string &path, bool nonEmpty = true) {
  if (!v.is_string())
    fail(path, "expected a string");
  std::string s = v.get<std::string>();
  if (nonEmpty && s.empty())
    fail(path, "must not be empty");
  return s;
}

uint64_t unsignedInt(const json &v, const std::string &path, uint64_t max = kMaxBytes) {
  if (!v.is_number_integer())
    fail(path, "expected a non-negative integer");
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > max)
      fail(path, std::to_string(u) + " is out of range (at most " + std::to_string(max) + ")");
    return u;
  }
  int64_t s = v.get<int64_t>();
  if (s < 0)
    fail(path, "expected a non-negative integer, got " + std::to_string(s));
  if (uint64_t(s) > max)
    fail(path, std::to_string(s) + " is out of range (at most " + std::to_string(max) + ")");
  return uint64_t(s);
}

Dim3 dim3(const json &v, const std::string &path, uint64_t maxX, uint64_t maxYZ) {
  array(v, path);
  if (v.size() != 3)
    fail(path, "expected 3 integers [x, y, z], got " + std::to_string(v.size()));
  Dim3 d;
  for (size_t i = 0; i < 3; ++i) {
    uint64_t x = unsignedInt(v[i], idx(path, i), i == 0 ? maxX : maxYZ);
    if (x == 0)
      fail(idx(path, i), "must be at least 1");
    d[i] = uint32_t(x);
  }
  return d;
}

// An argument's "tensor_map" (docs/gpu-artifact.md): the checks of
// cuTensorMapEncodeTiled that do not need a device, and that the map's
// memory lies inside the argument's buffer (from `offset`, of `size` bytes).
TensorMapInfo tensorMap(const json &v, const std::string &path, uint64_t offset, uint64_t size) {
  object(v, path);
  TensorMapInfo t;
  t.dtype = string(field(v, path, "dtype"), sub(path, "dtype"));
  int eb = dtypeBytes(t.dtype);
  if (!(eb == 1 || eb == 2 || eb == 4 || eb == 8))
    fail(sub(path, "dtype"), "'" + t.dtype + "' has no tensor-map data type");
  t.elementBytes = uint32_t(eb);
  std::string dp = sub(path, "dims"), sp = sub(path, "strides"), bp = sub(path, "box");
  const json &dims = array(field(v, path, "dims"), dp);
  const json &strides = array(field(v, path, "strides"), sp);
  const json &box = array(field(v, path, "box"), bp);
  if (dims.empty() || dims.size() > 5)
    fail(dp, "a tensor map has 1 to 5 dimensions, got " + std::to_string(dims.size()));
  t.rank = uint32_t(dims.size());
  if (strides.size() + 1 != dims.size())
    fail(sp, std::to_string(strides.size()) + " strides for " + std::to_string(dims.size()) +
                 " dimensions (one per dimension after the innermost)");
  if (box.size() != dims.size())
    fail(bp, std::to_string(box.size()) + " box sizes for " + std::to_string(dims.size()) + " dimensions");
  uint64_t extent = 0; // bytes the map spans
  for (uint32_t d = 0; d < t.rank; ++d) {
    t.dims[d] = unsignedInt(dims[d], idx(dp, d), uint64_t(1) << 32);
    if (t.dims[d] == 0)
      fail(idx(dp, d), "must be at least 1");
    t.box[d] = uint32_t(unsignedInt(box[d], idx(bp, d), 256));
    if (t.box[d] == 0)
      fail(idx(bp, d), "must be at least 1");
    if (d == 0) {
      extent = t.dims[0] * t.elementBytes;
      continue;
    }
    t.strides[d - 1] = unsignedInt(strides[d - 1], idx(sp, d - 1), uint64_t(1) << 40);
    if (t.strides[d - 1] % 16 != 0)
      fail(idx(sp, d - 1), "must be a multiple of 16 bytes");
    if (t.strides[d - 1] < extent)
      fail(idx(sp, d - 1), std::to_string(t.strides[d - 1]) + " is less than the " + std::to_string(extent) +
                               " bytes of the dimensions inside it");
    extent = t.strides[d - 1] * (t.dims[d] - 1) + extent;
  }
  if ((uint64_t(t.box[0]) * t.elementBytes) % 16 != 0)
    fail(idx(bp, 0), "the inner box dimension must be a multiple of 16 bytes");
  t.swizzle = uint32_t(unsignedInt(field(v, path, "swizzle"), sub(path, "swizzle"), 3));
  if (t.swizzle && uint64_t(t.box[0]) * t.elementBytes > (16u << t.swizzle))
    fail(idx(bp, 0), "the inner box dimension exceeds the swizzle span of " +
                         std::to_string(16u << t.swizzle) + " bytes");
  if (offset % 16 != 0)
    fail(path, "the tensor's address (offset " + std::to_string(offset) + ") is not 16-byte aligned");
  if (extent > size - offset)
    fail(path, "the tensor spans " + std::to_string(extent) + " bytes from offset " + std::to_string(offset) +
                   ", past the end of its buffer (" + std::to_string(size) + " bytes)");
  return t;
}

// Artifact files are names inside the artifact directory: an absolute path or
// ".." would let a manifest read anything on the machine.
std::string fileName(const json &v, const std::string &path) {
  std::string s = string(v, path);
  if (s[0] == '/')
    fail(path, "'" + s + "' must be relative to the artifact directory");
  std::stringstream parts(s);
  for (std::string part; std::getline(parts, part, '/');)
    if (part == "..")
      fail(path, "'" + s + "' must not leave the artifact directory");
  if (s.find('\0') != std::string::npos)
    fail(path, "contains a NUL byte");
  return s;
}

uint64_t minimumBytes(const BufferInfo &b, const std::string &path) {
  int eb = dtypeBytes(b.dtype);
  uint64_t n = 1;
  for (size_t i = 0; i < b.shape.size(); ++i) {
    uint64_t d = uint64_t(b.shape[i]);
    if (d != 0 && n > kMaxBytes / d)
      fail(sub(path, "shape"), "too many elements");
    n *= d;
  }
  if (eb == 0)
    return (n + 1) / 2;
  if (n > kMaxBytes / uint64_t(eb))
    fail(sub(path, "shape"), "too many bytes");
  return n * uint64_t(eb);
}

void parseKernel(const json &k, const std::string &p, Manifest &m, std::set<std::string> &names) {
  object(k, p);
  KernelInfo ki;
  ki.name = string(field(k, p, "name"), sub(p, "name"));
  if (!names.insert(ki.name).second)
    fail(sub(p, "name"), "duplicate kernel '" + ki.name + "'");
  ki.module = string(field(k, p, "module"), sub(p, "module"));
  int mod = -1;
  for (size_t i = 0; i < m.modules.size(); ++i)
    if (m.modules[i].name == ki.module)
      mod = int(i);
  if (mod < 0)
    fail(sub(p, "module"), "unknown module '" + ki.module + "'");
  ki.moduleIndex = size_t(mod);
  ki.numParams = uint32_t(unsignedInt(field(k, p, "num_params"), sub(p, "num_params"), 4096));
  ki.block = dim3(field(k, p, "block"), sub(p, "block"), 1024, 1024);
  if (uint64_t(ki.block[0]) * ki.block[1] * ki.block[2] > 1024)
    fail(sub(p, "block"), "more than 1024 threads per block");
  ki.staticSharedBytes = unsignedInt(field(k, p, "static_shared_bytes"), sub(p, "static_shared_bytes"));
  if (const json *r = optField(k, "registers"))
    ki.registers = int64_t(unsignedInt(*r, sub(p, "registers"), 65536));
  if (const json *r = optField(k, "spill_bytes"))
    ki.spillBytes = int64_t(unsignedInt(*r, sub(p, "spill_bytes")));
  if (const json *r = optField(k, "stack_bytes"))
    ki.stackBytes = int64_t(unsignedInt(*r, sub(p, "stack_bytes")));
  if (const json *u = optField(k, "emu_unavailable"))
    ki.emuUnavailable = string(*u, sub(p, "emu_unavailable"));
  if (const json *l = optField(k, "locations")) {
    std::string lp = sub(p, "locations");
    array(*l, lp);
    for (size_t i = 0; i < l->size(); ++i)
      ki.locations.push_back(string((*l)[i], idx(lp, i)));
  }
  if (const json *e = optField(k, "emu")) {
    std::string ep = sub(p, "emu");
    object(*e, ep);
    ki.hasEmu = true;
    ki.emuSymbol = string(field(*e, ep, "symbol"), sub(ep, "symbol"));
    if (const json *sh = optField(*e, "shared")) {
      std::string sp = sub(ep, "shared");
      array(*sh, sp);
      for (size_t i = 0; i < sh->size(); ++i) {
        std::string bp = idx(sp, i);
        object((*sh)[i], bp);
        EmuShared s;
        s.bytes = unsignedInt(field((*sh)[i], bp, "bytes"), sub(bp, "bytes"));
        s.align = 1;
        if (const json *a = optField((*sh)[i], "align"))
          s.align = unsignedInt(*a, sub(bp, "align"), 4096);
        if (s.align == 0 || (s.align & (s.align - 1)))
          fail(sub(bp, "align"), "must be a power of two, got " + std::to_string(s.align));
        ki.emuShared.push_back(s);
      }
    }
  }
  m.kernels.push_back(std::move(ki));
}

void parseFunction(const json &f, const std::string &p, Manifest &m, std::set<std::string> &names) {
  object(f, p);
  FunctionInfo fi;
  fi.name = string(field(f, p, "name"), sub(p, "name"));
  if (!names.insert(fi.name).second)
    fail(sub(p, "name"), "duplicate function '" + fi.name + "'");
  fi.arenaBytes = unsignedInt(field(f, p, "arena_bytes"), sub(p, "arena_bytes"));

  std::string bp = sub(p, "buffers");
  const json &bufs = array(field(f, p, "buffers"), bp);
  std::set<std::string> bufNames;
  for (size_t i = 0; i < bufs.size(); ++i) {
    std::string q = idx(bp, i);
    const json &b = object(bufs[i], q);
    BufferInfo bi;
    bi.name = string(field(b, q, "name"), sub(q, "name"));
    if (bi.name[0] == '@')
      fail(sub(q, "name"), "'" + bi.name + "': names starting with '@' are reserved");
    std::string role = string(field(b, q, "role"), sub(q, "role"));
    // Unique among the inputs and params, and among the outputs.
    if (!bufNames.insert(bi.name + (role == "output" ? "/out" : "/in")).second)
      fail(sub(q, "name"), "duplicate buffer '" + bi.name + "'");
    if (role == "input")
      bi.role = Role::Input;
    else if (role == "param")
      bi.role = Role::Param;
    else if (role == "output")
      bi.role = Role::Output;
    else
      fail(sub(q, "role"), "unknown role '" + role + "' (expected input, param or output)");
    bi.dtype = string(field(b, q, "dtype"), sub(q, "dtype"));
    if (dtypeBytes(bi.dtype) < 0)
      fail(sub(q, "dtype"), "unknown dtype '" + bi.dtype + "'");
    std::string sp = sub(q, "shape");
    const json &shape = array(field(b, q, "shape"), sp);
    if (shape.size() > 64)
      fail(sp, "more than 64 dimensions");
    for (size_t d = 0; d < shape.size(); ++d)
      bi.shape.push_back(int64_t(unsignedInt(shape[d], idx(sp, d))));
    bi.bytes = unsignedInt(field(b, q, "bytes"), sub(q, "bytes"));
    if (const json *pb = optField(b, "packed_by")) {
      object(*pb, sub(q, "packed_by"));
      bi.packedBy = string(field(*pb, sub(q, "packed_by"), "function"), sub(sub(q, "packed_by"), "function"));
      bi.packedOutput = string(field(*pb, sub(q, "packed_by"), "output"), sub(sub(q, "packed_by"), "output"));
    }
    if (const json *ib = optField(b, "index_bound")) {
      bi.indexBound = unsignedInt(*ib, sub(q, "index_bound"));
      if (bi.indexBound == 0 || bi.indexBound > uint64_t(INT64_MAX) || bi.dtype.empty() ||
          (bi.dtype[0] != 'i' && bi.dtype[0] != 'u'))
        fail(sub(q, "index_bound"), "must be a positive row count on an integer buffer");
    }
    uint64_t need = minimumBytes(bi, q);
    if (bi.bytes < need)
      fail(sub(q, "bytes"), std::to_string(bi.bytes) + " is less than the " + std::to_string(need) +
                                " bytes of its shape and dtype");
    fi.buffers.push_back(std::move(bi));
  }

  std::string lp = sub(p, "launches");
  const json &launches = array(field(f, p, "launches"), lp);
  for (size_t i = 0; i < launches.size(); ++i) {
    std::string q = idx(lp, i);
    const json &l = object(launches[i], q);
    LaunchInfo li;
    // One argument: a buffer (the arena or an IO buffer) and an offset in it;
    // `size` is set to the buffer's bytes.
    auto parseArg = [&](const json &arg, const std::string &r, uint64_t &size) {
      LaunchArg la;
      std::string bname;
      if (const json *c = optField(arg, "constant")) {
        bname = string(*c, sub(r, "constant"));
        for (size_t k = 0; k < m.constants.size() && la.constant < 0; ++k)
          if (m.constants[k].name == bname)
            la.constant = int(k);
        if (la.constant < 0)
          fail(sub(r, "constant"), "unknown constant '" + bname + "'");
        size = m.constants[size_t(la.constant)].bytes;
      } else if ((bname = string(field(arg, r, "buffer"), sub(r, "buffer"))) == "@arena") {
        la.buffer = kArena;
        size = fi.arenaBytes;
      } else {
        // An input and an output of one name: "role" says which is meant.
        FunctionInfo::Lookup which = FunctionInfo::Lookup::Any;
        if (const json *role = optField(arg, "role")) {
          std::string rs = string(*role, sub(r, "role"));
          if (rs != "input" && rs != "param" && rs != "output")
            fail(sub(r, "role"), "'" + rs + "' is not input, param or output");
          which = rs == "output" ? FunctionInfo::Lookup::Output : FunctionInfo::Lookup::Source;
        } else if (fi.findBuffer(bname, FunctionInfo::Lookup::Source) >= 0 &&
                   fi.findBuffer(bname, FunctionInfo::Lookup::Output) >= 0) {
          fail(sub(r, "buffer"), "'" + bname + "' names an input and an output of function '" + fi.name +
                                     "': give the argument's \"role\"");
        }
        la.buffer = fi.findBuffer(bname, which);
        if (la.buffer < 0)
          fail(sub(r, "buffer"), "unknown buffer '" + bname + "' in function '" + fi.name + "'");
        size = fi.buffers[size_t(la.buffer)].bytes;
      }
      la.offset = unsignedInt(field(arg, r, "offset"), sub(r, "offset"));
      // A pointer to a zero-byte buffer is never dereferenced; anything else
      // must point at a byte of its buffer.
      if (!(la.offset < size || (size == 0 && la.offset == 0)))
        fail(sub(r, "offset"), std::to_string(la.offset) + " is past the end of '" + bname + "' (" +
                                   std::to_string(size) + " bytes)");
      return la;
    };
    if (const json *coll = optField(l, "collective")) {
      // A collective step over `ranks` ranks from args[0] (`elements` of
      // `dtype`) into args[1]: a sum all-reduce (as many elements), or an
      // all-gather of every rank's block in rank order (ranks × elements).
      li.collective = string(*coll, sub(q, "collective"));
      if (li.collective != "all_reduce" && li.collective != "all_gather")
        fail(sub(q, "collective"),
             "'" + li.collective + "' is not a collective the runtime runs (all_reduce, all_gather)");
      li.ranks = unsignedInt(field(l, q, "ranks"), sub(q, "ranks"), 1 << 20);
      if (li.ranks < 1)
        fail(sub(q, "ranks"), "must be at least 1");
      if (li.collective == "all_reduce") {
        li.reduction = string(field(l, q, "reduction"), sub(q, "reduction"));
        if (li.reduction != "sum")
          fail(sub(q, "reduction"), "'" + li.reduction + "' is not a reduction the runtime runs (sum)");
      }
      li.dtype = string(field(l, q, "dtype"), sub(q, "dtype"));
      int eb = dtypeBytes(li.dtype);
      if (li.dtype != "f32" && li.dtype != "f16" && li.dtype != "bf16")
        fail(sub(q, "dtype"), "'" + li.dtype + "' is not f32, f16 or bf16");
      li.elements = unsignedInt(field(l, q, "elements"), sub(q, "elements"), uint64_t(1) << 44);
      std::string ap = sub(q, "args");
      const json &args = array(field(l, q, "args"), ap);
      if (args.size() != 2)
        fail(ap, std::to_string(args.size()) + " arguments, but a collective has 2 (send, receive)");
      for (size_t a = 0; a < args.size(); ++a) {
        std::string r = idx(ap, a);
        uint64_t size = 0;
        LaunchArg la = parseArg(object(args[a], r), r, size);
        uint64_t elements = li.elements * (a == 1 && li.collective == "all_gather" ? li.ranks : 1);
        // elements < 2^44, ranks < 2^20, eb <= 4: no overflow in 64 bits
        // once the product is checked against the 2^48-byte limit.
        if (elements > (uint64_t(1) << 48) / uint64_t(eb) || la.offset + elements * uint64_t(eb) > size)
          fail(r, std::to_string(elements) + " elements of " + li.dtype + " at offset " +
                      std::to_string(la.offset) + " pass the end of their buffer (" + std::to_string(size) +
                      " bytes)");
        li.args.push_back(la);
      }
      fi.launches.push_back(std::move(li));
      continue;
    }
    std::string kname = string(field(l, q, "kernel"), sub(q, "kernel"));
    int k = m.findKernel(kname);
    if (k < 0)
      fail(sub(q, "kernel"), "unknown kernel '" + kname + "'");
    li.kernel = size_t(k);
    const KernelInfo &ki = m.kernels[li.kernel];
    li.grid = dim3(field(l, q, "grid"), sub(q, "grid"), 0x7fffffff, 65535);
    li.block = dim3(field(l, q, "block"), sub(q, "block"), 1024, 1024);
    if (li.block != ki.block)
      fail(sub(q, "block"), "[" + std::to_string(li.block[0]) + "," + std::to_string(li.block[1]) + "," +
                                std::to_string(li.block[2]) + "] differs from kernel '" + kname +
                                "' block [" + std::to_string(ki.block[0]) + "," +
                                std::to_string(ki.block[1]) + "," + std::to_string(ki.block[2]) + "]");
    li.dynamicSharedBytes =
        unsignedInt(field(l, q, "dynamic_shared_bytes"), sub(q, "dynamic_shared_bytes"), 0xffffffffu);
    std::string ap = sub(q, "args");
    const json &args = array(field(l, q, "args"), ap);
    if (args.size() != ki.numParams)
      fail(ap, std::to_string(args.size()) + " arguments, but kernel '" + kname + "' has num_params " +
                   std::to_string(ki.numParams));
    for (size_t a = 0; a < args.size(); ++a) {
      std::string r = idx(ap, a);
      const json &arg = object(args[a], r);
      uint64_t size = 0;
      LaunchArg la = parseArg(arg, r, size);
      if (const json *tm = optField(arg, "tensor_map")) {
        la.hasTensorMap = true;
        la.tensorMap = tensorMap(*tm, sub(r, "tensor_map"), la.offset, size);
      }
      li.args.push_back(la);
    }
    fi.launches.push_back(std::move(li));
  }
  m.functions.push_back(std::move(fi));
}

void parse(const json &root, Manifest &m) {
  object(root, "manifest");
  std::string format = string(field(root, "", "format"), "format");
  if (format != "rlx-gpu-artifact")
    fail("format", "'" + format + "' is not 'rlx-gpu-artifact'");
  uint64_t version = unsignedInt(field(root, "", "version"), "version", 1u << 30);
  if (version != 1)
    fail("version", "version " + std::to_string(version) + " is not supported (this runtime reads version 1)");
  m.version = int(version);

  const json &target = object(field(root, "", "target"), "target");
  m.chip = string(field(target, "target", "chip"), "target.chip");
  m.ptxVersion = string(field(target, "target", "ptx_version"), "target.ptx_version");

  const json &mods = array(field(root, "", "modules"), "modules");
  for (size_t i = 0; i < mods.size(); ++i) {
    std::string p = idx("modules", i);
    const json &mo = object(mods[i], p);
    ModuleInfo mi;
    mi.name = string(field(mo, p, "name"), sub(p, "name"));
    for (const ModuleInfo &o : m.modules)
      if (o.name == mi.name)
        fail(sub(p, "name"), "duplicate module '" + mi.name + "'");
    if (const json *c = optField(mo, "cubin"))
      mi.cubin = fileName(*c, sub(p, "cubin"));
    if (const json *x = optField(mo, "ptx"))
      mi.ptx = fileName(*x, sub(p, "ptx"));
    if (mi.cubin.empty() && mi.ptx.empty())
      fail(p, "module '" + mi.name + "' has neither 'cubin' nor 'ptx'");
    m.modules.push_back(std::move(mi));
  }

  if (const json *e = optField(root, "emulator")) {
    object(*e, "emulator");
    m.emulatorLibrary = fileName(field(*e, "emulator", "library"), "emulator.library");
  }

  std::set<std::string> names;
  const json &kernels = array(field(root, "", "kernels"), "kernels");
  for (size_t i = 0; i < kernels.size(); ++i)
    parseKernel(kernels[i], idx("kernels", i), m, names);

  // Constants: name, dtype, shape, bytes and the file of their bytes.
  if (const json *cs = optField(root, "constants")) {
    array(*cs, "constants");
    for (size_t i = 0; i < cs->size(); ++i) {
      std::string q = idx("constants", i);
      const json &c = object((*cs)[i], q);
      ConstantInfo ci;
      ci.name = string(field(c, q, "name"), sub(q, "name"));
      for (const ConstantInfo &o : m.constants)
        if (o.name == ci.name)
          fail(sub(q, "name"), "duplicate constant '" + ci.name + "'");
      BufferInfo shape; // checked as a buffer's dtype, shape and bytes are
      shape.dtype = string(field(c, q, "dtype"), sub(q, "dtype"));
      if (dtypeBytes(shape.dtype) < 0)
        fail(sub(q, "dtype"), "unknown dtype '" + shape.dtype + "'");
      const json &dims = array(field(c, q, "shape"), sub(q, "shape"));
      if (dims.size() > 64)
        fail(sub(q, "shape"), "more than 64 dimensions");
      for (size_t d = 0; d < dims.size(); ++d)
        shape.shape.push_back(int64_t(unsignedInt(dims[d], idx(sub(q, "shape"), d))));
      ci.bytes = unsignedInt(field(c, q, "bytes"), sub(q, "bytes"));
      shape.bytes = ci.bytes;
      if (ci.bytes != minimumBytes(shape, q))
        fail(sub(q, "bytes"), std::to_string(ci.bytes) + " is not the " +
                                  std::to_string(minimumBytes(shape, q)) +
                                  " bytes of its shape and dtype");
      ci.dtype = shape.dtype;
      ci.shape = shape.shape;
      ci.file = fileName(field(c, q, "file"), sub(q, "file"));
      m.constants.push_back(std::move(ci));
    }
  }

  names.clear();
  const json &fns = array(field(root, "", "functions"), "functions");
  if (fns.empty())
    fail("functions", "no functions");
  for (size_t i = 0; i < fns.size(); ++i)
    parseFunction(fns[i], idx("functions", i), m, names);

  // A packed parameter names a function of the artifact and one of its
  // outputs of the parameter's size.
  for (size_t f = 0; f < m.functions.size(); ++f)
    for (size_t b = 0; b < m.functions[f].buffers.size(); ++b) {
      const BufferInfo &bi = m.functions[f].buffers[b];
      if (bi.packedBy.empty())
        continue;
      std::string q = sub(idx(sub(idx("functions", f), "buffers"), b), "packed_by");
      int p = m.findFunction(bi.packedBy);
      if (p < 0 || size_t(p) == f)
        fail(sub(q, "function"), "'" + bi.packedBy + "' is not another function of the artifact");
      int o = m.functions[size_t(p)].findBuffer(bi.packedOutput, FunctionInfo::Lookup::Output);
      if (o < 0 || m.functions[size_t(p)].buffers[size_t(o)].role != Role::Output ||
          m.functions[size_t(p)].buffers[size_t(o)].bytes != bi.bytes)
        fail(sub(q, "output"), "'" + bi.packedOutput + "' is not an output of '" + bi.packedBy +
                                   "' of " + std::to_string(bi.bytes) + " bytes");
    }

  m.entry = string(field(root, "", "entry"), "entry");
  if (m.findFunction(m.entry) < 0)
    fail("entry", "unknown function '" + m.entry + "'");
  // A tensor-parallel artifact compiled for one rank (its program looks up
  // by rank) says which.
  if (const json *r = optField(root, "rank"))
    m.rank = int64_t(unsignedInt(*r, "rank", 1 << 20));
}

bool fileExists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

} // namespace

const char *roleName(Role r) {
  switch (r) {
  case Role::Input:
    return "input";
  case Role::Param:
    return "param";
  case Role::Output:
    return "output";
  }
  return "?";
}

int dtypeBytes(const std::string &d) {
  static const std::pair<const char *, int> table[] = {
      {"f64", 8}, {"f32", 4},  {"f16", 2},  {"bf16", 2}, {"i64", 8},       {"i32", 4},
      {"i16", 2}, {"i8", 1},   {"i1", 1},   {"ui8", 1},  {"f8E4M3FN", 1},  {"f8E5M2", 1},
      {"f4E2M1FN", 0}};
  for (const auto &e : table)
    if (d == e.first)
      return e.second;
  return -1;
}

int FunctionInfo::findBuffer(const std::string &n, Lookup which) const {
  int output = -1;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].name != n)
      continue;
    bool isOutput = buffers[i].role == Role::Output;
    if (isOutput && output < 0)
      output = int(i);
    if (!isOutput && which != Lookup::Output)
      return int(i);
  }
  return which == Lookup::Source ? -1 : output;
}

int Manifest::findFunction(const std::string &n) const {
  for (size_t i = 0; i < functions.size(); ++i)
    if (functions[i].name == n)
      return int(i);
  return -1;
}

int Manifest::findKernel(const std::string &n) const {
  for (size_t i = 0; i < kernels.size(); ++i)
    if (kernels[i].name == n)
      return int(i);
  return -1;
}

bool parseManifest(const std::string &text, Manifest &out, std::string &error) {
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    // Parse again only to get the position of the syntax error.
    try {
      (void)json::parse(text);
    } catch (const json::exception &e) {
      error = std::string("manifest.json: invalid JSON: ") + e.what();
      return false;
    }
    error = "manifest.json: invalid JSON";
    return false;
  }
  Manifest m;
  try {
    parse(root, m);
  } catch (const Failure &f) {
    error = "manifest.json: " + f.message;
    return false;
  } catch (const std::exception &e) {
    error = std::string("manifest.json: ") + e.what();
    return false;
  }
  m.dir = out.dir;
  out = std::move(m);
  return true;
}

bool loadManifest(const std::string &dir, Manifest &out, std::string &error) {
  std::string path = dir + "/manifest.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read " + path;
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  Manifest m;
  if (!parseManifest(ss.str(), m, error))
    return false;
  m.dir = dir;
  for (size_t i = 0; i < m.modules.size(); ++i) {
    const ModuleInfo &mo = m.modules[i];
    for (const auto &[key, file] : {std::pair<const char *, const std::string *>{"cubin", &mo.cubin},
                                    {"ptx", &mo.ptx}})
      if (!file->empty() && !fileExists(dir + "/" + *file)) {
        error = "manifest.json: modules[" + std::to_string(i) + "]." + key + ": file '" + *file +
                "' not found in " + dir;
        return false;
      }
  }
  for (size_t i = 0; i < m.constants.size(); ++i) {
    struct stat st;
    std::string file = dir + "/" + m.constants[i].file;
    if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        uint64_t(st.st_size) != m.constants[i].bytes) {
      error = "manifest.json: constants[" + std::to_string(i) + "].file: '" + m.constants[i].file +
              "' in " + dir + " is missing or not " + std::to_string(m.constants[i].bytes) + " bytes";
      return false;
    }
  }
  if (!m.emulatorLibrary.empty() && !fileExists(dir + "/" + m.emulatorLibrary)) {
    error = "manifest.json: emulator.library: file '" + m.emulatorLibrary + "' not found in " + dir;
    return false;
  }
  out = std::move(m);
  return true;
}

} // namespace rlx::gpu
