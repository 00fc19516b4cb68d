//===- CpuRunner.cpp - JIT-compile and run RLX models on the CPU ----------===//

#include "RLX/Dialect/Common/IR/DiagnosticCollector.h"
#include "RLX/Dialect/Common/IR/IONames.h"
#include "RLX/Target/CPU/CpuRunner.h"

#include "RLX/Conversion/Passes.h"
#include "RLX/Dialect/Common/IR/RLXDialect.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/Transforms/Fusion.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"
#include "RLX/Target/CPU/CpuPipeline.h"
#include "RLX/Target/CPU/JitCpu.h"
#include "RLX/Runtime/IndexCheck.h"
#include "RLX/Target/Frontend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/TargetSelect.h"

#include <chrono>
#include <set>

using namespace mlir;

namespace mlir::rlx {
namespace {
/// The model whose entry runs on this thread (its traced kernels' calls).
thread_local CpuModel *tracingModel = nullptr;
} // namespace

// The hooks traced kernels call (extern "C" ABI: one i64 argument).
void traceKernelBegin(int64_t id) {
  CpuModel *m = tracingModel;
  if (m && id >= 0 && size_t(id) < m->traceBegun.size())
    m->traceBegun[size_t(id)] = std::chrono::steady_clock::now();
}

void traceKernelEnd(int64_t id) {
  CpuModel *m = tracingModel;
  if (!m || id < 0 || size_t(id) >= m->traceBegun.size())
    return;
  auto now = std::chrono::steady_clock::now();
  auto begun = m->traceBegun[size_t(id)];
  using us = std::chrono::duration<double, std::micro>;
  m->trace.push_back({id, us(begun - m->traceStart).count(), us(now - begun).count()});
}
} // namespace mlir::rlx
using namespace mlir::rlx;

CpuModel::~CpuModel() = default;

namespace {
std::string typeToStr(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

LogicalResult runPasses(ModuleOp module, function_ref<void(OpPassManager &)> build,
                        std::string &error) {
  PassManager pm(module.getContext());
  build(pm);
  DiagnosticCollector diags(module.getContext());
  if (failed(pm.run(module))) {
    error = diags.text.empty() ? std::string("compilation failed") : diags.text;
    return failure();
  }
  return success();
}

/// The memref signature of `fn` after bufferization (inputs, then out-params).
LogicalResult readSignature(func::FuncOp fn, unsigned numInputs,
                            ArrayRef<std::string> names, std::string &error,
                            std::string &symbol, std::vector<std::vector<int64_t>> &shapes,
                            std::vector<std::string> &dtypes) {
  symbol = fn.getSymName().str();
  for (Type t : fn.getArgumentTypes()) {
    auto m = dyn_cast<MemRefType>(t);
    if (!m || !m.hasStaticShape() || !m.getLayout().isIdentity()) {
      error = "@" + symbol + ": argument type " + typeToStr(t) +
              " is not a static, contiguous memref after lowering";
      return failure();
    }
    std::string dt = dtypeOf(m.getElementType());
    if (dt.empty()) {
      error = "@" + symbol + ": unsupported element type in " + typeToStr(t);
      return failure();
    }
    shapes.emplace_back(m.getShape().begin(), m.getShape().end());
    dtypes.push_back(dt);
  }
  (void)numInputs;
  (void)names;
  return success();
}
/// librlx_cpu_runtime.so in the runtime directory (default: ../lib next to
/// the executable).
std::string runtimePath(const CpuRunnerOptions &options) {
  std::string runtimeDir = options.runtimeDir;
  if (runtimeDir.empty()) {
    std::string exe = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
    runtimeDir = (llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)) + "/lib").str();
  }
  return runtimeDir + "/librlx_cpu_runtime.so";
}
} // namespace

