//===- PtxasReportTest.cpp - parsePtxasReport ------------------------------===//
//
// The ptxas -v report as ptxas 13 writes it, with the performance notes
// that the wgmma kernels must not get (C7517/C7519: ptxas serialized the
// warpgroup MMAs by inserting waits).
//===----------------------------------------------------------------------===//

#include "RLX/Target/NVVM/Ptxas.h"

#include <gtest/gtest.h>

using namespace mlir::rlx::nvvm;

namespace {

const char *kReport = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'f_1_cast' for 'sm_90a'
ptxas info    : Function properties for f_1_cast
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compiling entry function 'f_0_matmul' for 'sm_90a'
ptxas info    : (C7519) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the wgmma pipeline in the function 'f_0_matmul'
ptxas info    : Function properties for f_0_matmul
    8 bytes stack frame, 16 bytes spill stores, 24 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers, 1 bytes smem
ptxas /tmp/k.ptx, line 12; warning : Unknown pragma 'x' in the function 'f_1_cast'
ptxas info    : (C7519) warpgroup.arrive is injected in around line 217 by compiler to allow use of registers in GMMA in function 'f_0_matmul'
)";

TEST(PtxasReport, ResourcesAndNotesPerKernel) {
  std::vector<KernelResources> r = parsePtxasReport(kReport);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].kernel, "f_1_cast");
  EXPECT_EQ(r[0].registers, 10);
  ASSERT_EQ(r[0].warnings.size(), 1u);
  EXPECT_NE(r[0].warnings[0].find("Unknown pragma"), std::string::npos);
  EXPECT_EQ(r[1].kernel, "f_0_matmul");
  EXPECT_EQ(r[1].registers, 168);
  EXPECT_EQ(r[1].stackBytes, 8);
  EXPECT_EQ(r[1].spillStoreBytes, 16);
  EXPECT_EQ(r[1].spillLoadBytes, 24);
  EXPECT_EQ(r[1].sharedBytes, 1);
  ASSERT_EQ(r[1].warnings.size(), 2u);
  EXPECT_EQ(r[1].warnings[0].rfind("ptxas info    : (C7519) Potential Performance Loss", 0), 0u);
  EXPECT_NE(r[1].warnings[1].find("warpgroup.arrive is injected"), std::string::npos);
}

TEST(PtxasReport, CleanReportHasNoNotes) {
  // A kernel whose name says "warning" is not a note.
  std::vector<KernelResources> r = parsePtxasReport(
      "ptxas info    : Compiling entry function 'warning_k' for 'sm_80'\n"
      "ptxas info    : Function properties for warning_k\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 16 registers, used 0 barriers\n");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].kernel, "warning_k");
  EXPECT_EQ(r[0].registers, 16);
  EXPECT_TRUE(r[0].warnings.empty());
}

} // namespace
