//===- LinalgToMIR.cpp - Raise linalg-on-tensors to rlx_mir ----------------===//
//
// Named ops map directly. A linalg.generic is read by its shape: all
// parallel with broadcast-only input maps is an elementwise body (its arith/
// math ops become MIR ops, inputs reshaped to numpy-broadcastable shapes); a
// sum or max over some dims with the matching fill is a reduce; a single
// permuted input is a transpose; an index_cast + tensor.extract from a table
// is an embedding gather. Anything else stays.
//
//===----------------------------------------------------------------------===//

#include "ImportUtils.h"

#include "RLX/Conversion/ImportToMIR/ImportToMIR.h"

#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;
using mlir::rlx::import_detail::replaceIfSameType;
using mlir::rlx::tryCreate;

namespace {


/// MIR ops take ranked tensors with one element type per op family: the
/// patterns only look at ops whose operands and results are ranked tensors.
bool allRankedTensors(Operation *op) {
  auto ranked = [](Type t) { return isa<RankedTensorType>(t); };
  return llvm::all_of(op->getOperandTypes(), ranked) && llvm::all_of(op->getResultTypes(), ranked);
}

/// The splat value `v` holds: linalg.fill of a constant, or a splat
/// constant tensor (`arith.constant dense<0.0>`, as torch exports through
/// buddy-mlir and tpp-mlir write a matmul's init).
std::optional<double> fillValue(Value v) {
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    FloatAttr f;
    if (!matchPattern(fill.getInputs()[0], m_Constant(&f)))
      return std::nullopt;
    return f.getValueAsDouble();
  }
  DenseElementsAttr dense;
  if (matchPattern(v, m_Constant(&dense)) && dense.isSplat() &&
      isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().convertToDouble();
  return std::nullopt;
}

/// matmul / batch_matmul with their default or transposed maps, accumulating
/// into zeros.
struct Matmul : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op, PatternRewriter &rw) const override {
    if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) || !op.hasPureTensorSemantics() ||
        !allRankedTensors(op))
      return failure();
    if (fillValue(op.getDpsInits()[0]) != 0.0)
      return failure();
    // One element type throughout (mixed-precision matmuls stay linalg).
    Type et = cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
    for (Value in : op.getDpsInputs())
      if (cast<RankedTensorType>(in.getType()).getElementType() != et)
        return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    bool batched = isa<linalg::BatchMatmulOp>(op);
    unsigned b = batched ? 1 : 0;
    // Operands of the full rank (no broadcast maps), the batch dim first,
    // and the output in (batch, m, n) order.
    for (AffineMap m : maps)
      if (m.getNumResults() != b + 2)
        return failure();
    if (batched)
      for (AffineMap m : maps)
        if (m.getResult(0) != getAffineDimExpr(0, op->getContext()))
          return failure();
    // dims: [batch,] m, n, k
    auto dim = [&](AffineMap m, unsigned r) {
      auto d = dyn_cast<AffineDimExpr>(m.getResult(r));
      return d ? static_cast<int64_t>(d.getPosition()) : -1;
    };
    int64_t M = b, N = b + 1, K = b + 2;
    bool ta, tb;
    if (dim(maps[0], b) == M && dim(maps[0], b + 1) == K)
      ta = false;
    else if (dim(maps[0], b) == K && dim(maps[0], b + 1) == M)
      ta = true;
    else
      return failure();
    if (dim(maps[1], b) == K && dim(maps[1], b + 1) == N)
      tb = false;
    else if (dim(maps[1], b) == N && dim(maps[1], b + 1) == K)
      tb = true;
    else
      return failure();
    if (dim(maps[2], b) != M || dim(maps[2], b + 1) != N)
      return failure();
    Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
    return replaceIfSameType(rw, op, tryCreate<MatmulOp>(rw, op.getLoc(), /*diagnose=*/false, lhs, rhs, ta, tb));
  }
};

struct Transpose : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op, PatternRewriter &rw) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    return replaceIfSameType(rw, op, tryCreate<TransposeOp>(rw, op.getLoc(), /*diagnose=*/false, op.getInput(),
                                                         op.getPermutation()));
  }
};

struct Softmax : OpRewritePattern<linalg::SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::SoftmaxOp op, PatternRewriter &rw) const override {
    return replaceIfSameType(rw, op, tryCreate<SoftmaxOp>(rw, op.getLoc(), /*diagnose=*/false, op.getInput(),
                                                       static_cast<int64_t>(op.getDimension())));
  }
};

