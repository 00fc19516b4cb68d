//===- JsonCommon.cpp - Shared pieces of the RLX JSON import and export --===//

#include "JsonCommon.h"

#include "RLX/Dialect/Common/IR/StorageSize.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::rlx;
namespace json = llvm::json;

static const std::pair<const char *, const char *> kDtypes[] = {
    {"F32", "f32"}, {"F16", "f16"}, {"BF16", "bf16"}, {"F64", "f64"}, {"I8", "i8"},
    {"I16", "i16"}, {"I32", "i32"}, {"I64", "i64"}, {"U8", "ui8"}, {"U32", "ui32"},
    {"Bool", "i1"}};

std::optional<std::string> rlxjson::dtypeToMlir(StringRef rlx) {
  for (auto [r, m] : kDtypes)
    if (rlx == r)
      return std::string(m);
  return std::nullopt;
}

std::optional<std::string> rlxjson::dtypeToRlx(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  for (auto [r, m] : kDtypes)
    if (s == m)
      return std::string(r);
  return std::nullopt;
}

std::string rlxjson::camelToSnake(StringRef s) {
  std::string out;
  for (char c : s) {
    if (llvm::isUpper(c) && !out.empty())
      out += '_';
    out += llvm::toLower(c);
  }
  return out;
}

std::string rlxjson::snakeToCamel(StringRef s) {
  std::string out;
  bool up = true;
  for (char c : s) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? llvm::toUpper(c) : c;
    up = false;
  }
  return out;
}

std::string rlxjson::symbolName(int64_t symbol) {
  switch (symbol) {
  case 0: return "batch";
  case 1: return "seq";
  case 2: return "rows";
  case 3: return "past_seq";
  default: return "dim" + std::to_string(symbol);
  }
}

std::optional<int64_t> rlxjson::symbolOf(StringRef name) {
  for (int64_t s = 0; s < 4; ++s)
    if (name == symbolName(s))
      return s;
  if (name.consume_front("dim")) {
    int64_t v;
    if (!name.getAsInteger(10, v))
      return v;
  }
  return std::nullopt;
}

std::string rlxjson::Shape::tensorType() const {
  std::string s = "tensor<";
  for (int64_t d : dims)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + dtype + ">";
}

std::string rlxjson::Shape::memrefType() const {
  std::string s = "memref<";
  for (int64_t d : dims)
    s += std::to_string(d) + "x";
  return s + dtype + ">";
}

int64_t rlxjson::Shape::byteSize() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  // f32 → 32, ui8 → 8, bf16 → 16, i1 → 1 bit, stored in a byte (StorageSize.h).
  int64_t bits = 8;
  StringRef digits = StringRef(dtype).drop_while([](char c) { return !llvm::isDigit(c); });
  if (digits.getAsInteger(10, bits))
    bits = 8;
  return n * storageBytesForBits(bits);
}

bool rlxjson::parseShape(const json::Value *v, Shape &out, std::string &error) {
  const json::Object *o = v ? v->getAsObject() : nullptr;
  const json::Array *dims = o ? o->getArray("dims") : nullptr;
  auto dtype = o ? o->getString("dtype") : std::nullopt;
  if (!dims || !dtype) {
    error = "a shape needs \"dims\" and \"dtype\"";
    return false;
  }
  auto mlir = dtypeToMlir(*dtype);
  if (!mlir) {
    error = "unsupported dtype " + dtype->str();
    return false;
  }
  out.dtype = *mlir;
  for (const json::Value &d : *dims) {
    auto [tag, payload] = tagOf(d);
    std::optional<int64_t> n = payload ? payload->getAsInteger() : std::nullopt;
    if (tag == "Static" && n) {
      out.dims.push_back(*n);
      out.dimNames.push_back("");
    } else if (tag == "Dynamic" && n) {
      out.dims.push_back(-1);
      out.dimNames.push_back(symbolName(*n));
    } else {
      error = "a dim is {\"Static\": n} or {\"Dynamic\": symbol}";
      return false;
    }
  }
  return true;
}

json::Value rlxjson::shapeToJson(ShapedType t, ArrayRef<std::string> dimNames) {
  json::Array dims;
  for (auto [i, d] : llvm::enumerate(t.getShape())) {
    if (ShapedType::isDynamic(d)) {
      std::string name = i < dimNames.size() ? dimNames[i] : "";
      dims.push_back(json::Object{{"Dynamic", symbolOf(name).value_or(1)}});
    } else {
      dims.push_back(json::Object{{"Static", d}});
    }
  }
  return json::Object{{"dims", std::move(dims)},
                      {"dtype", dtypeToRlx(t.getElementType()).value_or("F32")}};
}

std::pair<std::string, const json::Value *> rlxjson::tagOf(const json::Value &v) {
  if (auto s = v.getAsString())
    return {s->str(), nullptr};
  if (const json::Object *o = v.getAsObject(); o && o->size() == 1)
    return {o->begin()->first.str(), &o->begin()->second};
  return {"", nullptr};
}

static std::string intList(const json::Array *a) {
  std::string s = "[";
  if (a)
    for (auto [i, v] : llvm::enumerate(*a))
      s += (i ? ", " : "") + std::to_string(v.getAsInteger().value_or(0));
  return s + "]";
}

