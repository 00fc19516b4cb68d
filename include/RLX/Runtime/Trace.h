//===- Trace.h - Kernel timelines as Chrome trace events --------*- C++ -*-===//
//
// The runners' kernel timeline (rlx-run --trace, rlx-gpu-run --trace): one
// complete event per kernel run, written in the Chrome trace-event JSON
// object format that Perfetto (ui.perfetto.dev) and chrome://tracing load.
// Plain C++17 without LLVM/MLIR: the GPU runtime and rlx-gpu-run use it too.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_RUNTIME_TRACE_H
#define RLX_RUNTIME_TRACE_H

#include <string>
#include <utility>
#include <vector>

namespace rlx {

/// One kernel run: a "ph": "X" event of `durationUs` from `startUs`
/// (microseconds from the trace's start) on thread `thread` of the process.
struct TraceEvent {
  std::string name;
  std::string category; ///< "cpu", "emu", "cuda"
  double startUs = 0, durationUs = 0;
  int thread = 0;
  /// The event's "args": the kernel's source locations (the fused ops'
  /// origins, file:line:col), its launch shape and the like.
  std::vector<std::string> locations;
  std::vector<std::pair<std::string, std::string>> args;
};

/// The trace-event JSON object of `events`, with `process` as the process
/// name (metadata event) and "displayTimeUnit": "ms".
std::string chromeTraceJson(const std::vector<TraceEvent> &events, const std::string &process);

/// Writes chromeTraceJson to `path`; false with `error` set when it cannot.
bool writeChromeTrace(const std::string &path, const std::vector<TraceEvent> &events,
                      const std::string &process, std::string &error);

} // namespace rlx

#endif // RLX_RUNTIME_TRACE_H