/// The packed parameters of `entry` that are their sources laid end to end
/// (PackedConcat): every result of their pack function is a concat along
/// dim 0 of distinct 2-D parameters that nothing else reads (the entry
/// neither), or the transpose of one (or of one such parameter).
static std::vector<PackedConcat>
findPackedConcats(ModuleOp module, func::FuncOp entry,
                  const std::map<std::string, CpuModel::PackResult> &packedBy) {
  // A source the entry reads itself is needed whole, not only packed.
  std::set<std::string> entryParams;
  for (unsigned i = 0; i < entry.getNumArguments(); ++i)
    if (auto name = entry.getArgAttrOfType<StringAttr>(i, "rlx.param"))
      entryParams.insert(name.str());
  std::map<std::string, std::vector<std::pair<std::vector<std::string>, bool>>> perFn;
  for (auto &[name, src] : packedBy) {
    if (perFn.count(src.fn))
      continue;
    auto fn = module.lookupSymbol<func::FuncOp>(src.fn);
    std::vector<std::pair<std::vector<std::string>, bool>> results;
    bool all = fn && !fn.isExternal();
    if (all)
      for (Value v : fn.getBody().front().getTerminator()->getOperands()) {
        // [K, N] forms (kn-weights): the transpose of the sources' concat.
        Value inner = v;
        bool transposed = false;
        if (auto t = v.getDefiningOp<mir::TransposeOp>();
            t && v.hasOneUse() && t.getPermutation() == ArrayRef<int64_t>{1, 0}) {
          inner = t.getInput();
          transposed = true;
        }
        SmallVector<Value> inputs;
        if (auto concat = inner.getDefiningOp<mir::ConcatOp>();
            concat && concat.getAxis() == 0 && inner.hasOneUse())
          inputs = concat.getInputs();
        else if (transposed && isa<BlockArgument>(inner))
          inputs = {inner};
        std::vector<std::string> sources;
        all = !inputs.empty();
        for (Value in : inputs) {
          auto arg = dyn_cast<BlockArgument>(in);
          auto param = arg ? fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "rlx.param")
                           : StringAttr();
          auto type = dyn_cast<RankedTensorType>(in.getType());
          if (!param || !arg.hasOneUse() || llvm::is_contained(sources, param.str()) ||
              entryParams.count(param.str()) || !type || type.getRank() != 2) {
            all = false;
            break;
          }
          sources.push_back(param.str());
        }
        if (!all)
          break;
        results.push_back({std::move(sources), transposed});
      }
    if (!all)
      results.clear();
    perFn[src.fn] = std::move(results);
  }
  std::vector<PackedConcat> out;
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    auto name = entry.getArgAttrOfType<StringAttr>(i, "rlx.param");
    auto it = name ? packedBy.find(name.str()) : packedBy.end();
    auto t = dyn_cast<RankedTensorType>(entry.getArgumentTypes()[i]);
    if (it == packedBy.end() || !t || !t.hasStaticShape())
      continue;
    const auto &results = perFn[it->second.fn];
    if (it->second.index >= results.size())
      continue;
    out.push_back({name.str(), dtypeOf(t.getElementType()),
                   std::vector<int64_t>(t.getShape().begin(), t.getShape().end()),
                   results[it->second.index].first, results[it->second.index].second});
  }
  return out;
}