struct Broadcast : OpRewritePattern<linalg::BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::BroadcastOp op, PatternRewriter &rw) const override {
    auto out = cast<RankedTensorType>(op.getInit().getType());
    SmallVector<int64_t> kept = MIRBuilder::pattern(out.getShape());
    for (int64_t d : op.getDimensions())
      kept[d] = 1;
    MIRBuilder mb(rw, op.getLoc());
    Value r = mb.reshape(op.getInput(), kept);
    return replaceIfSameType(rw, op, mb, mb.broadcast(r, MIRBuilder::pattern(out.getShape())));
  }
};

/// The reduction a combiner body computes: addf → sum, maximumf/maxnumf → max.
std::optional<ReduceKind> combinerKind(Block &body) {
  if (body.getOperations().size() != 2)
    return std::nullopt;
  Operation &op = body.front();
  if (op.getNumOperands() != 2 ||
      !llvm::is_contained(op.getOperands(), body.getArgument(0)) ||
      !llvm::is_contained(op.getOperands(), body.getArgument(1)) ||
      body.getTerminator()->getOperand(0) != op.getResult(0))
    return std::nullopt;
  if (isa<arith::AddFOp>(op))
    return ReduceKind::Sum;
  // maximumf/minimumf propagate NaN like MIR's reductions; maxnumf/minnumf
  // do not, so those reductions stay linalg.
  if (isa<arith::MaximumFOp>(op))
    return ReduceKind::Max;
  if (isa<arith::MinimumFOp>(op))
    return ReduceKind::Min;
  return std::nullopt;
}

bool initMatches(ReduceKind kind, Value init) {
  auto v = fillValue(init);
  if (!v)
    return false;
  if (kind == ReduceKind::Sum)
    return *v == 0.0;
  if (kind == ReduceKind::Max)
    return std::isinf(*v) ? *v < 0 : *v <= -3.0e38;
  return std::isinf(*v) ? *v > 0 : *v >= 3.0e38;
}

struct Reduce : OpRewritePattern<linalg::ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::ReduceOp op, PatternRewriter &rw) const override {
    if (op.getInputs().size() != 1)
      return failure();
    auto kind = combinerKind(op.getCombiner().front());
    if (!kind || !initMatches(*kind, op.getInits()[0]))
      return failure();
    return replaceIfSameType(
        rw, op,
        tryCreate<ReduceOp>(rw, op.getLoc(), /*diagnose=*/false, op.getInputs()[0], ReduceKindAttr::get(rw.getContext(), *kind),
                         rw.getDenseI64ArrayAttr(op.getDimensions()), UnitAttr()));
  }
};

/// For an all-parallel generic input map made of output dims in increasing
/// order and zeros (size-1 dims): the shape the input reshapes to so that it
/// broadcasts to the output by numpy rules.
std::optional<SmallVector<int64_t>> broadcastShape(AffineMap map, RankedTensorType in,
                                                   unsigned rank) {
  SmallVector<int64_t> shape(rank, 1);
  int64_t last = -1;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      if (c.getValue() != 0 || in.getDimSize(i) != 1)
        return std::nullopt;
      continue;
    }
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || static_cast<int64_t>(d.getPosition()) <= last)
      return std::nullopt;
    last = d.getPosition();
    shape[last] = in.getDimSize(i) == ShapedType::kDynamic ? -1 : in.getDimSize(i);
  }
  return shape;
}

/// select(cmpf ugt a c, a, c) is maximumf(a, c) and select(cmpf ult a c,
/// a, c) minimumf(a, c) when c is a constant that is not NaN (a NaN `a`
/// gives NaN both ways): ReLU as torch.compile writes it inside a
/// linalg.generic (tpp-mlir's MLP). Ordered predicates map a NaN `a` to c,
/// which no MIR op does: left alone.
struct SelectAsMinMax : OpRewritePattern<arith::SelectOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::SelectOp sel, PatternRewriter &rw) const override {
    auto cmp = sel.getCondition().getDefiningOp<arith::CmpFOp>();
    FloatAttr c;
    if (!cmp || !sel->getParentOfType<linalg::GenericOp>() ||
        cmp.getLhs() != sel.getTrueValue() || cmp.getRhs() != sel.getFalseValue() ||
        !matchPattern(cmp.getRhs(), m_Constant(&c)) || c.getValue().isNaN())
      return failure();
    if (cmp.getPredicate() == arith::CmpFPredicate::UGT)
      rw.replaceOpWithNewOp<arith::MaximumFOp>(sel, cmp.getLhs(), cmp.getRhs());
    else if (cmp.getPredicate() == arith::CmpFPredicate::ULT)
      rw.replaceOpWithNewOp<arith::MinimumFOp>(sel, cmp.getLhs(), cmp.getRhs());
    else
      return failure();
    return success();
  }
};

