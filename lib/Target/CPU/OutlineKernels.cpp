//===- OutlineKernels.cpp - rlx-cpu-outline-kernels -----------------------===//

#include "RLX/Dialect/Common/IR/SourceLocations.h"
#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/LIR/Transforms/Passes.h"
#include "RLX/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_CPUOUTLINEKERNELS
#include "RLX/Target/CPU/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;

namespace {

/// The function a buffer-form kernel becomes: one memref argument per
/// distinct buffer it touches (an in-place output shares its input's), a
/// to_tensor of each input, the body, a materialize_in_destination of each
/// result. Within the function no two arguments overlap in memory (the plan
/// keeps buffers live at one kernel apart; an in-place pair is one argument),
/// which is what `restrict` promises One-Shot Bufferize; inlined into one
/// function, views of the same arena bytes at different times would break
/// that promise.
func::FuncOp outlineKernel(lir::KernelOp kernel, func::FuncOp parent, unsigned index,
                           SymbolTable &symbols, IRRewriter &rw,
                           function_ref<void(func::CallOp, func::FuncOp)> trace) {
  Location loc = kernel.getLoc();
  SmallVector<Value> args;
  auto argOf = [&](Value v) {
    auto it = llvm::find(args, v);
    if (it != args.end())
      return static_cast<unsigned>(it - args.begin());
    args.push_back(v);
    return static_cast<unsigned>(args.size() - 1);
  };
  SmallVector<unsigned> inArg, outArg;
  for (Value in : kernel.getInputs())
    inArg.push_back(argOf(in));
  // An output that reuses an input's bytes (in place) with the same type is
  // that input's argument; with another element type of the same width it
  // stays its own argument, written without `restrict` (through a copy).
  std::optional<ArrayRef<int64_t>> inPlace = kernel.getInPlace();
  llvm::SmallDenseSet<unsigned> aliased;
  for (auto [k, out] : llvm::enumerate(kernel.getOutputs())) {
    int64_t reuse = inPlace ? (*inPlace)[k] : -1;
    if (reuse >= 0 && kernel.getInputs()[reuse].getType() == out.getType()) {
      outArg.push_back(inArg[reuse]);
      continue;
    }
    outArg.push_back(argOf(out));
    if (reuse >= 0)
      aliased.insert(outArg.back());
  }
  std::string name = (parent.getSymName() + "__" + kernel.getName().value_or("kernel") + "_" +
                      std::to_string(index))
                         .str();
  OpBuilder::InsertionGuard guard(rw);
  rw.setInsertionPointToEnd(parent->getParentOfType<ModuleOp>().getBody());
  auto fn = func::FuncOp::create(rw, loc, name,
                                 rw.getFunctionType(ValueRange(args).getTypes(), {}));
  fn.setPrivate();
  // A kernel stays a function of its own: inlined into the entry (each has
  // one call site), hundreds of them made one block whose instruction
  // scheduling grew quadratically (seconds of JIT time per FFT), for no
  // gain at run time.
  fn->setAttr("passthrough", rw.getArrayAttr({rw.getStringAttr("noinline")}));
  symbols.insert(fn);
  Block *entry = fn.addEntryBlock();
  rw.setInsertionPointToStart(entry);
  IRMapping map;
  Block &body = kernel.getBody().front();
  llvm::SmallDenseSet<unsigned> written(outArg.begin(), outArg.end());
  DenseMap<unsigned, Value> tensorOf; // one to_tensor per argument
  for (auto [arg, a] : llvm::zip(body.getArguments(), inArg)) {
    Value &t = tensorOf[a];
    if (!t)
      // An input an output reuses (in place) is the output's buffer: writable.
      t = bufferization::ToTensorOp::create(rw, loc, arg.getType(), entry->getArgument(a),
                                            /*restrict=*/true, /*writable=*/written.contains(a));
    map.map(arg, t);
  }
  for (Operation &op : body.without_terminator())
    rw.clone(op, map);
  for (auto [value, a] : llvm::zip(kernel.getYield().getValues(), outArg)) {
    auto store = bufferization::MaterializeInDestinationOp::create(
        rw, loc, TypeRange{}, map.lookupOrDefault(value), entry->getArgument(a));
    // restrict: no to_tensor of this buffer (or of memory it shares) in the
    // function, unless the kernel reads it too (in place).
    store.setRestrict(!tensorOf.count(a) && !aliased.contains(a));
    store.setWritable(true);
  }
  func::ReturnOp::create(rw, loc);
  rw.setInsertionPoint(kernel);
  // The call stands for every op of the kernel (the trace's provenance).
  auto call = func::CallOp::create(rw, fusedOrigins(kernel), fn, args);
  rw.eraseOp(kernel);
  if (trace)
    trace(call, fn);
  return fn;
}

/// --trace: `@rlx_trace_kernel_begin(id)` and `@rlx_trace_kernel_end(id)`
/// around the call of kernel `id`, and the module's `rlx.trace_kernels`
/// entry `id`: {name, locations} (the runner's timeline, CpuRunner.h).
struct KernelTracer {
  ModuleOp module;
  IRRewriter &rw;
  func::FuncOp begin, end;
  SmallVector<Attribute> table;

