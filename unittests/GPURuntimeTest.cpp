//===- GPURuntimeTest.cpp - The GPU artifact runtime ----------------------===//
//
// Manifest validation, .npy round trips, the CUDA backend's shared-memory and
// error handling against a fake driver table (cases R1), and an artifact run
// end to end on the emulator with a hand-written kernels.emu.so
// (lib/Runtime/GPU/EmuTestKernels.c).
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/GPU/Backend.h"
#include "RLX/Runtime/GPU/CUDADriver.h"
#include "RLX/Runtime/GPU/Manifest.h"
#include "RLX/Runtime/GPU/NCCL.h"
#include "RLX/Runtime/GPU/Npy.h"
#include "RLX/Runtime/GPURuntime.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>
#include <unistd.h>

using namespace rlx::gpu;

namespace {

//===--- Helpers ----------------------------------------------------------===//

std::string tempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/rlx-gpu-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const char *d = ::mkdtemp(buf.data());
  return d ? d : "";
}

void writeFile(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

// A valid manifest (the format reference's example); tests break one field.
const char *kManifest = R"({"format": "rlx-gpu-artifact", "version": 1,
 "target": {"chip": "sm_90a", "ptx_version": "8.0"},
 "modules": [{"name": "f_kernels", "cubin": "f_kernels.sm_90a.cubin", "ptx": "f_kernels.ptx"}],
 "emulator": {"library": "kernels.emu.so"},
 "kernels": [{"name": "f_0_rms_norm", "module": "f_kernels", "num_params": 3, "block": [32,1,1],
              "static_shared_bytes": 4, "registers": 20, "spill_bytes": 0, "stack_bytes": 0,
              "emu": {"symbol": "f_0_rms_norm__emu", "shared": [{"bytes": 4, "align": 4}]}}],
 "entry": "f",
 "functions": [{"name": "f", "arena_bytes": 1024,
   "buffers": [{"name": "x", "role": "input", "dtype": "f32", "shape": [4,64], "bytes": 1024},
               {"name": "w", "role": "param", "dtype": "bf16", "shape": [64], "bytes": 128},
               {"name": "result0", "role": "output", "dtype": "f32", "shape": [4,64], "bytes": 1024}],
   "launches": [{"kernel": "f_0_rms_norm", "grid": [4,1,1], "block": [32,1,1], "dynamic_shared_bytes": 0,
                 "args": [{"buffer": "x", "offset": 0}, {"buffer": "w", "offset": 0}, {"buffer": "@arena", "offset": 0}]}]}]})";

std::string replaced(std::string text, const std::string &from, const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

// The error of parsing kManifest with `from` replaced by `to`.
std::string manifestError(const std::string &from, const std::string &to) {
  Manifest m;
  std::string err;
  EXPECT_FALSE(parseManifest(replaced(kManifest, from, to), m, err)) << from << " -> " << to;
  return err;
}

//===--- Manifest ---------------------------------------------------------===//

TEST(GPUManifest, ParsesTheReferenceExample) {
  Manifest m;
  std::string err;
  ASSERT_TRUE(parseManifest(kManifest, m, err)) << err;
  EXPECT_EQ(m.chip, "sm_90a");
  EXPECT_EQ(m.ptxVersion, "8.0");
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].numParams, 3u);
  EXPECT_EQ(m.kernels[0].staticSharedBytes, 4u);
  EXPECT_EQ(m.kernels[0].registers, 20);
  EXPECT_EQ(m.kernels[0].emuSymbol, "f_0_rms_norm__emu");
  ASSERT_EQ(m.kernels[0].emuShared.size(), 1u);
  EXPECT_EQ(m.kernels[0].emuShared[0].align, 4u);
  EXPECT_EQ(m.emulatorLibrary, "kernels.emu.so");
  ASSERT_EQ(m.functions.size(), 1u);
  const FunctionInfo &f = m.functions[0];
  EXPECT_EQ(f.arenaBytes, 1024u);
  ASSERT_EQ(f.buffers.size(), 3u);
  EXPECT_EQ(f.buffers[1].role, Role::Param);
  EXPECT_EQ(f.buffers[1].dtype, "bf16");
  EXPECT_EQ(f.buffers[0].shape, (std::vector<int64_t>{4, 64}));
  ASSERT_EQ(f.launches.size(), 1u);
  EXPECT_EQ(f.launches[0].grid, (Dim3{4, 1, 1}));
  ASSERT_EQ(f.launches[0].args.size(), 3u);
  EXPECT_EQ(f.launches[0].args[1].buffer, 1);
  EXPECT_EQ(f.launches[0].args[2].buffer, kArena);
}

TEST(GPUManifest, EachBadFieldIsNamed) {
  struct Case {
    const char *from, *to, *expect;
  };
  const Case cases[] = {
      {R"("format": "rlx-gpu-artifact")", R"("format": "onnx")", "format: 'onnx' is not 'rlx-gpu-artifact'"},
      {R"("version": 1)", R"("version": 2)", "version: version 2 is not supported"},
      {R"("version": 1)", R"("version": "1")", "version: expected a non-negative integer"},
      {R"("chip": "sm_90a")", R"("chip": 90)", "target.chip: expected a string"},
      {R"(, "ptx_version": "8.0")", "", "target.ptx_version: missing"},
      {R"("name": "f_kernels", )", "", "modules[0].name: missing"},
      {R"("cubin": "f_kernels.sm_90a.cubin", "ptx": "f_kernels.ptx")", R"("cubin": "/etc/passwd")",
       "modules[0].cubin: '/etc/passwd' must be relative"},
      {R"("ptx": "f_kernels.ptx")", R"("ptx": "../x.ptx")", "modules[0].ptx: '../x.ptx' must not leave"},
      {R"("library": "kernels.emu.so")", R"("library": 3)", "emulator.library: expected a string"},
      {R"("module": "f_kernels")", R"("module": "g_kernels")", "kernels[0].module: unknown module 'g_kernels'"},
      {R"("num_params": 3)", R"("num_params": -1)", "kernels[0].num_params: expected a non-negative integer"},
      {R"("block": [32,1,1],
              "static)",
       R"("block": [32,1],
              "static)",
       "kernels[0].block: expected 3 integers"},
      {R"("block": [32,1,1],
              "static)",
       R"("block": [32,0,1],
              "static)",
       "kernels[0].block[1]: must be at least 1"},
      {R"("block": [32,1,1],
              "static)",
       R"("block": [64,32,1],
              "static)",
       "kernels[0].block: more than 1024 threads"},
      {R"("static_shared_bytes": 4)", R"("static_shared_bytes": 4.5)",
       "kernels[0].static_shared_bytes: expected a non-negative integer"},
      {R"("symbol": "f_0_rms_norm__emu")", R"("symbol": "")", "kernels[0].emu.symbol: must not be empty"},
      {R"("align": 4)", R"("align": 3)", "kernels[0].emu.shared[0].align: must be a power of two"},
      {R"("entry": "f")", R"("entry": "g")", "entry: unknown function 'g'"},
      {R"("arena_bytes": 1024)", R"("arena_bytes": 18446744073709551615)", "functions[0].arena_bytes: "},
      {R"("role": "param")", R"("role": "weight")", "functions[0].buffers[1].role: unknown role 'weight'"},
      {R"("dtype": "bf16")", R"("dtype": "float")", "functions[0].buffers[1].dtype: unknown dtype 'float'"},
      {R"("shape": [64])", R"("shape": [-64])", "functions[0].buffers[1].shape[0]: expected a non-negative"},
      {R"("shape": [64], "bytes": 128)", R"("shape": [64], "bytes": 127)",
       "functions[0].buffers[1].bytes: 127 is less than the 128 bytes"},
      {R"({"name": "w", )", R"({"name": "x", )", "functions[0].buffers[1].name: duplicate buffer 'x'"},
      {R"({"name": "w", )", R"({"name": "@w", )", "functions[0].buffers[1].name: '@w': names starting with '@'"},
      {R"("kernel": "f_0_rms_norm")", R"("kernel": "f_1")", "functions[0].launches[0].kernel: unknown kernel 'f_1'"},
      {R"("grid": [4,1,1])", R"("grid": [4,70000,1])", "functions[0].launches[0].grid[1]: 70000 is out of range"},
      {R"("block": [32,1,1], "dynamic)", R"("block": [64,1,1], "dynamic)",
       "functions[0].launches[0].block: [64,1,1] differs from kernel 'f_0_rms_norm' block [32,1,1]"},
      {R"("dynamic_shared_bytes": 0)", R"("dynamic_shared_bytes": 4294967296)",
       "functions[0].launches[0].dynamic_shared_bytes: 4294967296 is out of range"},
      {R"(, {"buffer": "@arena", "offset": 0}])", "]",
       "functions[0].launches[0].args: 2 arguments, but kernel 'f_0_rms_norm' has num_params 3"},
      {R"({"buffer": "w", "offset": 0})", R"({"buffer": "v", "offset": 0})",
       "functions[0].launches[0].args[1].buffer: unknown buffer 'v' in function 'f'"},
      {R"({"buffer": "w", "offset": 0})", R"({"buffer": "w", "offset": 128})",
       "functions[0].launches[0].args[1].offset: 128 is past the end of 'w' (128 bytes)"},
      {R"({"buffer": "@arena", "offset": 0})", R"({"buffer": "@arena", "offset": 1024})",
       "functions[0].launches[0].args[2].offset: 1024 is past the end of '@arena' (1024 bytes)"},
      {R"({"buffer": "x", "offset": 0})", R"({"buffer": "x"})", "functions[0].launches[0].args[0].offset: missing"},
      {R"("launches": [)", R"("launches": 7, "x": [)", "functions[0].launches: expected an array"},
  };
  for (const Case &c : cases) {
    std::string err = manifestError(c.from, c.to);
    EXPECT_NE(err.find(c.expect), std::string::npos) << "expected '" << c.expect << "' in: " << err;
  }
  // The last byte of a buffer is a valid offset.
  Manifest m;
  std::string err;
  EXPECT_TRUE(parseManifest(replaced(kManifest, R"({"buffer": "w", "offset": 0})", R"({"buffer": "w", "offset": 127})"),
                            m, err))
      << err;
}

