//===- AttentionKernels.cpp - a correct (not yet fast) attention kernel ---===//
//
// Every variant the CPU path supports (AttentionLowering.cpp, DESIGN §3):
// packed BSD, BSHD and BHSD operands, GQA/MQA (query head h reads kv head
// h / (Hq/Hkv) in place), scale, softcap c·tanh(s/c), causal and sliding-
// window masks aligned bottom-right, a boolean or additive mask operand with
// broadcast batch/head dims, a value head size of its own. A query row that
// sees no key writes 0, never NaN.
//
// One block per (query row, query head, batch). The query row sits in shared
// memory; the keys go by in tiles of one key per thread: the thread's logit
// (serial dot product over head_dim), a block max and sum with the running-
// max trick in f32, the tile's probabilities in shared memory, and every
// thread then updates its output dims (d = tid, tid + T, ...) from them.
// It computes what the flash-attention kernels (FlashAttentionKernel.cpp,
// FlashAttentionWgmmaKernel.cpp) do not take: f32/f64, head dims that are
// not multiples of 16 or above 128 (256 on sm_90a), unaligned rows, or
// attention-kernel=simt.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/MIR/IR/AttentionLogits.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;
using namespace mlir::rlx::gpu_kernels::attention;

AttentionShape attention::attentionShape(const AttentionConfig &cfg, Value q, Value k, Value v) {
  ArrayRef<int64_t> qs = shapeOf(q), ks = shapeOf(k), vs = shapeOf(v);
  AttentionShape s;
  bool bhsd = cfg.layout == AttnLayout::BHSD;
  s.batch = qs[0];
  s.sq = bhsd ? qs[2] : qs[1];
  s.sk = bhsd ? ks[2] : ks[1];
  s.headDim = cfg.headDim;
  s.valueDim = cfg.layout == AttnLayout::BSD ? vs[2] / cfg.numKvHeads : vs[3];
  s.group = cfg.numHeads / cfg.numKvHeads;
  return s;
}

SmallVector<Value> attention::position(KernelBuilder &kb, AttnLayout layout, Value b, Value s,
                                       Value head, Value e, int64_t headSize) {
  switch (layout) {
  case AttnLayout::BSD:
    return {b, s, kb.add(kb.mul(head, kb.idx(headSize)), e)};
  case AttnLayout::BSHD:
    return {b, s, head, e};
  case AttnLayout::BHSD:
    return {b, head, s, e};
  }
  llvm_unreachable("unknown layout");
}

Value attention::loadMask(KernelBuilder &kb, Value mask, Value b, Value h, Value i, Value j) {
  size_t rank = shapeOf(mask).size();
  SmallVector<Value> pos = rank == 4   ? SmallVector<Value>{b, h, i, j}
                           : rank == 3 ? SmallVector<Value>{b, i, j}
                                       : SmallVector<Value>{i, j};
  return kb.loadBroadcast(mask, pos);
}

FailureOr<AttentionOperands> attention::attentionOperands(KernelContext &ctx) {
  AttentionOperands a;
  auto take = [&](auto op) {
    a.cfg = getAttentionConfig(op);
    a.q = ctx.operand(op.getQuery());
    a.k = ctx.operand(op.getKey());
    a.v = ctx.operand(op.getValue());
    a.mask = op.getMask() ? ctx.operand(op.getMask()) : Value();
    return a.q && a.k && a.v && (!op.getMask() || a.mask);
  };
  bool ok = false;
  mir::AttentionPartialOp partialOp;
  if (auto op = dyn_cast<mir::AttentionOp>(ctx.root)) {
    ok = take(op);
    a.out = ctx.outputs[0];
  } else if (auto op = dyn_cast<mir::AttentionPartialOp>(ctx.root)) {
    ok = take(op);
    a.partial = ctx.outputs[0];
    a.lse = ctx.outputs[1];
    a.splits = op.getKvSplits();
    partialOp = op;
  }
  if (!ok)
    return unsupported(ctx, "attention operands that are not kernel inputs");
  a.shape = attentionShape(a.cfg, a.q, a.k, a.v);
  a.chunk = partialOp ? partialOp.getChunk(a.shape.sk) : a.shape.sk;
  return a;
}