  KernelTracer(ModuleOp module, IRRewriter &rw) : module(module), rw(rw) {
    OpBuilder::InsertionGuard guard(rw);
    rw.setInsertionPointToStart(module.getBody());
    auto type = rw.getFunctionType({rw.getI64Type()}, {});
    auto declare = [&](StringRef name) {
      if (auto f = module.lookupSymbol<func::FuncOp>(name))
        return f; // traced before (the pass run twice)
      auto f = func::FuncOp::create(rw, module.getLoc(), name, type);
      f.setPrivate();
      return f;
    };
    begin = declare("rlx_trace_kernel_begin");
    end = declare("rlx_trace_kernel_end");
  }
  void operator()(func::CallOp call, func::FuncOp fn) {
    OpBuilder::InsertionGuard guard(rw);
    Location loc = call.getLoc();
    rw.setInsertionPoint(call);
    Value id = arith::ConstantIntOp::create(rw, loc, rw.getI64Type(),
                                            static_cast<int64_t>(table.size()));
    func::CallOp::create(rw, loc, begin, ValueRange{id});
    rw.setInsertionPointAfter(call);
    func::CallOp::create(rw, loc, end, ValueRange{id});
    SmallVector<Attribute> locations;
    for (const std::string &l : sourceLocations(loc))
      locations.push_back(rw.getStringAttr(l));
    table.push_back(rw.getDictionaryAttr({rw.getNamedAttr("name", fn.getSymNameAttr()),
                                          rw.getNamedAttr("locations", rw.getArrayAttr(locations))}));
  }
  void finish() { module->setAttr("rlx.trace_kernels", rw.getArrayAttr(table)); }
};

struct CpuOutlineKernelsPass : rlx::impl::CpuOutlineKernelsBase<CpuOutlineKernelsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Functions still on tensors (the path without LIR): one value per result.
    lir::separateReturnedTensors(module);
    IRRewriter rw(&getContext());
    std::optional<KernelTracer> tracer;
    if (trace)
      tracer.emplace(module, rw);
    SymbolTable symbols(module);
    for (auto fn : llvm::to_vector(module.getOps<func::FuncOp>())) {
      SmallVector<lir::ViewOp> views;
      SmallVector<lir::KernelOp> kernels;
      fn.walk([&](Operation *op) {
        if (auto v = dyn_cast<lir::ViewOp>(op))
          views.push_back(v);
        else if (auto k = dyn_cast<lir::KernelOp>(op); k && k.hasPureBufferSemantics())
          kernels.push_back(k);
      });
      for (lir::ViewOp view : views) {
        rw.setInsertionPoint(view);
        Value shift = arith::ConstantIndexOp::create(rw, view.getLoc(), view.getByteOffset());
        rw.replaceOpWithNewOp<memref::ViewOp>(view, view.getType(), view.getArena(), shift,
                                              ValueRange{});
      }
      for (auto [i, kernel] : llvm::enumerate(kernels))
        outlineKernel(kernel, fn, i, symbols, rw,
                      tracer ? function_ref<void(func::CallOp, func::FuncOp)>(*tracer)
                             : function_ref<void(func::CallOp, func::FuncOp)>());
    }
    if (tracer)
      tracer->finish();
  }
};

} // namespace
