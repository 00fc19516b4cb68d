//===- GPUArtifact.cpp - Write the deployable GPU artifact -----------------===//
//
// The manifest format is docs/gpu-artifact.md. Kernel launch arguments are
// the roots of their alias chains: an `rlx_lir.view` of the arena is the
// arena plus its byte offset, a function argument is that IO buffer; views
// on top (subview, expand/collapse_shape, cast) pass the same base pointer
// and the kernel applies their static layout offset (bare-pointer calling
// convention), exactly as a host lowering would.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/Common/IR/IONames.h"
#include "RLX/Target/NVVM/GPUArtifact.h"

#include "RLX/Dialect/Common/IR/SourceLocations.h"
#include "RLX/Dialect/Common/IR/StorageSize.h"
#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Target/NVVM/NVVMTarget.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/Path.h"

#include <set>

using namespace mlir;
using namespace mlir::rlx;
namespace json = llvm::json;

namespace {

std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

FailureOr<int64_t> constantIndex(Value v) {
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return c.value();
  if (auto c = v.getDefiningOp<arith::ConstantIntOp>())
    return c.value();
  return failure();
}

/// IO name of a function argument: its rlx.input / rlx.param / rlx.output.
std::pair<std::string, std::string> ioName(func::FuncOp fn, unsigned i) {
  for (StringRef role : {"input", "param", "output"})
    if (auto s = fn.getArgAttrOfType<StringAttr>(i, ("rlx." + role).str()))
      return {s.getValue().str(), role.str()};
  return {"arg" + std::to_string(i), "input"};
}

struct Root {
  BlockArgument arg;
  /// A module constant (memref.global) instead of an argument.
  std::string global;
  int64_t offset = 0;
};

/// Names an output shares with an input or param (a layer's hidden_states
/// in and out): launch arguments on them say their role.
std::set<std::string> sharedNames(func::FuncOp fn) {
  std::set<std::string> in, out, both;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    if (fn.getArgAttr(i, "rlx_lir.arena"))
      continue;
    auto [name, role] = ioName(fn, i);
    (role == "output" ? out : in).insert(name);
  }
  for (const std::string &n : out)
    if (in.count(n))
      both.insert(n);
  return both;
}

/// A launch argument's buffer reference: {"buffer", "offset"} (and "role"
/// where the name is shared).
json::Object argRef(func::FuncOp fn, const Root &root) {
  if (!root.global.empty())
    return json::Object{{"constant", root.global}, {"offset", root.offset}};
  unsigned i = root.arg.getArgNumber();
  if (fn.getArgAttr(i, "rlx_lir.arena"))
    return json::Object{{"buffer", "@arena"}, {"offset", root.offset}};
  auto [name, role] = ioName(fn, i);
  json::Object o{{"buffer", name}, {"offset", root.offset}};
  if (sharedNames(fn).count(name))
    o["role"] = role;
  return o;
}

FailureOr<Root> traceToRoot(Value v, Operation *user) {
  Root r;
  while (true) {
    if (auto a = dyn_cast<BlockArgument>(v)) {
      if (!isa<func::FuncOp>(a.getOwner()->getParentOp()))
        break;
      r.arg = a;
      return r;
    }
    Operation *def = v.getDefiningOp();
    if (auto view = dyn_cast<lir::ViewOp>(def)) {
      r.offset += view.getByteOffset();
      v = view.getArena();
    } else if (auto like = dyn_cast<ViewLikeOpInterface>(def)) {
      v = like.getViewSource();
    } else if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
      // Data of the module (a constant too large to live in a kernel): the
      // artifact carries it (constantBytes).
      r.global = get.getName().str();
      return r;
    } else {
      return user->emitError("GPU artifact: a kernel argument comes from '")
             << def->getName() << "', not from the arena or an IO buffer";
    }
  }
  return user->emitError("GPU artifact: a kernel argument is not a function argument");
}

