//===- Trace.cpp - Kernel timelines as Chrome trace events ----------------===//

#include "RLX/Runtime/Trace.h"

#include <nlohmann/json.hpp>

#include <fstream>

std::string rlx::chromeTraceJson(const std::vector<TraceEvent> &events,
                                 const std::string &process) {
  nlohmann::json list = nlohmann::json::array();
  list.push_back({{"name", "process_name"},
                  {"ph", "M"},
                  {"pid", 1},
                  {"tid", 0},
                  {"args", {{"name", process}}}});
  // Track names: launches on thread 0, the emulator's blocks on thread 1.
  bool blocks = false;
  for (const TraceEvent &e : events)
    blocks |= e.thread == 1;
  if (blocks)
    for (auto [tid, name] : {std::pair{0, "kernels"}, std::pair{1, "blocks"}})
      list.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", tid},
                      {"args", {{"name", name}}}});
  for (const TraceEvent &e : events) {
    nlohmann::json args = nlohmann::json::object();
    if (!e.locations.empty())
      args["locations"] = e.locations;
    for (const auto &[k, v] : e.args)
      args[k] = v;
    list.push_back({{"name", e.name},
                    {"cat", e.category},
                    {"ph", "X"},
                    {"pid", 1},
                    {"tid", e.thread},
                    {"ts", e.startUs},
                    {"dur", e.durationUs},
                    {"args", args}});
  }
  return nlohmann::json{{"traceEvents", list}, {"displayTimeUnit", "ms"}}.dump(
      1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool rlx::writeChromeTrace(const std::string &path, const std::vector<TraceEvent> &events,
                           const std::string &process, std::string &error) {
  std::ofstream out(path, std::ios::binary);
  if (out)
    out << chromeTraceJson(events, process);
  if (!out) {
    error = "cannot write the trace '" + path + "'";
    return false;
  }
  return true;
}
