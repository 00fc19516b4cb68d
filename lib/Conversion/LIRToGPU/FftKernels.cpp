//===- FftKernels.cpp - fft, rfft, irfft as shared-memory Stockham rows ---===//
//
// One block per transform (mir::fftRows: the last axis, a length whose
// prime factors are at most 13, within 32 KiB of shared memory). The row is
// read once into shared memory as real and imaginary planes (rfft's zero
// padding, irfft's Hermitian mirror of the bins folded into that read), then
// each radix r of n (4, 2, 3, 5, 7, 11, 13) is one Stockham pass between two
// ping-pong buffers: thread i of n / r takes the r values i + t·(n / r),
// multiplies them by the twiddles e^{∓2πi·t·k / (p·r)} (k = i mod p, p the
// product of the radices before; read from a table of e^{∓2πi·x/n} computed
// in f64 at build time, a constant global),
// computes their r-point DFT with constant roots (adds and subtracts where
// the root is ±1 or ±i) and writes output (i / p)·p·r + k + q·p. A barrier
// separates the passes; the result is scaled once (numpy's norm) and
// written back in the complex block layout (irfft: the real part). The
// device's own reading of the transforms: the decomposition on other paths
// (FftOps.cpp) computes the same DFT, which the tests compare against numpy.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/MIR/IR/FftRows.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;
using mir::FftRows;

namespace {

/// A complex value in registers.
struct Cx {
  Value re, im;
};

/// Accumulates Σ_t ω^{e_t}·v_t for roots ω = e^{±2πi/r} known at build
/// time: exact adds and subtracts where a root is ±1 or ±i, FMAs else.
class RootSum {
public:
  RootSum(KernelBuilder &kb, int64_t r, double sign) : kb(kb), r(r), sign(sign) {}

  /// acc + ω^e·v (acc null: the first term).
  Cx add(Cx acc, Cx v, int64_t e) {
    e %= r;
    auto neg = [&](Value x) { return arith::NegFOp::create(kb.b, kb.loc, x).getResult(); };
    if (e == 0)
      return acc.re ? Cx{kb.add(acc.re, v.re), kb.add(acc.im, v.im)} : v;
    if (2 * e == r)
      return acc.re ? Cx{kb.sub(acc.re, v.re), kb.sub(acc.im, v.im)} : Cx{neg(v.re), neg(v.im)};
    if (4 * e == r || 4 * e == 3 * r) {
      // ω^e = i·s with s = ±1: (−s·v.im, s·v.re).
      bool plus = (4 * e == r) == (sign > 0);
      if (!acc.re)
        return plus ? Cx{neg(v.im), v.re} : Cx{v.im, neg(v.re)};
      return plus ? Cx{kb.sub(acc.re, v.im), kb.add(acc.im, v.re)}
                  : Cx{kb.add(acc.re, v.im), kb.sub(acc.im, v.re)};
    }
    double theta = 2.0 * M_PI * static_cast<double>(e) / static_cast<double>(r);
    Type t = v.re.getType();
    Value c = kb.f(t, std::cos(theta)), s = kb.f(t, sign * std::sin(theta));
    Value ns = kb.f(t, -sign * std::sin(theta));
    if (!acc.re)
      return {kb.fma(v.im, ns, kb.mul(v.re, c)), kb.fma(v.im, c, kb.mul(v.re, s))};
    return {kb.fma(v.im, ns, kb.fma(v.re, c, acc.re)), kb.fma(v.im, c, kb.fma(v.re, s, acc.im))};
  }

private:
  KernelBuilder &kb;
  int64_t r;
  double sign;
};

struct FftRowsTemplate : KernelTemplate {
  StringRef name() const override { return "fft_rows"; }
  bool matches(Operation *root) const override {
    return isa<mir::FftOp, mir::RfftOp, mir::IrfftOp>(root) && mir::fftRows(root).has_value();
  }