/// The manifest argument of a tensor map the host builds: an
/// `nvgpu.tma.create.descriptor` of a `memref.cast` to unranked of a static
/// memref with a strided layout of unit inner stride (its offset moves the
/// argument's address), passed to the kernel's !llvm.ptr parameter through
/// an unrealized cast (docs/gpu-artifact.md, `tensor_map`).
FailureOr<json::Object> tensorMapArg(func::FuncOp fn, UnrealizedConversionCastOp cast,
                                     gpu::LaunchFuncOp launch) {
  auto desc = cast.getNumOperands() == 1
                  ? cast.getOperand(0).getDefiningOp<nvgpu::TmaCreateDescriptorOp>()
                  : nullptr;
  auto unranked = desc ? desc.getTensor().getDefiningOp<memref::CastOp>() : nullptr;
  auto type = unranked ? dyn_cast<MemRefType>(unranked.getSource().getType()) : nullptr;
  if (!type)
    return launch.emitError("GPU artifact: a kernel argument cast from ")
           << (cast.getNumOperands() ? cast.getOperand(0).getType() : Type())
           << " is not a tensor map (nvgpu.tma.create.descriptor of a memref.cast)";
  auto descType = desc.getTensorMap().getType();
  std::optional<int64_t> eb = getElementStorageBytes(type.getElementType());
  SmallVector<int64_t> layoutStrides;
  int64_t layoutOffset = 0;
  bool strided = succeeded(type.getStridesAndOffset(layoutStrides, layoutOffset)) &&
                 !ShapedType::isDynamic(layoutOffset) && !layoutStrides.empty() &&
                 layoutStrides.back() == 1 &&
                 llvm::none_of(layoutStrides, ShapedType::isDynamic);
  if (!type.hasStaticShape() || !strided || !eb || type.getRank() < 1 || type.getRank() > 5)
    return desc.emitError("GPU artifact: a tensor map needs a static memref of rank 1 to 5 with "
                          "a strided layout of unit inner stride, got ")
           << type;
  if (descType.getOob() != nvgpu::TensorMapOOBKind::OOB_ZERO ||
      descType.getInterleave() != nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE)
    return desc.emitError("GPU artifact: tensor maps fill zeros out of bounds and do not "
                          "interleave");
  FailureOr<Root> root = traceToRoot(unranked.getSource(), launch);
  if (failed(root))
    return failure();
  json::Array dims, strides, box;
  ArrayRef<int64_t> shape = type.getShape();
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    if (d != type.getRank() - 1)
      strides.push_back(layoutStrides[d] * *eb);
    dims.push_back(shape[d]);
  }
  if (desc.getBoxDimensions().size() != static_cast<size_t>(type.getRank()))
    return desc.emitError("GPU artifact: a tensor map's box needs one size per dimension");
  for (Value v : llvm::reverse(desc.getBoxDimensions())) {
    FailureOr<int64_t> c = constantIndex(v);
    if (failed(c))
      return desc.emitError("GPU artifact: tensor map box sizes must be constants");
    box.push_back(*c);
  }
  json::Object map{{"dtype", typeString(type.getElementType())},
                   {"dims", std::move(dims)},
                   {"strides", std::move(strides)},
                   {"box", std::move(box)},
                   {"swizzle", static_cast<int64_t>(descType.getSwizzle())}};
  Root at = *root;
  at.offset += layoutOffset * *eb;
  json::Object arg = argRef(fn, at);
  arg["tensor_map"] = std::move(map);
  return arg;
}

/// The bytes of a constant the host plan reads (as the element type stores
/// them: little endian, an element per storage unit): a dense or
/// dense_resource initial value.
FailureOr<std::string> constantBytes(memref::GlobalOp g) {
  auto type = g.getType();
  std::optional<int64_t> bytes = getStorageBytes(type);
  Attribute init = g.getInitialValue().value_or(Attribute());
  if (auto r = dyn_cast_or_null<DenseResourceElementsAttr>(init)) {
    AsmResourceBlob *blob = r.getRawHandle().getBlob();
    if (!blob)
      return g.emitError("GPU artifact: dense_resource '")
             << r.getRawHandle().getKey() << "' has no data in the module (elided?)";
    ArrayRef<char> data = blob->getData();
    if (!bytes || static_cast<int64_t>(data.size()) != *bytes)
      return g.emitError("GPU artifact: dense_resource '")
             << r.getRawHandle().getKey() << "' holds " << data.size() << " bytes, its type "
             << type << " needs " << (bytes ? *bytes : -1);
    return std::string(data.begin(), data.end());
  }
  auto dense = dyn_cast_or_null<DenseElementsAttr>(init);
  unsigned bits = type.getElementTypeBitWidth();
  if (dense && bytes && type.getElementType().isInteger(1)) {
    // i1: a byte per element, 0 or 1 (as the buffers store them).
    std::string out;
    for (bool v : dense.getValues<bool>())
      out.push_back(v ? 1 : 0);
    if (static_cast<int64_t>(out.size()) == *bytes)
      return out;
  }
  if (!dense || !bytes || bits % 8 != 0)
    return g.emitError("GPU artifact: the host plan reads '")
           << g.getSymName() << "' of type " << type
           << ", which has no dense data of whole-byte elements to carry";
  ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat())
    return std::string(raw.begin(), raw.end());
  std::string out;
  out.reserve(*bytes);
  for (int64_t i = 0, n = dense.getNumElements(); i < n; ++i)
    out.append(raw.begin(), raw.begin() + bits / 8);
  return out;
}