struct Generic : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rw) const override {
    if (!op.hasPureTensorSemantics() || !allRankedTensors(op))
      return failure();
    if (op.getNumDpsInits() == 2 && op.getNumReductionLoops() > 0)
      return maxOfMaxWithIndex(op, rw);
    if (op.getNumDpsInits() != 1)
      return failure();
    if (succeeded(embedding(op, rw)))
      return success();
    if (op.getNumReductionLoops() > 0)
      return reduction(op, rw);
    if (succeeded(transpose(op, rw)))
      return success();
    return elementwise(op, rw);
  }

  /// out = body(broadcast inputs); the init is only a shape.
  static LogicalResult elementwise(linalg::GenericOp op, PatternRewriter &rw) {
    Block &body = op.getRegion().front();
    if (!body.getArgument(body.getNumArguments() - 1).use_empty())
      return failure();
    for (Operation &inner : body.without_terminator())
      if (isa<linalg::IndexOp, tensor::ExtractOp>(inner))
        return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (!maps.back().isIdentity())
      return failure();
    auto outType = cast<RankedTensorType>(op.getResult(0).getType());
    unsigned rank = outType.getRank();
    MIRBuilder mb(rw, op.getLoc());
    SmallVector<Value> ins;
    for (auto [in, map] : llvm::zip(op.getDpsInputs(), maps)) {
      auto t = dyn_cast<RankedTensorType>(in.getType());
      auto shape = t ? broadcastShape(map, t, rank) : std::nullopt;
      if (!shape) {
        mb.discardUnused(&rw);
        return failure();
      }
      Value v = in;
      // Leading 1s are implicit in numpy broadcasting; only reshape when the
      // input's dims do not line up from the right.
      SmallVector<int64_t> trimmed(*shape);
      while (!trimmed.empty() && trimmed.front() == 1 &&
             static_cast<int64_t>(trimmed.size()) > t.getRank())
        trimmed.erase(trimmed.begin());
      if (trimmed != MIRBuilder::pattern(t.getShape()))
        v = mb.reshape(in, *shape);
      ins.push_back(v);
    }
    // Scalar bodies see one element per input, as MIR ops do.
    auto results = mb.expandScalarBody(body, ins, op.getResultTypes(), /*who=*/"");
    if (failed(results) || mb.failed()) {
      mb.discardUnused(&rw);
      return failure();
    }
    rw.replaceOp(op, *results);
    return success();
  }

  /// aten.max.dim's (value, index) reduction whose index nobody reads: the
  /// value is a max reduce. Its body yields maximumf(in, out) first.
  static LogicalResult maxOfMaxWithIndex(linalg::GenericOp op, PatternRewriter &rw) {
    Block &body = op.getRegion().front();
    if (op.getNumDpsInputs() != 1 || !op->getResult(1).use_empty())
      return failure();
    auto max = body.getTerminator()->getOperand(0).getDefiningOp<arith::MaximumFOp>();
    if (!max || !llvm::is_contained(max->getOperands(), body.getArgument(0)) ||
        !llvm::is_contained(max->getOperands(), body.getArgument(1)))
      return failure();
    return reduction(op, rw, ReduceKind::Max);
  }

  static LogicalResult reduction(linalg::GenericOp op, PatternRewriter &rw,
                                 std::optional<ReduceKind> kind = std::nullopt) {
    if (op.getNumDpsInputs() != 1)
      return failure();
    if (!kind)
      kind = combinerKind(op.getRegion().front());
    if (!kind)
      return failure();
    // The body is combine(in, out) with the block arguments in either order.
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (!maps[0].isIdentity())
      return failure();
    SmallVector<int64_t> axes;
    auto iters = op.getIteratorTypesArray();
    for (auto [i, it] : llvm::enumerate(iters))
      if (it == utils::IteratorType::reduction)
        axes.push_back(i);
    // The output keeps the reduced dims as size 1 (keep_dims) or drops them.
    auto out = cast<RankedTensorType>(op.getResult(0).getType());
    bool keep = out.getRank() == static_cast<int64_t>(iters.size());
    // Output map: the kept loop dims in order, with constant 0 in place of
    // each reduced dim when they are kept.
    unsigned next = 0;
    for (auto [i, e] : llvm::enumerate(maps[1].getResults())) {
      if (keep && llvm::is_contained(axes, static_cast<int64_t>(i))) {
        auto c = dyn_cast<AffineConstantExpr>(e);
        if (!c || c.getValue() != 0)
          return failure();
        continue;
      }
      while (llvm::is_contained(axes, static_cast<int64_t>(next)))
        ++next;
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d || d.getPosition() != next++)
        return failure();
    }
    if (!initMatches(*kind, op.getDpsInits()[0]))
      return failure();
    auto built = tryCreate<ReduceOp>(rw, op.getLoc(), /*diagnose=*/false, op.getDpsInputs()[0],
                                     ReduceKindAttr::get(rw.getContext(), *kind),
                                     rw.getDenseI64ArrayAttr(axes),
                                     keep ? rw.getUnitAttr() : UnitAttr());
    if (op->getNumResults() == 1)
      return replaceIfSameType(rw, op, built);
    // (value, unused index): the value's uses move to the reduce.
    if (failed(built))
      return failure();
    if ((*built).getType() != op->getResult(0).getType()) {
      rw.eraseOp(*built);
      return failure();
    }
    rw.replaceAllUsesWith(op->getResult(0), (*built).getResult());
    rw.eraseOp(op);
    return success();
  }

  /// One input read through a permutation, yielded as it is; the
  /// permutation on the input's map or on the output's (tpp-mlir's weight
  /// transposes put it there).
  static LogicalResult transpose(linalg::GenericOp op, PatternRewriter &rw) {
    Block &body = op.getRegion().front();
    if (op.getNumDpsInputs() != 1 || body.getOperations().size() != 1 ||
        body.getTerminator()->getOperand(0) != body.getArgument(0))
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (!maps[0].isPermutation() || !maps[1].isPermutation() || maps[0] == maps[1])
      return failure();
    // out[maps[1](d)] = in[maps[0](d)]: the result's dim j is loop dim
    // maps[1](j), which is the input's dim i with maps[0](i) = maps[1](j).
    SmallVector<int64_t> perm;
    for (AffineExpr e : maps[1].getResults())
      perm.push_back(*maps[0].getResultPosition(e));
    return replaceIfSameType(rw, op, tryCreate<TransposeOp>(rw, op.getLoc(), /*diagnose=*/false, op.getDpsInputs()[0], perm));
  }

  /// out[..., j] = table[index_cast(ids[...]), j] (torch-mlir's embedding).
  static LogicalResult embedding(linalg::GenericOp op, PatternRewriter &rw) {
    Block &body = op.getRegion().front();
    auto yield = body.getTerminator();
    auto extract = yield->getOperand(0).getDefiningOp<tensor::ExtractOp>();
    if (op.getNumDpsInputs() != 1 || !extract || extract.getIndices().size() != 2)
      return failure();
    auto cast = extract.getIndices()[0].getDefiningOp<arith::IndexCastOp>();
    auto col = extract.getIndices()[1].getDefiningOp<linalg::IndexOp>();
    auto outType = cast ? dyn_cast<RankedTensorType>(op.getResult(0).getType()) : nullptr;
    if (!cast || !col || cast.getIn() != body.getArgument(0) || !outType ||
        col.getDim() != static_cast<uint64_t>(outType.getRank() - 1))
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (!maps[1].isIdentity() || maps[0] != maps[1].dropResult(outType.getRank() - 1))
      return failure();
    return replaceIfSameType(rw, op, tryCreate<GatherOp>(rw, op.getLoc(), /*diagnose=*/false, extract.getTensor(),
                                                      op.getDpsInputs()[0]));
  }
};

