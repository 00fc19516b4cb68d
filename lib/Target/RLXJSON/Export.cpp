//===- Export.cpp - RLX-MLIR's HIR and planned LIR as RLX JSON -------------===//
//
// One node per argument and op, in order (ids are topological). Ops with a
// variant in the original format are written in it (Linear, RmsNorm,
// ResidualRmsNorm, SwiGLU, Attention, RoPE, Constant and the MIR ops
// MatMul, Binary, Activation, Unary, Reduce, Softmax, Reshape, Transpose,
// FusedMatMulBiasAct, Attention); any other op is written as
// {"Mir": {"Mlir": {"op": text}}} with $0, $1, ... for its operands, which
// the importer reads back.
//
//===----------------------------------------------------------------------===//

#include "JsonCommon.h"

#include "RLX/Dialect/Common/IR/IONames.h"
#include "RLX/Dialect/Common/IR/StorageSize.h"
#include "RLX/Dialect/HIR/IR/HIROps.h"
#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Target/RLXJSON/RLXJSON.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::rlxjson;
namespace json = llvm::json;

namespace {

json::Value tagged(StringRef tag, json::Value payload) {
  return json::Object{{tag, std::move(payload)}};
}

json::Value activationJson(ActivationKind a) {
  if (a == ActivationKind::None)
    return "None";
  return snakeToCamel(stringifyActivationKind(a));
}

/// The op's custom-form text with $0, $1, ... for its operands.
std::string opText(Operation *op) {
  OpBuilder b(op->getContext());
  OwningOpRef<ModuleOp> tmp = ModuleOp::create(op->getLoc());
  b.setInsertionPointToEnd(tmp->getBody());
  auto fn = func::FuncOp::create(b, op->getLoc(), "t",
                                 b.getFunctionType(op->getOperandTypes(), {}));
  Block *entry = fn.addEntryBlock();
  // The operands print as %rlx_operand<i> (name locations), apart from any
  // name a region of the op gives its own values.
  for (BlockArgument arg : entry->getArguments())
    arg.setLoc(NameLoc::get(b.getStringAttr("rlx_operand" + std::to_string(arg.getArgNumber()))));
  b.setInsertionPointToEnd(entry);
  IRMapping map;
  for (auto [v, arg] : llvm::zip(op->getOperands(), entry->getArguments()))
    map.map(v, arg);
  b.clone(*op, map);
  func::ReturnOp::create(b, op->getLoc());
  std::string s;
  llvm::raw_string_ostream os(s);
  // Custom form without locations, whatever the tool's --mlir-print-* say.
  fn->print(os, OpPrintingFlags()
                    .printNameLocAsPrefix()
                    .printGenericOpForm(false)
                    .enableDebugInfo(false, false)
                    .elideLargeElementsAttrs(std::numeric_limits<int64_t>::max())
                    .elideLargeResourceString(std::numeric_limits<int64_t>::max()));
  // The op is the function's body: between the signature's "{" and the
  // return.
  StringRef text(s);
  text = text.drop_front(text.find("{\n") + 2);
  text = text.take_front(text.rfind("\n  return")).trim();
  if (size_t eq = text.find(" = "); eq != StringRef::npos && text.starts_with("%"))
    text = text.drop_front(eq + 3);
  std::string out = text.str();
  for (size_t i = op->getNumOperands(); i-- > 0;) {
    std::string key = "%rlx_operand" + std::to_string(i);
    for (size_t p = out.find(key); p != std::string::npos; p = out.find(key, p + 1))
      if (p + key.size() == out.size() || !llvm::isDigit(out[p + key.size()]))
        out.replace(p, key.size(), "$" + std::to_string(i));
  }
  return out;
}

/// A MIR op in the original format when it has a variant, else nullopt.
std::optional<json::Value> mirJson(Operation *op) {
  using namespace mlir::rlx::mir;
  std::string name = op->getName().stripDialect().str();
  if (auto m = dyn_cast<MatmulOp>(op); m && !m.getTransposeA() && !m.getTransposeB())
    return json::Value("MatMul");
  if (isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp>(op))
    return tagged("Binary", snakeToCamel(name));
  if (isa<ReluOp, GeluOp, GeluTanhOp, SiluOp, SigmoidOp, TanhOp>(op))
    return tagged("Activation", snakeToCamel(name));
  if (isa<NegOp, ExpOp, LogOp, SqrtOp, RsqrtOp, ReciprocalOp, AbsOp, ErfOp, SinOp, CosOp>(op))
    return tagged("Unary", snakeToCamel(name));
  if (auto r = dyn_cast<ReduceOp>(op)) {
    json::Array axes;
    for (int64_t a : r.getAxes())
      axes.push_back(a);
    return tagged("Reduce", json::Object{{"op", snakeToCamel(stringifyReduceKind(r.getKind()))},
                                         {"axes", std::move(axes)},
                                         {"keep_dim", r.getKeepDims()}});
  }
  if (auto s = dyn_cast<SoftmaxOp>(op))
    return tagged("Softmax", json::Object{{"axis", static_cast<int64_t>(s.getAxis())}});
  if (auto r = dyn_cast<ReshapeOp>(op)) {
    json::Array dims;
    for (int64_t d : r.getShape())
      dims.push_back(d);
    return tagged("Reshape", json::Object{{"new_shape", std::move(dims)}});
  }
  if (auto t = dyn_cast<TransposeOp>(op)) {
    json::Array perm;
    for (int64_t d : t.getPermutation())
      perm.push_back(d);
    return tagged("Transpose", json::Object{{"perm", std::move(perm)}});
  }
  if (auto f = dyn_cast<FusedMatmulOp>(op);
      f && f.getBias() && !f.getTransposeB() && !f.isNvfp4() && !f.getNorm() && !f.getGlu() &&
      !f.getHeadNormWeight() && !f.getRopeCos() && !f.getResidual())
    return tagged("FusedMatMulBiasAct",
                  json::Object{{"activation", activationJson(f.getActivation())}});
  // RLX's JSON has no chunked mask: such attention is not exported as one.
  if (auto a = dyn_cast<AttentionOp>(op);
      a && a.getLayout() == AttnLayout::BSD && !a.getMask() &&
      a.getMaskKind() != MaskKind::Chunked) {
    json::Value mask = "None";
    if (a.getMaskKind() == MaskKind::Causal)
      mask = "Causal";
    else if (a.getMaskKind() == MaskKind::SlidingWindow)
      mask = slidingWindowToJson(static_cast<int64_t>(a.getWindow().value_or(1)));
    json::Value scale = a.getScale() ? json::Value(a.getScale()->convertToDouble()) : nullptr;
    json::Value cap = a.getSoftcap() ? json::Value(a.getSoftcap()->convertToDouble()) : nullptr;
    return tagged("Attention", json::Object{{"num_heads", static_cast<int64_t>(a.getNumHeads())},
                                            {"head_dim", static_cast<int64_t>(a.getHeadDim())},
                                            {"mask_kind", std::move(mask)},
                                            {"score_scale", std::move(scale)},
                                            {"attn_logit_softcap", std::move(cap)}});
  }
  return std::nullopt;
}

/// Ops whose text the {"Mlir": ...} escape can carry: no regions, or regions
/// isolated from above (fused elementwise bodies, custom_fn), which name
/// nothing outside the op.
bool escapable(Operation *op) {
  return op->getNumRegions() == 0 || op->hasTrait<OpTrait::IsIsolatedFromAbove>();
}

json::Value mirOrEscape(Operation *op) {
  if (auto j = mirJson(op))
    return std::move(*j);
  return tagged("Mlir", json::Object{{"op", opText(op)}});
}

/// A kernel the node form cannot carry (several outputs, constants cloned
/// into it, an op with a region): its whole body in generic form, which the
/// importer puts back verbatim. The body is isolated from above, so its value
/// names never meet the enclosing function's.
std::string kernelBodyText(lir::KernelOp k) {
  std::string s;
  llvm::raw_string_ostream os(s);
  OpPrintingFlags flags;
  flags.printGenericOpForm().useLocalScope();
  AsmState state(k, flags);
  os << "{\n";
  Block &body = k.getBody().front();
  os << "^bb0(";
  llvm::interleaveComma(body.getArguments(), os, [&](BlockArgument a) {
    a.printAsOperand(os, state);
    os << ": " << a.getType();
  });
  os << "):\n";
  for (Operation &inner : body) {
    inner.print(os, state);
    os << "\n";
  }
  os << "}";
  return s;
}

/// True when the kernel is its root op applied to the kernel's inputs in
/// order, with one result: the plain node form.
bool isPlainKernel(lir::KernelOp k) {
  Operation *root = k.getRootOp();
  if (!root || k.getOutputs().size() != 1 || root->getNumResults() != 1 ||
      root->getNumRegions() != 0 || root->getNumOperands() != k.getInputs().size())
    return false;
  for (auto [i, v] : llvm::enumerate(root->getOperands()))
    if (v != k.getBody().front().getArgument(i))
      return false;
  return llvm::hasSingleElement(k.getBody().front().without_terminator());
}

std::optional<std::string> nodeName(Location loc) {
  if (auto n = dyn_cast<NameLoc>(loc))
    return n.getName().str();
  return std::nullopt;
}

class GraphWriter {
public:
  json::Array nodes;
  DenseMap<Value, int64_t> id;