FailureOr<json::Object> functionPlan(func::FuncOp fn) {
  json::Object f;
  f["name"] = fn.getName().str();
  auto plan = fn->getAttrOfType<DictionaryAttr>("rlx_lir.plan");
  auto arenaBytes = plan ? plan.getAs<IntegerAttr>("arena_bytes") : nullptr;
  f["arena_bytes"] = arenaBytes ? arenaBytes.getInt() : 0;
  json::Array buffers;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    if (fn.getArgAttr(i, "rlx_lir.arena"))
      continue;
    auto type = dyn_cast<MemRefType>(fn.getArgument(i).getType());
    std::optional<int64_t> bytes = type ? getStorageBytes(type) : std::nullopt;
    if (!bytes)
      return fn.emitError("GPU artifact: argument ")
             << i << " must be a static memref, got " << fn.getArgument(i).getType();
    auto [name, role] = ioName(fn, i);
    json::Object b{{"name", name},
                   {"role", role},
                   {"dtype", typeString(type.getElementType())},
                   {"shape", json::Array(type.getShape())},
                   {"bytes", *bytes}};
    if (auto bound = fn.getArgAttrOfType<IntegerAttr>(i, "rlx.index_bound"))
      b["index_bound"] = bound.getInt();
    if (auto packed = fn.getArgAttrOfType<DictionaryAttr>(i, "rlx.packed_by")) {
      auto packer = packed.getAs<FlatSymbolRefAttr>("fn");
      auto result = packed.getAs<IntegerAttr>("result");
      if (packer && result)
        b["packed_by"] = json::Object{{"function", packer.getValue().str()},
                                      {"output", "result" + std::to_string(result.getInt())}};
    }
    buffers.push_back(std::move(b));
  }
  f["buffers"] = std::move(buffers);
  json::Array launches;
  for (Operation &op : fn.getBody().front()) {
    if (auto kernel = dyn_cast<lir::KernelOp>(op)) {
      // A collective step (convert-rlx-lir-to-gpu leaves only checked sum
      // all-reduces over the tensor-parallel ranks).
      Operation *root = kernel.getRootOp();
      auto ar = dyn_cast_or_null<shard::AllReduceOp>(root);
      auto ag = dyn_cast_or_null<shard::AllGatherOp>(root);
      if ((!ar && !ag) || kernel.getInputs().size() != 1 || kernel.getOutputs().size() != 1)
        return kernel.emitError("GPU artifact: an LIR kernel left in the plan is not an "
                                "all-reduce or all-gather (run convert-rlx-lir-to-gpu)");
      auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
          root, ar ? ar.getGridAttr() : ag.getGridAttr());
      if (!grid || grid.getRank() != 1)
        return kernel.emitError("GPU artifact: a collective over no 1-D grid");
      auto type = cast<MemRefType>(kernel.getInputs()[0].getType());
      json::Array args;
      for (Value a : {kernel.getInputs()[0], kernel.getOutputs()[0]}) {
        FailureOr<Root> root = traceToRoot(a, kernel);
        if (failed(root))
          return failure();
        args.push_back(argRef(fn, *root));
      }
      json::Object step{{"collective", ar ? "all_reduce" : "all_gather"},
                        {"ranks", grid.getShape()[0]},
                        {"dtype", typeString(type.getElementType())},
                        {"elements", type.getNumElements()},
                        {"args", std::move(args)}};
      if (ar)
        step["reduction"] = "sum";
      launches.push_back(std::move(step));
      continue;
    }
    auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
    if (!launch) {
      // Views, constants and the return are the plan's bookkeeping; any
      // other host op (a call to @rtclock, a vector.print) would not run
      // on the device: an error, not a silent drop.
      // (TMA descriptors are made on the host: tensorMapArg reads them.)
      if (isa<func::ReturnOp, nvgpu::TmaCreateDescriptorOp>(op) || isMemoryEffectFree(&op))
        continue;
      return op.emitError("GPU artifact: the GPU path runs kernels and collectives, and this "
                          "host op '")
             << op.getName() << "' would not run there (run it with --device=cpu)";
    }
    json::Object l;
    l["kernel"] = launch.getKernelName().str();
    json::Array grid, block;
    gpu::KernelDim3 g = launch.getGridSizeOperandValues(), bl = launch.getBlockSizeOperandValues();
    for (Value v : {g.x, g.y, g.z, bl.x, bl.y, bl.z}) {
      FailureOr<int64_t> c = constantIndex(v);
      if (failed(c))
        return launch.emitError("GPU artifact: launch sizes must be constants");
      (grid.size() < 3 ? grid : block).push_back(*c);
    }
    l["grid"] = std::move(grid);
    l["block"] = std::move(block);
    int64_t smem = 0;
    if (Value d = launch.getDynamicSharedMemorySize()) {
      FailureOr<int64_t> c = constantIndex(d);
      if (failed(c))
        return launch.emitError("GPU artifact: dynamic shared memory must be a constant");
      smem = *c;
    }
    l["dynamic_shared_bytes"] = smem;
    json::Array args;
    for (Value a : launch.getKernelOperands()) {
      if (auto cast = a.getDefiningOp<UnrealizedConversionCastOp>()) {
        FailureOr<json::Object> arg = tensorMapArg(fn, cast, launch);
        if (failed(arg))
          return failure();
        args.push_back(std::move(*arg));
        continue;
      }
      if (!isa<MemRefType>(a.getType()))
        return launch.emitError("GPU artifact: kernel arguments must be buffers, got ")
               << a.getType();
      FailureOr<Root> root = traceToRoot(a, launch);
      if (failed(root))
        return failure();
      args.push_back(argRef(fn, *root));
    }
    l["args"] = std::move(args);
    launches.push_back(std::move(l));
  }
  f["launches"] = std::move(launches);
  return f;
}