TEST(GPUManifest, AnOutputMayShareAnInputsName) {
  // result0 renamed x: an input and an output named x (a layer's
  // hidden_states in and out); launch arguments on x must give their role.
  std::string text = replaced(kManifest, R"({"name": "result0", "role": "output")", R"({"name": "x", "role": "output")");
  const std::string arena = R"({"buffer": "@arena", "offset": 0}]}]}]})";
  Manifest m;
  std::string err;
  std::string withRole = replaced(text, arena, R"({"buffer": "x", "role": "output", "offset": 0}]}]}]})");
  withRole = replaced(withRole, R"({"buffer": "x", "offset": 0})", R"({"buffer": "x", "role": "input", "offset": 0})");
  ASSERT_TRUE(parseManifest(withRole, m, err)) << err;
  const FunctionInfo &f = m.functions[0];
  EXPECT_EQ(f.launches[0].args[0].buffer, 0);
  EXPECT_EQ(f.launches[0].args[2].buffer, 2);
  EXPECT_EQ(f.findBuffer("x"), 0);
  EXPECT_EQ(f.findBuffer("x", FunctionInfo::Lookup::Output), 2);
  EXPECT_EQ(f.findBuffer("w", FunctionInfo::Lookup::Output), -1);
  // Without the role the argument is ambiguous.
  EXPECT_FALSE(parseManifest(replaced(text, arena, R"({"buffer": "x", "offset": 0}]}]}]})"), m, err));
  EXPECT_NE(err.find("'x' names an input and an output of function 'f': give the argument's \"role\""),
            std::string::npos)
      << err;
  // Two inputs of one name are still an error.
  EXPECT_FALSE(parseManifest(replaced(kManifest, R"({"name": "w", "role": "param")", R"({"name": "x", "role": "param")"), m, err));
  EXPECT_NE(err.find("duplicate buffer 'x'"), std::string::npos) << err;
}

TEST(GPUManifest, TensorMapArguments) {
  // x is [4, 64] f32 (1024 bytes): a map of its 4 rows of 64 elements,
  // boxes of 2 rows × 32 elements, 128-byte swizzle.
  const std::string arg = R"({"buffer": "x", "offset": 0})";
  auto with = [&](const std::string &map) {
    return replaced(kManifest, arg, R"({"buffer": "x", "offset": 0, "tensor_map": )" + map + "}");
  };
  const std::string good = R"({"dtype": "f32", "dims": [64, 4], "strides": [256], "box": [32, 2], "swizzle": 3})";
  Manifest m;
  std::string err;
  ASSERT_TRUE(parseManifest(with(good), m, err)) << err;
  const LaunchArg &a = m.functions[0].launches[0].args[0];
  ASSERT_TRUE(a.hasTensorMap);
  EXPECT_EQ(a.tensorMap.rank, 2u);
  EXPECT_EQ(a.tensorMap.elementBytes, 4u);
  EXPECT_EQ(a.tensorMap.dims[1], 4u);
  EXPECT_EQ(a.tensorMap.strides[0], 256u);
  EXPECT_EQ(a.tensorMap.box[0], 32u);
  EXPECT_EQ(a.tensorMap.swizzle, 3u);
  EXPECT_FALSE(m.functions[0].launches[0].args[1].hasTensorMap);
  struct Case {
    const char *map, *expect;
  };
  const Case cases[] = {
      {R"({"dtype": "f4E2M1FN", "dims": [64, 4], "strides": [256], "box": [32, 2], "swizzle": 0})",
       "tensor_map.dtype: 'f4E2M1FN' has no tensor-map data type"},
      {R"({"dtype": "f32", "dims": [], "strides": [], "box": [], "swizzle": 0})",
       "tensor_map.dims: a tensor map has 1 to 5 dimensions, got 0"},
      {R"({"dtype": "f32", "dims": [64, 4], "strides": [], "box": [32, 2], "swizzle": 0})",
       "tensor_map.strides: 0 strides for 2 dimensions"},
      {R"({"dtype": "f32", "dims": [64, 4], "strides": [256], "box": [32], "swizzle": 0})",
       "tensor_map.box: 1 box sizes for 2 dimensions"},
      {R"({"dtype": "f32", "dims": [64, 4], "strides": [200], "box": [32, 2], "swizzle": 0})",
       "tensor_map.strides[0]: must be a multiple of 16 bytes"},
      {R"({"dtype": "f32", "dims": [64, 4], "strides": [128], "box": [32, 2], "swizzle": 0})",
       "tensor_map.strides[0]: 128 is less than the 256 bytes of the dimensions inside it"},
      {R"({"dtype": "f32", "dims": [64, 5], "strides": [256], "box": [32, 2], "swizzle": 0})",
       "tensor_map: the tensor spans 1280 bytes from offset 0, past the end of its buffer (1024 bytes)"},
      {R"({"dtype": "f32", "dims": [64, 4], "strides": [256], "box": [257, 2], "swizzle": 0})",
       "tensor_map.box[0]: 257 is out of range (at most 256)"},
      {R"({"dtype": "f32", "dims": [64, 4], "strides": [256], "box": [3, 2], "swizzle": 0})",
       "tensor_map.box[0]: the inner box dimension must be a multiple of 16 bytes"},
      {R"({"dtype": "f32", "dims": [64, 4], "strides": [256], "box": [32, 2], "swizzle": 1})",
       "tensor_map.box[0]: the inner box dimension exceeds the swizzle span of 32 bytes"},
      {R"({"dtype": "f32", "dims": [64, 4], "strides": [256], "box": [32, 2], "swizzle": 4})",
       "tensor_map.swizzle: 4 is out of range (at most 3)"},
  };
  for (const Case &c : cases) {
    Manifest bad;
    std::string e;
    EXPECT_FALSE(parseManifest(with(c.map), bad, e)) << c.map;
    EXPECT_NE(e.find(c.expect), std::string::npos) << "expected '" << c.expect << "' in: " << e;
  }
  // A misaligned tensor: offset 8 of x.
  Manifest bad;
  std::string e;
  std::string text = replaced(kManifest, arg,
                              R"({"buffer": "x", "offset": 8, "tensor_map": {"dtype": "f32", "dims": [4], "strides": [], "box": [4], "swizzle": 0}})");
  EXPECT_FALSE(parseManifest(text, bad, e));
  EXPECT_NE(e.find("(offset 8) is not 16-byte aligned"), std::string::npos) << e;
}