namespace {

constexpr int64_t kThreads = 128;

struct AttentionTemplate : KernelTemplate {
  StringRef name() const override { return "attention"; }
  bool matches(Operation *root) const override {
    return isa<mir::AttentionOp, mir::AttentionPartialOp>(root);
  }

  FailureOr<LaunchConfig> build(KernelContext &ctx) const override {
    FailureOr<AttentionOperands> ops = attentionOperands(ctx);
    if (failed(ops))
      return failure();
    const AttentionOperands &a = *ops;
    const AttentionConfig &cfg = a.cfg;
    KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
    Value q = a.q, k = a.k, v = a.v, mask = a.mask, out = a.out;
    int64_t batch = a.shape.batch, d = a.shape.headDim, sq = a.shape.sq, sk = a.shape.sk,
            dv = a.shape.valueDim, group = a.shape.group, splits = std::max<int64_t>(a.splits, 1);
    // attention-kernel names a preference: the kernel where it applies,
    // else the heuristic's with a remark saying why; with strict-kernels a
    // kernel that does not apply is an error.
    std::string forced = ctx.attentionKernel;
    std::string whyWgmma = whyNoWgmmaAttention(ctx, a), why = whyNoFlashAttention(ctx, a);
    std::string whyNot = forced == "wgmma" ? whyWgmma : forced == "flash" ? why : "";
    if (!whyNot.empty()) {
      if (ctx.strictKernels)
        return unsupported(ctx, "attention-kernel=" + forced + ": " + whyNot);
      ctx.root->emitRemark("'")
          << ctx.root->getName() << "': attention-kernel=" << forced << " does not apply: " << whyNot << "; "
          << (whyWgmma.empty() ? "wgmma" : why.empty() ? "flash" : "simt")
          << " instead (strict-kernels makes this an error)";
      forced = "auto";
    }
    const bool nonEmpty = sq > 0 && batch > 0 && dv > 0;
    if ((forced == "auto" || forced == "wgmma") && whyWgmma.empty() && nonEmpty)
      return buildWgmmaAttention(ctx, a);
    if ((forced == "auto" || forced == "flash") && why.empty() && nonEmpty)
      return buildFlashAttention(ctx, a);
    double scale = attention_logits::logitScale(cfg, d);
    LaunchConfig launch;
    launch.block = {kThreads, 1, 1};
    launch.grid = {std::max<int64_t>(sq, 1), cfg.numHeads, std::max<int64_t>(batch * splits, 1)};
    if (cfg.numHeads > 65535 || batch * splits > 65535)
      return unsupported(ctx, "attention with more than 65535 heads or batches · kv splits");
    if (sq == 0 || batch == 0 || dv == 0)
      return launch;
    Type et = elementTypeOf(q), f32 = kb.statsType(et);
    double inf = std::numeric_limits<double>::infinity();

    Value i = kb.blockId(gpu::Dimension::x), h = kb.blockId(gpu::Dimension::y),
          z = kb.blockId(gpu::Dimension::z);
    // Block z is (split, batch); the split's keys are [kLo, kHi).
    Value b = kb.remui(z, kb.idx(batch)), split = kb.divui(z, kb.idx(batch));
    Value kLo = kb.minui(kb.mul(split, kb.idx(a.chunk)), kb.idx(sk));
    Value kHi = kb.minui(kb.add(kLo, kb.idx(a.chunk)), kb.idx(sk));
    Value g = kb.divui(h, kb.idx(group));
    Value tid = kb.threadId();
    // Element (seq position s, dim e) of head `head` in an operand.
    auto at = [&](Value s, Value head, Value e, int64_t headSize) {
      return position(kb, cfg.layout, b, s, head, e, headSize);
    };

    Value qRow = kb.workgroupBuffer(ctx.fn, {d}, f32);
    Value probs = kb.workgroupBuffer(ctx.fn, {kThreads}, f32);
    Value scratch = kb.workgroupBuffer(ctx.fn, {kThreads / 32}, f32);
    kb.forLoop(tid, kb.idx(d), kb.idx(kThreads),
               [&](Value e) { kb.store(kb.convert(kb.load(q, at(i, h, e, d)), f32), qRow, {e}); });
    kb.barrier();

    Value ninf = kb.f(f32, -inf), zero = kb.f(f32, 0.0);
    auto expShifted = [&](Value x, Value m) {
      return kb.select(kb.eq(m, ninf), zero, kb.exp(kb.sub(x, m)));
    };
    // The masked, scaled logit of key j (valid: j < Sk).
    auto logit = [&](Value j) {
      Value dot =
          kb.forLoop(kb.idx(0), kb.idx(d), kb.idx(1), {zero},
                     [&](Value e, ValueRange c) -> SmallVector<Value> {
                       Value kv = kb.convert(kb.load(k, at(j, g, e, d)), f32);
                       return {math::FmaOp::create(kb.b, kb.loc, kb.load(qRow, {e}), kv, c[0])};
                     })[0];
      attention_logits::ScalarLogit in;
      in.dot = dot;
      in.i = i;
      in.j = j;
      in.diagonal = sk - sq;
      if (mask) {
        Value m = loadMask(kb, mask, b, h, i, j);
        in.mask = m.getType().isInteger(1) ? m : kb.convert(m, f32);
      }
      return attention_logits::scalarAttentionLogit(kb.b, kb.loc, cfg, scale, in);
    };

    int64_t slots = ceilDiv(dv, kThreads);
    SmallVector<Value> inits{ninf, zero};
    inits.append(slots, zero);
    SmallVector<Value> state = kb.forLoop(
        kLo, kHi, kb.idx(kThreads), inits, [&](Value j0, ValueRange c) -> SmallVector<Value> {
          Value m = c[0], l = c[1];
          Value j = kb.add(j0, tid);
          Value valid = kb.ult(j, kHi);
          Value s = kb.ifElse(
              valid, [&] { return logit(j); }, ninf);
          Value mNew =
              kb.combine(Combine::Max, m, kb.blockReduce(Combine::Max, s, scratch, kThreads));
          Value alpha = expShifted(m, mNew);
          Value p = expShifted(s, mNew);
          kb.store(p, probs, {tid});
          Value lNew = kb.add(kb.mul(l, alpha), kb.blockReduce(Combine::Sum, p, scratch, kThreads));
          // blockReduce's barriers made every thread's probability visible.
          Value n = kb.minui(kb.idx(kThreads), kb.sub(kHi, j0));
          SmallVector<Value> next{mNew, lNew};
          for (int64_t slot = 0; slot < slots; ++slot) {
            Value e = kb.add(tid, kb.idx(slot * kThreads));
            Value safeE = kb.minui(e, kb.idx(dv - 1));
            Value sum = kb.forLoop(
                kb.idx(0), n, kb.idx(1), {kb.mul(c[2 + slot], alpha)},
                [&](Value t, ValueRange a) -> SmallVector<Value> {
                  Value vv = kb.convert(kb.load(v, at(kb.add(j0, t), g, safeE, dv)), f32);
                  return {math::FmaOp::create(kb.b, kb.loc, kb.load(probs, {t}), vv, a[0])};
                })[0];
            next.push_back(sum);
          }
          // Every thread is done with this tile's probabilities.
          kb.barrier();
          return next;
        });
    Value l = state[1];
    Value empty = kb.eq(l, zero);
    for (int64_t slot = 0; slot < slots; ++slot) {
      Value e = kb.add(tid, kb.idx(slot * kThreads));
      kb.ifThen(kb.ult(e, kb.idx(dv)), [&] {
        Value o = kb.select(empty, zero, kb.fdiv(state[2 + slot], l));
        if (a.splits)
          kb.store(kb.convert(o, elementTypeOf(a.partial)), a.partial, {split, b, h, i, e});
        else
          kb.store(kb.convert(o, et), out, at(i, h, e, dv));
      });
    }
    if (a.splits) // lse = m + log l, -inf for an empty split
      kb.ifThen(kb.eq(tid, kb.idx(0)), [&] {
        Value lse = kb.select(empty, ninf, kb.add(state[0], math::LogOp::create(kb.b, kb.loc, l)));
        kb.store(kb.convert(lse, elementTypeOf(a.lse)), a.lse, {split, b, h, i});
      });
    return launch;
  }
};

/// rlx_mir.attention_combine: one block per (query row, head, batch); each
/// thread takes output dims d = tid, tid + T, ... and merges the splits:
/// M = max lse (and the head's sink), w = exp(lse - M) (0 when M = -inf),
/// Σ w·o / (Σ w [+ exp(sink - M)]) (0 when the weights sum to 0), one
/// rounding to the output type.
struct AttentionCombineTemplate : KernelTemplate {
  StringRef name() const override { return "attention_combine"; }
  bool matches(Operation *root) const override { return isa<mir::AttentionCombineOp>(root); }