json::Object kernelInfo(gpu::GPUModuleOp gm, gpu::GPUFuncOp k) {
  json::Object o;
  o["name"] = k.getName().str();
  o["module"] = gm.getName().str();
  o["num_params"] = static_cast<int64_t>(k.getNumArguments());
  json::Array block;
  if (auto known = k.getKnownBlockSizeAttr())
    for (int32_t d : known.asArrayRef())
      block.push_back(d);
  o["block"] = std::move(block);
  json::Array shared;
  int64_t sharedBytes = 0;
  for (BlockArgument a : k.getWorkgroupAttributions()) {
    auto t = cast<MemRefType>(a.getType());
    int64_t bytes = getStorageBytes(t).value_or(0);
    int64_t align = std::max<int64_t>(16, getElementStorageBytes(t.getElementType()).value_or(1));
    shared.push_back(json::Object{{"bytes", bytes}, {"align", align}});
    sharedBytes += bytes;
  }
  o["static_shared_bytes"] = sharedBytes;
  json::Array locations;
  for (const std::string &l : sourceLocations(k.getLoc()))
    locations.push_back(l);
  o["locations"] = std::move(locations);
  if (auto why = k->getAttrOfType<StringAttr>("rlx.emulator_unavailable"))
    o["emu_unavailable"] = why.getValue().str();
  else
    o["emu"] =
        json::Object{{"symbol", (k.getName() + "__emu").str()}, {"shared", std::move(shared)}};
  return o;
}