  int64_t add(json::Value op, ArrayRef<int64_t> inputs, Type type, std::optional<std::string> name,
              ArrayRef<std::string> dimNames = {}) {
    int64_t n = nodes.size();
    json::Array ins;
    for (int64_t i : inputs)
      ins.push_back(i);
    nodes.push_back(json::Object{{"id", n},
                                 {"op", std::move(op)},
                                 {"inputs", std::move(ins)},
                                 {"shape", shapeToJson(cast<ShapedType>(type), dimNames)},
                                 {"name", name ? json::Value(*name) : json::Value(nullptr)}});
    return n;
  }

  FailureOr<SmallVector<int64_t>> inputsOf(Operation *op) {
    SmallVector<int64_t> ins;
    for (Value v : op->getOperands()) {
      auto it = id.find(v);
      if (it == id.end())
        return op->emitError("export: operand without a node"), failure();
      ins.push_back(it->second);
    }
    return ins;
  }

  /// RLX keeps linear weights as [in, out]: an [out, in] weight gets a Transpose node.
  int64_t transposed(Value w) {
    auto t = cast<RankedTensorType>(w.getType());
    auto tt = RankedTensorType::get({t.getDimSize(1), t.getDimSize(0)}, t.getElementType());
    return add(tagged("Mir", tagged("Transpose", json::Object{{"perm", json::Array{1, 0}}})),
               {id[w]}, tt, std::nullopt);
  }

