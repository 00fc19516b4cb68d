//===- LoraConfig.cpp - PEFT LoRA adapter configs --------------------------===//
//
// adapter_config.json as PEFT (0.1x-0.2x) writes it, and PEFT's rules for
// which modules an adapter targets (check_target_module_exists) and which
// rank/alpha each gets (get_pattern_key). Patterns are Python regular
// expressions; RLX matches them as POSIX extended ones (llvm::Regex) after
// translating Python's \d \w \s (and \D \W \S) outside brackets. Any
// other backslash-letter escape, and a pattern that does not compile, is an
// error, never a silent non-match (POSIX reads `\d` as the letter d).
//
// Every key of the file is known: a key that would change the adapter's
// computation (DoRA, aLoRA, LoRA biases, ...) or that RLX does not know,
// with a value other than its default, is refused.
//
//===----------------------------------------------------------------------===//

#include "RLX/ModelGen/ModelGen.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Regex.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rlx;

/// A Python regular expression as a POSIX extended one: \d \w \s and
/// their complements outside brackets become bracket expressions; other
/// escapes of letters or digits (\b, \A, \1, ...) are refused.
static std::optional<std::string> posixRegex(StringRef python, std::string &error) {
  std::string out;
  bool inBracket = false;
  for (size_t i = 0; i < python.size(); ++i) {
    char ch = python[i];
    if (ch == '\\' && i + 1 < python.size()) {
      char next = python[++i];
      if (!llvm::isAlpha(next) && !llvm::isDigit(next)) {
        out += inBracket && next != ']' && next != '\\' ? std::string(1, next)
                                                         : std::string{'\\', next};
        continue;
      }
      static const std::pair<char, const char *> classes[] = {
          {'d', "[0-9]"}, {'D', "[^0-9]"}, {'w', "[A-Za-z0-9_]"}, {'W', "[^A-Za-z0-9_]"},
          {'s', "[[:space:]]"}, {'S', "[^[:space:]]"}};
      const char *cls = nullptr;
      for (auto [c, text] : classes)
        if (c == next)
          cls = text;
      if (!cls || inBracket) {
        error = "'" + python.str() + "': the escape '\\" + std::string(1, next) + "'" +
                (inBracket ? " inside brackets" : "") +
                " is not supported (RLX translates \\d \\w \\s \\D \\W \\S outside "
                "brackets to POSIX regular expressions)";
        return std::nullopt;
      }
      out += cls;
      continue;
    }
    if (ch == '[' && !inBracket) {
      inBracket = true;
      out += ch;
      // A ']' right after '[' or '[^' is a literal.
      if (i + 1 < python.size() && python[i + 1] == '^')
        out += python[++i];
      if (i + 1 < python.size() && python[i + 1] == ']')
        out += python[++i];
      continue;
    }
    if (ch == ']' && inBracket)
      inBracket = false;
    out += ch;
  }
  std::string why;
  if (!llvm::Regex(out).isValid(why)) {
    error = "'" + python.str() + "' is not a regular expression RLX can compile: " + why;
    return std::nullopt;
  }
  return out;
}

