//===- MatmulKernels.h - The matmul kernel builder (internal) ---*- C++ -*-===//
//
// What MatmulKernels.cpp (SIMT, GEMV, mma.sync) and WgmmaKernel.cpp (the
// sm_90a TMA + mbarrier + wgmma path) share: the GEMM problem and the builder
// whose main loops fill the shared f32 tile Cs that one epilogue reads.
//
//===----------------------------------------------------------------------===//
#ifndef RLX_LIB_CONVERSION_LIRTOGPU_MATMULKERNELS_H
#define RLX_LIB_CONVERSION_LIRTOGPU_MATMULKERNELS_H

#include "KernelBuilder.h"

namespace mlir::rlx::gpu_kernels::matmul {

constexpr int64_t kThreads = 256;
/// Shared memory the GEMV kernel's Cs and partial sums may take.
constexpr int64_t kGemvSharedBytes = 40 * 1024;

/// What one GEMM kernel computes, with every operand as a memref.
struct GemmProblem {
  // C[bt, m, n] for bt < batches, m < rows, n < cols.
  int64_t batches = 1, rows = 0, cols = 0, k = 0;
  Value lhs, rhs;
  bool transA = false, transB = false;
  // fused_matmul stages (null / none when absent).
  NormKind normKind = NormKind::RmsNorm;
  bool norm = false;
  double normEps = 0;
  Value normWeight, normBias, bias;
  ActivationKind act = ActivationKind::None;
  bool glu = false; // up column = n + cols
  int64_t headDim = 0, headNormHeads = 0, ropeHeads = 0, rotary = 0;
  double headNormEps = 0;
  Value headNormWeight, ropeCos, ropeSin, residual;
  RopeStyle ropeStyle = RopeStyle::NeoX;
  Value out;
  bool fused = false;
  /// An NVFP4 weight: rhs the packed codes (transB: [N, K/2], else
  /// [K/2, N]), its E4M3 block scales and f32 global scale.
  Value rhsScales, rhsGlobal;
  /// A grouped matmul (rlx_mir.grouped_matmul): lhs [T, K] rows, rhs the
  /// stacked [E, N, K] weights (batches = E, rows = T), `ids` [T] each
  /// row's expert. Block (n, m, e) computes the m-th tile of expert e's
  /// rows (in row order), which it finds by scanning the ids.
  Value ids;
  /// Rows of ids outside [0, E) are zeros (else clamped): the blocks of a
  /// pseudo-expert E (one more grid slice) write them.
  bool zeroOutOfRange = false;

  bool headStages() const { return headNormWeight || ropeCos; }
  bool grouped() const { return static_cast<bool>(ids); }
  /// The experts of a grouped matmul: E, and pseudo-expert E (rows of ids
  /// outside [0, E), zeros) with zero_out_of_range.
  int64_t groupedExperts() const { return batches + (zeroOutOfRange ? 1 : 0); }
  bool nvfp4() const { return static_cast<bool>(rhsScales); }
};

class GemmBuilder {
public:
  GemmBuilder(KernelContext &ctx, const GemmProblem &p)
      : ctx(ctx), p(p), kb(ctx.b, ctx.kernel.getLoc()) {
    acc = kb.statsType(elementTypeOf(p.out));
  }

  FailureOr<LaunchConfig> build();

private:
  KernelContext &ctx;
  const GemmProblem &p;
  KernelBuilder kb;
  Type acc;
  // Tile geometry.
  int64_t tm = 0, tn = 0, tk = 16, tnThreads = 0, tmThreads = 0, colsPerThread = 0;
  static constexpr int64_t kRowsPerThread = 4;
  bool gemv = false, tensorCores = false, wgmma = false, tcgen05 = false;
  // tcgen05 (sm_100a, Tcgen05Kernel.cpp): byte offsets in the dynamic
  // shared memory (after aligning its base to 1024 bytes) and the base.
  int64_t tcA = 0, tcB = 0, tcScaleA = 0, tcScaleB = 0, tcBar = 0, tcSlot = 0;
  Value tcBase;
  // wgmma: consumer warpgroups (64 rows each), pipeline stages, the
  // byte offsets of the ring, Cs, head statistics and mbarriers in the
  // dynamic shared memory (after aligning its base to 1024 bytes).
  int64_t wgConsumers = 1, wgStages = 4;
  // A persistent grid (no producer transform): wgGrid blocks over the
  // wgTilesN × wgTilesM tiles, N first; the epilogue runs per tile.
  bool wgPersistent = false;
  int64_t wgTilesN = 1, wgTilesM = 1, wgGrid = 1;
  int64_t wgStageBytes = 0, wgCsOffset = 0, wgHeadOffset = 0, wgBarOffset = 0, wgSharedBytes = 0;
  Value wgBase; // the aligned shared address of the ring (index)
  Value wgMapA, wgMapB; // the tensor-map parameters
  int64_t tcStages = 2; // shared-memory stages of the tensor-core pipeline
  int64_t threads = kThreads;
  // GEMV: 16-byte vectors of `width` elements, `splitK` K ranges per column.
  int64_t width = 1, splitK = 1;
  bool nvfp4Mma = false;
  // Block coordinates.
  Value bt, m0, n0;
  // Shared buffers.
  Value cs, rowMean, rowRstd, headRstd;
  // A grouped matmul: the block's expert's rows (i32, tm of them; row 0
  // past the end) and how many rows the expert has (index, block-uniform).
  Value groupRows, groupCount;
  /// Scan the ids for the rows of expert bt that tile m0 holds.
  void groupedRows();
  /// A grouped matmul on the GEMV kernel (decode: at most 16 rows, every
  /// row in the one row tile, in row order): row mm's expert (index,
  /// clamped) and, with zero_out_of_range, whether its id is in [0, E).
  bool groupedGemv = false;
  SmallVector<Value> rowExperts, rowInExperts;
  /// Row t's expert: its id clamped to [0, E), or with zero_out_of_range
  /// pseudo-expert E for an id outside it.
  Value expertOf(Value t);
  /// Whether tile-space row `row` (m0 + local) is a row of the product.
  Value rowInRange(Value row);