  LogicalResult addOp(Operation *op) {
    auto name = nodeName(op->getLoc());
    if (auto c = dyn_cast<mir::ConstantOp>(op)) {
      auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
      if (!dense)
        return op->emitError("export: only dense constants");
      json::Array bytes;
      int64_t n = cast<ShapedType>(c.getType()).getNumElements();
      ArrayRef<char> raw = dense.getRawData();
      size_t elt = dense.isSplat() ? raw.size() : raw.size() / std::max<int64_t>(1, n);
      for (int64_t i = 0; i < n; ++i)
        for (size_t b = 0; b < elt; ++b)
          bytes.push_back(static_cast<uint8_t>(raw[(dense.isSplat() ? 0 : i * elt) + b]));
      id[c.getResult()] = add(tagged("Constant", json::Object{{"data", std::move(bytes)}}), {},
                              c.getType(), name);
      return success();
    }
    auto ins = inputsOf(op);
    if (failed(ins))
      return failure();
    auto set = [&](json::Value j, ArrayRef<int64_t> inputs) {
      id[op->getResult(0)] = add(std::move(j), inputs, op->getResult(0).getType(), name);
      return success();
    };
    if (auto l = dyn_cast<hir::LinearOp>(op)) {
      SmallVector<int64_t> inputs{(*ins)[0], l.getLayout() == WeightLayout::InOut
                                                 ? (*ins)[1]
                                                 : transposed(l.getWeight())};
      if (l.getBias())
        inputs.push_back((*ins)[2]);
      return set(tagged("Linear", json::Object{{"activation", activationJson(l.getActivation())},
                                               {"has_bias", l.getBias() != nullptr}}),
                 inputs);
    }
    if (auto s = dyn_cast<hir::SwiGluOp>(op); s && s.getActivation() == ActivationKind::Silu) {
      bool io = s.getLayout() == WeightLayout::InOut;
      SmallVector<int64_t> inputs{(*ins)[0], io ? (*ins)[2] : transposed(s.getUpWeight()),
                                  io ? (*ins)[1] : transposed(s.getGateWeight()),
                                  io ? (*ins)[3] : transposed(s.getDownWeight())};
      return set("SwiGLU", inputs);
    }
    if (auto r = dyn_cast<hir::RmsNormOp>(op))
      return set(tagged("RmsNorm", json::Object{{"eps", r.getEps().convertToDouble()}}), *ins);
    if (auto r = dyn_cast<hir::ResidualRmsNormOp>(op)) {
      if (failed(set(tagged("ResidualRmsNorm", json::Object{{"eps", r.getEps().convertToDouble()}}), *ins)))
        return failure();
      if (!r.getSum().use_empty())
        id[r.getSum()] = add(tagged("Mir", tagged("Binary", "Add")), {(*ins)[0], (*ins)[1]},
                             r.getSum().getType(), std::nullopt);
      return success();
    }
    if (auto a = dyn_cast<hir::AttentionOp>(op);
        a && a.getLayout() == AttnLayout::BSD && !a.getScale() && !a.getSoftcap() &&
        !a.getSinks() && a.getMaskKind() != MaskKind::Chunked) {
      json::Value mask = "None";
      if (a.getMaskKind() == MaskKind::Causal)
        mask = "Causal";
      else if (a.getMaskKind() == MaskKind::SlidingWindow)
        mask = slidingWindowToJson(static_cast<int64_t>(a.getWindow().value_or(1)));
      return set(tagged("Attention", json::Object{{"num_heads", static_cast<int64_t>(a.getNumHeads())},
                                                  {"head_dim", static_cast<int64_t>(a.getHeadDim())},
                                                  {"mask", std::move(mask)}}),
                 *ins);
    }
    if (auto r = dyn_cast<hir::RopeOp>(op);
        r && r.getCos() && r.getStyle() == RopeStyle::NeoX) {
      int64_t hd = r.getHeadDim();
      return set(tagged("RoPE", json::Object{{"head_dim", hd},
                                             {"n_rot", static_cast<int64_t>(r.getRotaryDim().value_or(hd))}}),
                 *ins);
    }
    if (op->getNumResults() != 1)
      return op->emitError("export: ") << op->getName() << " with " << op->getNumResults()
                                       << " results has no RLX JSON form";
    if (!mirJson(op) && !escapable(op))
      return op->emitError("export: ")
             << op->getName()
             << " (an op with regions that are not isolated from above) has no RLX JSON form";
    if (!mirJson(op)) {
      // The escape is op text: resource blobs live outside it.
      WalkResult blob = op->walk([](Operation *inner) {
        for (NamedAttribute a : inner->getAttrs())
          if (isa<DenseResourceElementsAttr>(a.getValue()))
            return WalkResult::interrupt();
        return WalkResult::advance();
      });
      if (blob.wasInterrupted())
        return op->emitError("export: ")
               << op->getName()
               << " holds a dense_resource constant, which the {\"Mlir\": ...} escape cannot "
                  "carry; make it a dense<...> constant first";
    }
    return set(tagged("Mir", mirOrEscape(op)), *ins);
  }
};

func::FuncOp mainFunction(ModuleOp module) {
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal() && !fn.isPrivate() && !fn.getSymName().ends_with("_pack_params"))
      return fn;
  return nullptr;
}

} // namespace