FailureOr<std::unique_ptr<CpuModel>>
CpuModel::compile(OwningOpRef<ModuleOp> owned, const CpuRunnerOptions &options,
                  const std::map<std::string, std::vector<int64_t>> &inputShapes,
                  std::string &error) {
  if (failed(options.verify(error)))
    return failure();
  // The CPU the code is for, checked before anything is compiled.
  auto targetCpu = resolveJitCpu(options.cpu, options.mattr, error);
  if (failed(targetCpu))
    return failure();
  std::unique_ptr<CpuModel> model(new CpuModel());
  model->cpu = *targetCpu;
  ModuleOp module = *owned;
  MLIRContext *ctx = module.getContext();
  nameUnnamedIO(module);

  // Stage 1: HIR → MIR and fusion (this also packs parameters, which changes
  // the entry's signature, so it runs before the signature is read).
  auto t0 = std::chrono::steady_clock::now();
  func::FuncOp entry;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal() || fn.isPrivate())
      continue;
    if (options.entry.empty() ? !fn.getSymName().ends_with("_pack_params")
                              : fn.getSymName() == options.entry) {
      entry = fn;
      break;
    }
  }
  if (!entry) {
    error = options.entry.empty() ? "the module has no public function to run"
                                  : "no function @" + options.entry + " in the module";
    return failure();
  }
  std::string entryName = entry.getSymName().str();
  // The module's other entry points (Whisper's @encoder beside @decoder)
  // are not compiled: their dims are not bound by this entry's inputs.
  std::set<std::string> allParams = moduleParamNames(module);
  for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (fn != entry && !fn.isExternal() && !fn.isPrivate() &&
        !fn.getSymName().ends_with("_pack_params") && SymbolTable::symbolKnownUseEmpty(fn, module))
      fn.erase();
  if (failed(runPasses(module, [&](OpPassManager &pm) {
        ConvertRLXHIRToMIROptions hir;
        // Sharding runs on primitive MIR (fusion follows on each rank).
        hir.fusionPolicy = options.tp > 0 ? FusionPolicy::Fusable : options.policy();
        pm.addPass(createConvertRLXHIRToMIR(hir));
        // TOSA / linalg input is raised to MIR blocks before fusion counts
        // and fuses them.
        if (options.importUpstream)
          addImportPasses(pm, options.weightArgs);
        pm.addPass(mir::createMIRIndexBounds());
        if (options.tp > 0) {
          addTensorParallelPasses(pm, options.tp, options.ep);
          if (options.rank >= 0) {
            mir::MIRBindRankOptions bind;
            bind.rank = options.rank;
            pm.addPass(mir::createMIRBindRank(bind));
          }
        }
      }, error)))
    return failure();
  entry = module.lookupSymbol<func::FuncOp>(entryName);
  std::tie(model->opsBeforeFusion, model->computeOpsBefore) = mir::countOps(entry);
  // The runtime (loaded now; the JIT reuses it) says which weight layout its
  // GEMM library reads fastest (lib/Runtime/CPU/Blas.h).
  std::string runtime = runtimePath(options);
  std::string loadError;
  auto runtimeLib =
      llvm::sys::DynamicLibrary::getPermanentLibrary(runtime.c_str(), &loadError);
  if (!runtimeLib.isValid()) {
    error = "CPU runtime " + runtime + ": " + loadError + " (set the runtime directory)";
    return failure();
  }
  auto *prefersKn = reinterpret_cast<int32_t (*)()>(
      runtimeLib.getAddressOfSymbol("rlx_cpu_prefers_kn_weights"));
  mir::MIRFuseOptions fuseOptions;
  fuseOptions.knWeights = options.blas && prefersKn && prefersKn();
  // As the front end (buildFrontendPipeline): composite ops' chains, then
  // fusion.
  if (failed(runPasses(module, [&](OpPassManager &pm) {
        pm.addPass(mir::createMIRDecompose());
        if (options.fuse)
          pm.addPass(mir::createMIRFuse(fuseOptions));
      }, error)))
    return failure();
  // One pack function per packed parameter: each is given (read in place),
  // packed and released on its own.
  mir::splitPackFunctions(module);
  entry = module.lookupSymbol<func::FuncOp>(entryName);
  std::tie(model->opsAfterFusion, model->computeOpsAfter) = mir::countOps(entry);
  model->kernels = model->computeOpsAfter;
  model->fuseMs = msSince(t0);
  if (options.onStage)
    options.onStage("fused-mir", module);

  // The caller's view of the arguments: entry args, with packed parameters
  // replaced by the original parameters their pack function reads.
  FailureOr<std::map<std::string, int64_t>> bound = options.dimBindings(error);
  if (failed(bound))
    return failure();
  std::map<std::string, int64_t> dims = std::move(*bound);
  std::vector<std::string> entryArgNames;
  std::vector<bool> entryIsParam;
  std::map<std::string, int64_t> indexBounds;
  // LIR given as input (buffer form): the arena is the runner's, outputs are
  // out-parameters named by rlx.output, and shapes are static.
  bool bufferForm = llvm::any_of(entry.getArgumentTypes(),
                                 [](Type t) { return isa<MemRefType>(t); });
  std::vector<std::string> bufferOutputs;
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    if (bufferForm) {
      if (!isa<MemRefType>(entry.getArgumentTypes()[i])) {
        error = "@" + entryName + " argument " + std::to_string(i) + " is not a buffer";
        return failure();
      }
      if (entry.getArgAttr(i, "rlx_lir.arena"))
        continue;
      if (auto out = entry.getArgAttrOfType<StringAttr>(i, "rlx.output")) {
        bufferOutputs.push_back(out.str());
        continue;
      }
      if (!bufferOutputs.empty()) {
        error = "@" + entryName + ": inputs must precede the out-parameters (rlx.output)";
        return failure();
      }
      entryArgNames.push_back(argumentName(entry, i));
      entryIsParam.push_back(entry.getArgAttr(i, "rlx.param") != nullptr);
      continue;
    }
    std::string name = argumentName(entry, i);
    entryArgNames.push_back(name);
    entryIsParam.push_back(entry.getArgAttr(i, "rlx.param") != nullptr);
    if (auto bound = entry.getArgAttrOfType<IntegerAttr>(i, "rlx.index_bound"))
      indexBounds[name] = bound.getInt();
    auto t = dyn_cast<RankedTensorType>(entry.getArgumentTypes()[i]);
    if (!t) {
      error = "@" + entryName + " argument " + std::to_string(i) + " is not a ranked tensor";
      return failure();
    }
    auto names = entry.getArgAttrOfType<ArrayAttr>(i, RLXDialect::kDimNamesAttr);
    auto it = inputShapes.find(name);
    if (names && it != inputShapes.end()) {
      if (it->second.size() != static_cast<size_t>(t.getRank())) {
        error = "input '" + name + "' has rank " + std::to_string(it->second.size()) +
                ", the model expects " + typeToStr(t);
        return failure();
      }
      for (int64_t d = 0; d < t.getRank(); ++d) {
        StringRef dn = cast<StringAttr>(names[d]).getValue();
        if (!t.isDynamicDim(d) || dn.empty())
          continue;
        auto [bound, inserted] = dims.emplace(dn.str(), it->second[d]);
        if (!inserted && bound->second != it->second[d]) {
          error = "dim '" + dn.str() + "' is " + std::to_string(bound->second) +
                  " elsewhere but input '" + name + "' has " + std::to_string(it->second[d]);
          return failure();
        }
      }
    }
    if (auto by = entry.getArgAttrOfType<DictionaryAttr>(i, "rlx.packed_by")) {
      auto fn = cast<FlatSymbolRefAttr>(by.get("fn")).getValue().str();
      unsigned idx = cast<IntegerAttr>(by.get("result")).getInt();
      model->packedBy[name] = {fn, idx};
    }
  }
  model->concats = findPackedConcats(module, entry, model->packedBy);
  model->otherParams = std::move(allParams);

  // Stage 2: specialize, linalg, bufferize (the signatures are read here).
  auto t1 = std::chrono::steady_clock::now();
  CompileOptions cpu = options;
  // Stage 1 imported, partitioned and fused.
  cpu.fuse = false;
  cpu.weightArgs.clear();
  cpu.tp = 0;
  cpu.rank = -1;
  cpu.dims.clear();
  for (auto &[k, v] : dims)
    cpu.bindDim(k, v);
  // Result names survive as attributes only until results become out-params.
  std::vector<std::string> resultNames = bufferOutputs;
  for (unsigned i = 0; i < entry.getNumResults(); ++i)
    resultNames.push_back(resultName(entry, i));
  std::vector<std::string> packNames;
  for (auto &[name, src] : model->packedBy)
    if (llvm::find(packNames, src.fn) == packNames.end())
      packNames.push_back(src.fn);
  std::map<std::string, std::vector<std::string>> packArgNames;
  for (const std::string &fnName : packNames) {
    auto fn = module.lookupSymbol<func::FuncOp>(fnName);
    if (!fn) {
      error = "pack function @" + fnName + " is missing";
      return failure();
    }
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      packArgNames[fnName].push_back(argumentName(fn, i));
  }
  unsigned entryInputs = entryArgNames.size();
  if (failed(runPasses(module, [&](OpPassManager &pm) { buildCpuBufferPipeline(pm, cpu); },
                       error)))
    return failure();
  if (options.onStage)
    options.onStage("buffers", module);
  auto sig = [&](StringRef name, unsigned numInputs, const std::vector<std::string> &names,
                 Signature &out) -> LogicalResult {
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (!fn) {
      error = "@" + name.str() + " disappeared during lowering";
      return failure();
    }
    out.argNames = names;
    out.numInputs = numInputs;
    // The planner's arena argument: the runner owns it.
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (fn.getArgAttr(i, "rlx_lir.arena")) {
        out.argNames.insert(out.argNames.begin() + i, arenaName(fn.getSymName()));
        ++out.numInputs;
      }
    fn->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
    return readSignature(fn, numInputs, names, error, out.name, out.shapes, out.dtypes);
  };
  if (failed(sig(entryName, entryInputs, entryArgNames, model->entry)))
    return failure();
  if (auto plan = module.lookupSymbol<func::FuncOp>(entryName)
                      ->getAttrOfType<DictionaryAttr>("rlx_lir.plan")) {
    auto get = [&](StringRef key) {
      auto a = dyn_cast_or_null<IntegerAttr>(plan.get(key));
      return a ? a.getInt() : int64_t(-1);
    };
    model->arenaBytes = get("arena_bytes");
    model->arenaLowerBound = get("lower_bound_bytes");
    model->arenaSumBytes = get("sum_bytes");
    model->scratchBytes = std::max<int64_t>(0, get("scratch_bytes"));
  }
  for (const std::string &fnName : packNames) {
    Signature s;
    if (failed(sig(fnName, packArgNames[fnName].size(), packArgNames[fnName], s)))
      return failure();
    model->packFns.push_back(std::move(s));
  }
  // The caller-facing lists.
  std::set<std::string> seen;
  std::map<std::string, bool> isParam;
  for (unsigned i = 0; i < entryInputs; ++i)
    isParam[entryArgNames[i]] = entryIsParam[i];
  for (unsigned i = 0; i < model->entry.numInputs; ++i) {
    const std::string &name = model->entry.argNames[i];
    if (model->packedBy.count(name) || StringRef(name).starts_with("__arena:"))
      continue;
    seen.insert(name);
    model->args.push_back({name, isParam[name], model->entry.shapes[i], model->entry.dtypes[i],
                           {}, indexBounds.count(name) ? indexBounds[name] : 0});
  }
  for (const Signature &p : model->packFns)
    for (unsigned i = 0; i < p.numInputs; ++i)
      if (!StringRef(p.argNames[i]).starts_with("__arena:") && seen.insert(p.argNames[i]).second)
        model->args.push_back({p.argNames[i], true, p.shapes[i], p.dtypes[i], {}});
  for (unsigned i = model->entry.numInputs; i < model->entry.shapes.size(); ++i) {
    unsigned r = i - model->entry.numInputs;
    model->outs.push_back({r < resultNames.size() ? resultNames[r] : "result" + std::to_string(r),
                           false, model->entry.shapes[i], model->entry.dtypes[i], {}});
  }

  // What a run allocates, checked before the JIT and the first run.
  {
    std::vector<BudgetItem> items;
    for (const ModelTensor &a : model->args)
      items.push_back({"argument '" + a.name + "'", a.dtype, a.shape});
    for (const ModelTensor &r : model->outs)
      items.push_back({"result '" + r.name + "'", r.dtype, r.shape});
    // The arena as allocated: the plan and, 64-byte aligned past it, the
    // kernels' scratch.
    uint64_t arena = model->arenaBytes > 0 ? uint64_t(model->arenaBytes) : 0;
    if (model->scratchBytes > 0)
      arena = (arena + 63) / 64 * 64 + uint64_t(model->scratchBytes);
    if (failed(checkMemoryBudget(items, arena, "the arena of @" + entryName, error)))
      return failure();
  }
  // RLX's argument attributes have no meaning in LLVM IR.
  for (auto fn : module.getOps<func::FuncOp>()) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      fn.setArgAttrs(i, DictionaryAttr::get(ctx));
    for (unsigned i = 0; i < fn.getNumResults(); ++i)
      fn.setResultAttrs(i, DictionaryAttr::get(ctx));
  }
  // Stage 3: LLVM dialect, then the JIT.
  if (failed(runPasses(module, [&](OpPassManager &pm) { buildCpuLLVMPipeline(pm, cpu); },
                       error)))
    return failure();
  if (options.onStage)
    options.onStage("llvm", module);
  model->lowerMs = msSince(t1);

  auto t2 = std::chrono::steady_clock::now();
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    error = llvm::toString(jtmb.takeError());
    return failure();
  }
  // detectHost's CPU and features, replaced by the resolved ones (the same
  // for `host`, plus any --mattr changes; LLVM applies them in order).
  jtmb->setCPU(model->cpu.cpu);
  jtmb->getFeatures() = llvm::SubtargetFeatures();
  jtmb->addFeatures(model->cpu.features);
  auto codeGenLevel = static_cast<llvm::CodeGenOptLevel>(options.optLevel);
  jtmb->setCodeGenOptLevel(codeGenLevel);
  auto tm = jtmb->createTargetMachine();
  if (!tm) {
    error = llvm::toString(tm.takeError());
    return failure();
  }
  ExecutionEngineOptions eeOptions;
  llvm::TargetMachine *rawTm = tm->get();
  // The options hold a function_ref: keep the transformer alive here.
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(options.optLevel, 0, rawTm);
  eeOptions.transformer = transformer;
  eeOptions.jitCodeGenOptLevel = codeGenLevel;
  eeOptions.enableGDBNotificationListener = false;
  // Only RLX's own runtime (no MLIR/LLVM inside): it defines memrefCopy, so
  // upstream's runner utils, which would bring libMLIR/libLLVM into the
  // global symbol scope, are not loaded.
  SmallVector<StringRef> libs{runtime};
  eeOptions.sharedLibPaths = libs;
  if (options.trace)
    if (auto table = module->getAttrOfType<ArrayAttr>("rlx.trace_kernels"))
      for (auto k : table.getAsRange<DictionaryAttr>()) {
        CpuModel::TracedKernel e;
        e.name = k.getAs<StringAttr>("name").str();
        for (auto l : k.getAs<ArrayAttr>("locations").getAsRange<StringAttr>())
          e.locations.push_back(l.str());
        model->tracedKernels.push_back(std::move(e));
      }
  auto engine = ExecutionEngine::create(module, eeOptions, std::move(*tm));
  if (!engine) {
    error = "JIT: " + llvm::toString(engine.takeError());
    return failure();
  }
  model->engine = std::move(*engine);
  if (options.trace) {
    // The hooks the traced kernel calls name (rlx-cpu-outline-kernels).
    model->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
      llvm::orc::SymbolMap symbols;
      symbols[interner("rlx_trace_kernel_begin")] = {
          llvm::orc::ExecutorAddr::fromPtr(&traceKernelBegin), llvm::JITSymbolFlags::Exported};
      symbols[interner("rlx_trace_kernel_end")] = {
          llvm::orc::ExecutorAddr::fromPtr(&traceKernelEnd), llvm::JITSymbolFlags::Exported};
      return symbols;
    });
    model->traceStart = std::chrono::steady_clock::now();
    model->traceBegun.assign(model->tracedKernels.size(), model->traceStart);
  }
  if (options.blasThreads > 0) {
    // The runtime library the engine loaded sets the BLAS's thread count.
    auto *setThreads = reinterpret_cast<void (*)(int32_t)>(
        llvm::sys::DynamicLibrary::SearchForAddressOfSymbol("rlx_cpu_set_num_threads"));
    if (!setThreads) {
      error = "the CPU runtime " + runtime + " has no rlx_cpu_set_num_threads";
      return failure();
    }
    setThreads(options.blasThreads);
  }
  if (auto *getThreads = reinterpret_cast<int32_t (*)()>(
          llvm::sys::DynamicLibrary::SearchForAddressOfSymbol("rlx_cpu_get_num_threads")))
    model->blasThreads = getThreads();
  // The runtime opens its BLAS at load time (lib/Runtime/CPU/Blas.h): name
  // it, and refuse to run BLAS matmuls without one.
  if (auto *info = reinterpret_cast<const char *(*)(int32_t *)>(
          llvm::sys::DynamicLibrary::SearchForAddressOfSymbol("rlx_cpu_blas_info"))) {
    int32_t ok = 0;
    model->blasInfo = info(&ok);
    if (!ok && options.blas) {
      error = "the CPU runtime found no BLAS: " + model->blasInfo + " (or run with --no-blas)";
      return failure();
    }
  }
  // ORC materializes (generates machine code for) the module on the first
  // symbol lookup: look every function up now, so that compile time includes
  // code generation and the first run does not.
  std::vector<std::string> symbols{model->entry.name};
  for (const Signature &p : model->packFns)
    symbols.push_back(p.name);
  for (const std::string &symbol : symbols) {
    auto fn = model->engine->lookupPacked("_mlir_ciface_" + symbol);
    if (!fn) {
      error = "JIT: " + llvm::toString(fn.takeError());
      return failure();
    }
  }
  model->jitMs = msSince(t2);
  return model;
}

