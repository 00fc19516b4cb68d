//===- main.cpp - Using an installed RLX-MLIR from another CMake project ----===//
//
// Registers RLX's dialects and passes, parses a HIR function, runs RLX's
// pipeline to planned LIR and prints the result; exit status 0 on success.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

static const char *kHir = R"mlir(
func.func @mlp(%x: tensor<1x8x64xf32> {rlx.input = "x"}, %g: tensor<128x64xf32> {rlx.param = "gate"},
               %u: tensor<128x64xf32> {rlx.param = "up"}, %d: tensor<64x128xf32> {rlx.param = "down"})
    -> (tensor<1x8x64xf32> {rlx.output = "y"}) {
  %y = rlx_hir.swiglu %x, gate %g, up %u, down %d
      : tensor<1x8x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
  return %y : tensor<1x8x64xf32>
}
)mlir";

int main() {
  mlir::DialectRegistry registry;
  mlir::rlx::registerEverything(registry);
  mlir::rlx::registerAllPasses();
  mlir::MLIRContext ctx(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(kHir, &ctx);
  if (!module)
    return 1;
  mlir::PassManager pm(&ctx, mlir::ModuleOp::getOperationName());
  if (mlir::failed(mlir::parsePassPipeline("convert-rlx-hir-to-mir,rlx-mir-fuse,"
                                           "convert-rlx-mir-to-lir,rlx-lir-bufferize,"
                                           "rlx-lir-plan-buffers,rlx-lir-verify-plan",
                                           pm)))
    return 2;
  if (mlir::failed(pm.run(*module)))
    return 3;
  int kernels = 0;
  module->walk([&](mlir::rlx::lir::KernelOp) { ++kernels; });
  auto fn = module->lookupSymbol<mlir::func::FuncOp>("mlp");
  llvm::outs() << "rlx-consumer: @" << fn.getSymName() << ": " << kernels << " kernels, plan "
               << fn->getAttr("rlx_lir.plan") << "\n";
  return kernels == 2 ? 0 : 4;
}
