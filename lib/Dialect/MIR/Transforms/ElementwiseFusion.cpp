//===- ElementwiseFusion.cpp - Chains of elementwise ops → one region op --===//
//
// Partitions each block's elementwise ops (ElementwiseOpInterface ops and
// existing rlx_mir.elementwise ops) into connected groups of one result
// shape (plus broadcast producers read by a single group op), and outlines every group of two or more ops into one
// rlx_mir.elementwise whose body is built from the ops' scalar semantics.
// Values read outside a group become its results; splat constants are
// inlined into the body.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"

#include "RLX/Dialect/Common/IR/ShapeRules.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/EquivalenceClasses.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

static bool isFusable(Operation *op) {
  if (!isa<ElementwiseOpInterface, FusedElementwiseOp>(op))
    return false;
  return llvm::all_of(op->getResultTypes(), [](Type t) { return isa<RankedTensorType>(t); });
}

static ArrayRef<int64_t> shapeOfOp(Operation *op) {
  return cast<RankedTensorType>(op->getResult(0).getType()).getShape();
}

/// Outlines `group` (ops of `block` in block order). Returns false when no
/// insertion point exists.
static bool outlineGroup(ArrayRef<Operation *> group, RewriterBase &rw) {
  llvm::SmallPtrSet<Operation *, 8> inGroup(group.begin(), group.end());
  SmallVector<Value> inputs, splatInputs;
  llvm::DenseMap<Value, unsigned> inputIndex;
  SmallVector<Value> outputs;
  for (Operation *op : group) {
    for (Value v : op->getOperands()) {
      if (v.getDefiningOp() && inGroup.contains(v.getDefiningOp()))
        continue;
      double ignored;
      DenseElementsAttr splat;
      if (matchSplat(v, ignored) || (matchPattern(v, m_Constant(&splat)) && splat.isSplat()))
        continue;
      if (inputIndex.try_emplace(v, inputs.size()).second)
        inputs.push_back(v);
    }
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !inGroup.contains(u); }))
        outputs.push_back(r);
  }
  // The fused op's results have the broadcast shape of its inputs. A splat
  // constant that widens the shape (x[?, 1] · splat[8] → [?, 8]) must then
  // stay an input rather than be folded into the body.
  auto shapesHold = [&] {
    Shape shape;
    for (auto [i, v] : llvm::enumerate(inputs)) {
      ArrayRef<int64_t> s = cast<RankedTensorType>(v.getType()).getShape();
      FailureOr<Shape> b = i ? broadcastShapes(std::nullopt, shape, s) : FailureOr<Shape>(Shape(s));
      if (failed(b))
        return false;
      shape = *b;
    }
    return llvm::all_of(outputs, [&](Value out) {
      ArrayRef<int64_t> s = cast<RankedTensorType>(out.getType()).getShape();
      return s.size() == shape.size() &&
             llvm::all_of(llvm::seq<size_t>(0, s.size()),
                          [&](size_t d) { return dimsMatch(s[d], shape[d]); });
    });
  };
  if (!inputs.empty() && !outputs.empty() && !shapesHold()) {
    for (Operation *op : group)
      for (Value v : op->getOperands()) {
        auto t = dyn_cast<RankedTensorType>(v.getType());
        if ((v.getDefiningOp() && inGroup.contains(v.getDefiningOp())) || !t || t.getRank() == 0)
          continue;
        if (inputIndex.try_emplace(v, inputs.size()).second)
          inputs.push_back(v);
      }
    if (!shapesHold())
      return false;
  }
  if (outputs.empty() || inputs.empty())
    return false;
  Block *block = group.front()->getBlock();
  SmallVector<Operation *> producers;
  for (Value out : outputs)
    producers.push_back(out.getDefiningOp());
  Operation *ip = findInsertionPoint(block, inputs, producers);
  if (!ip)
    return false;
  rw.setInsertionPoint(ip);
  Location loc = rw.getFusedLoc(llvm::map_to_vector(group, [](Operation *op) { return op->getLoc(); }));
  SmallVector<Type> resultTypes = llvm::map_to_vector(outputs, [](Value v) { return v.getType(); });
  auto fused = FusedElementwiseOp::create(rw, loc, resultTypes, inputs);
  Block *body = rw.createBlock(&fused.getBody());
  IRMapping map;
  for (Value in : inputs)
    map.map(in, body->addArgument(MIRBuilder::elementType(in), in.getLoc()));
  rw.setInsertionPointToStart(body);
  auto scalarOf = [&](Value v) -> Value {
    if (Value m = map.lookupOrNull(v))
      return m;
    DenseElementsAttr splat;
    matchPattern(v, m_Constant(&splat));
    Value c = arith::ConstantOp::create(rw, v.getLoc(), splat.getElementType(),
                                        cast<TypedAttr>(splat.getSplatValue<Attribute>()));
    map.map(v, c);
    return c;
  };
  for (Operation *op : group) {
    SmallVector<Value> args = llvm::map_to_vector(op->getOperands(), scalarOf);
    if (auto inner = dyn_cast<FusedElementwiseOp>(op)) {
      Block &innerBody = inner.getBody().front();
      IRMapping innerMap;
      for (auto [arg, v] : llvm::zip(innerBody.getArguments(), args))
        innerMap.map(arg, v);
      for (Operation &nested : innerBody.without_terminator())
        rw.clone(nested, innerMap);
      auto innerYield = cast<YieldOp>(innerBody.getTerminator());
      for (auto [res, y] : llvm::zip(inner.getResults(), innerYield.getValues()))
        map.map(res, innerMap.lookupOrDefault(y));
      continue;
    }
    Value scalar = cast<ElementwiseOpInterface>(op).buildScalar(rw, op->getLoc(), args);
    map.map(op->getResult(0), scalar);
  }
  SmallVector<Value> yielded;
  for (Value v : outputs)
    yielded.push_back(map.lookup(v));
  YieldOp::create(rw, loc, yielded);
  for (auto [out, res] : llvm::zip(outputs, fused.getResults()))
    rw.replaceAllUsesWith(out, res);
  for (Operation *op : llvm::reverse(group))
    rw.eraseOp(op);
  return true;
}

