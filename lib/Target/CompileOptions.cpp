//===- CompileOptions.cpp - One options struct for every backend ----------===//

#include "RLX/Target/CompileOptions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::rlx;

namespace {

std::string snakeCase(StringRef field) {
  std::string out;
  for (char c : field) {
    if (llvm::isUpper(c)) {
      out += '_';
      out += llvm::toLower(c);
    } else {
      out += c;
    }
  }
  return out;
}

std::string show(const std::string &v) { return v; }
std::string show(bool v) { return v ? "true" : "false"; }
template <typename T> std::string show(T v) { return std::to_string(v); }

bool parse(StringRef text, std::string &out) {
  out = text.str();
  return true;
}
bool parse(StringRef text, bool &out) {
  std::string t = text.trim().lower();
  if (t == "true" || t == "1" || t == "on") {
    out = true;
    return true;
  }
  if (t == "false" || t == "0" || t == "off") {
    out = false;
    return true;
  }
  return false;
}
template <typename T> bool parse(StringRef text, T &out) {
  return !text.trim().getAsInteger(10, out);
}
bool parse(StringRef text, std::vector<std::string> &out) {
  out.clear();
  SmallVector<StringRef> parts;
  text.split(parts, ',', -1, false);
  for (StringRef p : parts)
    if (!p.trim().empty())
      out.push_back(p.trim().str());
  return true;
}

bool inGroups(CompileOptionGroup group, unsigned groups) {
  return (static_cast<unsigned>(group) & groups) != 0;
}

LogicalResult oneOf(StringRef flag, StringRef value, ArrayRef<StringRef> allowed,
                    std::string &error) {
  if (llvm::is_contained(allowed, value))
    return success();
  std::string list;
  for (size_t i = 0; i < allowed.size(); ++i)
    list += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + allowed[i].str();
  error = std::string(flag) + " must be " + list + ", got '" + value.str() + "'";
  return failure();
}

} // namespace

unsigned mlir::rlx::compileOptionGroups(std::initializer_list<CompileOptionGroup> groups) {
  unsigned mask = 0;
  for (CompileOptionGroup g : groups)
    mask |= static_cast<unsigned>(g);
  return mask;
}

ArrayRef<CompileOptionInfo> mlir::rlx::compileOptionInfos() {
  static const std::vector<CompileOptionInfo> infos = [] {
    std::vector<CompileOptionInfo> v;
#define RLX_OPTION(GROUP, TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION)                              \
  v.push_back({CompileOptionGroup::GROUP, #FIELD, FLAG, #TYPE, DESCRIPTION, snakeCase(#FIELD),   \
               show(TYPE(DEFAULT))});
#define RLX_LIST_OPTION(GROUP, FIELD, FLAG, DESCRIPTION)                                        \
  v.push_back({CompileOptionGroup::GROUP, #FIELD, FLAG, "list", DESCRIPTION, snakeCase(#FIELD), \
               ""});
#include "RLX/Target/CompileOptions.def"
    return v;
  }();
  return infos;
}