LogicalResult CpuModel::invoke(const Signature &sig, std::vector<const HostTensor *> in,
                               std::vector<HostTensor> &out, std::string &error) {
  // One descriptor per memref argument: {allocated, aligned, offset, sizes, strides}.
  std::vector<std::vector<int64_t>> descs;
  // Result buffers of an earlier call with the same shapes are written again
  // (the function writes every element of its results): a serving loop
  // neither allocates nor clears a KV cache's worth of memory per step.
  out.resize(sig.shapes.size() - sig.numInputs);
  for (unsigned i = sig.numInputs; i < sig.shapes.size(); ++i) {
    HostTensor &o = out[i - sig.numInputs];
    HostTensor like;
    like.dtype = sig.dtypes[i];
    like.shape = sig.shapes[i];
    if (o.dtype != like.dtype || o.shape != like.shape ||
        o.data.size() != like.numElements() * HostTensor::elementBytes(like.dtype))
      o = HostTensor::zeros(sig.dtypes[i], sig.shapes[i]);
  }
  for (unsigned i = 0; i < sig.shapes.size(); ++i) {
    const std::vector<int64_t> &shape = sig.shapes[i];
    const uint8_t *data = i < sig.numInputs ? in[i]->data.data()
                                            : out[i - sig.numInputs].data.data();
    std::vector<int64_t> d(3 + 2 * shape.size());
    d[0] = d[1] = reinterpret_cast<int64_t>(data);
    d[2] = 0;
    int64_t stride = 1;
    for (int64_t k = shape.size() - 1; k >= 0; --k) {
      d[3 + k] = shape[k];
      d[3 + shape.size() + k] = stride;
      stride *= shape[k];
    }
    descs.push_back(std::move(d));
  }
  std::vector<void *> descPtrs, args;
  for (auto &d : descs)
    descPtrs.push_back(d.data());
  for (auto &p : descPtrs)
    args.push_back(&p);
  CpuModel *outer = tracingModel;
  tracingModel = this;
  auto err = engine->invokePacked("_mlir_ciface_" + sig.name, args);
  tracingModel = outer;
  if (err) {
    error = "running @" + sig.name + ": " + llvm::toString(std::move(err));
    return failure();
  }
  return success();
}