TEST(GPUManifest, MalformedInputIsAnErrorNotACrash) {
  const char *inputs[] = {"", "{", "[]", "null", "{\"format\": \"rlx-gpu-artifact\"}", "\xff\xfe", "{\"a\":1}}",
                          R"({"format": "rlx-gpu-artifact", "version": 1, "target": []})"};
  for (const char *text : inputs) {
    Manifest m;
    std::string err;
    EXPECT_FALSE(parseManifest(text, m, err)) << text;
    EXPECT_EQ(err.rfind("manifest.json: ", 0), 0u) << err;
  }
  // Every prefix of a valid manifest is rejected cleanly.
  std::string full = kManifest;
  for (size_t n = 0; n < full.size(); n += 7) {
    Manifest m;
    std::string err;
    EXPECT_FALSE(parseManifest(full.substr(0, n), m, err));
  }
}

TEST(GPUManifest, MissingFilesAreNamed) {
  std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  Manifest m;
  std::string err;
  EXPECT_FALSE(loadManifest(dir, m, err));
  EXPECT_NE(err.find("cannot read " + dir + "/manifest.json"), std::string::npos) << err;
  writeFile(dir + "/manifest.json", kManifest);
  writeFile(dir + "/f_kernels.ptx", "// ptx");
  EXPECT_FALSE(loadManifest(dir, m, err));
  EXPECT_NE(err.find("modules[0].cubin: file 'f_kernels.sm_90a.cubin' not found"), std::string::npos) << err;
  writeFile(dir + "/f_kernels.sm_90a.cubin", "cubin");
  EXPECT_FALSE(loadManifest(dir, m, err));
  EXPECT_NE(err.find("emulator.library: file 'kernels.emu.so' not found"), std::string::npos) << err;
  writeFile(dir + "/kernels.emu.so", "");
  EXPECT_TRUE(loadManifest(dir, m, err)) << err;
  EXPECT_EQ(m.dir, dir);
}

//===--- .npy -------------------------------------------------------------===//

TEST(GPUNpy, RoundTripsEveryDtype) {
  const char *dtypes[] = {"f32", "f16", "bf16", "f64", "i1", "i8", "i16", "i32", "i64", "ui8", "f8E4M3FN", "f8E5M2",
                          "f4E2M1FN"};
  std::string dir = tempDir();
  for (const char *d : dtypes) {
    BufferInfo b;
    b.name = std::string("b_") + d;
    b.dtype = d;
    b.shape = {3, 5};
    int eb = dtypeBytes(d);
    b.bytes = eb ? 15 * uint64_t(eb) : 3 * 3; // f4: 3 rows of ceil(5/2) bytes
    std::vector<uint8_t> data(b.bytes);
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = uint8_t(i * 37 + 11);
    std::string path = dir + "/" + b.name + ".npy";
    std::string err;
    ASSERT_TRUE(writeBufferNpy(path, b, data.data(), err)) << err;
    NpyArray a;
    ASSERT_TRUE(readNpy(path, a, err)) << err;
    EXPECT_EQ(a.descr, npyDescr(d)) << d;
    EXPECT_EQ(a.shape, std::string(d) == "f4E2M1FN" ? (std::vector<int64_t>{3, 3}) : b.shape) << d;
    std::vector<uint8_t> back;
    ASSERT_TRUE(npyToBuffer(a, b, back, err)) << err;
    EXPECT_EQ(back, data) << d;
  }
  EXPECT_EQ(npyDescr("bf16"), "<u2");
  EXPECT_EQ(npyDescr("i1"), "|b1");
  EXPECT_EQ(npyDescr("f8E4M3FN"), "|u1");
}

TEST(GPUNpy, ReadsVersion2And3AndBf16AsV2) {
  // Hand-built v2 and v3 headers; the header length is 4 bytes there.
  for (char version : {char(2), char(3)}) {
    std::string dict = "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }";
    dict.append(128 - 12 - dict.size() - 1, ' ');
    dict += '\n';
    std::string file("\x93NUMPY", 6);
    file += version;
    file += char(0);
    uint32_t len = uint32_t(dict.size());
    file.append(reinterpret_cast<const char *>(&len), 4);
    file += dict;
    file += std::string("\x80\x3f\x00\x40", 4); // bf16 1.0, 2.0
    NpyArray a;
    std::string err;
    ASSERT_TRUE(parseNpy(file, a, err)) << err;
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2}));
    BufferInfo b{"w", Role::Param, "bf16", {2}, 4};
    std::vector<uint8_t> out;
    ASSERT_TRUE(npyToBuffer(a, b, out, err)) << err;
    EXPECT_EQ(out, (std::vector<uint8_t>{0x80, 0x3f, 0x00, 0x40}));
  }
}