LogicalResult CompileOptions::set(StringRef name, StringRef value, unsigned groups,
                                  std::string &error) {
  bool known = false, ok = true;
#define RLX_SET(GROUP, FIELD, FLAG)                                                             \
  if (!known && inGroups(CompileOptionGroup::GROUP, groups) &&                                   \
      (name == snakeCase(#FIELD) || name == FLAG)) {                                             \
    known = true;                                                                                \
    ok = parse(value, FIELD);                                                                    \
  }
#define RLX_OPTION(GROUP, TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION) RLX_SET(GROUP, FIELD, FLAG)
#define RLX_LIST_OPTION(GROUP, FIELD, FLAG, DESCRIPTION) RLX_SET(GROUP, FIELD, FLAG)
#include "RLX/Target/CompileOptions.def"
#undef RLX_SET
  if (!known) {
    std::vector<std::string> names;
    for (const CompileOptionInfo &info : compileOptionInfos())
      if (inGroups(info.group, groups))
        names.push_back(info.pythonName);
    error = "unknown option '" + name.str() + "' (options: " + llvm::join(names, ", ") + ")";
    return failure();
  }
  if (!ok) {
    error = "option '" + name.str() + "' cannot take the value '" + value.str() + "'";
    return failure();
  }
  return success();
}

std::string mlir::rlx::spellOptionError(StringRef error, bool python) {
  size_t end = error.find_first_of(" :");
  StringRef flag = error.substr(0, end);
  for (const CompileOptionInfo &info : compileOptionInfos())
    if (flag == info.flag)
      return (python ? info.pythonName
                     : std::string(flag.size() == 1 ? "-" : "--") + flag.str()) +
             error.substr(flag.size()).str();
  return error.str();
}

FailureOr<std::map<std::string, int64_t>>
CompileOptions::dimBindings(std::string &error) const {
  std::map<std::string, int64_t> out;
  for (const std::string &binding : dims) {
    auto [name, size] = StringRef(binding).split('=');
    int64_t v;
    if (name.trim().empty() || size.trim().getAsInteger(10, v) || v < 0) {
      error = "dims: '" + binding + "' is not name=size with a size >= 0";
      return failure();
    }
    out[name.trim().str()] = v;
  }
  return out;
}

void CompileOptions::bindDim(StringRef name, int64_t size) {
  std::string binding = name.str() + "=" + std::to_string(size);
  for (std::string &d : dims)
    if (StringRef(d).split('=').first.trim() == name) {
      d = binding;
      return;
    }
  dims.push_back(binding);
}

LogicalResult CompileOptions::verify(std::string &error) const {
  if (failed(oneOf("fusion-policy", fusionPolicy, {"direct", "fusable"}, error)) ||
      failed(oneOf("matmul-kernel", matmulKernel,
                   {"auto", "gemv", "simt", "tensor-cores", "wgmma", "tcgen05"}, error)) ||
      failed(oneOf("attention-kernel", attentionKernel, {"auto", "simt", "flash", "wgmma"},
                   error)) ||
      failed(oneOf("spills", spills, {"error", "warn", "ignore"}, error)))
    return failure();
  if (failed(dimBindings(error)))
    return failure();
  auto positive = [&](StringRef flag, int64_t v, int64_t min) {
    if (v >= min)
      return true;
    error = flag.str() + " must be >= " + std::to_string(min) + ", got " + std::to_string(v);
    return false;
  };
  if (!positive("tp", tp, 0) || !positive("ep", ep, 0) || !positive("rank", rank, -1) || !positive("row-tile", rowTile, 1) ||
      !positive("blas-min-flops", blasMinFlops, 0) || !positive("alignment", alignment, 1) ||
      !positive("blas-threads", blasThreads, 0) || !positive("split-k", splitK, 0) ||
      !positive("kv-splits", kvSplits, 0))
    return failure();
  if (optLevel < 0 || optLevel > 3) {
    error = "O must be 0, 1, 2 or 3, got " + std::to_string(optLevel);
    return failure();
  }
  if (ep > 0 && (tp == 0 || tp % ep)) {
    error = "ep " + std::to_string(ep) + " must divide tp (tp = " + std::to_string(tp) + ")";
    return failure();
  }
  if (rank >= 0 && rank >= tp) {
    error = "rank " + std::to_string(rank) + " needs tp > rank (tp = " + std::to_string(tp) + ")";
    return failure();
  }
  return success();
}

CompileOptionsFlags::CompileOptionsFlags(llvm::cl::OptionCategory &category,
                                         std::initializer_list<CompileOptionGroup> groups,
                                         std::initializer_list<StringRef> except) {
  namespace cl = llvm::cl;
  unsigned mask = compileOptionGroups(groups);
  CompileOptionGroup group = CompileOptionGroup::Common;
  auto add = [&](auto *flag, auto apply) {
    if (StringRef(flag->ArgStr).size() == 1)
      flag->setFormattingFlag(cl::Prefix); // -O2
    flags.push_back({group, flag, [flag, apply](CompileOptions &o) {
                       if (flag->getNumOccurrences())
                         apply(o, *flag);
                     }});
  };
  // A bool option that defaults to true: --no-<flag> clears it.
  auto addNo = [&](auto defaultValue, const char *flag, const char *help,
                   void (*clear)(CompileOptions &)) {
    if constexpr (std::is_same_v<decltype(defaultValue), bool>) {
      if (defaultValue)
        add(new cl::opt<bool>(StringRef(flag), cl::desc(help), cl::cat(category)),
            [clear](CompileOptions &o, const cl::opt<bool> &f) {
              if (f.getValue())
                clear(o);
            });
    }
  };
#define RLX_OPTION(GROUP, TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION)                              \
  if (inGroups(CompileOptionGroup::GROUP, mask) && !llvm::is_contained(except, FLAG)) {         \
    group = CompileOptionGroup::GROUP;                                                           \
    add(new cl::opt<TYPE>(FLAG, cl::desc(DESCRIPTION), cl::init(TYPE(DEFAULT)),                  \
                          cl::cat(category)),                                                   \
        [](CompileOptions &o, const cl::opt<TYPE> &f) { o.FIELD = f.getValue(); });             \
    addNo(TYPE(DEFAULT), "no-" FLAG, "--" FLAG "=false (on by default)", [](CompileOptions &o) { o.FIELD = {}; });   \
  }
#define RLX_LIST_OPTION(GROUP, FIELD, FLAG, DESCRIPTION)                                        \
  if (inGroups(CompileOptionGroup::GROUP, mask) && !llvm::is_contained(except, FLAG) &&         \
      (group = CompileOptionGroup::GROUP, true))                                                 \
    add(new cl::list<std::string>(FLAG, cl::desc(DESCRIPTION), cl::CommaSeparated,               \
                                  cl::cat(category)),                                           \
        [](CompileOptions &o, const cl::list<std::string> &f) {                                  \
          o.FIELD.assign(f.begin(), f.end());                                                    \
        });
#include "RLX/Target/CompileOptions.def"
}

CompileOptions CompileOptionsFlags::values() const {
  CompileOptions options;
  for (const Flag &flag : flags)
    flag.apply(options);
  return options;
}

std::vector<std::string> CompileOptionsFlags::given(unsigned groups) const {
  std::vector<std::string> out;
  for (const Flag &flag : flags)
    if (inGroups(flag.group, groups) && flag.option->getNumOccurrences())
      out.push_back(flag.option->ArgStr.str());
  return out;
}
