//===- FunctionBuilder.h - One model function under construction ---------===//
//
// What every model builder of lib/ModelGen shares: the function and its IO
// manifest (`rlx.input` / `rlx.param` arguments with `rlx.dim_names` for the
// dynamic dims, `rlx.output` results), tensors of the chosen dtype, and a
// MIRBuilder whose failure state is the builder's (every op is built through
// its shape rules, so sizes that do not fit are diagnostics).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_MODELGEN_FUNCTIONBUILDER_H
#define RLX_LIB_MODELGEN_FUNCTIONBUILDER_H

#include "RLX/Dialect/Common/IR/TryCreate.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "RLX/ModelGen/ModelGen.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::rlx {

/// ModelConfig::activation (RLX's names) as the attribute.
inline std::optional<ActivationKind> activationKind(StringRef name) {
  return llvm::StringSwitch<std::optional<ActivationKind>>(name)
      .Case("silu", ActivationKind::Silu)
      .Case("gelu", ActivationKind::Gelu)
      .Case("gelu_tanh", ActivationKind::GeluTanh)
      .Case("relu", ActivationKind::Relu)
      .Default(std::nullopt);
}

class FunctionBuilder {
protected:
  static constexpr int64_t kDyn = ShapedType::kDynamic;

  FunctionBuilder(MLIRContext *ctx, const ModelGenOptions &o, StringRef architecture)
      : ctx(ctx), o(o), b(ctx), loc(NameLoc::get(StringAttr::get(ctx, architecture))),
        mb(b, loc, /*diagnose=*/true) {}

  /// A module with the empty function `o.funcName`; ops go into its entry.
  OwningOpRef<ModuleOp> begin();
  /// Returns the outputs, sets the function's type and IO attributes and
  /// verifies the module (null on any failure).
  OwningOpRef<ModuleOp> finish(OwningOpRef<ModuleOp> module);

  Type elementType();
  RankedTensorType tensor(ArrayRef<int64_t> shape, Type et = {}) {
    return RankedTensorType::get(shape, et ? et : elementType());
  }
  Value addArg(Type type, StringRef role, StringRef name, ArrayRef<StringRef> dimNames = {});
  /// [B, S, ...] activations: the dynamic dims named by `names` (batch,
  /// seq, past_seq).
  Value input(StringRef name, ArrayRef<int64_t> shape, ArrayRef<StringRef> names, Type et = {});
  /// A recurrent layer's decode states (null without `kvCache`), inputs
  /// like the attention models' past K/V: `past_key_values.<layer>.conv`
  /// (the last raw conv inputs) and `.ssm` (the scan's state), their first
  /// dim the batch; the layer's `present.<layer>.conv` / `.ssm` are outputs.
  std::pair<Value, Value> recurrentStates(int64_t layer, ArrayRef<int64_t> conv,
                                          ArrayRef<int64_t> ssm, Type ssmType = {}) {
    if (!o.kvCache)
      return {};
    std::string past = "past_key_values." + std::to_string(layer) + ".";
    SmallVector<StringRef> convNames(conv.size(), ""), ssmNames(ssm.size(), "");
    convNames[0] = ssmNames[0] = "batch";
    return {input(past + "conv", conv, convNames),
            input(past + "ssm", ssm, ssmNames, ssmType)};
  }
  /// Mamba2Mixer (BambaMixer, the same) on the normed hidden states `x`
  /// [B, S, H] with the parameters under `prefix` (`in_proj`, `conv1d`,
  /// `dt_bias`, `A_log`, `D`, `norm`, `out_proj`), `width` = expand ·
  /// hidden_size wide: in_proj to z | x B C | dt, the causal conv1d with SiLU
  /// over x B C, rlx_mir.ssd_scan (heads of head_dim, B and C in n_groups
  /// groups, A = −exp(A_log), dt_bias, softplus, time_step_limit, D),
  /// MambaRMSNormGated (y · SiLU(z), normalized per group, then its weight),
  /// out_proj. `tokens` ([B, S, 1], 1 for a real token) zeroes padded
  /// tokens before in_proj and after the conv, as transformers'
  /// apply_mask_to_padding_states. Its decode states are `layer`'s
  /// recurrentStates. Null results after a failure.
  struct MixerOut {
    Value out, conv, ssm;
  };
  MixerOut mamba2Mixer(const std::string &prefix, int64_t layer, Value x,
                       const ModelConfig &c, int64_t width, Value tokens = {});
  /// i1 [B, S, T] from the padding mask `keyMask` [B, 1, T] (i64, 1: the
  /// key slot holds a token) and `queryPositions` [1, S, 1]: true where the
  /// key slot holds a token, for every query row.
  Value keyPaddingMask(Value keyMask, Value queryPositions) {
    Type i1 = b.getI1Type(), i64 = b.getI64Type();
    Value valid = mb.cast(keyMask, i1);
    // [1, S, 1] of true, so that the mask has the query rows' dim.
    Value rows = mb.cast(mb.add(mb.mul(queryPositions, mb.scalar(i64, 0)), mb.scalar(i64, 1)), i1);
    return mb.select(valid, rows, mb.scalar(i1, 0));
  }
  void output(Value v, StringRef name) {
    results.push_back(v);
    resultNames.push_back(name.str());
  }
  /// An op with several results, built as MIRBuilder builds the others
  /// (null once anything failed).
  template <typename OpTy, typename... Args>
  OpTy createMulti(Args &&...args) {
    if (mb.failed())
      return {};
    FailureOr<OpTy> op = tryCreate<OpTy>(b, loc, /*diagnose=*/true, std::forward<Args>(args)...);
    if (failed(op)) {
      mb.fail();
      return {};
    }
    return *op;
  }

  MLIRContext *ctx;
  const ModelGenOptions &o;
  OpBuilder b;
  Location loc;
  mir::MIRBuilder mb;
  Block *entry = nullptr;
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<Value> results;
  SmallVector<std::string> resultNames;
};

/// MambaForCausalLM, FalconMambaForCausalLM and Mamba2ForCausalLM
/// (MambaBuilder.cpp).
OwningOpRef<ModuleOp> buildMambaModel(MLIRContext *ctx, const ModelConfig &c,
                                      const ModelGenOptions &o);

/// WhisperForConditionalGeneration's encoder (WhisperBuilder.cpp).
OwningOpRef<ModuleOp> buildWhisperModel(MLIRContext *ctx, const ModelConfig &c,
                                        const ModelGenOptions &o);

} // namespace mlir::rlx

#endif // RLX_LIB_MODELGEN_FUNCTIONBUILDER_H