TEST(GPUNpy, MalformedHeadersAreErrors) {
  float v[2] = {1, 2};
  std::string good = formatNpy("<f4", {2}, v, sizeof v);
  NpyArray a;
  std::string err;
  ASSERT_TRUE(parseNpy(good, a, err)) << err;

  auto withHeader = [&](const std::string &dict, const std::string &data) {
    std::string file("\x93NUMPY\x01\x00", 8);
    file += char(dict.size() & 0xff);
    file += char(dict.size() >> 8);
    return file + dict + data;
  };
  std::string data(reinterpret_cast<const char *>(v), sizeof v);
  struct Case {
    std::string file, expect;
  };
  const Case cases[] = {
      {"", "bad magic"},
      {"\x93NUMPX\x01\x00\x00\x00", "bad magic"},
      {std::string("\x93NUMPY\x04\x00\x00\x00", 10), "version 4"},
      {std::string("\x93NUMPY\x01\x00\xff\xff", 10) + "{}", "truncated .npy header"},
      {std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12), "truncated .npy header"},
      {withHeader("[1, 2]", data), "header is not a dict"},
      {withHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", data), "Fortran-order"},
      {withHeader("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", data), "big-endian"},
      {withHeader("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", data), "unsupported dtype '<c8'"},
      {withHeader("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", data), "structured"},
      {withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", data), "non-negative integers"},
      {withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", data),
       "non-negative integers"},
      {withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536, 65536), }", data),
       "too large"},
      {withHeader("{'descr': '<f4', 'fortran_order': False, }", data), "lacks 'shape'"},
      {withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2,", data), "'shape'"},
      {withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", data), "(truncated)"},
      {withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", data), "(trailing data)"},
      {withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", data), "unknown header key"},
  };
  for (const Case &c : cases) {
    EXPECT_FALSE(parseNpy(c.file, a, err)) << c.expect;
    EXPECT_NE(err.find(c.expect), std::string::npos) << "expected '" << c.expect << "' in: " << err;
  }
  // Every truncation of a good file fails cleanly.
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_FALSE(parseNpy(good.substr(0, n), a, err));
}

TEST(GPUNpy, ChecksAgainstTheBuffer) {
  float v[6] = {};
  NpyArray a;
  std::string err;
  ASSERT_TRUE(parseNpy(formatNpy("<f4", {2, 3}, v, sizeof v), a, err)) << err;
  std::vector<uint8_t> out;
  BufferInfo b{"x", Role::Input, "f32", {6}, 24};
  EXPECT_TRUE(npyToBuffer(a, b, out, err)) << err; // same count, other shape
  b.shape = {4, 2};
  b.bytes = 32;
  EXPECT_FALSE(npyToBuffer(a, b, out, err));
  EXPECT_NE(err.find("buffer 'x': 6 elements (2,3), expected 8 (4,2)"), std::string::npos) << err;
  b = {"x", Role::Input, "f16", {6}, 12};
  EXPECT_FALSE(npyToBuffer(a, b, out, err));
  EXPECT_NE(err.find("buffer 'x' (f16): .npy dtype '<f4' does not match (expected '<f2')"), std::string::npos) << err;
  uint8_t packed[3] = {0x10, 0x32, 0x54};
  ASSERT_TRUE(parseNpy(formatNpy("|u1", {3}, packed, 3), a, err)) << err;
  b = {"q", Role::Param, "f4E2M1FN", {7}, 4};
  EXPECT_FALSE(npyToBuffer(a, b, out, err));
  EXPECT_NE(err.find("3 bytes, expected 4"), std::string::npos) << err;
}

//===--- CUDA backend on a fake driver ------------------------------------===//

// What the fake driver was asked to do. Its cuLaunchKernel fails the way the
// real one does when the shared memory attribute was not raised enough.
struct FakeState {
  std::mutex mu;
  int optin = 232448;
  int staticShared = 1;
  CUresult cubinResult = CUDA_SUCCESS;
  CUresult launchResult = CUDA_SUCCESS;
  int maxDynamicAttr = 0; ///< the function's attribute (0 = never set, 48 KiB minus static)
  std::vector<int> attrSets;
  std::vector<std::string> loaded; ///< "cubin" or "ptx", in order
  int launches = 0;
  int launchesRejected = 0;
};
FakeState *fake = nullptr;

CUfunction fakeFunction() { return reinterpret_cast<CUfunction>(uintptr_t(0x1234)); }

CUDADriver fakeDriver() {
  CUDADriver d;
  d.cuInit = [](unsigned) { return CUresult(CUDA_SUCCESS); };
  d.cuDeviceGetCount = [](int *n) {
    *n = 1;
    return CUresult(CUDA_SUCCESS);
  };
  d.cuDeviceGet = [](CUdevice *dev, int) {
    *dev = 0;
    return CUresult(CUDA_SUCCESS);
  };
  d.cuDeviceGetAttribute = [](int *v, int attr, CUdevice) {
    *v = attr == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN ? fake->optin
         : attr == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR      ? 9
                                                                      : 0;
    return CUresult(CUDA_SUCCESS);
  };
  d.cuDeviceGetName = [](char *n, int len, CUdevice) {
    std::strncpy(n, "fake", size_t(len));
    return CUresult(CUDA_SUCCESS);
  };
  d.cuDevicePrimaryCtxRetain = [](CUcontext *c, CUdevice) {
    *c = reinterpret_cast<CUcontext>(uintptr_t(0xC0));
    return CUresult(CUDA_SUCCESS);
  };
  d.cuDevicePrimaryCtxRelease = [](CUdevice) { return CUresult(CUDA_SUCCESS); };
  d.cuCtxSetCurrent = [](CUcontext) { return CUresult(CUDA_SUCCESS); };
  d.cuStreamCreate = [](CUstream *s, unsigned) {
    *s = reinterpret_cast<CUstream>(uintptr_t(0x5));
    return CUresult(CUDA_SUCCESS);
  };
  d.cuStreamDestroy = [](CUstream) { return CUresult(CUDA_SUCCESS); };
  d.cuStreamSynchronize = [](CUstream) { return CUresult(CUDA_SUCCESS); };
  d.cuModuleLoadData = [](CUmodule *m, const void *image) {
    std::lock_guard<std::mutex> l(fake->mu);
    bool ptx = std::strncmp(static_cast<const char *>(image), ".version", 8) == 0;
    fake->loaded.push_back(ptx ? "ptx" : "cubin");
    if (!ptx && fake->cubinResult != CUDA_SUCCESS)
      return fake->cubinResult;
    *m = reinterpret_cast<CUmodule>(uintptr_t(0x30));
    return CUresult(CUDA_SUCCESS);
  };
  d.cuModuleUnload = [](CUmodule) { return CUresult(CUDA_SUCCESS); };
  d.cuModuleGetFunction = [](CUfunction *f, CUmodule, const char *name) {
    if (std::strcmp(name, "big_smem") != 0)
      return CUresult(CUDA_ERROR_NOT_FOUND);
    *f = fakeFunction();
    return CUresult(CUDA_SUCCESS);
  };
  d.cuFuncGetAttribute = [](int *v, int attr, CUfunction) {
    if (attr != CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
      return CUresult(CUDA_ERROR_INVALID_VALUE);
    *v = fake->staticShared;
    return CUresult(CUDA_SUCCESS);
  };
  d.cuFuncSetAttribute = [](CUfunction, int attr, int value) {
    std::lock_guard<std::mutex> l(fake->mu);
    if (attr != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value + fake->staticShared > fake->optin)
      return CUresult(CUDA_ERROR_INVALID_VALUE);
    fake->maxDynamicAttr = value;
    fake->attrSets.push_back(value);
    return CUresult(CUDA_SUCCESS);
  };
  d.cuLaunchKernel = [](CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned shared,
                        CUstream, void **, void **) {
    std::lock_guard<std::mutex> l(fake->mu);
    int limit = fake->maxDynamicAttr ? fake->maxDynamicAttr : 48 * 1024 - fake->staticShared;
    if (int(shared) > limit) {
      ++fake->launchesRejected;
      return CUresult(CUDA_ERROR_INVALID_VALUE);
    }
    ++fake->launches;
    return fake->launchResult;
  };
  d.cuGetErrorName = [](CUresult r, const char **name) {
    *name = r == CUDA_ERROR_LAUNCH_FAILED        ? "CUDA_ERROR_LAUNCH_FAILED"
            : r == CUDA_ERROR_NO_BINARY_FOR_GPU  ? "CUDA_ERROR_NO_BINARY_FOR_GPU"
            : r == CUDA_ERROR_INVALID_IMAGE      ? "CUDA_ERROR_INVALID_IMAGE"
            : r == CUDA_ERROR_INVALID_VALUE      ? "CUDA_ERROR_INVALID_VALUE"
            : r == CUDA_ERROR_NOT_FOUND          ? "CUDA_ERROR_NOT_FOUND"
                                                 : "CUDA_ERROR_UNKNOWN";
    return CUresult(CUDA_SUCCESS);
  };
  return d;
}

const char *kSmemManifest = R"({"format": "rlx-gpu-artifact", "version": 1,
 "target": {"chip": "sm_90a", "ptx_version": "8.0"},
 "modules": [{"name": "m", "cubin": "m.sm_90a.cubin", "ptx": "m.ptx"}],
 "kernels": [{"name": "big_smem", "module": "m", "num_params": 1, "block": [128,1,1], "static_shared_bytes": 1}],
 "entry": "f",
 "functions": [{"name": "f", "arena_bytes": 64, "buffers": [],
   "launches": [{"kernel": "big_smem", "grid": [1,1,1], "block": [128,1,1], "dynamic_shared_bytes": 49152,
                 "args": [{"buffer": "@arena", "offset": 0}]}]}]})";

class FakeCUDA : public ::testing::Test {
protected:
  void SetUp() override {
    fake = &state;
    driver = fakeDriver();
    dir = tempDir();
    writeFile(dir + "/manifest.json", kSmemManifest);
    writeFile(dir + "/m.sm_90a.cubin", std::string("\x7f" "ELF cubin", 10));
    writeFile(dir + "/m.ptx", ".version 8.0\n.target sm_90a\n");
    std::string err;
    ASSERT_TRUE(loadManifest(dir, manifest, err)) << err;
  }
  void TearDown() override { fake = nullptr; }

  std::unique_ptr<Backend> open(std::string &err) {
    std::unique_ptr<Backend> b = createCUDABackend(driver, err);
    if (b && !b->loadModules(manifest, err))
      b.reset();
    return b;
  }
  bool launch(Backend &b, uint64_t dyn, std::string &err) {
    DevicePtr p = 0;
    void *params[] = {&p};
    return b.launch(0, {1, 1, 1}, {128, 1, 1}, dyn, params, err);
  }

  FakeState state;
  CUDADriver driver;
  std::string dir;
  Manifest manifest;
};

TEST_F(FakeCUDA, OneStaticByteAndExactly48KiBDynamicRaisesTheAttribute) {
  std::string err;
  auto b = open(err);
  ASSERT_TRUE(b) << err;
  ASSERT_TRUE(launch(*b, 49152, err)) << err;
  EXPECT_EQ(state.attrSets, (std::vector<int>{49152}));
  EXPECT_EQ(state.launches, 1);
  EXPECT_EQ(state.launchesRejected, 0);
  // Up to 48 KiB in total needs nothing.
  FakeState fresh;
  fake = &fresh;
  auto b2 = open(err);
  ASSERT_TRUE(b2) << err;
  ASSERT_TRUE(launch(*b2, 49151, err)) << err;
  EXPECT_TRUE(fresh.attrSets.empty());
  fake = &state;
}

TEST_F(FakeCUDA, TheAttributeIsAHighWaterMark) {
  std::string err;
  auto b = open(err);
  ASSERT_TRUE(b) << err;
  for (uint64_t dyn : {100000u, 1000u, 60000u, 100000u, 50000u})
    ASSERT_TRUE(launch(*b, dyn, err)) << dyn << ": " << err;
  EXPECT_EQ(state.attrSets, (std::vector<int>{100000}));
  ASSERT_TRUE(launch(*b, 150000, err)) << err;
  EXPECT_EQ(state.attrSets, (std::vector<int>{100000, 150000}));
  EXPECT_EQ(state.maxDynamicAttr, 150000);
  EXPECT_EQ(state.launches, 6);
  EXPECT_EQ(state.launchesRejected, 0);
}

TEST_F(FakeCUDA, LargeSmallLargeFromTwoThreads) {
  std::string err;
  auto b = open(err);
  ASSERT_TRUE(b) << err;
  std::atomic<int> failures{0};
  auto worker = [&](uint64_t large) {
    std::string e;
    for (int i = 0; i < 200; ++i)
      for (uint64_t dyn : {large, uint64_t(512), large - 4096})
        if (!launch(*b, dyn, e))
          ++failures;
  };
  std::thread t1(worker, 120000), t2(worker, 200000);
  t1.join();
  t2.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(state.launchesRejected, 0);
  EXPECT_EQ(state.launches, 1200);
  EXPECT_EQ(state.maxDynamicAttr, 200000);
  // Raised at most twice (120000 then 200000, or 200000 alone), never lowered.
  ASSERT_FALSE(state.attrSets.empty());
  EXPECT_LE(state.attrSets.size(), 2u);
  for (size_t i = 1; i < state.attrSets.size(); ++i)
    EXPECT_GT(state.attrSets[i], state.attrSets[i - 1]);
}

TEST_F(FakeCUDA, AboveTheOptInLimitFailsBeforeTheLaunch) {
  std::string err;
  auto b = open(err);
  ASSERT_TRUE(b) << err;
  EXPECT_FALSE(launch(*b, 232448, err)); // + 1 static byte
  EXPECT_NE(err.find("kernel 'big_smem'"), std::string::npos) << err;
  EXPECT_NE(err.find("232449 bytes of shared memory requested"), std::string::npos) << err;
  EXPECT_NE(err.find("opt-in limit of 232448 bytes"), std::string::npos) << err;
  EXPECT_EQ(state.launches + state.launchesRejected, 0);
  EXPECT_TRUE(state.attrSets.empty());
  EXPECT_TRUE(launch(*b, 232447, err)) << err;
}

TEST_F(FakeCUDA, AFailingLaunchIsReportedWithKernelAndModule) {
  std::string err;
  auto b = open(err);
  ASSERT_TRUE(b) << err;
  state.launchResult = CUDA_ERROR_LAUNCH_FAILED;
  EXPECT_FALSE(launch(*b, 0, err));
  EXPECT_NE(err.find("cuLaunchKernel of kernel 'big_smem' (module 'm'): CUDA_ERROR_LAUNCH_FAILED"), std::string::npos)
      << err;
}

TEST_F(FakeCUDA, RejectedCubinFallsBackToPTX) {
  for (CUresult r : {CUresult(CUDA_ERROR_NO_BINARY_FOR_GPU), CUresult(CUDA_ERROR_INVALID_IMAGE)}) {
    FakeState s;
    s.cubinResult = r;
    fake = &s;
    std::string err;
    auto b = open(err);
    ASSERT_TRUE(b) << err;
    EXPECT_EQ(s.loaded, (std::vector<std::string>{"cubin", "ptx"}));
    EXPECT_TRUE(launch(*b, 0, err)) << err;
  }
  fake = &state;
}

TEST_F(FakeCUDA, RejectedCubinWithoutPTXNamesTheModule) {
  writeFile(dir + "/manifest.json", replaced(kSmemManifest, R"(, "ptx": "m.ptx")", ""));
  std::string err;
  ASSERT_TRUE(loadManifest(dir, manifest, err)) << err;
  state.cubinResult = CUDA_ERROR_NO_BINARY_FOR_GPU;
  EXPECT_FALSE(open(err));
  EXPECT_NE(err.find("module 'm'"), std::string::npos) << err;
  EXPECT_NE(err.find("CUDA_ERROR_NO_BINARY_FOR_GPU"), std::string::npos) << err;
  EXPECT_NE(err.find("no PTX to fall back to"), std::string::npos) << err;
  // Any other rejection is not retried with the PTX.
  writeFile(dir + "/manifest.json", kSmemManifest);
  ASSERT_TRUE(loadManifest(dir, manifest, err)) << err;
  FakeState s;
  s.cubinResult = CUDA_ERROR_INVALID_VALUE;
  fake = &s;
  EXPECT_FALSE(open(err));
  EXPECT_EQ(s.loaded, (std::vector<std::string>{"cubin"}));
  fake = &state;
}

TEST_F(FakeCUDA, MissingKernelIsNamed) {
  writeFile(dir + "/manifest.json", replaced(replaced(kSmemManifest, R"("name": "big_smem")", R"("name": "other")"),
                                             R"("kernel": "big_smem")", R"("kernel": "other")"));
  std::string err;
  ASSERT_TRUE(loadManifest(dir, manifest, err)) << err;
  EXPECT_FALSE(open(err));
  EXPECT_NE(err.find("kernel 'other' in module 'm': CUDA_ERROR_NOT_FOUND"), std::string::npos) << err;
}

TEST_F(FakeCUDA, NoDevice) {
  driver.cuDeviceGetCount = [](int *n) {
    *n = 0;
    return CUresult(CUDA_SUCCESS);
  };
  std::string err;
  EXPECT_FALSE(createCUDABackend(driver, err));
  EXPECT_EQ(err, "no CUDA device");
  driver.cuInit = [](unsigned) { return CUresult(CUDA_ERROR_NO_DEVICE); };
  EXPECT_FALSE(createCUDABackend(driver, err));
  EXPECT_NE(err.find("no CUDA device"), std::string::npos) << err;
}

TEST(GPUDriver, NoLibcudaIsAClearError) {
  CUDADriver d;
  std::string err;
  EXPECT_FALSE(loadCUDADriver(d, err, "libcuda-rlx-test-absent.so.1"));
  EXPECT_EQ(err, "no CUDA driver (libcuda-rlx-test-absent.so.1 not found)");
  void *real = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (real) {
    ::dlclose(real);
    GTEST_SKIP() << "libcuda.so.1 is loadable here";
  }
  EXPECT_FALSE(loadCUDADriver(d, err));
  EXPECT_EQ(err, "no CUDA driver (libcuda.so.1 not found)");
  std::string dir = tempDir();
  writeFile(dir + "/manifest.json", kManifest);
  writeFile(dir + "/f_kernels.sm_90a.cubin", "x");
  writeFile(dir + "/f_kernels.ptx", "x");
  writeFile(dir + "/kernels.emu.so", "");
  char msg[256];
  EXPECT_EQ(rlx_gpu_open(dir.c_str(), "cuda", msg, sizeof msg), nullptr);
  EXPECT_STREQ(msg, "no CUDA driver (libcuda.so.1 not found)");
}

//===--- The emulator, end to end -----------------------------------------===//

std::string testKernels() {
  if (const char *env = std::getenv("RLX_GPU_TEST_KERNELS"))
    return env;
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return "";
  exe[n] = '\0';
  std::string d(exe);
  d = d.substr(0, d.rfind('/'));
  return d.substr(0, d.rfind('/')) + "/lib/rlx-gpu-test/kernels.emu.so";
}

// y = add_one(add_one(x)) through the arena at offset 64: two launches.
const char *kEmuManifest = R"({"format": "rlx-gpu-artifact", "version": 1,
 "target": {"chip": "sm_90a", "ptx_version": "8.0"},
 "modules": [{"name": "k", "ptx": "k.ptx"}],
 "emulator": {"library": "kernels.emu.so"},
 "kernels": [{"name": "add_one", "module": "k", "num_params": 3, "block": [32,1,1], "static_shared_bytes": 0,
              "emu": {"symbol": "add_one__emu"}},
             {"name": "add_one_oob", "module": "k", "num_params": 3, "block": [32,1,1], "static_shared_bytes": 0,
              "emu": {"symbol": "add_one_oob__emu", "shared": []}}],
 "entry": "f",
 "functions": [{"name": "f", "arena_bytes": 512,
   "buffers": [{"name": "x", "role": "input", "dtype": "f32", "shape": [100], "bytes": 400},
               {"name": "n", "role": "param", "dtype": "i32", "shape": [1], "bytes": 4},
               {"name": "y", "role": "output", "dtype": "f32", "shape": [100], "bytes": 400}],
   "launches": [{"kernel": "add_one", "grid": [4,1,1], "block": [32,1,1], "dynamic_shared_bytes": 0,
                 "args": [{"buffer": "x", "offset": 0}, {"buffer": "@arena", "offset": 64}, {"buffer": "n", "offset": 0}]},
                {"kernel": "add_one", "grid": [4,1,1], "block": [32,1,1], "dynamic_shared_bytes": 0,
                 "args": [{"buffer": "@arena", "offset": 64}, {"buffer": "y", "offset": 0}, {"buffer": "n", "offset": 0}]}]},
  {"name": "g", "arena_bytes": 0,
   "buffers": [{"name": "x", "role": "input", "dtype": "f32", "shape": [100], "bytes": 400},
               {"name": "n", "role": "param", "dtype": "i32", "shape": [1], "bytes": 4},
               {"name": "y", "role": "output", "dtype": "f32", "shape": [100], "bytes": 400}],
   "launches": [{"kernel": "add_one_oob", "grid": [4,1,1], "block": [32,1,1], "dynamic_shared_bytes": 0,
                 "args": [{"buffer": "x", "offset": 0}, {"buffer": "y", "offset": 0}, {"buffer": "n", "offset": 0}]}]}]})";

