//===- AttentionLogits.h - The attention logit transform, once --*- C++ -*-===//
//
// What attention does to a query-key dot product s before the softmax
// (DESIGN §2, rlx_mir.attention):
//
//   t = visible(i, j) ? softcap(scale · s) [+ mask] : -inf
//   softcap(x) = c · tanh(x / c)                         (when softcap = c)
//   visible(i, j): j ≤ i' = i + Sk − Sq  [and j > i' − window]
//                                      [or j ≥ ⌊i'/window⌋·window]
//                                      (causal / sliding_window / chunked,
//                                       aligned bottom-right as torch's
//                                       is_causal with a KV cache)
//
// a boolean mask hides keys where it is false, a float mask is added. The
// formula is written once, in attentionLogit, over the steps of a value
// kind: tensors of MIR ops in the decomposition (MIRBuilder::attentionChain,
// which attention recognition folds back) and one score in the linalg
// lowering and every GPU attention kernel (scalarAttentionLogit). The
// causal_mask op's lowerings use causalVisible.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_ATTENTIONLOGITS_H
#define RLX_DIALECT_MIR_IR_ATTENTIONLOGITS_H

#include "RLX/Dialect/Common/IR/ShapeRules.h"

#include "mlir/IR/Builders.h"

#include <cmath>
#include <functional>

namespace mlir::rlx::attention_logits {

/// The scale applied to q·k: cfg.scale, else 1 / sqrt(head_dim).
inline double logitScale(const AttentionConfig &cfg, int64_t headDim) {
  return cfg.scale.value_or(1.0 / std::sqrt(static_cast<double>(headDim)));
}

/// The steps attentionLogit composes, for one kind of value V.
template <typename V>
struct LogitSteps {
  std::function<V(V, double)> mul;   ///< x · c
  std::function<V(V, double)> div;   ///< x / c
  std::function<V(V)> tanh;          ///< tanh x
  std::function<V(V)> causal;        ///< -inf outside visible(i, j)
  std::function<V(V)> mask;          ///< the mask operand applied (hide or add)
  std::function<V(V, double)> post;  ///< x · c after an additive mask
};

/// The logit transform above. `post` scales the result (the flash kernels'
/// log2 e); it folds into the last multiply unless an additive mask follows
/// it, where steps.post applies it at the end. steps.mask is called when
/// `hasMask`.
template <typename V>
V attentionLogit(const LogitSteps<V> &steps, const AttentionConfig &cfg, double scale, V s,
                 bool hasMask, bool additiveMask, double post = 1.0) {
  const double fold = additiveMask ? 1.0 : post;
  if (cfg.softcap)
    s = steps.mul(steps.tanh(steps.div(steps.mul(s, scale), *cfg.softcap)), *cfg.softcap * fold);
  else
    s = steps.mul(s, scale * fold);
  if (cfg.maskKind != MaskKind::None)
    s = steps.causal(s);
  if (hasMask)
    s = steps.mask(s);
  if (additiveMask && post != 1.0)
    s = steps.post(s, post);
  return s;
}

/// The keys query row i sees under a causal, sliding-window or chunked
/// mask: j in [first, last] (inclusive; first null without a window), i.e.
/// last = i + Sk − Sq and first = last − window + 1. Integers of i's type
/// (index or i32), signed. visible(i, j) below is this range.
struct KeyRange {
  Value first, last;
};
/// With `chunked`, `window` is the chunk size c and first = ⌊last/c⌋·c.
KeyRange causalKeyRange(OpBuilder &b, Location loc, std::optional<int64_t> window, Value i,
                        int64_t diagonal, bool chunked = false);
/// visible(i, j) of a causal, sliding-window or chunked mask (an i1) for query row i
/// and key j (index values; signed: i + Sk − Sq is negative for the first
/// rows when Sq > Sk). `diagonal` is Sk − Sq.
Value causalVisible(OpBuilder &b, Location loc, std::optional<int64_t> window, Value i, Value j,
                    int64_t diagonal, bool chunked = false);

/// One score of query row `i` and key `j`.
struct ScalarLogit {
  Value dot;              ///< q·k (f32; f64 for f64 attention on the CPU)
  Value i, j;             ///< positions (index); i unused without causal masking
  int64_t diagonal = 0;   ///< Sk − Sq
  Value mask;             ///< null, an i1 (hide where false) or dot's type (added)
  Value visible;          ///< null or an i1: keys the caller's tiling allows
  double post = 1.0;      ///< a scale of the result (log2 e in flash kernels)
};

/// attentionLogit on one score, as arith/math ops in its type: the masks and
/// causality combine into one predicate and one select of -inf. With an
/// additive mask and post ≠ 1 the scaled sum is clamped to -FLT_MAX (HF's
/// finfo.min masks would overflow to -inf times log2 e and hide keys that
/// the unscaled formula weighs).
Value scalarAttentionLogit(OpBuilder &b, Location loc, const AttentionConfig &cfg, double scale,
                           const ScalarLogit &in);

} // namespace mlir::rlx::attention_logits

#endif // RLX_DIALECT_MIR_IR_ATTENTIONLOGITS_H