  // Positions.
  SmallVector<Value> lhsPos(Value row, Value kIdx);
  /// The weight position; a grouped matmul's expert is `expert`, else bt.
  SmallVector<Value> rhsPos(Value kIdx, Value col, Value expert = {});
  SmallVector<Value> outPos(Value row, Value col, Value out);
  Value loadA(Value row, Value kIdx);
  SmallVector<Value> loadARow(Value row, Value local, Value k0, int64_t count);
  Value normalizeA(Value a, Value local, Value kIdx);
  Value loadB(Value kIdx, Value col);
  // NVFP4 weights (Nvfp4Kernels.cpp): element (k, col); the GEMV vector
  // step: 32 codes of weight row `col` from k0 decoded once, then each A
  // row's contribution, without the global scale (nvfp4Global()).
  Value nvfp4B(Value kIdx, Value col);
  struct Nvfp4Codes {
    SmallVector<Value> values; ///< 32 × e2m1 · 2^-14
    Value scales[2];           ///< the two blocks' E4M3 scales · 2^14
  };
  Nvfp4Codes nvfp4GemvCodes(Value k0, Value col);
  /// Row `row`'s contribution for each decoded weight row of `codes`.
  SmallVector<Value> nvfp4GemvRow(Value row, Value local, Value k0, ArrayRef<Nvfp4Codes> codes);
  Value nvfp4Global();
  /// The wgmma producer's dequantization of k-tile kt's packed codes (at
  /// shared address `packed`, 32 bytes per weight row) into the 128B-swizzled
  /// B tile at `tile` (both halves with GLU): e2m1 · E4M3 scale, exact in
  /// bf16/f16; the global scale is applied to the accumulators.
  void wgmmaDequantizeB(Value stage, Value kt, Value packed, Value tile);
  void rowStatistics();
  void tiledMainLoop();
  void tensorCoreMainLoop();
  void gemvMainLoop();
  /// The sm_90a path (WgmmaKernel.cpp): why it cannot compute this matmul
  /// ("" when it can, choosing tn, the consumers and the stages), the
  /// tensor maps, dynamic shared memory and views of Cs, and its main loop.
  std::string whyNoWgmma();
  /// The sm_100a NVFP4 path (Tcgen05Kernel.cpp): why it cannot compute this
  /// matmul ("" when it can), its shared memory and Cs, its main loop.
  std::string whyNoTcgen05();
  LogicalResult tcgen05Setup(LaunchConfig &launch);
  void tcgen05MainLoop();
  /// Whether the wgmma producer warpgroup transforms a stage before the
  /// consumers read it (a norm prologue on A, an NVFP4 weight's dequant).
  bool producerTransforms() const { return p.norm || p.nvfp4(); }
  LogicalResult wgmmaSetup(LaunchConfig &launch);
  void wgmmaMainLoop();
  LogicalResult chooseGemvConfig();
  /// The NVFP4 GEMV on mma.sync (Nvfp4GemvKernel.cpp): why it cannot take
  /// this matmul ("" when it can), the bytes of its staged lhs, its
  /// configuration and main loop, and two E4M3 scales as f32 (cvt.f16x2.e4m3x2).
  std::string whyNoNvfp4MmaGemv() const;
  int64_t nvfp4StageBytes() const;
  LogicalResult chooseNvfp4MmaGemvConfig();
  void nvfp4MmaGemvMainLoop();
  std::pair<Value, Value> decodeScalePair(Value s0, Value s1);
  void gemvCombineSplits(Value part);
  bool gemvTileFits() const;
  LogicalResult chooseKernel();
  /// What every tensor-core kernel needs: tensor cores enabled, the chip's
  /// instruction (`chipHas`, else `chipWhy`), bf16/f16 operands of one type
  /// accumulated in f32, or a bf16/f16 lhs and an NVFP4 weight where the
  /// kernel dequantizes it (`nvfp4Weights`) ("" when all hold).
  std::string whyNoTensorCoreOperands(bool chipHas, const std::string &chipWhy,
                                      bool nvfp4Weights = false);
  std::string whyNoTensorCores();
  bool canUseTensorCores() { return whyNoTensorCores().empty(); }
  Value sharedAddress(Value buffer, Value row, Value col, int64_t rowElems);
  Value activate(Value gate, Value up, Value col);
  void epilogue();
};


} // namespace mlir::rlx::gpu_kernels::matmul

#endif // RLX_LIB_CONVERSION_LIRTOGPU_MATMULKERNELS_H