std::string emuArtifact() {
  std::string so = testKernels();
  std::string dir = tempDir();
  writeFile(dir + "/manifest.json", kEmuManifest);
  writeFile(dir + "/k.ptx", "// the emulator does not read it\n");
  if (::symlink(so.c_str(), (dir + "/kernels.emu.so").c_str()) != 0)
    return "";
  return dir;
}

TEST(GPUEmulator, RunsAnArtifactEndToEnd) {
  std::string dir = emuArtifact();
  ASSERT_FALSE(dir.empty());
  char msg[1024];
  rlx_gpu_artifact *h = rlx_gpu_open(dir.c_str(), "emu", msg, sizeof msg);
  ASSERT_NE(h, nullptr) << msg << " (kernels: " << testKernels() << ")";
  EXPECT_STREQ(rlx_gpu_device(h), "emu");
  EXPECT_STREQ(rlx_gpu_entry(h), "f");
  ASSERT_EQ(rlx_gpu_num_functions(h), 2);
  EXPECT_STREQ(rlx_gpu_function_name(h, 1), "g");
  ASSERT_EQ(rlx_gpu_num_buffers(h, "f"), 3);
  const char *name, *role, *dtype;
  int rank;
  const int64_t *shape;
  uint64_t bytes;
  ASSERT_EQ(rlx_gpu_buffer_info(h, "f", 1, &name, &role, &dtype, &rank, &shape, &bytes), 0);
  EXPECT_STREQ(name, "n");
  EXPECT_STREQ(role, "param");
  EXPECT_STREQ(dtype, "i32");
  ASSERT_EQ(rank, 1);
  EXPECT_EQ(shape[0], 1);
  EXPECT_EQ(bytes, 4u);

  // Inputs are required.
  EXPECT_NE(rlx_gpu_run(h, "f"), 0);
  EXPECT_NE(std::string(rlx_gpu_last_error(h)).find("buffers never set: 'x' (input), 'n' (param)"), std::string::npos)
      << rlx_gpu_last_error(h);

  int32_t n = 100;
  ASSERT_EQ(rlx_gpu_set_buffer(h, "f", "n", &n, 4), 0) << rlx_gpu_last_error(h);
  std::vector<float> x(100), y(100, -1.0f);
  for (int i = 0; i < 100; ++i)
    x[size_t(i)] = 0.5f * float(i) - 3.0f;
  EXPECT_NE(rlx_gpu_set_buffer(h, "f", "x", x.data(), 399), 0);
  EXPECT_NE(std::string(rlx_gpu_last_error(h)).find("is 400 bytes, got 399"), std::string::npos);
  ASSERT_EQ(rlx_gpu_set_buffer(h, nullptr, "x", x.data(), 400), 0) << rlx_gpu_last_error(h);
  ASSERT_EQ(rlx_gpu_run(h, nullptr), 0) << rlx_gpu_last_error(h);
  ASSERT_EQ(rlx_gpu_get_buffer(h, "f", "y", y.data(), 400), 0) << rlx_gpu_last_error(h);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(y[size_t(i)], 0.5f * float(i) - 1.0f) << i;

  // The param stays across runs; a new input gives new outputs.
  for (float &v : x)
    v *= 2;
  ASSERT_EQ(rlx_gpu_set_buffer(h, "f", "x", x.data(), 400), 0);
  double median = -1, minimum = -1;
  ASSERT_EQ(rlx_gpu_time(h, "f", 1, 3, &median, &minimum), 0) << rlx_gpu_last_error(h);
  EXPECT_GE(median, minimum);
  EXPECT_GE(minimum, 0.0);
  ASSERT_EQ(rlx_gpu_get_buffer(h, "f", "y", y.data(), 400), 0);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(y[size_t(i)], float(i) - 4.0f) << i;

  EXPECT_NE(rlx_gpu_run(h, "nope"), 0);
  EXPECT_STREQ(rlx_gpu_last_error(h), "unknown function 'nope'");
  rlx_gpu_close(h);
}