template <typename ReshapeOpT>
struct Reshape : OpRewritePattern<ReshapeOpT> {
  using OpRewritePattern<ReshapeOpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOpT op, PatternRewriter &rw) const override {
    auto t = cast<RankedTensorType>(op.getResult().getType());
    return replaceIfSameType(rw, op, tryCreate<ReshapeOp>(rw, op.getLoc(), /*diagnose=*/false, op.getSrc(),
                                                       MIRBuilder::pattern(t.getShape())));
  }
};

struct ExtractSlice : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractSliceOp op, PatternRewriter &rw) const override {
    if (op.getSourceType().getRank() != op.getResultType().getRank() ||
        !op.getOffsets().empty() || !op.getSizes().empty() || !op.getStrides().empty())
      return failure();
    return replaceIfSameType(rw, op, tryCreate<SliceOp>(rw, op.getLoc(), /*diagnose=*/false, op.getSource(),
                                                     op.getStaticOffsets(), op.getStaticSizes(),
                                                     op.getStaticStrides()));
  }
};

struct Concat : OpRewritePattern<tensor::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ConcatOp op, PatternRewriter &rw) const override {
    return replaceIfSameType(rw, op, tryCreate<ConcatOp>(rw, op.getLoc(), /*diagnose=*/false, op.getInputs(),
                                                      static_cast<int64_t>(op.getDim())));
  }
};

