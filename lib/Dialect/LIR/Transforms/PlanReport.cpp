//===- PlanReport.cpp - Text, JSON and SVG views of an arena plan ---------===//

#include "PlanReport.h"

#include "mlir/IR/Operation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::rlx::lir;

std::string mlir::rlx::lir::summaryLine(const PlanReport &r) {
  const PlanSummary &s = r.summary;
  double ratio = s.lowerBoundBytes ? double(s.arenaBytes) / double(s.lowerBoundBytes) : 1.0;
  return llvm::formatv("arena {0} bytes, lower bound {1} ({2:F3}x), sum of buffers {3}, {4} "
                       "buffers, alignment {5}, order '{6}'",
                       s.arenaBytes, s.lowerBoundBytes, ratio, s.sumBytes, r.buffers.size(),
                       r.alignment, s.ordering)
      .str();
}

static llvm::json::Array names(DictionaryAttr io, StringRef key) {
  llvm::json::Array out;
  if (!io)
    return out;
  if (auto list = dyn_cast_or_null<ArrayAttr>(io.get(key)))
    for (Attribute a : list)
      if (auto s = dyn_cast<StringAttr>(a))
        out.push_back(s.str());
  return out;
}

static std::string toJson(const PlanReport &r) {
  llvm::json::Array buffers;
  for (const ReportBuffer &b : r.buffers) {
    llvm::json::Array views;
    for (const std::string &v : b.views)
      views.push_back(v);
    buffers.push_back(llvm::json::Object{{"id", b.id},
                                         {"type", b.type},
                                         {"size", b.size},
                                         {"offset", b.offset},
                                         {"start", b.start},
                                         {"end", b.end},
                                         {"shares_bytes_with_group", b.group},
                                         {"views", std::move(views)}});
  }
  llvm::json::Array schedule;
  for (const std::string &s : r.schedule)
    schedule.push_back(s);
  llvm::json::Object root{
      {"function", r.function},
      {"arena_bytes", r.summary.arenaBytes},
      {"lower_bound_bytes", r.summary.lowerBoundBytes},
      {"sum_bytes", r.summary.sumBytes},
      {"alignment", r.alignment},
      {"ordering", r.summary.ordering},
      {"schedule", std::move(schedule)},
      {"buffers", std::move(buffers)},
      {"io", llvm::json::Object{{"inputs", names(r.io, "inputs")},
                                {"params", names(r.io, "params")},
                                {"outputs", names(r.io, "outputs")}}}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return text;
}

/// Text for XML character data and attribute values (types print as
/// memref<...>, which was invalid XML in titles).
static std::string xmlEscape(StringRef s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '&': out += "&amp;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&apos;"; break;
    default: out += c;
    }
  }
  return out;
}

/// Offset (y, bytes) × time (x, schedule positions): one rectangle per buffer.
static std::string toSvg(const PlanReport &r) {
  const double width = 900, height = 500, left = 70, top = 40;
  int64_t steps = std::max<int64_t>(1, r.schedule.size());
  int64_t bytes = std::max<int64_t>(1, r.summary.arenaBytes);
  double xs = width / steps, ys = height / bytes;
  std::string svg;
  llvm::raw_string_ostream os(svg);
  os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                      "font-family=\"monospace\" font-size=\"11\">\n",
                      width + left + 20, height + top + 40);
  os << llvm::formatv("<text x=\"{0}\" y=\"20\">@{1}: {2}</text>\n", left,
                      xmlEscape(r.function), xmlEscape(summaryLine(r)));
  os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{3}\" fill=\"none\" "
                      "stroke=\"black\"/>\n",
                      left, top, width, height);
  for (const ReportBuffer &b : r.buffers) {
    double x = left + b.start * xs, w = (b.end - b.start + 1) * xs;
    double y = top + b.offset * ys, h = std::max(1.0, b.size * ys);
    int hue = static_cast<int>((b.group * 67) % 360);
    os << llvm::formatv("<rect x=\"{0:F1}\" y=\"{1:F1}\" width=\"{2:F1}\" height=\"{3:F1}\" "
                        "fill=\"hsl({4},60%,70%)\" stroke=\"black\" stroke-width=\"0.5\">"
                        "<title>buffer {5}: {6}, {7} bytes at {8}, ops {9}..{10}</title></rect>\n",
                        x, y, w, h, hue, b.id, xmlEscape(b.type), b.size, b.offset, b.start,
                        b.end);
    if (h > 12 && w > 40)
      os << llvm::formatv("<text x=\"{0:F1}\" y=\"{1:F1}\">{2}</text>\n", x + 3, y + 12, b.id);
  }
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">time (op) →</text>\n", left,
                      top + height + 20);
  os << llvm::formatv("<text x=\"5\" y=\"{0}\">0</text><text x=\"5\" y=\"{1}\">{2}</text>\n",
                      top + 10, top + height, r.summary.arenaBytes);
  os << "</svg>\n";
  return svg;
}

LogicalResult mlir::rlx::lir::writeReport(const PlanReport &r, StringRef dir,
                                          Operation *anchor) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return anchor->emitError() << "cannot create " << dir << ": " << ec.message();
  for (auto [ext, text] : {std::pair<StringRef, std::string>{".plan.json", toJson(r)},
                           {".plan.svg", toSvg(r)}}) {
    SmallString<256> path(dir);
    llvm::sys::path::append(path, r.function + ext.str());
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return anchor->emitError() << "cannot write " << path << ": " << ec.message();
    os << text;
  }
  return success();
}