TEST(GPUEmulator, OutOfBoundsIsReported) {
  std::string dir = emuArtifact();
  ASSERT_FALSE(dir.empty());
  char msg[1024];
  rlx_gpu_artifact *h = rlx_gpu_open(dir.c_str(), "emu", msg, sizeof msg);
  ASSERT_NE(h, nullptr) << msg;
  int32_t n = 100;
  std::vector<float> x(100, 1.0f);
  ASSERT_EQ(rlx_gpu_set_buffer(h, "g", "n", &n, 4), 0);
  ASSERT_EQ(rlx_gpu_set_buffer(h, "g", "x", x.data(), 400), 0);
  EXPECT_NE(rlx_gpu_run(h, "g"), 0);
  std::string report = rlx_gpu_last_error(h);
  EXPECT_NE(report.find("launches[0] (kernel 'add_one_oob')"), std::string::npos) << report;
  // Thread 4 of block 3 is element 100, the first past the end of x.
  EXPECT_NE(report.find("kernel 'add_one_oob' block (3,0,0) thread (4,0,0)"), std::string::npos) << report;
  EXPECT_EQ(report.find("block (2,0,0)"), std::string::npos) << report;
  rlx_gpu_close(h);
}

//===--- Tensor parallelism: collective steps -----------------------------===//

