//===- Import.cpp - RLX JSON (HIR and LIR modules) into RLX-MLIR -----------===//
//
// The JSON graph is written out as MLIR text, one op per node with the node
// id (and name) as its location, then parsed and verified by the ordinary
// parser: every shape rule and verifier applies, and a diagnostic points at
// "<file> node:<id>". Each op's inferred type is then compared with the
// shape the JSON records for that node.
//
//===----------------------------------------------------------------------===//

#include "JsonCommon.h"

#include "RLX/Target/RLXJSON/RLXJSON.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"

#include <map>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::rlxjson;
namespace json = llvm::json;

namespace {

struct Node {
  int64_t id = 0;
  const json::Value *op = nullptr;
  std::vector<int64_t> inputs;
  Shape shape;
  std::string name; ///< "" when null
};

class Importer {
public:
  Importer(MLIRContext *ctx, StringRef bufferName) : ctx(ctx), file(bufferName.str()) {}

  OwningOpRef<ModuleOp> run(StringRef text) {
    auto parsed = json::parse(text);
    if (!parsed) {
      emitError(FileLineColLoc::get(ctx, file, 0, 0))
          << "not JSON: " << llvm::toString(parsed.takeError());
      return nullptr;
    }
    const json::Object *root = parsed->getAsObject();
    if (!root) {
      emitError(FileLineColLoc::get(ctx, file, 0, 0)) << "an RLX module is a JSON object";
      return nullptr;
    }
    std::string mlir;
    bool ok = root->get("buffers") ? lirText(*root, mlir) : hirText(*root, mlir);
    if (!ok)
      return nullptr;
    llvm::SourceMgr sm;
    sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(mlir, file + " (as MLIR)"),
                          llvm::SMLoc());
    ParserConfig config(ctx);
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sm, config);
    if (!module || failed(checkShapes(*module)))
      return nullptr;
    return module;
  }

