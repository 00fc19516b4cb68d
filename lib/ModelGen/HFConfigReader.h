//===- HFConfigReader.h - Typed reading of a config.json ------------------===//
//
// What lib/ModelGen's config readers share (HFConfig.cpp, HFConfigMamba.cpp):
// typed access to a JSON object with defaults and error collection.
// Internal to lib/ModelGen.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_MODELGEN_HFCONFIGREADER_H
#define RLX_LIB_MODELGEN_HFCONFIGREADER_H

#include "RLX/ModelGen/ModelGen.h"

#include "llvm/Support/JSON.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace mlir::rlx::hfconfig {

/// Typed access to a config object with defaults and error collection (the
/// first error wins).
struct Reader {
  const llvm::json::Object &obj;
  std::string &error;

  bool has(StringRef key) const {
    const llvm::json::Value *v = obj.get(key);
    return v && v->kind() != llvm::json::Value::Null;
  }
  void fail(const Twine &msg) {
    if (error.empty())
      error = msg.str();
  }
  void wrongType(StringRef key, StringRef what) {
    fail("'" + key + "' must be " + what);
  }
  int64_t integer(StringRef key, std::optional<int64_t> def = std::nullopt) {
    if (has(key)) {
      if (auto v = obj.getInteger(key))
        return *v;
      wrongType(key, "an integer");
      return 0;
    }
    if (def)
      return *def;
    fail("missing integer '" + key + "'");
    return 0;
  }
  /// The first of `keys` that is present (HF's attribute_map aliases).
  int64_t integerOf(ArrayRef<StringRef> keys, std::optional<int64_t> def = std::nullopt) {
    for (StringRef k : keys)
      if (has(k))
        return integer(k);
    return integer(keys.front(), def);
  }
  double number(StringRef key, double def) {
    if (!has(key))
      return def;
    if (std::optional<double> v = obj.getNumber(key); v && std::isfinite(*v))
      return *v;
    wrongType(key, "a finite number");
    return def;
  }
  /// A JSON number, or a non-finite one as transformers 5 writes them
  /// ({"__float__": "Infinity"}) or Python's json does (the bare tokens
  /// Infinity, -Infinity, NaN; quoteNonFinite).
  static std::optional<double> asNumber(const llvm::json::Value &v) {
    if (std::optional<double> d = v.getAsNumber())
      return d;
    std::optional<StringRef> s = v.getAsString();
    if (const llvm::json::Object *o = v.getAsObject(); o && o->size() == 1)
      s = o->getString("__float__");
    if (s == "Infinity")
      return std::numeric_limits<double>::infinity();
    if (s == "-Infinity")
      return -std::numeric_limits<double>::infinity();
    if (s == "NaN")
      return std::numeric_limits<double>::quiet_NaN();
    return std::nullopt;
  }
  bool boolean(StringRef key, bool def) {
    if (!has(key))
      return def;
    if (auto v = obj.getBoolean(key))
      return *v;
    wrongType(key, "true or false");
    return def;
  }
  std::string string(StringRef key, StringRef def) {
    if (!has(key))
      return def.str();
    if (auto v = obj.getString(key))
      return v->str();
    wrongType(key, "a string");
    return def.str();
  }
  std::optional<StringRef> optString(StringRef key) {
    if (!has(key))
      return std::nullopt;
    if (auto v = obj.getString(key))
      return *v;
    wrongType(key, "a string");
    return std::nullopt;
  }
};

/// HF's ACT2FN name -> RLX's activation, or an error listing the names.
std::string activation(Reader &r, StringRef key, StringRef def);
/// A list of integers (`mlp_only_layers`); absent or null is empty.
std::vector<int64_t> integers(Reader &r, const llvm::json::Object &root, StringRef key);
/// MambaConfig, FalconMambaConfig and Mamba2Config (HFConfigMamba.cpp).
void readMamba(Reader &r, ModelConfig &c);
/// WhisperConfig's sizes, checked (WhisperBuilder.cpp).
void readWhisper(Reader &r, ModelConfig &c);
/// BambaConfig's mixer keys and layer pattern, after the attention keys
/// (HFConfigMamba.cpp).
void readBamba(Reader &r, const llvm::json::Object &root, ModelConfig &c);

} // namespace mlir::rlx::hfconfig

#endif // RLX_LIB_MODELGEN_HFCONFIGREADER_H