// kEmuManifest's function f with a sum all-reduce from the arena into y in
// place of the second add_one.
std::string collectiveManifest() {
  return replaced(kEmuManifest,
                  R"({"kernel": "add_one", "grid": [4,1,1], "block": [32,1,1], "dynamic_shared_bytes": 0,
                 "args": [{"buffer": "@arena", "offset": 64}, {"buffer": "y", "offset": 0}, {"buffer": "n", "offset": 0}]})",
                  R"({"collective": "all_reduce", "ranks": 2, "reduction": "sum", "dtype": "f32", "elements": 100,
                 "args": [{"buffer": "@arena", "offset": 64}, {"buffer": "y", "offset": 0}]})");
}

TEST(GPUManifest, CollectiveSteps) {
  Manifest m;
  std::string err;
  ASSERT_TRUE(parseManifest(collectiveManifest(), m, err)) << err;
  const LaunchInfo &l = m.functions[0].launches[1];
  EXPECT_EQ(l.collective, "all_reduce");
  EXPECT_EQ(l.reduction, "sum");
  EXPECT_EQ(l.dtype, "f32");
  EXPECT_EQ(l.elements, 100u);
  ASSERT_EQ(l.args.size(), 2u);
  EXPECT_EQ(l.args[0].buffer, kArena);
  EXPECT_EQ(l.args[0].offset, 64u);
  struct Case {
    const char *from, *to, *expect;
  };
  const Case cases[] = {
      {R"("collective": "all_reduce")", R"("collective": "all_to_all")",
       "functions[0].launches[1].collective: 'all_to_all' is not a collective the runtime runs (all_reduce, all_gather)"},
      {R"("reduction": "sum")", R"("reduction": "max")",
       "functions[0].launches[1].reduction: 'max' is not a reduction the runtime runs (sum)"},
      {R"("dtype": "f32", "elements")", R"("dtype": "i32", "elements")",
       "functions[0].launches[1].dtype: 'i32' is not f32, f16 or bf16"},
      {R"("elements": 100,)", R"("elements": 113,)",
       "functions[0].launches[1].args[0]: 113 elements of f32 at offset 64 pass the end of their buffer (512 bytes)"},
      {R"([{"buffer": "@arena", "offset": 64}, {"buffer": "y", "offset": 0}]})", R"([{"buffer": "y", "offset": 0}]})",
       "functions[0].launches[1].args: 1 arguments, but a collective has 2 (send, receive)"},
      {R"("reduction": "sum", )", "", "functions[0].launches[1].reduction: missing"},
      {R"("ranks": 2, )", "", "functions[0].launches[1].ranks: missing"},
      {R"("collective": "all_reduce", "ranks": 2, "reduction": "sum")", R"("collective": "all_gather", "ranks": 2)",
       "functions[0].launches[1].args[1]: 200 elements of f32 at offset 0 pass the end of their buffer (400 bytes)"},
  };
  for (const Case &c : cases) {
    Manifest bad;
    EXPECT_FALSE(parseManifest(replaced(collectiveManifest(), c.from, c.to), bad, err)) << c.to;
    EXPECT_NE(err.find(c.expect), std::string::npos) << err;
  }
}

// Two "ranks" with the same values: the host all-reduce doubles them.
int doublingAllReduce(void *ctx, const void *send, void *recv, size_t count, const char *dtype) {
  ++*static_cast<int *>(ctx);
  if (std::strcmp(dtype, "f32") != 0)
    return 1;
  std::vector<float> in(static_cast<const float *>(send), static_cast<const float *>(send) + count);
  for (size_t i = 0; i < count; ++i)
    static_cast<float *>(recv)[i] = 2 * in[i];
  return 0;
}

// Two "ranks" with the same block: the host all-gather repeats it.
int repeatingAllGather(void *ctx, const void *send, void *recv, size_t bytes) {
  std::memmove(static_cast<char *>(recv) + bytes, send, bytes);
  std::memmove(recv, send, bytes);
  return 0;
}