/// `text` with each nvvm.barrier in the generic form: LLVM 22's custom form
/// does not parse back (its optional reduction attribute takes the next
/// token, `loc` or the next op's name, as its keyword).
std::string barriersInGenericForm(StringRef text) {
  llvm::Regex barrier(R"(^([ \t]*)nvvm\.barrier( id = (%[^ ]+))?( number_of_threads = )"
                      R"((%[^ ]+))?( loc\(.*\))?$)");
  std::string out;
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (auto [i, line] : llvm::enumerate(lines)) {
    SmallVector<StringRef> m;
    if (barrier.match(line, &m)) {
      bool id = !m[3].empty(), count = !m[5].empty();
      out += (m[1] + "\"nvvm.barrier\"(" + m[3] + (id && count ? ", " : "") + m[5] +
              ") <{operandSegmentSizes = array<i32: " + (id ? "1" : "0") + ", " +
              (count ? "1" : "0") + ", 0>}> : (" + (id ? "i32" : "") +
              (id && count ? ", " : "") + (count ? "i32" : "") + ") -> ()" + m[6])
                 .str();
    } else {
      out += line.str();
    }
    if (i + 1 < lines.size())
      out += '\n';
  }
  return out;
}

/// Marks a module that left the kernel pipeline (--emit-kernel-ir).
constexpr StringLiteral kKernelIRAttr = "rlx.kernel_ir";

LogicalResult writeFile(Location loc, StringRef path, StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return emitError(loc, "cannot write ") << path << ": " << ec.message();
  os << bytes;
  return success();
}

} // namespace

