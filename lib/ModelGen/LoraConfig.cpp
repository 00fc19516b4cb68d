//===- LoraConfig.cpp - PEFT LoRA adapter configs --------------------------===//
//
// adapter_config.json as PEFT (0.1x-0.2x) writes it, and PEFT's rules for
// which modules an adapter targets (check_target_module_exists) and which
// rank/alpha each gets (get_pattern_key). Regular expressions are POSIX
// extended (llvm::Regex), which covers PEFT's usual patterns; one that does
// not compile is an error, never a silent non-match.
//
//===----------------------------------------------------------------------===//

#include "RLX/ModelGen/ModelGen.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/Regex.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rlx;

/// Whole-string match of `pattern` (Python's re.fullmatch).
static bool fullMatch(StringRef pattern, StringRef text) {
  return llvm::Regex(("^(" + pattern + ")$").str()).match(text);
}

/// PEFT's list rule: the name itself or a suffix after a dot.
static bool listMatch(ArrayRef<std::string> keys, StringRef name) {
  return llvm::any_of(keys, [&](const std::string &k) {
    return name == k || name.ends_with("." + k);
  });
}

/// A list of strings or one string (a regex) under `key`; false on a value
/// of another kind.
static bool stringsOrRegex(const llvm::json::Object &o, StringRef key,
                           std::vector<std::string> &list, std::optional<std::string> &regex,
                           std::string &error) {
  const llvm::json::Value *v = o.get(key);
  if (!v || v->getAsNull())
    return true;
  if (auto s = v->getAsString()) {
    regex = s->str();
    std::string why;
    if (!llvm::Regex(("^(" + *s + ")$").str()).isValid(why)) {
      error = (key + ": '" + *s + "' is not a regular expression RLX can compile (POSIX "
               "extended): " + why).str();
      return false;
    }
    return true;
  }
  if (auto *a = v->getAsArray()) {
    for (const llvm::json::Value &e : *a) {
      auto s = e.getAsString();
      if (!s) {
        error = (key + " must hold strings").str();
        return false;
      }
      list.push_back(s->str());
    }
    return true;
  }
  error = (key + " must be a string or a list of strings").str();
  return false;
}

FailureOr<LoraAdapterConfig> mlir::rlx::parseLoraConfig(StringRef json, std::string &error) {
  auto parsed = llvm::json::parse(json);
  if (!parsed) {
    error = "adapter_config.json: " + llvm::toString(parsed.takeError());
    return failure();
  }
  auto *o = parsed->getAsObject();
  if (!o) {
    error = "adapter_config.json: not a JSON object";
    return failure();
  }
  auto fail = [&](const Twine &msg) {
    error = ("adapter_config.json: " + msg).str();
    return failure();
  };
  if (auto type = o->getString("peft_type"); !type || *type != "LORA")
    return fail("peft_type must be \"LORA\", got " +
                (type ? "\"" + type->str() + "\"" : std::string("none")));
  LoraAdapterConfig c;
  if (auto r = o->getInteger("r"))
    c.r = *r;
  if (c.r < 1)
    return fail("r must be >= 1, got " + Twine(c.r));
  if (auto a = o->getNumber("lora_alpha"))
    c.alpha = *a;
  if (!std::isfinite(c.alpha))
    return fail("lora_alpha must be finite");
  c.rslora = o->getBoolean("use_rslora").value_or(false);
  // What would change the numbers in ways the generator does not build.
  if (o->getBoolean("use_dora").value_or(false))
    return fail("use_dora: DoRA adapters are not supported");
  if (auto bias = o->getString("bias"); bias && *bias != "none")
    return fail("bias = \"" + *bias + "\": LoRA bias parameters are not supported");
  if (o->getBoolean("lora_bias").value_or(false))
    return fail("lora_bias: LoRA bias parameters are not supported");
  if (o->getBoolean("fan_in_fan_out").value_or(false))
    return fail("fan_in_fan_out: adapters on Conv1D (GPT-2) weights are not supported");
  for (StringRef key : {"layers_to_transform", "modules_to_save", "target_parameters",
                        "trainable_token_indices"}) {
    const llvm::json::Value *v = o->get(key);
    bool empty = !v || v->getAsNull() || (v->getAsArray() && v->getAsArray()->empty());
    if (!empty)
      return fail(key + " is not supported");
  }
  std::string why;
  if (!stringsOrRegex(*o, "target_modules", c.targets, c.targetRegex, why))
    return fail(why);
  if (c.targetRegex && *c.targetRegex == "all-linear") {
    c.allLinear = true;
    c.targetRegex.reset();
  }
  if (!c.allLinear && !c.targetRegex && c.targets.empty())
    return fail("target_modules names no module");
  std::vector<std::string> excludeList;
  std::optional<std::string> excludeRegex;
  if (!stringsOrRegex(*o, "exclude_modules", excludeList, excludeRegex, why))
    return fail(why);
  if (excludeRegex || !excludeList.empty())
    return fail("exclude_modules is not supported");
  for (auto [key, isRank] : {std::pair{"rank_pattern", true}, std::pair{"alpha_pattern", false}}) {
    const llvm::json::Object *p = o->getObject(key);
    if (!p)
      continue;
    for (const auto &[k, v] : *p) {
      std::string patternWhy;
      if (!llvm::Regex(("^(.*\\.)?(" + k.str() + ")$")).isValid(patternWhy))
        return fail(Twine(key) + ": '" + k.str() + "' is not a regular expression RLX can "
                    "compile (POSIX extended): " + patternWhy);
      if (isRank) {
        auto r = v.getAsInteger();
        if (!r || *r < 1)
          return fail(Twine(key) + "['" + k.str() + "'] must be an integer >= 1");
        c.rankPattern.push_back({k.str(), *r});
      } else {
        auto a = v.getAsNumber();
        if (!a || !std::isfinite(*a))
          return fail(Twine(key) + "['" + k.str() + "'] must be a finite number");
        c.alphaPattern.push_back({k.str(), *a});
      }
    }
  }
  return c;
}

/// The value of the pattern keys matching `name` as PEFT's get_pattern_key
/// does (`(.*\.)?(key)$`); the default when none does. PEFT takes the first
/// key in the file's order, which a JSON object does not keep here: two
/// matching keys with different values are an error instead.
template <typename T>
static FailureOr<T> patternValue(ArrayRef<std::pair<std::string, T>> pattern, StringRef name,
                                 T fallback, StringRef what, std::string &error) {
  std::optional<std::pair<std::string, T>> found;
  for (const auto &[key, value] : pattern) {
    if (!llvm::Regex("^(.*\\.)?(" + key + ")$").match(name))
      continue;
    if (found && found->second != value) {
      error = (what + " keys '" + found->first + "' and '" + key + "' both match '" + name +
               "' with different values")
                  .str();
      return failure();
    }
    found = {key, value};
  }
  return found ? found->second : fallback;
}

FailureOr<std::optional<LoraAdapterConfig::Module>>
LoraAdapterConfig::forModule(StringRef name, bool isLmHead, std::string &error) const {
  bool targeted = allLinear ? !isLmHead
                  : targetRegex ? fullMatch(*targetRegex, name)
                                : listMatch(targets, name);
  if (!targeted)
    return std::optional<Module>();
  auto rank = patternValue<int64_t>(rankPattern, name, r, "rank_pattern", error);
  auto a = patternValue<double>(alphaPattern, name, alpha, "alpha_pattern", error);
  if (failed(rank) || failed(a))
    return failure();
  double scale = rslora ? *a / std::sqrt(static_cast<double>(*rank)) : *a / *rank;
  return std::optional<Module>(Module{*rank, scale});
}