/// Elementwise named ops (linalg.negf, linalg.exp, linalg.add, ...; what
/// torch exporters and buddy-mlir write for aten.neg) as the generic they
/// stand for, which `Generic` raises. Matmuls, fills and the like stay.
struct ElementwiseNamed : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op, PatternRewriter &rw) const override {
    if (isa<linalg::GenericOp, linalg::FillOp, linalg::CopyOp, linalg::BroadcastOp,
            linalg::TransposeOp>(op.getOperation()) ||
        !linalg::isElementwise(op) || !op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
        op->getNumRegions() != 1)
      return failure();
    return linalg::generalizeNamedOp(rw, op);
  }
};

/// Slices inserted into a tensor.empty that together cover it along one
/// axis (rotate_half written as two insert_slice ops, buddy-mlir's RoPE):
/// the concat of the slices in offset order. Rooted at the last insert.
struct InsertSlicesAsConcat : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::InsertSliceOp op, PatternRewriter &rw) const override {
    auto full = op.getDestType();
    // Rooted at the last insert of the chain: no insert writes into it.
    if (!full.hasStaticShape() || llvm::any_of(op->getUses(), [](OpOperand &u) {
          auto ins = dyn_cast<tensor::InsertSliceOp>(u.getOwner());
          return ins && &u == &ins.getDestMutable();
        }))
      return failure();
    SmallVector<tensor::InsertSliceOp> chain;
    Value cur = op.getResult();
    while (auto ins = cur.getDefiningOp<tensor::InsertSliceOp>()) {
      if (ins != op && !ins->hasOneUse())
        return failure();
      chain.push_back(ins);
      cur = ins.getDest();
    }
    if (!cur.getDefiningOp<tensor::EmptyOp>() || chain.size() < 2)
      return failure();
    // One axis along which the slices differ from the whole.
    std::optional<int64_t> axis;
    SmallVector<std::pair<int64_t, Value>> parts;
    for (tensor::InsertSliceOp ins : chain) {
      if (ins.getSourceType().getRank() != full.getRank() || !ins.getOffsets().empty() ||
          !ins.getSizes().empty() || !ins.getStrides().empty() ||
          llvm::any_of(ins.getStaticStrides(), [](int64_t s) { return s != 1; }))
        return failure();
      for (int64_t d = 0; d < full.getRank(); ++d) {
        if (ins.getStaticOffsets()[d] == 0 && ins.getStaticSizes()[d] == full.getDimSize(d))
          continue;
        if (axis && *axis != d)
          return failure();
        axis = d;
      }
      parts.push_back({0, ins.getSource()});
    }
    if (!axis)
      return failure();
    for (auto [part, ins] : llvm::zip(parts, chain))
      part.first = ins.getStaticOffsets()[*axis];
    llvm::stable_sort(parts, [](auto &a, auto &b) { return a.first < b.first; });
    // Contiguous and covering: no gap (a gap keeps tensor.empty's undefined
    // values) and no overlap (a later insert overwrites).
    int64_t next = 0;
    SmallVector<Value> inputs;
    for (auto &[offset, src] : parts) {
      if (offset != next)
        return failure();
      next += cast<RankedTensorType>(src.getType()).getDimSize(*axis);
      inputs.push_back(src);
    }
    if (next != full.getDimSize(*axis))
      return failure();
    return replaceIfSameType(rw, op, tryCreate<ConcatOp>(rw, op.getLoc(), /*diagnose=*/false,
                                                         inputs, *axis));
  }
};

/// Dense tensor constants (weights, masks, scalars) become rlx_mir.constant.
struct Constant : OpRewritePattern<arith::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ConstantOp op, PatternRewriter &rw) const override {
    auto t = dyn_cast<RankedTensorType>(op.getType());
    auto value = dyn_cast<ElementsAttr>(op.getValue());
    if (!t || !value || op->getParentOfType<linalg::LinalgOp>())
      return failure();
    rw.replaceOpWithNewOp<ConstantOp>(op, value);
    return success();
  }
};

} // namespace

void mlir::rlx::populateLinalgToRLXMIRPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<Matmul, SelectAsMinMax>(ctx);
  patterns.add<Transpose, Softmax, Broadcast, Reduce, Generic, Reshape<tensor::ExpandShapeOp>,
               Reshape<tensor::CollapseShapeOp>, ExtractSlice, Concat, InsertSlicesAsConcat,
               Constant, ElementwiseNamed>(ctx);
  populateLinalgQuantToRLXMIRPatterns(patterns);
}