LogicalResult mlir::rlx::writeGPUArtifact(ModuleOp module, const CompileOptions &options,
                                          StringRef dir) {
  MLIRContext *ctx = module.getContext();
  Location loc = module.getLoc();
  nameUnnamedIO(module);
  std::string error;
  if (failed(options.verify(error)))
    return emitError(module.getLoc()) << error;
  CompileOptions pipe = options;
  pipe.assemble = options.cubin;
  if (options.fromKernelIR) {
    if (!module->hasAttr(kKernelIRAttr))
      return emitError(loc, "--from-kernel-ir: the module does not come from --emit-kernel-ir "
                            "(no '")
             << kKernelIRAttr << "' attribute)";
  } else {
    PassManager kernels(ctx);
    buildNVVMKernelPipeline(kernels, pipe);
    if (failed(kernels.run(module)))
      return failure();
    module->setAttr(kKernelIRAttr, UnitAttr::get(ctx));
  }
  if (!options.emitKernelIR.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, OpPrintingFlags().enableDebugInfo(true, /*prettyForm=*/false));
    if (failed(writeFile(loc, options.emitKernelIR, barriersInGenericForm(text))))
      return failure();
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return emitError(loc, "cannot create ") << dir << ": " << ec.message();
  auto path = [&](StringRef name) {
    SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return p.str().str();
  };

  json::Object manifest;
  manifest["format"] = "rlx-gpu-artifact";
  manifest["version"] = 1;
  FailureOr<nvvm::NVVMTarget> target = nvvm::parseTarget(options.chip, options.features, error);
  if (failed(target))
    return emitError(loc) << error;
  manifest["target"] = json::Object{{"chip", target->chip}, {"ptx_version", target->ptxString()}};

  // Kernels and launch plans from the module as it leaves the kernel
  // pipeline; the codegen and emulator builds work on copies.
  json::Array kernelList, functions;
  std::map<std::string, json::Object *> byName;
  for (auto gm : module.getOps<gpu::GPUModuleOp>())
    for (auto k : gm.getOps<gpu::GPUFuncOp>())
      kernelList.push_back(kernelInfo(gm, k));
  std::string entry;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal() || !fn->hasAttr("rlx_lir.plan"))
      continue;
    FailureOr<json::Object> f = functionPlan(fn);
    if (failed(f))
      return failure();
    if (entry.empty() || (fn.isPublic() && !fn.getName().contains("pack_params")))
      entry = fn.getName().str();
    functions.push_back(std::move(*f));
  }
  // The constants the plans read, as files of their bytes.
  json::Array constants;
  {
    std::set<std::string> used;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && fn->hasAttr("rlx_lir.plan"))
        fn.walk([&](memref::GetGlobalOp get) { used.insert(get.getName().str()); });
    bool made = false;
    for (const std::string &name : used) {
      auto g = module.lookupSymbol<memref::GlobalOp>(name);
      if (!g)
        return emitError(loc, "GPU artifact: no memref.global '") << name << "'";
      FailureOr<std::string> bytes = constantBytes(g);
      if (failed(bytes))
        return failure();
      if (!made && llvm::sys::fs::create_directories(path("constants")))
        return emitError(loc, "cannot create ") << path("constants");
      made = true;
      std::string file = "constants/" + name + ".bin";
      if (failed(writeFile(loc, path(file), *bytes)))
        return failure();
      constants.push_back(json::Object{{"name", name},
                                       {"dtype", typeString(g.getType().getElementType())},
                                       {"shape", json::Array(g.getType().getShape())},
                                       {"bytes", static_cast<int64_t>(bytes->size())},
                                       {"file", file}});
    }
  }

  // A kernel without known_block_size takes the block of its first launch.
  for (json::Value &kv : kernelList) {
    json::Object *k = kv.getAsObject();
    if (!k->getArray("block")->empty())
      continue;
    for (json::Value &fv : functions)
      for (json::Value &lv : *fv.getAsObject()->getArray("launches"))
        if (lv.getAsObject()->getString("kernel") == k->getString("name") &&
            k->getArray("block")->empty())
          (*k)["block"] = *lv.getAsObject()->get("block");
  }
  // Kernels never launched and of unknown block size are not part of the plan.
  json::Array launched;
  for (json::Value &kv : kernelList)
    if (!kv.getAsObject()->getArray("block")->empty())
      launched.push_back(std::move(kv));
  kernelList = std::move(launched);
  json::Array modules;
  {
    // PTX always (no ptxas needed); cubins when `options.cubin`.
    OwningOpRef<ModuleOp> nv = module.clone();
    PassManager codegen(ctx);
    buildNVVMCodegenPipeline(codegen, pipe);
    if (failed(codegen.run(*nv)))
      return failure();
    for (auto binary : nv->getOps<gpu::BinaryOp>()) {
      std::string name = binary.getName().str();
      json::Object m{{"name", name}};
      for (Attribute a : binary.getObjects())
        if (auto o = dyn_cast<gpu::ObjectAttr>(a);
            o && o.getFormat() == gpu::CompilationTarget::Binary) {
          std::string file = name + "." + target->chip + ".cubin";
          if (failed(writeFile(loc, path(file), o.getObject().getValue())))
            return failure();
          m["cubin"] = file;
        }
      StringAttr ptx = binary->getAttrOfType<StringAttr>("rlx.ptx");
      for (Attribute a : binary.getObjects())
        if (auto o = dyn_cast<gpu::ObjectAttr>(a);
            !ptx && o && o.getFormat() == gpu::CompilationTarget::Assembly)
          ptx = o.getObject();
      if (ptx) {
        if (failed(writeFile(loc, path(name + ".ptx"), ptx.getValue())))
          return failure();
        m["ptx"] = name + ".ptx";
      }
      if (auto res = binary->getAttrOfType<DictionaryAttr>("rlx.kernels"))
        for (json::Value &kv : kernelList) {
          json::Object *k = kv.getAsObject();
          auto r = res.getAs<DictionaryAttr>(*k->getString("name"));
          if (!r || *k->getString("module") != name)
            continue;
          for (StringRef field : {"registers", "spill_bytes", "stack_bytes"})
            if (auto v = r.getAs<IntegerAttr>(field))
              (*k)[field] = v.getInt();
          if (auto w = r.getAs<ArrayAttr>("ptxas_warnings")) {
            json::Array warnings;
            for (auto s : w.getAsRange<StringAttr>())
              warnings.push_back(s.getValue().str());
            (*k)["ptxas_warnings"] = std::move(warnings);
          }
        }
      modules.push_back(std::move(m));
    }
  }
  if (options.emulator) {
    OwningOpRef<ModuleOp> emu = module.clone();
    PassManager codegen(ctx);
    buildEmulatorCodegenPipeline(codegen, /*checks=*/true);
    if (failed(codegen.run(*emu)) || failed(buildEmulatorLibrary(*emu, path("kernels.emu.so"))))
      return failure();
    manifest["emulator"] = json::Object{{"library", "kernels.emu.so"}};
  }
  manifest["modules"] = std::move(modules);
  manifest["kernels"] = std::move(kernelList);
  if (!constants.empty())
    manifest["constants"] = std::move(constants);
  manifest["entry"] = entry;
  // The rank of a per-rank program that looks up by rank (its
  // process_linear_index became this constant).
  if (auto rank = module->getAttrOfType<IntegerAttr>("rlx.tp_rank"))
    manifest["rank"] = rank.getInt();
  manifest["functions"] = std::move(functions);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", json::Value(std::move(manifest))) << "\n";
  return writeFile(loc, path("manifest.json"), text);
}