LogicalResult mlir::rlx::checkArgumentNames(const std::map<std::string, HostTensor> &values,
                                            ArrayRef<ModelTensor> arguments, StringRef what,
                                            std::string &error) {
  for (auto &value : values) {
    const std::string &name = value.first;
    if (llvm::any_of(arguments, [&](const ModelTensor &a) { return a.name == name; }))
      continue;
    std::string known;
    for (const ModelTensor &a : arguments)
      known += (known.empty() ? "" : ", ") + a.name;
    error = what.str() + "'" + name + "' is not an argument of the model (" +
            (known.empty() ? std::string("it has none") : "arguments: " + known) + ")";
    return failure();
  }
  return success();
}

const HostTensor *CpuModel::lookup(const std::map<std::string, HostTensor> &inputs,
                                   std::vector<std::unique_ptr<HostTensor>> &converted,
                                   const std::string &name, const std::vector<int64_t> &shape,
                                   const std::string &dtype, std::string &error) {
  const HostTensor *t = nullptr;
  auto it = inputs.find(name);
  if (StringRef(name).starts_with("__arena:")) {
    auto [arena, created] = arenas.try_emplace(name);
    if (created)
      arena->second = HostTensor::zeros(dtype, shape);
    t = &arena->second;
  } else if (it != inputs.end())
    t = &it->second;
  else if (auto p = packed.find(name); p != packed.end())
    t = &p->second;
  else if (auto w = weights.find(name); w != weights.end())
    t = &w->second;
  if (!t) {
    std::vector<std::string> sources = packedSources();
    error = "no value for argument '" + name + "'" +
            (llvm::is_contained(sources, name)
                 ? " (the originals of packed parameters are needed to pack them: the first "
                   "run, and the one after invalidating the packed parameters)"
                 : "");
    return nullptr;
  }
  if (t->shape != shape) {
    std::string want, got;
    for (int64_t d : shape)
      want += std::to_string(d) + "x";
    for (int64_t d : t->shape)
      got += std::to_string(d) + "x";
    error = "argument '" + name + "' has shape " + got + t->dtype + ", the model expects " +
            want + dtype;
    return nullptr;
  }
  if (t->dtype != dtype) {
    FailureOr<HostTensor> exact = convertExact(*t, dtype, name, error);
    if (failed(exact))
      return nullptr;
    converted.push_back(std::make_unique<HostTensor>(std::move(*exact)));
    t = converted.back().get();
  }
  return t;
}