  FailureOr<LaunchConfig> build(KernelContext &ctx) const override {
    auto op = cast<mir::AttentionCombineOp>(ctx.root);
    Value o = ctx.operand(op.getPartialOutput()), lse = ctx.operand(op.getLse());
    Value sinks = op.getSinks() ? ctx.operand(op.getSinks()) : Value();
    if (!o || !lse || (op.getSinks() && !sinks))
      return unsupported(ctx, "attention_combine operands that are not kernel inputs");
    Value out = ctx.outputs[0];
    ArrayRef<int64_t> s = shapeOf(o); // [N, B, H, Sq, Dv]
    int64_t splits = s[0], batch = s[1], heads = s[2], sq = s[3], dv = s[4];
    KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
    LaunchConfig launch;
    int64_t threads = std::min<int64_t>(kThreads, std::max<int64_t>(32, ceilDiv(dv, 32) * 32));
    launch.block = {threads, 1, 1};
    launch.grid = {std::max<int64_t>(sq, 1), std::max<int64_t>(heads, 1),
                   std::max<int64_t>(batch, 1)};
    if (heads > 65535 || batch > 65535)
      return unsupported(ctx, "attention_combine with more than 65535 heads or batches");
    if (sq == 0 || heads == 0 || batch == 0 || dv == 0)
      return launch;
    Value i = kb.blockId(gpu::Dimension::x), h = kb.blockId(gpu::Dimension::y),
          b = kb.blockId(gpu::Dimension::z);
    Value ninf = kb.f32(-std::numeric_limits<double>::infinity()), zero = kb.f32(0.0);
    auto lseAt = [&](Value sp) { return kb.load(lse, {sp, b, h, i}); };
    Value sink = sinks ? kb.load(sinks, {h}) : Value();
    Value m = kb.forLoop(kb.idx(0), kb.idx(splits), kb.idx(1), {sinks ? sink : ninf},
                         [&](Value sp, ValueRange c) -> SmallVector<Value> {
                           return {kb.combine(Combine::Max, c[0], lseAt(sp))};
                         })[0];
    Value dead = kb.eq(m, ninf);
    auto weight = [&](Value sp) { return kb.select(dead, zero, kb.exp(kb.sub(lseAt(sp), m))); };
    Value sinkWeight = sinks ? kb.select(dead, zero, kb.exp(kb.sub(sink, m))) : zero;
    Value den = kb.forLoop(kb.idx(0), kb.idx(splits), kb.idx(1), {sinkWeight},
                           [&](Value sp, ValueRange c) -> SmallVector<Value> {
                             return {kb.add(c[0], weight(sp))};
                           })[0];
    Value inv = kb.select(kb.eq(den, zero), zero, kb.fdiv(kb.f32(1.0), den));
    kb.forLoop(kb.threadId(), kb.idx(dv), kb.idx(threads), [&](Value e) {
      Value num = kb.forLoop(kb.idx(0), kb.idx(splits), kb.idx(1), {zero},
                             [&](Value sp, ValueRange c) -> SmallVector<Value> {
                               Value x = kb.load(o, {sp, b, h, i, e});
                               return {math::FmaOp::create(kb.b, kb.loc, weight(sp), x, c[0])};
                             })[0];
      kb.store(kb.convert(kb.mul(num, inv), elementTypeOf(out)), out,
               position(kb, op.getLayout(), b, i, h, e, dv));
    });
    return launch;
  }
};

} // namespace

void mlir::rlx::gpu_kernels::addAttentionTemplates(
    std::vector<std::unique_ptr<KernelTemplate>> &out) {
  out.push_back(std::make_unique<AttentionTemplate>());
  out.push_back(std::make_unique<AttentionCombineTemplate>());
}