static constexpr llvm::StringLiteral kFamily = "rlx-mir-fuse-elementwise";

unsigned mlir::rlx::mir::fuseElementwiseChains(Operation *root, RewriterBase &rw,
                                               FusionReport *report) {
  SmallVector<Block *> blocks;
  root->walk([&](Block *b) {
    if (!isa<FusedElementwiseOp>(b->getParentOp()))
      blocks.push_back(b);
  });
  unsigned formed = 0;
  for (Block *block : blocks) {
    llvm::EquivalenceClasses<Operation *> classes;
    SmallVector<Operation *> candidates;
    for (Operation &op : *block)
      if (isFusable(&op)) {
        candidates.push_back(&op);
        classes.insert(&op);
      }
    // 1. Connected ops of one result shape: one iteration space.
    for (Operation *op : candidates)
      for (Value v : op->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (def && def->getBlock() == block && classes.contains(def) &&
            shapeOfOp(def) == shapeOfOp(op))
          classes.unionSets(def, op);
      }
    // 2. A class of a smaller (broadcast) shape joins the one bigger class
    //    that reads it when nothing else does (no other class, no op outside
    //    the chains, no return): it is then recomputed per element, which is
    //    cheap for elementwise math, and never an output of the region. (Per
    //    op, its other ops of the same shape could still be outputs, and the
    //    region had results of two shapes.)
    llvm::MapVector<Operation *, SmallVector<Operation *>> byLeader;
    for (Operation *op : candidates)
      byLeader[classes.getLeaderValue(op)].push_back(op);
    for (auto &[leader, members] : byLeader) {
      llvm::SmallPtrSet<Operation *, 8> inClass(members.begin(), members.end());
      Operation *reader = nullptr; // a member of the one reading class
      bool alone = true;
      Operation *sharedBy = nullptr;
      for (Operation *m : members)
        for (Operation *user : m->getUsers()) {
          if (inClass.contains(user))
            continue;
          if (!classes.contains(user) || shapeOfOp(user) == shapeOfOp(m)) {
            alone = false;
            continue;
          }
          if (reader && classes.getLeaderValue(reader) != classes.getLeaderValue(user)) {
            alone = false;
            sharedBy = user;
            continue;
          }
          reader = user;
        }
      if (alone && reader) {
        classes.unionSets(leader, reader);
      } else if (report && reader) {
        Operation *other = sharedBy ? sharedBy : reader;
        report->missed(members.front(), kFamily,
                       "shape mismatch: " + typeToString(members.front()->getResult(0).getType()) +
                           " broadcasts into " + typeToString(other->getResult(0).getType()) +
                           " and has other readers (only a sole reader recomputes it)");
      }
    }
    llvm::MapVector<Operation *, SmallVector<Operation *>> groups;
    for (Operation *op : candidates)
      groups[classes.getLeaderValue(op)].push_back(op);
    for (auto &[leader, group] : groups) {
      if (group.size() < 2)
        continue;
      if (outlineGroup(group, rw))
        ++formed;
      else if (report)
        report->missed(group.front(), kFamily,
                       "unsupported: no point dominates every input of the chain and "
                       "precedes every use of its results");
    }
  }
  return formed;
}