/// Whole-string match of `pattern` (Python's re.fullmatch; validated when
/// parsed).
static bool fullMatch(StringRef pattern, StringRef text) {
  std::string error;
  std::optional<std::string> posix = posixRegex(pattern, error);
  return posix && llvm::Regex("^(" + *posix + ")$").match(text);
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
    if (!posixRegex(*s, why)) {
      error = (key + ": " + why).str();
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
  // A key that is present must have its type: a wrongly typed value taken
  // as the default would change the scale silently.
  auto present = [&](StringRef key) {
    const llvm::json::Value *v = o->get(key);
    return v && !v->getAsNull() ? v : nullptr;
  };
  LoraAdapterConfig c;
  if (const llvm::json::Value *v = present("r")) {
    if (!v->getAsInteger())
      return fail("r must be an integer");
    c.r = *v->getAsInteger();
  }
  if (c.r < 1)
    return fail("r must be >= 1, got " + Twine(c.r));
  if (const llvm::json::Value *v = present("lora_alpha")) {
    if (!v->getAsNumber() || !std::isfinite(*v->getAsNumber()))
      return fail("lora_alpha must be a finite number");
    c.alpha = *v->getAsNumber();
  }
  auto flag = [&](StringRef key, bool &out) {
    if (const llvm::json::Value *v = present(key)) {
      if (!v->getAsBoolean()) {
        error = ("adapter_config.json: " + key + " must be true or false").str();
        return false;
      }
      out = *v->getAsBoolean();
    }
    return true;
  };
  bool dora = false, loraBias = false, fanInFanOut = false, qalora = false;
  if (!flag("use_rslora", c.rslora) || !flag("use_dora", dora) || !flag("lora_bias", loraBias) ||
      !flag("fan_in_fan_out", fanInFanOut) || !flag("use_qalora", qalora))
    return failure();
  // What would change the numbers in ways the generator does not build.
  if (dora)
    return fail("use_dora: DoRA adapters are not supported");
  if (qalora)
    return fail("use_qalora: QA-LoRA adapters are not supported");
  if (const llvm::json::Value *v = present("bias"); v && v->getAsString() != "none")
    return fail("bias other than \"none\": LoRA bias parameters are not supported");
  if (loraBias)
    return fail("lora_bias: LoRA bias parameters are not supported");
  if (fanInFanOut)
    return fail("fan_in_fan_out: adapters on Conv1D (GPT-2) weights are not supported");
  // Every other key: harmless for inference, or refused unless it has its
  // default (null, false, empty). PEFT's LoRA variants (aLoRA, Arrow,
  // BD-LoRA, KaSA, MonteCLoRA, ...) are switched on by such keys.
  static const llvm::StringLiteral handled[] = {
      "peft_type", "r", "lora_alpha", "use_rslora", "use_dora", "use_qalora", "bias",
      "lora_bias", "fan_in_fan_out", "target_modules", "exclude_modules", "rank_pattern",
      "alpha_pattern",
      // Inference ignores these.
      "auto_mapping", "base_model_name_or_path", "revision", "task_type", "inference_mode",
      "lora_dropout", "init_lora_weights", "megatron_config", "megatron_core",
      "runtime_config", "peft_version", "layers_pattern", "qalora_group_size",
      "ensure_weight_tying", "loftq_config", "eva_config", "corda_config", "lora_ga_config",
      "velora_config"};
  for (const auto &[key, value] : *o) {
    if (llvm::is_contained(handled, key.str()))
      continue;
    bool isDefault = value.getAsNull() || value.getAsBoolean() == false ||
                     (value.getAsArray() && value.getAsArray()->empty()) ||
                     (value.getAsObject() && value.getAsObject()->empty());
    if (!isDefault)
      return fail(key.str() + " is not supported (it changes what the adapter computes, or "
                              "RLX does not know it)");
  }
  std::string why;
  if (!stringsOrRegex(*o, "target_modules", c.targets, c.targetRegex, why))
    return fail(why);
  if (c.targetRegex && StringRef(*c.targetRegex).equals_insensitive("all-linear")) {
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
    const llvm::json::Value *pv = present(key);
    if (!pv)
      continue;
    const llvm::json::Object *p = pv->getAsObject();
    if (!p)
      return fail(Twine(key) + " must be an object");
    for (const auto &[k, v] : *p) {
      std::string patternWhy;
      if (!posixRegex(k, patternWhy))
        return fail(Twine(key) + ": " + patternWhy);
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
    std::string why;
    std::optional<std::string> posix = posixRegex(key, why);
    if (!posix || !llvm::Regex("^(.*\\.)?(" + *posix + ")$").match(name))
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