  FailureOr<LaunchConfig> build(KernelContext &ctx) const override {
    std::optional<FftRows> f = mir::fftRows(ctx.root);
    KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
    Value in = ctx.operand(ctx.root->getOperand(0));
    if (!f || !in)
      return unsupported(ctx, "a Fourier transform without a row form or of a value that is not "
                              "a kernel input");
    Value out = ctx.outputs[0];
    int64_t n = f->n, stored = f->stored;
    int64_t minRadix = f->radices.empty() ? 1 : *llvm::min_element(f->radices);
    int64_t threads = std::clamp<int64_t>(ceilDiv(ceilDiv(n, minRadix), 32) * 32, 32, 256);
    LaunchConfig launch;
    launch.block = {threads, 1, 1};
    launch.grid = {std::max<int64_t>(f->rows, 1), 1, 1};
    if (f->rows == 0)
      return launch;
    Type et = elementTypeOf(out), ct = kb.statsType(et);
    Value buf[2] = {kb.workgroupBuffer(ctx.fn, {2, n}, ct), kb.workgroupBuffer(ctx.fn, {2, n}, ct)};
    SmallVector<int64_t> lead(shapeOf(in).drop_back());
    SmallVector<Value> row;
    if (!lead.empty())
      row = kb.delinearize(kb.blockId(), lead);
    auto at = [&](Value last) {
      SmallVector<Value> p(row);
      p.push_back(last);
      return p;
    };
    auto read = [&](Value j) { return kb.convert(kb.load(in, at(j)), ct); };
    auto neg = [&](Value x) { return arith::NegFOp::create(kb.b, kb.loc, x).getResult(); };
    Value tid = kb.threadId(), step = kb.idx(threads), zero = kb.f(ct, 0.0);
    Value re0 = kb.idx(0), im0 = kb.idx(1);

    // The row into plane buffer 0.
    kb.forLoop(tid, kb.idx(n), step, [&](Value j) {
      Cx v{zero, zero};
      switch (f->kind) {
      case FftRows::Kind::C2C:
        v = {read(j), read(kb.add(j, kb.idx(n)))};
        break;
      case FftRows::Kind::R2C:
        v.re = stored >= n ? read(j)
                           : kb.ifElse(kb.ult(j, kb.idx(stored)), [&] { return read(j); }, zero);
        break;
      case FftRows::Kind::C2R: {
        // Bin j ≤ n/2 is stored bin j; above, the conjugate of bin n − j.
        Value mirrored = kb.ult(kb.idx(n / 2), j);
        Value src = kb.select(mirrored, kb.sub(kb.idx(n), j), j);
        int64_t avail = std::min(stored, n / 2 + 1);
        SmallVector<Value> x = kb.ifElse(
            kb.ult(src, kb.idx(avail)),
            [&]() -> SmallVector<Value> { return {read(src), read(kb.add(src, kb.idx(stored)))}; },
            ValueRange{zero, zero});
        // The imaginary parts of DC and (even n) Nyquist do not count.
        Value real = kb.eq(src, kb.idx(0));
        if (n % 2 == 0)
          real = arith::OrIOp::create(kb.b, kb.loc, real, kb.eq(src, kb.idx(n / 2)));
        v = {x[0], kb.select(real, zero, kb.select(mirrored, neg(x[1]), x[1]))};
        break;
      }
      }
      kb.store(v.re, buf[0], {re0, j});
      kb.store(v.im, buf[0], {im0, j});
    });
    kb.barrier();

    // Stockham passes; the twiddles from a table of e^{∓2πi·x/n}, x < n,
    // computed in f64 here (a constant global of the gpu.module).
    double sign = f->inverse ? 1.0 : -1.0;
    int cur = 0;
    int64_t p = 1;
    Value table;
    if (llvm::any_of(f->radices, [&](int64_t r) { return r < n; })) {
      SmallVector<APFloat> w(2 * n, APFloat(0.0));
      for (int64_t x = 0; x < n; ++x) {
        double theta = 2.0 * M_PI * static_cast<double>(x) / static_cast<double>(n);
        w[x] = APFloat(std::cos(theta));
        w[n + x] = APFloat(sign * std::sin(theta));
      }
      bool lost;
      for (APFloat &v : w)
        v.convert(cast<FloatType>(ct).getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      table = ctx.constantTable(DenseElementsAttr::get(RankedTensorType::get({2, n}, ct), w));
    }
    for (int64_t r : f->radices) {
      int64_t m = n / r;
      Value src = buf[cur], dst = buf[1 - cur];
      kb.forLoop(tid, kb.idx(m), step, [&](Value i) {
        Value k = p == 1 ? kb.idx(0) : kb.remui(i, kb.idx(p));
        SmallVector<Cx> v;
        for (int64_t t = 0; t < r; ++t) {
          Value pos = t ? kb.add(i, kb.idx(t * m)) : i;
          Cx x{kb.load(src, {re0, pos}), kb.load(src, {im0, pos})};
          if (p > 1 && t > 0) {
            // e^{∓2πi·t·k/(p·r)} = table[t·k·n/(p·r)].
            Value e = kb.mul(k, kb.idx(t * (n / (p * r))));
            Value c = kb.load(table, {re0, e}), s = kb.load(table, {im0, e});
            x = {kb.fma(neg(x.im), s, kb.mul(x.re, c)), kb.fma(x.im, c, kb.mul(x.re, s))};
          }
          v.push_back(x);
        }
        Value base = kb.add(p == 1 ? kb.mul(i, kb.idx(r))
                                   : kb.mul(kb.divui(i, kb.idx(p)), kb.idx(p * r)),
                            p == 1 ? kb.idx(0) : k);
        RootSum sum(kb, r, sign);
        for (int64_t q = 0; q < r; ++q) {
          Cx y;
          for (int64_t t = 0; t < r; ++t)
            y = sum.add(y, v[t], q * t);
          Value pos = q ? kb.add(base, kb.idx(q * p)) : base;
          kb.store(y.re, dst, {re0, pos});
          kb.store(y.im, dst, {im0, pos});
        }
      });
      kb.barrier();
      cur = 1 - cur;
      p *= r;
    }

    // Scaled once, written in the block layout.
    Value res = buf[cur];
    auto scaled = [&](Value x) {
      return kb.convert(f->scale == 1.0 ? x : kb.mul(x, kb.f(ct, f->scale)), et);
    };
    int64_t bins = f->kind == FftRows::Kind::R2C ? n / 2 + 1 : n;
    kb.forLoop(tid, kb.idx(bins), step, [&](Value j) {
      kb.store(scaled(kb.load(res, {re0, j})), out, at(j));
      if (f->kind != FftRows::Kind::C2R)
        kb.store(scaled(kb.load(res, {im0, j})), out, at(kb.add(j, kb.idx(bins))));
    });
    return launch;
  }
};

} // namespace

void mlir::rlx::gpu_kernels::addFftTemplates(std::vector<std::unique_ptr<KernelTemplate>> &out) {
  out.push_back(std::make_unique<FftRowsTemplate>());
}
