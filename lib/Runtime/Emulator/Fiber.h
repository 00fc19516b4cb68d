//===- Fiber.h - Stackful fibers for the GPU emulator -----------*- C++ -*-===//
//
// Every GPU thread of a block runs as a fiber on the launching OS thread. A
// fiber owns an mmap'd stack with a guard page below it; switching saves only
// what the System V ABI makes callee-saved (rbx, rbp, r12-r15, rsp, the MXCSR
// and the x87 control word) on x86-64, and falls back to ucontext elsewhere.
// No LLVM: this ships in the emulator runtime.
//===----------------------------------------------------------------------===//
#ifndef RLX_RUNTIME_EMULATOR_FIBER_H
#define RLX_RUNTIME_EMULATOR_FIBER_H

#include <cstddef>
#include <cstdint>

// -DRLX_EMU_ASM_SWITCH=0 forces the ucontext fallback (to test it on x86-64).
#ifndef RLX_EMU_ASM_SWITCH
#if defined(__x86_64__) && defined(__ELF__)
#define RLX_EMU_ASM_SWITCH 1
#else
#define RLX_EMU_ASM_SWITCH 0
#endif
#endif
#if !RLX_EMU_ASM_SWITCH
#include <ucontext.h>
#endif

// AddressSanitizer needs to hear about stack switches (and keeps locals on
// its "fake stack", which the access checker must accept as private memory).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RLX_EMU_ASAN 1
#endif
#endif
#if !defined(RLX_EMU_ASAN) && defined(__SANITIZE_ADDRESS__)
#define RLX_EMU_ASAN 1
#endif
#ifdef RLX_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace rlx::emu {

/// A saved execution context: the scheduler's, or one fiber's.
struct Context {
#if RLX_EMU_ASM_SWITCH
  void *sp = nullptr;
#else
  ucontext_t uc;
#endif
  // The stack this context runs on (null for the OS thread's own stack);
  // needed by AddressSanitizer's fiber annotations.
  const void *stackLo = nullptr;
  size_t stackSize = 0;
};

/// The inaccessible bytes below every fiber stack: wide enough that a large
/// frame lands in them rather than in the next stack.
constexpr size_t kFiberGuardBytes = 64 * 1024;

/// An mmap'd stack: [guard][usable bytes). Move-only.
class FiberStack {
public:
  FiberStack() = default;
  explicit FiberStack(size_t usableBytes);
  FiberStack(FiberStack &&other) noexcept;
  FiberStack &operator=(FiberStack &&other) noexcept;
  FiberStack(const FiberStack &) = delete;
  FiberStack &operator=(const FiberStack &) = delete;
  ~FiberStack();

  bool valid() const { return map != nullptr; }
  uint8_t *lo() const { return usable; }
  uint8_t *hi() const { return usable + usableBytes; }
  size_t size() const { return usableBytes; }

private:
  void release();
  void *map = nullptr;
  size_t mapBytes = 0;
  uint8_t *usable = nullptr;
  size_t usableBytes = 0;
};

/// The stack size for fibers: RLX_EMU_STACK_KIB (at least 16) or 256 KiB.
size_t fiberStackBytes();

/// Prepares `ctx` to run fn(arg) on `stack` when first switched to. `fn` must
/// never return (it switches away for the last time instead). The fiber
/// starts with the caller's MXCSR and x87 control word.
void makeContext(Context &ctx, FiberStack &stack, void (*fn)(void *), void *arg);

/// Saves the current context into `from` and resumes `to`.
void switchContext(Context &from, Context &to);

/// Called first thing on a fresh fiber (AddressSanitizer bookkeeping).
void fiberStarted(Context &scheduler);

} // namespace rlx::emu

#endif // RLX_RUNTIME_EMULATOR_FIBER_H