LogicalResult CpuModel::packParams(const std::map<std::string, HostTensor> &inputs,
                                   std::vector<std::unique_ptr<HostTensor>> &converted,
                                   std::string &error) {
  // Packed parameters: computed once from the original ones, but for a
  // pack function whose every result a loader gave (setPacked).
  auto given = [&](const Signature &fn) {
    return llvm::all_of(packedBy, [&](const auto &kv) {
      return kv.second.fn != fn.name || packed.count(kv.first);
    });
  };
  if (llvm::any_of(packFns, [&](const Signature &fn) { return !given(fn); })) {
    auto t0 = std::chrono::steady_clock::now();
    for (const Signature &fn : packFns) {
      if (given(fn))
        continue;
      std::vector<const HostTensor *> in;
      for (unsigned i = 0; i < fn.numInputs; ++i) {
        const HostTensor *t = lookup(inputs, converted, fn.argNames[i], fn.shapes[i], fn.dtypes[i], error);
        if (!t)
          return failure();
        in.push_back(t);
      }
      std::vector<HostTensor> res;
      if (failed(invoke(fn, in, res, error)))
        return failure();
      for (auto &[name, src] : packedBy)
        if (src.fn == fn.name)
          packed[name] = std::move(res[src.index]);
    }
    packMs = msSince(t0);
  }
  return success();
}

