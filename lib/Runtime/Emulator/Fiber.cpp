//===- Fiber.cpp - Stackful fibers for the GPU emulator -------------------===//
//
// The x86-64 switch is a dozen instructions: push the callee-saved registers,
// store MXCSR and the x87 control word (a kernel may change rounding or
// flush-to-zero; the scheduler must not inherit that), swap rsp, restore the
// other side. Other targets use ucontext, which is slower (it saves the signal
// mask with a syscall) but portable.
//===----------------------------------------------------------------------===//

#include "Fiber.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>


#if RLX_EMU_ASM_SWITCH
extern "C" {
// rdi = where to store the current rsp, rsi = the rsp to resume.
void rlx_emu_fiber_swap(void **saveSp, void *loadSp);
// First "return address" of a fresh fiber: calls r12(r13) and never returns.
void rlx_emu_fiber_trampoline();
}
asm(R"(
  .pushsection .text
  .p2align 4
  .globl rlx_emu_fiber_swap
  .hidden rlx_emu_fiber_swap
  .type rlx_emu_fiber_swap,@function
rlx_emu_fiber_swap:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size rlx_emu_fiber_swap, .-rlx_emu_fiber_swap

  .p2align 4
  .globl rlx_emu_fiber_trampoline
  .hidden rlx_emu_fiber_trampoline
  .type rlx_emu_fiber_trampoline,@function
rlx_emu_fiber_trampoline:
  movq %r13, %rdi
  callq *%r12
  ud2
  .size rlx_emu_fiber_trampoline, .-rlx_emu_fiber_trampoline
  .popsection
)");
#endif

namespace rlx::emu {

static size_t pageBytes() {
  static const size_t page = [] {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<size_t>(p) : size_t(4096);
  }();
  return page;
}

size_t fiberStackBytes() {
  size_t kib = 256;
  if (const char *env = std::getenv("RLX_EMU_STACK_KIB")) {
    char *end = nullptr;
    unsigned long long v = std::strtoull(env, &end, 10);
    if (end != env && v > 0)
      kib = v < 16 ? 16 : static_cast<size_t>(v);
  }
  return kib * 1024;
}

FiberStack::FiberStack(size_t bytes) {
  size_t page = pageBytes();
  size_t guard = (kFiberGuardBytes + page - 1) / page * page;
  usableBytes = (bytes + page - 1) / page * page;
  mapBytes = usableBytes + guard;
  void *m = mmap(nullptr, mapBytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) {
    usableBytes = mapBytes = 0;
    return;
  }
  // Stacks grow down: the guard is the lowest part.
  if (mprotect(m, guard, PROT_NONE) != 0) {
    munmap(m, mapBytes);
    usableBytes = mapBytes = 0;
    return;
  }
  map = m;
  usable = static_cast<uint8_t *>(m) + guard;
}

FiberStack::FiberStack(FiberStack &&o) noexcept
    : map(o.map), mapBytes(o.mapBytes), usable(o.usable), usableBytes(o.usableBytes) {
  o.map = nullptr;
  o.usable = nullptr;
  o.mapBytes = o.usableBytes = 0;
}

FiberStack &FiberStack::operator=(FiberStack &&o) noexcept {
  if (this != &o) {
    release();
    map = o.map;
    mapBytes = o.mapBytes;
    usable = o.usable;
    usableBytes = o.usableBytes;
    o.map = nullptr;
    o.usable = nullptr;
    o.mapBytes = o.usableBytes = 0;
  }
  return *this;
}

FiberStack::~FiberStack() { release(); }

void FiberStack::release() {
  if (map)
    munmap(map, mapBytes);
  map = nullptr;
  usable = nullptr;
  mapBytes = usableBytes = 0;
}

#if !RLX_EMU_ASM_SWITCH
namespace {
struct StartRecord {
  void (*fn)(void *);
  void *arg;
};
// makecontext passes ints: the record's address travels in two halves.
void ucontextEntry(unsigned hi, unsigned lo) {
  uintptr_t p = (static_cast<uintptr_t>(hi) << 16 << 16) | lo;
  StartRecord *rec = reinterpret_cast<StartRecord *>(p);
  rec->fn(rec->arg);
  std::abort(); // fn never returns
}
} // namespace
#endif

void makeContext(Context &ctx, FiberStack &stack, void (*fn)(void *), void *arg) {
  ctx.stackLo = stack.lo();
  ctx.stackSize = stack.size();
#ifdef RLX_EMU_ASAN
  // A reused stack may still carry redzones of frames an aborted launch left.
  __asan_unpoison_memory_region(stack.lo(), stack.size());
#endif
#if RLX_EMU_ASM_SWITCH
  uintptr_t top = reinterpret_cast<uintptr_t>(stack.hi()) & ~uintptr_t(15);
  // The trampoline runs with rsp = top - 16 (16-aligned), so fn sees the
  // ABI's rsp % 16 == 8 after the call pushes its return address.
  uint64_t *sp = reinterpret_cast<uint64_t *>(top - 16 - 64);
  uint32_t mxcsr;
  uint16_t fpucw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpucw));
  sp[0] = static_cast<uint64_t>(mxcsr) | (static_cast<uint64_t>(fpucw) << 32);
  sp[1] = 0;                                   // r15
  sp[2] = 0;                                   // r14
  sp[3] = reinterpret_cast<uint64_t>(arg);     // r13
  sp[4] = reinterpret_cast<uint64_t>(fn);      // r12
  sp[5] = 0;                                   // rbx
  sp[6] = 0;                                   // rbp (ends frame-pointer walks)
  sp[7] = reinterpret_cast<uint64_t>(&rlx_emu_fiber_trampoline);
  sp[8] = 0;                                   // fake return address of the trampoline
  ctx.sp = sp;
#else
  // The record lives at the top of the fiber's own stack.
  uintptr_t top = reinterpret_cast<uintptr_t>(stack.hi()) & ~uintptr_t(15);
  StartRecord *rec = reinterpret_cast<StartRecord *>(top - 32);
  rec->fn = fn;
  rec->arg = arg;
  getcontext(&ctx.uc);
  ctx.uc.uc_stack.ss_sp = stack.lo();
  ctx.uc.uc_stack.ss_size = (top - 64) - reinterpret_cast<uintptr_t>(stack.lo());
  ctx.uc.uc_link = nullptr;
  uintptr_t p = reinterpret_cast<uintptr_t>(rec);
  makecontext(&ctx.uc, reinterpret_cast<void (*)()>(&ucontextEntry), 2,
              static_cast<unsigned>(p >> 16 >> 16), static_cast<unsigned>(p & 0xffffffffu));
#endif
}

void switchContext(Context &from, Context &to) {
#ifdef RLX_EMU_ASAN
  void *fakeStack = nullptr;
  __sanitizer_start_switch_fiber(&fakeStack, to.stackLo, to.stackSize);
#endif
#if RLX_EMU_ASM_SWITCH
  rlx_emu_fiber_swap(&from.sp, to.sp);
#else
  swapcontext(&from.uc, &to.uc);
#endif
#ifdef RLX_EMU_ASAN
  __sanitizer_finish_switch_fiber(fakeStack, nullptr, nullptr);
#endif
}

void fiberStarted(Context &scheduler) {
#ifdef RLX_EMU_ASAN
  const void *lo = nullptr;
  size_t size = 0;
  __sanitizer_finish_switch_fiber(nullptr, &lo, &size);
  scheduler.stackLo = lo;
  scheduler.stackSize = size;
#else
  (void)scheduler;
#endif
}

} // namespace rlx::emu