LogicalResult mlir::rlx::exportRLXHirJson(ModuleOp module, llvm::raw_ostream &os) {
  func::FuncOp fn = mainFunction(module);
  if (!fn)
    return emitError(module.getLoc(), "export: no public function");
  GraphWriter g;
  for (auto [i, arg] : llvm::enumerate(fn.getArguments())) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t)
      return fn.emitError("export-rlx-hir-json needs tensor arguments (HIR or MIR)");
    bool param = fn.getArgAttr(i, "rlx.param") != nullptr;
    std::vector<std::string> dimNames;
    if (auto dims = fn.getArgAttrOfType<ArrayAttr>(i, "rlx.dim_names"))
      for (Attribute d : dims)
        dimNames.push_back(cast<StringAttr>(d).str());
    g.id[arg] = g.add(tagged(param ? "Param" : "Input",
                             json::Object{{"name", argumentName(fn, i)}}),
                      {}, t, std::nullopt, dimNames);
  }
  json::Array outputs;
  for (Operation &op : fn.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        int64_t node = g.id[v];
        outputs.push_back(node);
        // An unnamed output node takes the function result's name.
        json::Object *o = g.nodes[node].getAsObject();
        auto name = fn.getResultAttrOfType<StringAttr>(i, "rlx.output");
        if (name && o->get("name")->getAsNull())
          (*o)["name"] = name.str();
      }
      continue;
    }
    if (failed(g.addOp(&op)))
      return failure();
  }
  auto policy = module->getAttrOfType<StringAttr>("rlx.fusion_policy");
  json::Object root{{"name", fn.getSymName().str()},
                    {"fusion_policy", snakeToCamel(policy ? policy.getValue() : "direct")},
                    {"outputs", std::move(outputs)},
                    {"nodes", std::move(g.nodes)}};
  os << llvm::formatv("{0:2}", json::Value(std::move(root))) << "\n";
  return success();
}