private:
  MLIRContext *ctx;
  std::string file;
  std::map<int64_t, Node> nodes;
  std::vector<int64_t> order;

  Location nodeLoc(int64_t id) { return FileLineColLoc::get(ctx, file + " node", id, 0); }
  std::string locText(const Node &n) {
    std::string l = llvm::formatv("loc({0}:{1}:0)", quoted(file + " node"), n.id).str();
    if (!n.name.empty())
      l = llvm::formatv("loc({0}({1}))", quoted(n.name), l.substr(4, l.size() - 5)).str();
    return l;
  }
  bool fail(Location loc, const Twine &msg) {
    emitError(loc) << msg;
    return false;
  }

  /// Reads "nodes" (topological, inputs before users).
  bool readGraph(const json::Object &graph) {
    const json::Array *list = graph.getArray("nodes");
    if (!list)
      return fail(FileLineColLoc::get(ctx, file, 0, 0), "the graph has no \"nodes\" array");
    for (const json::Value &v : *list) {
      const json::Object *o = v.getAsObject();
      Node n;
      auto id = o ? o->getInteger("id") : std::nullopt;
      if (!id)
        return fail(FileLineColLoc::get(ctx, file, 0, 0), "a node without an integer \"id\"");
      n.id = *id;
      n.op = o->get("op");
      if (auto name = o->getString("name"))
        n.name = name->str();
      if (const json::Array *ins = o->getArray("inputs"))
        for (const json::Value &i : *ins)
          n.inputs.push_back(i.getAsInteger().value_or(-1));
      std::string error;
      if (!n.op || !parseShape(o->get("shape"), n.shape, error))
        return fail(nodeLoc(n.id), error.empty() ? "a node needs \"op\" and \"shape\"" : error);
      for (int64_t i : n.inputs)
        if (i < 0 || i >= n.id || !nodes.count(i))
          return fail(nodeLoc(n.id), "input " + std::to_string(i) +
                                         " is not an earlier node (ids are topological)");
      if (nodes.count(n.id))
        return fail(nodeLoc(n.id), "duplicate node id");
      order.push_back(n.id);
      nodes.emplace(n.id, std::move(n));
    }
    return true;
  }

  static std::string argAttrs(StringRef role, const Node &n) {
    std::string name = n.op && tagOf(*n.op).second && tagOf(*n.op).second->getAsObject()
                           ? tagOf(*n.op).second->getAsObject()->getString("name").value_or("").str()
                           : "";
    std::string a = llvm::formatv("rlx.{0} = {1}", role, quoted(name)).str();
    if (llvm::any_of(n.shape.dims, [](int64_t d) { return d < 0; })) {
      a += ", rlx.dim_names = [";
      for (auto [i, d] : llvm::enumerate(n.shape.dimNames))
        a += (i ? ", " : "") + quoted(d);
      a += "]";
    }
    return "{" + a + "}";
  }

  std::string activation(const json::Object *f) {
    const json::Value *a = f ? f->get("activation") : nullptr;
    if (!a || a->getAsNull())
      return "";
    std::string act = camelToSnake(tagOf(*a).first);
    return act == "none" ? "" : " activation " + act;
  }

  /// One HIR node as MLIR text defining %n<id> (several ops for RMSNorm with beta).
  bool hirNodeText(const Node &n, std::string &out) {
    auto [tagRef, payload] = tagOf(*n.op);
    std::string tag = tagRef;
    const json::Object *f = payload ? payload->getAsObject() : nullptr;
    std::vector<std::string> x, t;
    for (int64_t i : n.inputs) {
      x.push_back("%n" + std::to_string(i));
      t.push_back(nodes[i].shape.tensorType());
    }
    std::string loc = locText(n), res = "%n" + std::to_string(n.id);
    auto need = [&](size_t k) {
      return x.size() >= k ||
             fail(nodeLoc(n.id), tag + " needs " + std::to_string(k) + " inputs");
    };
    auto withBeta = [&](const std::string &normed, size_t betaIndex) {
      if (x.size() <= betaIndex) {
        out += "  " + res + " = " + normed + " " + loc + "\n";
        return;
      }
      out += "  " + res + "_norm = " + normed + " " + loc + "\n";
      out += llvm::formatv("  {0} = rlx_mir.add {0}_norm, {1} : {2}, {3} {4}\n", res,
                           x[betaIndex], n.shape.tensorType(), t[betaIndex], loc)
                 .str();
    };
    double eps = f ? f->getNumber("eps").value_or(1e-5) : 1e-5;
    if (tag == "Linear" || tag == "LinearFused") {
      if (!need(2))
        return false;
      bool bias = tag == "Linear" ? f && f->getBoolean("has_bias").value_or(false) : x.size() > 2;
      if (bias && !need(3))
        return false;
      // RLX weights are [in, out].
      out += llvm::formatv("  {0} = rlx_hir.linear {1}, {2}{3}{4} layout in_out : {5}, {6}{7} {8}\n",
                           res, x[0], x[1], bias ? " bias " + x[2] : "", activation(f), t[0], t[1],
                           bias ? ", " + t[2] : "", loc);
      return true;
    }
    if (tag == "SwiGLU") {
      if (!need(4))
        return false;
      out += llvm::formatv("  {0} = rlx_hir.swiglu {1}, gate {2}, up {3}, down {4} layout in_out "
                           ": {5}, {6}, {7}, {8} {9}\n",
                           res, x[0], x[2], x[1], x[3], t[0], t[2], t[1], t[3], loc);
      return true;
    }
    if (tag == "RmsNorm") {
      if (!need(2))
        return false;
      withBeta(llvm::formatv("rlx_hir.rms_norm {0}, {1} eps = {2} : {3}, {4}", x[0], x[1],
                             floatLiteral(eps),
                             t[0], t[1]),
               2);
      return true;
    }
    if (tag == "ResidualRmsNorm") {
      if (!need(3))
        return false;
      // The node's value is the normalized sum (plus beta); the sum itself
      // is %n<id>_sum.
      bool beta = x.size() > 3;
      out += llvm::formatv("  {0}{1}, {0}_sum = rlx_hir.residual_rms_norm {2}, {3}, {4} eps = "
                           "{5} : {6}, {7}, {8} {9}\n",
                           res, beta ? "_norm" : "", x[0], x[1], x[2], floatLiteral(eps), t[0],
                           t[1], t[2], loc);
      if (beta)
        out += llvm::formatv("  {0} = rlx_mir.add {0}_norm, {1} : {2}, {3} {4}\n", res, x[3],
                             n.shape.tensorType(), t[3], loc);
      return true;
    }
    if (tag == "Attention") {
      if (!need(3))
        return false;
      int64_t heads = f ? f->getInteger("num_heads").value_or(0) : 0;
      int64_t hd = f ? f->getInteger("head_dim").value_or(0) : 0;
      const Shape &ks = nodes[n.inputs[1]].shape;
      if (ks.dims.empty() || hd <= 0)
        return fail(nodeLoc(n.id), "Attention needs head_dim > 0 and k of shape "
                                   "[..., kv_heads·head_dim]");
      int64_t kwidth = ks.dims.back();
      std::string mask;
      if (const json::Value *m = f ? f->get("mask") : nullptr) {
        auto [mtag, mv] = tagOf(*m);
        if (mtag == "Causal")
          mask = " causal";
        else if (mtag == "SlidingWindow" && mv)
          mask = " sliding_window window = " + std::to_string(slidingWindowFromJson(mv));
      }
      std::string maskOperand = x.size() > 3 ? " mask(" + x[3] + " : " + t[3] + ")" : "";
      out += llvm::formatv("  {0} = rlx_hir.attention {1}, {2}, {3}{4} heads = {5}, kv_heads = "
                           "{6}, head_dim = {7}{8} : {9}, {10}, {11} {12}\n",
                           res, x[0], x[1], x[2], maskOperand, heads, hd ? kwidth / hd : heads, hd,
                           mask, t[0], t[1], t[2], loc);
      return true;
    }
    if (tag == "RoPE") {
      if (!need(3))
        return false;
      int64_t hd = f ? f->getInteger("head_dim").value_or(0) : 0;
      int64_t rot = f ? f->getInteger("n_rot").value_or(hd) : hd;
      out += llvm::formatv("  {0} = rlx_hir.rope {1} tables({2}, {3} : {4}, {5}) head_dim = {6}{7} "
                           ": {8} {9}\n",
                           res, x[0], x[1], x[2], t[1], t[2], hd,
                           rot != hd ? " rotary_dim = " + std::to_string(rot) : "", t[0], loc);
      return true;
    }
    if (tag == "Constant") {
      const json::Array *data = f ? f->getArray("data") : nullptr;
      std::string hex;
      for (const json::Value &b : data ? *data : json::Array())
        hex += llvm::formatv("{0:X-2}", b.getAsInteger().value_or(0) & 0xff).str();
      if (static_cast<int64_t>(hex.size() / 2) != n.shape.byteSize())
        return fail(nodeLoc(n.id), "Constant has " + std::to_string(hex.size() / 2) +
                                       " bytes for a " + std::to_string(n.shape.byteSize()) +
                                       "-byte shape");
      out += llvm::formatv("  {0} = rlx_mir.constant dense<\"0x{1}\"> : {2} {3}\n", res, hex,
                           n.shape.tensorType(), loc);
      return true;
    }
    if (tag == "Mir") {
      std::string error;
      std::string op = mirOpText(payload ? *payload : *n.op, x, t, n.shape, error);
      if (op.empty())
        return fail(nodeLoc(n.id), error);
      out += "  " + res + " = " + op + " " + loc + "\n";
      return true;
    }
    return fail(nodeLoc(n.id), "RLX HIR op '" + tag + "' is not supported by the importer");
  }

  bool hirText(const json::Object &root, std::string &out) {
    if (!readGraph(root))
      return false;
    std::string name = root.getString("name").value_or("rlx_module").str();
    std::string policy = camelToSnake(root.getString("fusion_policy").value_or("Direct"));
    if (policy != "direct" && policy != "fusable")
      return fail(FileLineColLoc::get(ctx, file, 0, 0), "fusion_policy must be \"Direct\" or \"Fusable\", got " +
                                 llvm::formatv("{0}", *root.get("fusion_policy")).str());
    std::vector<std::string> args;
    std::string body;
    for (int64_t id : order) {
      const Node &n = nodes[id];
      std::string tag = tagOf(*n.op).first;
      if (tag == "Input" || tag == "Param") {
        args.push_back(llvm::formatv("%n{0}: {1} {2}", id, n.shape.tensorType(),
                                     argAttrs(tag == "Input" ? "input" : "param", n)));
        continue;
      }
      std::string text;
      if (!hirNodeText(n, text))
        return false;
      std::vector<std::pair<std::string, std::string>> operands;
      for (int64_t i : n.inputs)
        operands.emplace_back("%n" + std::to_string(i), nodes[i].shape.tensorType());
      if (!probe(n, operands, text))
        return false;
      body += text;
    }
    const json::Array *outputs = root.getArray("outputs");
    if (!outputs || outputs->empty())
      return fail(FileLineColLoc::get(ctx, file, 0, 0), "the module has no \"outputs\"");
    std::string results, rets, retTypes;
    for (auto [i, v] : llvm::enumerate(*outputs)) {
      int64_t id = v.getAsInteger().value_or(-1);
      if (!nodes.count(id))
        return fail(FileLineColLoc::get(ctx, file, 0, 0),
                    "output " + std::to_string(id) + " is not a node");
      const Node &n = nodes[id];
      results += (i ? ", " : "") + n.shape.tensorType();
      if (!n.name.empty())
        results += " {rlx.output = " + quoted(n.name) + "}";
      rets += (i ? ", %n" : "%n") + std::to_string(id);
      retTypes += (i ? ", " : "") + n.shape.tensorType();
    }
    out = llvm::formatv("module attributes {{rlx.fusion_policy = \"{0}\"} {{\n"
                        "func.func @{1}({2}) -> ({3}) {{\n{4}  return {5} : {6}\n}\n}\n",
                        policy, quoted(name), llvm::join(args, ", "), results, body, rets, retTypes);
    return true;
  }

  /// LIR: the MIR graph as kernels on arena views at the recorded offsets.
  bool lirText(const json::Object &root, std::string &out) {
    const json::Object *mir = root.getObject("mir");
    const json::Object *graph = mir ? mir->getObject("inner") : nullptr;
    const json::Object *plan = root.getObject("buffers");
    if (!graph || !plan)
      return fail(FileLineColLoc::get(ctx, file, 0, 0),
                  "an RLX LIR module has {\"mir\": {\"inner\": graph}, \"buffers\": plan}");
    if (!readGraph(*graph))
      return false;
    for (int64_t id : order)
      if (llvm::any_of(nodes[id].shape.dims, [](int64_t d) { return d < 0; }))
        return fail(nodeLoc(id), "LIR needs static shapes; this node has a dynamic dim");
    int64_t arena = plan->getInteger("arena_size").value_or(-1);
    int64_t alignment = plan->getInteger("alignment").value_or(1);
    const json::Object *assignments = plan->getObject("assignments");
    const json::Object *aliases = plan->getObject("view_aliases");
    const json::Array *schedule = plan->getArray("schedule");
    const json::Object *io = plan->getObject("io");
    if (arena < 0 || !assignments || !schedule || !io)
      return fail(FileLineColLoc::get(ctx, file, 0, 0),
                  "the plan needs arena_size, assignments, schedule and io");
    // Byte offset of every node that has bytes: assigned, or a view of one.
    std::map<int64_t, int64_t> offset;
    for (auto &[key, v] : *assignments) {
      int64_t id;
      if (StringRef(key).getAsInteger(10, id) || !nodes.count(id))
        return fail(FileLineColLoc::get(ctx, file, 0, 0), "assignment for unknown node " + key.str());
      const json::Object *a = v.getAsObject();
      offset[id] = a ? a->getInteger("offset").value_or(-1) : -1;
      int64_t size = a ? a->getInteger("size").value_or(-1) : -1;
      if (size < nodes[id].shape.byteSize())
        return fail(nodeLoc(id), "assigned " + std::to_string(size) + " bytes for a " +
                                     std::to_string(nodes[id].shape.byteSize()) + "-byte value");
    }
    // Aliases: a view at the root's offset (the original's), a strided
    // slice (RLX-MLIR's "slice" extension: kernels read it in place) or a
    // reshape of an IO buffer outside the arena; the last two are made once
    // the IO buffers exist.
    struct LateAlias {
      int64_t id, root;
      const json::Object *slice;
    };
    std::vector<LateAlias> late;
    static const json::Object kNoAliases;
    // (Not `aliases ? *aliases : json::Object()`: that copies the object and
    // the pointers kept in `late` would dangle.)
    for (auto &[key, v] : aliases ? *aliases : kNoAliases) {
      int64_t id;
      const json::Object *a = v.getAsObject();
      if (StringRef(key).getAsInteger(10, id) || !a || !nodes.count(id))
        return fail(FileLineColLoc::get(ctx, file, 0, 0), "bad view alias " + key.str());
      int64_t root = a->getInteger("root").value_or(-1);
      if (!nodes.count(root) || root >= id)
        return fail(nodeLoc(id), "view of node " + std::to_string(root) + ", not an earlier node");
      const json::Object *slice = a->getObject("slice");
      if (slice || !offset.count(root)) {
        late.push_back({id, root, slice});
        continue;
      }
      offset[id] = offset[root] + a->getInteger("byte_offset").value_or(0);
    }
    // The buffer of every node: its arena view when it has bytes there, else
    // (RLX-MLIR's own plans keep IO outside the arena) the IO argument.
    std::map<int64_t, std::string> buffer;
    auto viewName = [](int64_t id) { return "%b" + std::to_string(id); };
    std::string args = llvm::formatv("%arena: memref<{0}xi8> {{rlx_lir.arena}", arena);
    std::string body, inputs, params, outputs, copyIn, copyOut;
    for (auto &[id, off] : offset) {
      body += llvm::formatv("  {0} = rlx_lir.view %arena[{1}] : memref<{2}xi8> to {3} {4}\n",
                            viewName(id), off, arena, nodes[id].shape.memrefType(),
                            locText(nodes[id]));
      buffer[id] = viewName(id);
    }
    auto ioList = [&](StringRef key, StringRef role, std::string &names) -> bool {
      for (const json::Value &e : io->getArray(key) ? *io->getArray(key) : json::Array()) {
        const json::Array *pair = e.getAsArray();
        std::string name = pair && pair->size() == 2 ? (*pair)[0].getAsString().value_or("").str() : "";
        int64_t id = pair && pair->size() == 2 ? (*pair)[1].getAsInteger().value_or(-1) : -1;
        if (!nodes.count(id))
          return fail(FileLineColLoc::get(ctx, file, 0, 0),
                      "io entry \"" + name + "\" names no node");
        std::string arg = "%in" + std::to_string(id);
        args += llvm::formatv(", {0}: {1} {{rlx.{2} = {3}}", arg, nodes[id].shape.memrefType(),
                              role, quoted(name));
        if (buffer.count(id))
          copyIn += llvm::formatv("  memref.copy {0}, {1} : {2} to {2}\n", arg, buffer[id],
                                  nodes[id].shape.memrefType());
        else
          buffer[id] = arg;
        names += (names.empty() ? "" : ", ") + quoted(name);
      }
      return true;
    };
    if (!ioList("inputs", "input", inputs) || !ioList("params", "param", params))
      return false;
    for (auto [i, v] : llvm::enumerate(io->getArray("outputs") ? *io->getArray("outputs")
                                                               : json::Array())) {
      int64_t id = v.getAsInteger().value_or(-1);
      if (!nodes.count(id))
        return fail(FileLineColLoc::get(ctx, file, 0, 0),
                    "output " + std::to_string(id) + " is not a node");
      std::string name = nodes[id].name.empty() ? "output" + std::to_string(i) : nodes[id].name;
      std::string arg = "%out" + std::to_string(i);
      args += llvm::formatv(", {0}: {1} {{rlx.output = {2}}", arg,
                            nodes[id].shape.memrefType(), quoted(name));
      if (buffer.count(id))
        copyOut += llvm::formatv("  memref.copy {0}, {1} : {2} to {2}\n", buffer[id], arg,
                                 nodes[id].shape.memrefType());
      else
        buffer[id] = arg;
      outputs += (outputs.empty() ? "" : ", ") + quoted(name);
    }
    body += copyIn;
    llvm::sort(late, [](const LateAlias &a, const LateAlias &b) { return a.id < b.id; });
    // An output written over the bytes of one of the kernel's inputs (an
    // elementwise kernel in place): recorded as in_place so that the checker
    // accepts it where the kernel is elementwise, and rejects it otherwise.
    auto inPlaceAttr = [&](const std::vector<int64_t> &inputs,
                           const std::vector<int64_t> &outs) -> std::string {
      std::vector<std::string> entries;
      bool any = false;
      for (int64_t o : outs) {
        int64_t reuse = -1;
        auto ob = offset.find(o);
        for (auto [k, in] : llvm::enumerate(inputs)) {
          auto ib = offset.find(in);
          if (ob != offset.end() && ib != offset.end() && ib->second == ob->second &&
              nodes[in].shape.byteSize() == nodes[o].shape.byteSize())
            reuse = static_cast<int64_t>(k);
        }
        any |= reuse >= 0;
        entries.push_back(std::to_string(reuse));
      }
      return any ? "attributes {in_place = array<i64: " + llvm::join(entries, ", ") + ">} " : "";
    };
    std::map<int64_t, std::string> bufferType; // non-identity buffer types
    auto typeOfBuffer = [&](int64_t id) {
      auto it = bufferType.find(id);
      return it != bufferType.end() ? it->second : nodes[id].shape.memrefType();
    };
    for (const LateAlias &a : late) {
      if (!buffer.count(a.root))
        return fail(nodeLoc(a.id), "view of node " + std::to_string(a.root) + ", which has no bytes");
      const Node &n = nodes[a.id], &r = nodes[a.root];
      std::string name = "%v" + std::to_string(a.id);
      if (!a.slice) {
        // A reshape of a contiguous IO buffer.
        std::string strides;
        int64_t st = 1;
        for (size_t d = n.shape.dims.size(); d-- > 0;) {
          strides = std::to_string(st) + (strides.empty() ? "" : ", ") + strides;
          st *= n.shape.dims[d];
        }
        std::string sizes;
        for (int64_t d : n.shape.dims)
          sizes += (sizes.empty() ? "" : ", ") + std::to_string(d);
        body += llvm::formatv("  {0} = memref.reinterpret_cast {1} to offset: [0], sizes: [{2}], "
                              "strides: [{3}] : {4} to {5} {6}\n",
                              name, buffer[a.root], sizes, strides, typeOfBuffer(a.root),
                              n.shape.memrefType(), locText(n));
        buffer[a.id] = name;
        continue;
      }
      // A unit-stride slice of the root's identity-layout buffer.
      auto ints = [&](StringRef key, std::vector<int64_t> &out) {
        const json::Array *arr = a.slice->getArray(key);
        for (const json::Value &e : arr ? *arr : json::Array())
          out.push_back(e.getAsInteger().value_or(-1));
        return out.size() == r.shape.dims.size();
      };
      std::vector<int64_t> offs, sizes, steps;
      if (!ints("offsets", offs) || !ints("sizes", sizes) || !ints("strides", steps) ||
          llvm::any_of(steps, [](int64_t s) { return s != 1; }) || bufferType.count(a.root))
        return fail(nodeLoc(a.id), "a slice alias needs offsets, sizes and unit strides of an "
                                   "unsliced node's rank");
      std::vector<int64_t> rootStrides(r.shape.dims.size(), 1);
      for (size_t d = r.shape.dims.size(); d-- > 1;)
        rootStrides[d - 1] = rootStrides[d] * r.shape.dims[d];
      int64_t elementOffset = 0;
      for (size_t d = 0; d < offs.size(); ++d) {
        if (offs[d] < 0 || sizes[d] < 0 || offs[d] + sizes[d] > r.shape.dims[d])
          return fail(nodeLoc(a.id), "the slice runs outside node " + std::to_string(a.root));
        elementOffset += offs[d] * rootStrides[d];
      }
      auto list = [](const std::vector<int64_t> &v) {
        std::string out;
        for (int64_t x : v)
          out += (out.empty() ? "" : ", ") + std::to_string(x);
        return out;
      };
      std::string dims;
      for (int64_t d : sizes)
        dims += std::to_string(d) + "x";
      std::string dtype = n.shape.dtype;
      std::string type = llvm::formatv("memref<{0}{1}, strided<[{2}], offset: {3}>>", dims, dtype,
                                       list(rootStrides), elementOffset);
      body += llvm::formatv("  {0} = memref.subview {1}[{2}] [{3}] [{4}] : {5} to {6} {7}\n",
                            name, buffer[a.root], list(offs), list(sizes), list(steps),
                            typeOfBuffer(a.root), type, locText(n));
      buffer[a.id] = name;
      bufferType[a.id] = type;
    }
    for (const json::Value &s : *schedule) {
      int64_t id = s.getAsInteger().value_or(-1);
      if (!nodes.count(id))
        return fail(FileLineColLoc::get(ctx, file, 0, 0), "schedule names an unknown node");
      const Node &n = nodes[id];
      std::string tag = tagOf(*n.op).first;
      if (tag == "Input" || tag == "Param" || (aliases && aliases->get(std::to_string(id))))
        continue;
      if (!buffer.count(id))
        return fail(nodeLoc(id), "a scheduled node without assigned bytes");
      std::vector<std::string> x, t, ins, insT;
      for (auto [k, i] : llvm::enumerate(n.inputs)) {
        if (!buffer.count(i))
          return fail(nodeLoc(id), "input node " + std::to_string(i) + " has no bytes");
        x.push_back("%a" + std::to_string(k));
        t.push_back(nodes[i].shape.tensorType());
        ins.push_back(buffer[i]);
        insT.push_back(typeOfBuffer(i));
      }
      std::string error;
      const json::Value &op = tag == "Mir" && tagOf(*n.op).second ? *tagOf(*n.op).second : *n.op;
      if (auto [etag, ev] = tagOf(op); etag == "Mlir" && ev && ev->getAsObject() &&
                                        ev->getAsObject()->get("kernel")) {
        // RLX-MLIR's kernel escape: its body verbatim, once for the run of
        // nodes (one per output, result 0..n-1) that carry it.
        const json::Object *k = ev->getAsObject();
        int64_t result = k->getInteger("result").value_or(-1);
        int64_t results = k->getInteger("results").value_or(-1);
        if (result < 0 || results < 1 || result >= results)
          return fail(nodeLoc(id), "a kernel escape needs result < results");
        if (result != 0)
          continue; // emitted with result 0
        std::vector<std::string> outs, outsT;
        for (int64_t r = 0; r < results; ++r) {
          auto it = nodes.find(id + r);
          if (it == nodes.end() || !buffer.count(id + r) || it->second.op == nullptr ||
              !tagOf(*it->second.op).second)
            return fail(nodeLoc(id), "a kernel escape with " + std::to_string(results) +
                                         " results needs that many consecutive nodes");
          outs.push_back(buffer[id + r]);
          outsT.push_back(typeOfBuffer(id + r));
        }
        std::vector<int64_t> outIds;
        for (int64_t r = 0; r < results; ++r)
          outIds.push_back(id + r);
        body += llvm::formatv("  rlx_lir.kernel {0} ins({1} : {2}) outs({3} : {4}) {7}{5} {6}\n",
                              quoted(k->getString("name").value_or("kernel")),
                              llvm::join(ins, ", "), llvm::join(insT, ", "),
                              llvm::join(outs, ", "), llvm::join(outsT, ", "),
                              k->getString("kernel").value_or("{}"), locText(n),
                              inPlaceAttr(n.inputs, outIds));
        continue;
      }
      std::string text = mirOpText(op, x, t, n.shape, error);
      if (text.empty())
        return fail(nodeLoc(id), error);
      std::vector<std::pair<std::string, std::string>> operands;
      for (auto [k, ty] : llvm::enumerate(t))
        operands.emplace_back(x[k], ty);
      if (!probe(n, operands, "  %n" + std::to_string(id) + " = " + text + " " + locText(n) + "\n"))
        return false;
      std::string blockArgs;
      for (auto [k, ty] : llvm::enumerate(t))
        blockArgs += (k ? ", %a" : "%a") + std::to_string(k) + ": " + ty;
      body += llvm::formatv("  rlx_lir.kernel \"{0}\" ins({1} : {2}) outs({3} : {4}) {9}{{\n"
                            "  ^bb0({5}):\n    %r = {6} {7}\n    rlx_lir.yield %r : {8}\n  } {7}\n",
                            camelToSnake(tagOf(op).first), llvm::join(ins, ", "),
                            llvm::join(insT, ", "), buffer[id], n.shape.memrefType(), blockArgs,
                            text, locText(n), n.shape.tensorType(),
                            inPlaceAttr(n.inputs, {id}));
    }
    body += copyOut;
    std::string name = graph->getString("name").value_or("rlx_module").str();
    out = llvm::formatv(
        "func.func @{0}({1}) attributes {{rlx_lir.io = {{inputs = [{2}], params = [{3}], outputs "
        "= [{4}]}, rlx_lir.plan = {{alignment = {5} : i64, arena_bytes = {6} : i64, imported = "
        "\"rlx-json\"}} {{\n{7}  return\n}\n",
        quoted(name), args, inputs, params, outputs, alignment, arena, body);
    return true;
  }

  /// Parses and verifies one node's ops alone, on arguments of its inputs'
  /// recorded types, and compares the type it computes with the recorded
  /// one: a bad node is reported at its own location before the whole
  /// function is put together (where it would be a type clash at some use).
  bool probe(const Node &n, ArrayRef<std::pair<std::string, std::string>> operands,
             const std::string &text) {
    std::string args;
    llvm::StringSet<> seen;
    for (auto &[name, type] : operands)
      if (seen.insert(name).second)
        args += (args.empty() ? "" : ", ") + name + ": " + type;
    std::string src = "func.func @node(" + args + ") {\n" + text + "  return\n}\n";
    ParserConfig config(ctx);
    OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(
        src, config, llvm::formatv("{0} node {1} (as MLIR)", file, n.id).str());
    return m && succeeded(checkShapes(*m));
  }

  /// The JSON's recorded shape of each node against the op's inferred type:
  /// result 0 of every tensor op located at a node.
  LogicalResult checkShapes(ModuleOp module) {
    if (failed(verify(module)))
      return failure();
    bool ok = true;
    module.walk([&](Operation *op) {
      Location l = op->getLoc();
      if (auto name = dyn_cast<NameLoc>(l))
        l = name.getChildLoc();
      auto loc = dyn_cast<FileLineColLoc>(l);
      if (!loc || op->getNumResults() == 0 || !loc.getFilename().getValue().ends_with(" node"))
        return;
      auto it = nodes.find(loc.getLine());
      auto got = dyn_cast<RankedTensorType>(op->getResult(0).getType());
      if (it == nodes.end() || !got)
        return;
      std::string have;
      llvm::raw_string_ostream os(have);
      os << got;
      if (have != it->second.shape.tensorType()) {
        op->emitError() << "the RLX module says node " << it->first << " is "
                        << it->second.shape.tensorType() << ", the op computes " << have;
        ok = false;
      }
    });
    return success(ok);
  }
};

} // namespace

OwningOpRef<ModuleOp> mlir::rlx::importRLXJson(StringRef json, StringRef bufferName,
                                               MLIRContext *ctx) {
  return Importer(ctx, bufferName).run(json);
}