std::string rlxjson::mirOpText(const json::Value &op, ArrayRef<std::string> x,
                               ArrayRef<std::string> t, const Shape &result, std::string &error) {
  auto [tagRef, payload] = tagOf(op);
  std::string tag = tagRef;
  const json::Object *f = payload ? payload->getAsObject() : nullptr;
  auto types = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n && i < t.size(); ++i)
      s += (i ? ", " : "") + t[i];
    return s;
  };
  auto need = [&](size_t n) {
    if (x.size() >= n)
      return true;
    error = tag + " needs " + std::to_string(n) + " inputs, got " + std::to_string(x.size());
    return false;
  };
  if (tag == "Mlir") {
    // Our own escape: the op's text with $0, $1, ... for the operands.
    auto text = f ? f->getString("op") : std::nullopt;
    if (!text) {
      error = "{\"Mlir\": {\"op\": text}} needs the op text";
      return "";
    }
    std::string s = text->str();
    for (size_t i = x.size(); i-- > 0;) {
      std::string key = "$" + std::to_string(i);
      for (size_t p = s.find(key); p != std::string::npos; p = s.find(key, p + x[i].size()))
        s.replace(p, key.size(), x[i]);
    }
    return s;
  }
  if (tag == "MatMul" && need(2))
    return llvm::formatv("rlx_mir.matmul {0}, {1} : {2}", x[0], x[1], types(2));
  if (tag == "Binary" && payload && need(2)) {
    std::string kind = camelToSnake(payload->getAsString().value_or(""));
    if (kind == "maximum") kind = "max";
    if (kind == "minimum") kind = "min";
    return llvm::formatv("rlx_mir.{0} {1}, {2} : {3}", kind, x[0], x[1], types(2));
  }
  if ((tag == "Activation" || tag == "Unary") && payload && need(1))
    return llvm::formatv("rlx_mir.{0} {1} : {2}", camelToSnake(payload->getAsString().value_or("")),
                         x[0], t[0]);
  if (tag == "Softmax" && f && need(1))
    return llvm::formatv("rlx_mir.softmax {0} axis = {1} : {2}", x[0],
                         f->getInteger("axis").value_or(-1), t[0]);
  if (tag == "Reduce" && f && need(1))
    return llvm::formatv("rlx_mir.reduce {0} {1} axes = {2}{3} : {4}",
                         camelToSnake(f->getString("op").value_or("sum")), x[0],
                         intList(f->getArray("axes")),
                         f->getBoolean("keep_dim").value_or(false) ? " keep_dims" : "", t[0]);
  if (tag == "Reshape" && need(1)) {
    // RLX's -1 infers a dim; ours marks a dynamic one: write the node's shape.
    std::string dims = "[";
    for (auto [i, d] : llvm::enumerate(result.dims))
      dims += (i ? ", " : "") + std::to_string(d);
    return llvm::formatv("rlx_mir.reshape {0} {1}] : {2}", x[0], dims, t[0]);
  }
  if (tag == "Transpose" && f && need(1))
    return llvm::formatv("rlx_mir.transpose {0} {1} : {2}", x[0], intList(f->getArray("perm")),
                         t[0]);
  if (tag == "FusedMatMulBiasAct" && f && need(3)) {
    std::string act = camelToSnake(f->getString("activation").value_or("None"));
    return llvm::formatv("rlx_mir.fused_matmul {0}, {1} bias({2} : {3}){4} : {5}, {6}", x[0], x[1],
                         x[2], t[2], act == "none" ? "" : " activation " + act, t[0], t[1]);
  }
  if (tag == "Attention" && f && need(3)) {
    int64_t heads = f->getInteger("num_heads").value_or(0);
    int64_t hd = f->getInteger("head_dim").value_or(0);
    std::string attrs;
    if (auto s = f->getNumber("score_scale"))
      attrs += " scale = " + floatLiteral(*s);
    if (auto c = f->getNumber("attn_logit_softcap"))
      attrs += " softcap = " + floatLiteral(*c);
    std::string mask;
    if (const json::Value *m = f->get("mask_kind")) {
      auto [mtag, mv] = tagOf(*m);
      if (mtag == "Causal")
        mask = " causal";
      else if (mtag == "SlidingWindow" && mv)
        mask = " sliding_window window = " + std::to_string(slidingWindowFromJson(mv));
    }
    // Head counts from the widths: q [.., H·D], k [.., Hkv·D].
    auto width = [](StringRef type) {
      StringRef body = type.drop_front(type.find('<') + 1);
      SmallVector<StringRef> parts;
      body.split(parts, 'x');
      int64_t w = 0;
      if (parts.size() < 2 || parts[parts.size() - 2].getAsInteger(10, w))
        return int64_t(0);
      return w;
    };
    int64_t kv = hd > 0 ? width(t[1]) / hd : heads;
    if (kv <= 0) {
      error = "Attention needs head_dim > 0 and k of shape [..., kv_heads·head_dim]";
      return "";
    }
    return llvm::formatv("rlx_mir.attention {0}, {1}, {2} heads = {3}, kv_heads = {4}, "
                         "head_dim = {5}{6}{7} : {8}",
                         x[0], x[1], x[2], heads, kv, hd, attrs, mask, types(3));
  }
  if (error.empty())
    error = "RLX op '" + tag + "' is not supported by the importer";
  return "";
}

std::string rlxjson::floatLiteral(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17e", v);
  return buf;
}

std::string rlxjson::quoted(StringRef s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << '"';
  llvm::printEscapedString(s, os);
  os << '"';
  return out;
}

int64_t rlxjson::slidingWindowFromJson(const json::Value *original) {
  std::optional<int64_t> w = original ? original->getAsInteger() : std::nullopt;
  return w && *w >= 0 ? *w + 1 : 0;
}

json::Value rlxjson::slidingWindowToJson(int64_t window) {
  return json::Object{{"SlidingWindow", window - 1}};
}