TEST(GPUEmulator, CollectivesRunOverTheCommunicator) {
  std::string dir = emuArtifact();
  ASSERT_FALSE(dir.empty());
  char msg[1024];
  int32_t n = 100;
  std::vector<float> x(100), y(100);
  for (int i = 0; i < 100; ++i)
    x[size_t(i)] = float(i) - 7.0f;
  auto run = [&](rlx_gpu_artifact *h) {
    return rlx_gpu_set_buffer(h, "f", "n", &n, 4) == 0 && rlx_gpu_set_buffer(h, "f", "x", x.data(), 400) == 0 &&
           rlx_gpu_run(h, "f") == 0 && rlx_gpu_get_buffer(h, "f", "y", y.data(), 400) == 0;
  };
  writeFile(dir + "/manifest.json", collectiveManifest());
  // A plan for 2 ranks does not run as one (its result would be partial).
  rlx_gpu_artifact *h = rlx_gpu_open(dir.c_str(), "emu", msg, sizeof msg);
  ASSERT_NE(h, nullptr) << msg;
  EXPECT_FALSE(run(h));
  EXPECT_NE(std::string(rlx_gpu_last_error(h)).find("launches[1] (all_reduce): the plan is for 2 ranks, the "
                                                    "communicator has 1"),
            std::string::npos)
      << rlx_gpu_last_error(h);
  EXPECT_NE(rlx_gpu_set_communicator(h, 2, 2, nullptr, nullptr, nullptr, nullptr), 0);
  EXPECT_STREQ(rlx_gpu_last_error(h), "rlx_gpu_set_communicator: rank 2 of 2 is not a rank");
  EXPECT_NE(rlx_gpu_set_communicator(h, 0, 2, nullptr, nullptr, nullptr, nullptr), 0);
  EXPECT_NE(std::string(rlx_gpu_last_error(h)).find("through a host all-reduce and all-gather, and none was given"),
            std::string::npos)
      << rlx_gpu_last_error(h);
  int calls = 0;
  ASSERT_EQ(rlx_gpu_set_communicator(h, 1, 2, nullptr, &doublingAllReduce, &repeatingAllGather, &calls), 0)
      << rlx_gpu_last_error(h);
  ASSERT_TRUE(run(h)) << rlx_gpu_last_error(h);
  EXPECT_EQ(calls, 1);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(y[size_t(i)], 2 * (float(i) - 6.0f)) << i;
  rlx_gpu_close(h);

  // An all-gather of 50 elements per rank: y holds both ranks' blocks.
  writeFile(dir + "/manifest.json",
            replaced(replaced(collectiveManifest(), R"("collective": "all_reduce", "ranks": 2, "reduction": "sum")",
                              R"("collective": "all_gather", "ranks": 2)"),
                     R"("elements": 100)", R"("elements": 50)"));
  h = rlx_gpu_open(dir.c_str(), "emu", msg, sizeof msg);
  ASSERT_NE(h, nullptr) << msg;
  ASSERT_EQ(rlx_gpu_set_communicator(h, 0, 2, nullptr, &doublingAllReduce, &repeatingAllGather, &calls), 0);
  ASSERT_TRUE(run(h)) << rlx_gpu_last_error(h);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(y[size_t(i)], float(i % 50) - 6.0f) << i;
  rlx_gpu_close(h);

  // An artifact compiled for one rank runs only as that rank.
  writeFile(dir + "/manifest.json", replaced(collectiveManifest(), R"("entry": "f",)", R"("entry": "f", "rank": 1,)"));
  h = rlx_gpu_open(dir.c_str(), "emu", msg, sizeof msg);
  ASSERT_NE(h, nullptr) << msg;
  EXPECT_NE(rlx_gpu_set_communicator(h, 0, 2, nullptr, &doublingAllReduce, &repeatingAllGather, &calls), 0);
  EXPECT_STREQ(rlx_gpu_last_error(h), "rlx_gpu_set_communicator: the artifact was compiled for rank 1, not rank 0");
  EXPECT_EQ(rlx_gpu_set_communicator(h, 1, 2, nullptr, &doublingAllReduce, &repeatingAllGather, &calls), 0);
  rlx_gpu_close(h);

  // A one-rank plan needs no communicator: its all-reduce is a copy.
  writeFile(dir + "/manifest.json", replaced(collectiveManifest(), R"("ranks": 2)", R"("ranks": 1)"));
  h = rlx_gpu_open(dir.c_str(), "emu", msg, sizeof msg);
  ASSERT_NE(h, nullptr) << msg;
  ASSERT_TRUE(run(h)) << rlx_gpu_last_error(h);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(y[size_t(i)], float(i) - 6.0f) << i;
  rlx_gpu_close(h);
}

TEST(GPUNCCL, OpenedAtRunTime) {
  NCCLLibrary nccl;
  std::string err;
  EXPECT_FALSE(loadNCCL(nccl, err, "libnccl-rlx-test-absent.so.2"));
  EXPECT_NE(err.find("no NCCL (libnccl-rlx-test-absent.so.2 not found"), std::string::npos) << err;
  // The id of a CUDA job needs NCCL: without it, a named error.
  setenv("RLX_NCCL_LIBRARY", "libnccl-rlx-test-absent.so.2", 1);
  unsigned char id[128];
  char msg[256];
  EXPECT_NE(rlx_gpu_nccl_unique_id(id, msg, sizeof msg), 0);
  EXPECT_NE(std::string(msg).find("no NCCL (libnccl-rlx-test-absent.so.2"), std::string::npos) << msg;
  unsetenv("RLX_NCCL_LIBRARY");
  EXPECT_EQ(ncclDataTypeOf("f32"), kNcclFloat32);
  EXPECT_EQ(ncclDataTypeOf("bf16"), kNcclBfloat16);
  EXPECT_EQ(ncclDataTypeOf("i8"), -1);
  // Where the CUDA toolkit's NCCL is installed, every entry point resolves.
  void *real = ::dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!real)
    GTEST_SKIP() << "libnccl.so.2 is not installed here";
  ::dlclose(real);
  ASSERT_TRUE(loadNCCL(nccl, err)) << err;
  EXPECT_NE(nccl.ncclAllReduce, nullptr);
  EXPECT_NE(nccl.ncclCommInitRank, nullptr);
}

TEST(GPUEmulator, ArtifactErrors) {
  std::string dir = emuArtifact();
  char msg[1024];
  writeFile(dir + "/manifest.json", replaced(kEmuManifest, "add_one_oob__emu", "missing__emu"));
  EXPECT_EQ(rlx_gpu_open(dir.c_str(), "emu", msg, sizeof msg), nullptr);
  EXPECT_NE(std::string(msg).find("kernels[1].emu.symbol: 'missing__emu'"), std::string::npos) << msg;
  writeFile(dir + "/manifest.json", replaced(kEmuManifest, R"("emulator": {"library": "kernels.emu.so"},)", ""));
  EXPECT_EQ(rlx_gpu_open(dir.c_str(), "emu", msg, sizeof msg), nullptr);
  EXPECT_NE(std::string(msg).find("no emulator build"), std::string::npos) << msg;
  writeFile(dir + "/manifest.json", kEmuManifest);
  EXPECT_EQ(rlx_gpu_open(dir.c_str(), "tpu", msg, sizeof msg), nullptr);
  EXPECT_NE(std::string(msg).find("unknown device 'tpu'"), std::string::npos) << msg;
  // A truncated error buffer stays NUL-terminated.
  char small[8];
  EXPECT_EQ(rlx_gpu_open("/nonexistent-rlx", "emu", small, sizeof small), nullptr);
  EXPECT_EQ(std::strlen(small), 7u);
}

} // namespace