LogicalResult mlir::rlx::exportRLXLirJson(ModuleOp module, llvm::raw_ostream &os) {
  func::FuncOp fn = mainFunction(module);
  auto plan = fn ? fn->getAttrOfType<DictionaryAttr>("rlx_lir.plan") : nullptr;
  if (!plan)
    return emitError(module.getLoc(), "export-rlx-lir-json needs a planned LIR function (rlx-lir-plan-buffers)");
  GraphWriter g;
  json::Array inputs, params, outputs, schedule;
  json::Object assignments, aliases;
  Value arena;
  DenseMap<Value, int64_t> viewOffset;
  for (auto [i, arg] : llvm::enumerate(fn.getArguments())) {
    if (fn.getArgAttr(i, "rlx_lir.arena")) {
      arena = arg;
      continue;
    }
    if (auto out = fn.getArgAttrOfType<StringAttr>(i, "rlx.output")) {
      g.id[arg] = -1; // filled by the kernel that writes it
      continue;
    }
    bool param = fn.getArgAttr(i, "rlx.param") != nullptr;
    std::string n = argumentName(fn, i);
    int64_t id = g.add(tagged(param ? "Param" : "Input", json::Object{{"name", n}}), {},
                       arg.getType(), std::nullopt);
    g.id[arg] = id;
    (param ? params : inputs).push_back(json::Array{n, id});
    schedule.push_back(id);
  }
  DenseMap<Value, int64_t> producer; // buffer → node that last wrote it
  std::map<int64_t, Value> writtenAt;  // arena offset → view last written there
  auto bytesOf = [](Type t) { return getStorageBytes(cast<MemRefType>(t)).value_or(-1); };
  // A view nobody wrote that starts where a written view of as many bytes
  // does is a reshape of it (the original's view alias).
  auto aliasView = [&](Value in) -> LogicalResult {
    if (producer.count(in) || g.id.count(in) || !viewOffset.count(in))
      return success();
    auto w = writtenAt.find(viewOffset[in]);
    if (w == writtenAt.end() || bytesOf(w->second.getType()) != bytesOf(in.getType()))
      return failure();
    json::Array dims;
    for (int64_t d : cast<MemRefType>(in.getType()).getShape())
      dims.push_back(d);
    int64_t root = producer[w->second];
    int64_t id = g.add(tagged("Reshape", json::Object{{"new_shape", std::move(dims)}}), {root},
                       in.getType(), std::nullopt);
    producer[in] = id;
    aliases[std::to_string(id)] = json::Object{{"root", root}, {"byte_offset", 0}};
    schedule.push_back(id);
    return success();
  };
  // Node `id` is written to argument `arg`: when that is an output, the node
  // is a graph output and, unless named already, takes the output's name.
  auto markOutput = [&](int64_t id, unsigned arg) {
    auto name = fn.getArgAttrOfType<StringAttr>(arg, "rlx.output");
    if (!name)
      return;
    outputs.push_back(id);
    json::Object *o = g.nodes[id].getAsObject();
    if (o->get("name")->getAsNull())
      (*o)["name"] = name.str();
  };
  for (Operation &op : fn.getBody().front()) {
    if (auto v = dyn_cast<lir::ViewOp>(op)) {
      viewOffset[v.getResult()] = v.getByteOffset();
      continue;
    }
    if (isa<func::ReturnOp>(op))
      continue;
    if (auto k = dyn_cast<lir::KernelOp>(op)) {
      Operation *root = k.getRootOp();
      SmallVector<int64_t> ins;
      for (Value in : k.getInputs()) {
        if (failed(aliasView(in)))
          return k.emitError("export-rlx-lir-json: an input view that no node wrote");
        auto it = producer.find(in);
        int64_t src = it != producer.end() ? it->second : g.id.lookup(in);
        if (it == producer.end() && !g.id.count(in))
          return k.emitError("export-rlx-lir-json: an input that no node produces");
        ins.push_back(src);
      }
      // One node per output: the root op in the original's form (or the
      // one-op escape) when the kernel is just that, else the kernel escape,
      // whose nodes (one per output) the importer joins into one kernel.
      bool plain = isPlainKernel(k);
      std::string body = plain ? std::string() : kernelBodyText(k);
      for (auto [r, out] : llvm::enumerate(k.getOutputs())) {
        json::Value node =
            plain ? mirOrEscape(root)
                  : tagged("Mlir", json::Object{{"kernel", body},
                                                {"name", k.getName().value_or("kernel").str()},
                                                {"result", static_cast<int64_t>(r)},
                                                {"results", static_cast<int64_t>(k.getOutputs().size())}});
        int64_t id = g.add(std::move(node), ins, out.getType(), nodeName(k.getLoc()));
        producer[out] = id;
        if (auto off = viewOffset.find(out); off != viewOffset.end())
          writtenAt[off->second] = out;
        schedule.push_back(id);
        if (auto off = viewOffset.find(out); off != viewOffset.end())
          assignments[std::to_string(id)] =
              json::Object{{"offset", off->second}, {"size", bytesOf(out.getType())}};
        for (auto [i, arg] : llvm::enumerate(fn.getArguments()))
          if (arg == out)
            markOutput(id, i);
      }
      continue;
    }
    // The node whose bytes `v` are: the kernel that wrote it, or an input.
    auto nodeOf = [&](Value v) -> std::optional<int64_t> {
      if (auto it = producer.find(v); it != producer.end())
        return it->second;
      if (auto it = g.id.find(v); it != g.id.end() && it->second >= 0)
        return it->second;
      return std::nullopt;
    };
    if (auto sv = dyn_cast<memref::SubViewOp>(op)) {
      // A slice kernels read in place (e.g. q, k, v of the merged QKV
      // output): a slice node, and a view alias that also records the
      // offsets, sizes and strides (an RLX-MLIR extension the original's
      // serde ignores) so that the import rebuilds the strided view.
      std::optional<int64_t> root = nodeOf(sv.getSource());
      if (auto arg = dyn_cast<BlockArgument>(sv.getSource()); !root && arg) {
        auto name = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "rlx.output");
        return op.emitError("export-rlx-lir-json: kernels write into slices of output '")
               << (name ? name.getValue() : "?")
               << "' in place (a KV-cache append); the RLX LIR format has no node for a "
                  "concat written in place: export the HIR (--export-rlx-hir-json) instead";
      }
      auto srcType = cast<MemRefType>(sv.getSource().getType());
      if (!root || !srcType.getLayout().isIdentity() || !sv.hasUnitStride() ||
          srcType.getRank() != sv.getType().getRank() || !sv.getType().hasStaticShape() ||
          ShapedType::isDynamicShape(sv.getStaticOffsets()))
        return op.emitError("export-rlx-lir-json: only rank-preserving, static, unit-stride "
                            "slices of a node's buffer have an RLX LIR form");
      SmallVector<int64_t> sizes(sv.getType().getShape());
      json::Array offsetsJson, sizesJson, stridesJson;
      int64_t elementOffset = 0, stride = 1;
      for (int64_t d = srcType.getRank() - 1; d >= 0; --d) {
        elementOffset += sv.getStaticOffsets()[d] * stride;
        stride *= srcType.getDimSize(d);
      }
      for (auto [o, sz] : llvm::zip(sv.getStaticOffsets(), sizes)) {
        offsetsJson.push_back(o);
        sizesJson.push_back(sz);
        stridesJson.push_back(int64_t(1));
      }
      auto tensorOf = [](MemRefType t) {
        return RankedTensorType::get(t.getShape(), t.getElementType());
      };
      std::string text = llvm::formatv("rlx_mir.slice $0 offsets [{0}] sizes [{1}] strides [{2}] : {3}",
                                       llvm::join(llvm::map_range(sv.getStaticOffsets(),
                                                                  [](int64_t v) { return std::to_string(v); }),
                                                  ", "),
                                       llvm::join(llvm::map_range(sizes, [](int64_t v) { return std::to_string(v); }),
                                                  ", "),
                                       llvm::join(SmallVector<std::string>(sizes.size(), "1"), ", "),
                                       tensorOf(srcType))
                             .str();
      int64_t id = g.add(tagged("Mlir", json::Object{{"op", text}}), {*root},
                         tensorOf(cast<MemRefType>(sv.getType())), std::nullopt);
      producer[sv.getResult()] = id;
      int64_t elementBytes = *getElementStorageBytes(srcType.getElementType());
      aliases[std::to_string(id)] =
          json::Object{{"root", *root},
                       {"byte_offset", elementOffset * elementBytes},
                       {"slice", json::Object{{"offsets", std::move(offsetsJson)},
                                              {"sizes", std::move(sizesJson)},
                                              {"strides", std::move(stridesJson)}}}};
      schedule.push_back(id);
      continue;
    }
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(op)) {
      Value src = op.getOperand(0);
      std::optional<int64_t> srcNode = nodeOf(src);
      if (!srcNode)
        return op.emitError("export-rlx-lir-json: a view of a buffer no node produced");
      json::Array dims;
      for (int64_t d : cast<MemRefType>(op.getResult(0).getType()).getShape())
        dims.push_back(d);
      int64_t id = g.add(tagged("Reshape", json::Object{{"new_shape", std::move(dims)}}),
                         {*srcNode}, op.getResult(0).getType(), std::nullopt);
      producer[op.getResult(0)] = id;
      aliases[std::to_string(id)] = json::Object{{"root", *srcNode}, {"byte_offset", 0}};
      schedule.push_back(id);
      continue;
    }
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      // Copies of an input or parameter into the arena: the node's bytes.
      if (auto it = g.id.find(copy.getSource());
          it != g.id.end() && it->second >= 0 && viewOffset.count(copy.getTarget())) {
        producer[copy.getTarget()] = it->second;
        writtenAt[viewOffset[copy.getTarget()]] = copy.getTarget();
        assignments[std::to_string(it->second)] =
            json::Object{{"offset", viewOffset[copy.getTarget()]},
                         {"size", bytesOf(copy.getTarget().getType())}};
        continue;
      }
      // Copies into an output of a value a node produced: the output is that node.
      auto it = producer.find(copy.getSource());
      if (it != producer.end()) {
        for (auto [i, arg] : llvm::enumerate(fn.getArguments()))
          if (arg == copy.getTarget())
            markOutput(it->second, i);
        continue;
      }
    }
    return op.emitError("export-rlx-lir-json: ") << op.getName() << " has no RLX LIR form";
  }
  (void)arena;
  auto get = [&](StringRef key) {
    auto a = dyn_cast_or_null<IntegerAttr>(plan.get(key));
    return a ? a.getInt() : int64_t(0);
  };
  json::Object root{
      {"mir", json::Object{{"inner", json::Object{{"name", fn.getSymName().str()},
                                                  {"fusion_policy", "Direct"},
                                                  {"outputs", json::Array(outputs)},
                                                  {"nodes", std::move(g.nodes)}}}}},
      {"buffers", json::Object{{"arena_size", get("arena_bytes")},
                               {"assignments", std::move(assignments)},
                               {"schedule", std::move(schedule)},
                               {"view_aliases", std::move(aliases)},
                               {"phases", json::Array()},
                               {"io", json::Object{{"inputs", std::move(inputs)},
                                                   {"params", std::move(params)},
                                                   {"outputs", json::Array(outputs)}}},
                               {"alignment", get("alignment")},
                               {"dynamic_symbols", json::Array()}}}};
  os << llvm::formatv("{0:2}", json::Value(std::move(root))) << "\n";
  return success();
}