FailureOr<int64_t> CpuModel::releasePackedSources(std::map<std::string, HostTensor> &params,
                                                  std::string &error) {
  std::vector<std::unique_ptr<HostTensor>> converted;
  if (failed(packParams(params, converted, error)))
    return failure();
  int64_t released = 0;
  for (const std::string &name : packedSources()) {
    auto it = params.find(name);
    if (it == params.end())
      continue;
    released += static_cast<int64_t>(it->second.data.size());
    params.erase(it);
  }
  return released;
}

std::vector<std::string> CpuModel::packedSources() const {
  // The pack functions' inputs the entry does not read itself.
  std::set<std::string> entryReads(entry.argNames.begin(), entry.argNames.end()), seen;
  std::vector<std::string> names;
  for (const Signature &fn : packFns)
    for (unsigned i = 0; i < fn.numInputs; ++i) {
      const std::string &name = fn.argNames[i];
      if (!entryReads.count(name) && !StringRef(name).starts_with("__arena:") &&
          seen.insert(name).second)
        names.push_back(name);
    }
  return names;
}

std::set<std::string> mlir::rlx::moduleParamNames(ModuleOp module) {
  std::set<std::string> names;
  for (auto fn : module.getOps<func::FuncOp>())
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (auto name = fn.getArgAttrOfType<StringAttr>(i, "rlx.param"))
        names.insert(name.str());
  return names;
}

FailureOr<int64_t> CpuModel::loadWeights(StringRef path, std::string &error) {
  FailureOr<CheckpointIndex> index = indexSafetensors(path, error);
  if (failed(index))
    return failure();
  std::vector<ParamSpec> params;
  for (const ModelTensor &a : args)
    if (a.isParam)
      params.push_back({a.name, a.dtype, a.shape});
  std::map<std::string, HostTensor> laidOut, read;
  placeConcats(concats, params, laidOut);
  std::set<std::string> own;
  for (const ParamSpec &p : params)
    own.insert(p.name);
  for (const std::string &name : otherParams)
    if (!own.count(name))
      index->erase(name); // another entry point's
  if (failed(bindCheckpoint(*index, params, read, error)))
    return failure();
  weights = std::move(read);
  packed = std::move(laidOut);
  // Packing the rest now lets the originals go (the packed copies replace
  // them): the weights are held once.
  std::vector<std::unique_ptr<HostTensor>> converted;
  if (failed(packParams({}, converted, error)))
    return failure();
  for (const std::string &name : packedSources())
    weights.erase(name);
  int64_t bytes = packedBytes();
  for (const auto &[name, t] : weights)
    bytes += static_cast<int64_t>(t.data.size());
  return bytes;
}

FailureOr<int64_t> CpuModel::holdWeights(std::map<std::string, HostTensor> params,
                                         std::string &error) {
  std::map<std::string, HostTensor> held;
  for (auto &entry : params) {
    const std::string &name = entry.first;
    HostTensor &t = entry.second;
    auto arg = llvm::find_if(args, [&](const ModelTensor &a) { return a.name == name; });
    if (arg == args.end() || !arg->isParam) {
      error = "'" + name + "' is not a parameter of the model";
      return failure();
    }
    if (t.shape != arg->shape) {
      error = "parameter '" + name + "' has another shape than the model's";
      return failure();
    }
    if (t.dtype == arg->dtype) {
      held.emplace(name, std::move(t));
      continue;
    }
    FailureOr<HostTensor> exact = convertExact(t, arg->dtype, name, error);
    if (failed(exact))
      return failure();
    held.emplace(name, std::move(*exact));
  }
  weights = std::move(held);
  packed.clear();
  int64_t bytes = 0;
  for (const auto &[name, t] : weights)
    bytes += static_cast<int64_t>(t.data.size());
  return bytes;
}

LogicalResult CpuModel::setPacked(const std::string &name, HostTensor t, std::string &error) {
  auto it = llvm::find_if(concats, [&](const PackedConcat &c) { return c.name == name; });
  if (it == concats.end()) {
    error = "'" + name + "' is not a packed parameter a loader lays out";
    return failure();
  }
  if (t.shape != it->shape || t.dtype != it->dtype) {
    error = "packed parameter '" + name + "' given with another shape or dtype";
    return failure();
  }
  packed[name] = std::move(t);
  return success();
}

int64_t CpuModel::packedBytes() const {
  int64_t bytes = 0;
  for (const auto &[name, t] : packed)
    bytes += static_cast<int64_t>(t.data.size());
  return bytes;
}

LogicalResult CpuModel::run(const std::map<std::string, HostTensor> &inputs,
                            std::vector<HostTensor> &outputs, std::string &error) {
  if (failed(checkArgumentNames(inputs, args, "", error)))
    return failure();
  // Ids against the tables they index (the kernels would clamp them).
  for (const ModelTensor &a : args) {
    auto it = inputs.find(a.name);
    if (a.indexBound <= 0 || it == inputs.end())
      continue;
    FailureOr<HostTensor> ids = convertExact(it->second, a.dtype, a.name, error);
    if (failed(ids))
      return failure();
    error = ::rlx::checkIndices(a.name, ids->data.data(), uint64_t(ids->numElements()),
                                unsigned(HostTensor::elementBytes(a.dtype)), a.dtype == "u8",
                                a.indexBound);
    if (!error.empty())
      return failure();
  }
  // Holds converted copies of inputs whose dtype differs from the model's.
  std::vector<std::unique_ptr<HostTensor>> converted;
  if (failed(packParams(inputs, converted, error)))
    return failure();
  std::vector<const HostTensor *> in;
  for (unsigned i = 0; i < entry.numInputs; ++i) {
    const HostTensor *t =
        lookup(inputs, converted, entry.argNames[i], entry.shapes[i], entry.dtypes[i], error);
    if (!t)
      return failure();
    in.push_back(t);
  }
  return invoke(entry, in, outputs, error);
}
