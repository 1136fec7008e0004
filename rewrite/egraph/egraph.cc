// E-graph storage: e-nodes and e-classes, the hashcons of canonical e-nodes,
// the table of constant contents, union-find with path halving, and Rebuild's
// congruence closure. What each class knows (types, values, weight-only) is
// analysis.cc's; the lookups rules make are query.cc's. See egraph.h.
#include "rewrite/egraph/egraph.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace aic::rewrite {

namespace {

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

uint64_t HashBytes(const void* data, size_t size) {
  // FNV-1a over 8-byte words in four independent lanes (the multiplies
  // overlap: weights are hashed on import and after every fusion), then the
  // tail.
  const uint8_t* p = static_cast<const uint8_t*>(data);
  constexpr uint64_t kPrime = 1099511628211ull;
  uint64_t lane[4] = {1469598103934665603ull, 0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full,
                      0x165667b19e3779f9ull};
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * kPrime;
    }
  }
  uint64_t h = lane[0];
  for (int k = 1; k < 4; ++k) h = Mix(h, lane[k]);
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * kPrime;
  }
  for (; i < size; ++i) h = (h ^ p[i]) * kPrime;
  return Mix(h, size);
}

// `content_id` names a tensor by its content exactly (EGraph::InternConstant):
// a signature must never make two different attribute tensors one op.
template <typename ContentId>
void AppendAttr(std::string& out, const Attribute& a, const ContentId& content_id) {
  absl::StrAppend(&out, a.name, ":", static_cast<int>(a.type), "=");
  switch (a.type) {
    case AttrType::kInt: absl::StrAppend(&out, a.i); break;
    case AttrType::kFloat: {
      uint32_t bits;
      std::memcpy(&bits, &a.f, 4);
      absl::StrAppend(&out, bits);
      break;
    }
    case AttrType::kString: absl::StrAppend(&out, a.s.size(), "#", a.s); break;
    case AttrType::kInts:
      for (int64_t v : a.ints) absl::StrAppend(&out, v, ",");
      break;
    case AttrType::kFloats:
      for (float f : a.floats) {
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        absl::StrAppend(&out, bits, ",");
      }
      break;
    case AttrType::kStrings:
      for (const std::string& s : a.strings) absl::StrAppend(&out, s.size(), "#", s, ",");
      break;
    case AttrType::kTensor: absl::StrAppend(&out, "c", content_id(a.t)); break;
    case AttrType::kTensors:
      for (const Tensor& t : a.tensors) absl::StrAppend(&out, "c", content_id(t), ",");
      break;
    default:
      // Graph / sparse / type-proto attributes only occur on opaque nodes.
      absl::StrAppend(&out, "?", reinterpret_cast<uintptr_t>(&a));
      break;
  }
  out += ';';
}

}  // namespace

uint64_t TensorHash(const Tensor& t) {
  uint64_t h = static_cast<uint64_t>(t.dtype());
  for (int64_t d : t.dims()) h = Mix(h, static_cast<uint64_t>(d));
  if (t.dtype() == DType::kString) {
    for (const std::string& s : t.strings()) h = Mix(h, HashBytes(s.data(), s.size()));
  } else if (t.defined() && t.byte_size() > 0) {
    h = Mix(h, HashBytes(t.raw_data(), t.byte_size()));
  }
  return h;
}

EGraph::EGraph(int64_t opset, int64_t max_fold_elements)
    : opset_(opset), max_fold_elements_(max_fold_elements) {}

ClassId EGraph::Find(ClassId id) const {
  while (parent_[id] != id) {
    parent_[id] = parent_[parent_[id]];  // path halving
    id = parent_[id];
  }
  return id;
}

size_t EGraph::num_live_classes() const {
  size_t n = 0;
  for (size_t i = 0; i < parent_.size(); ++i) n += parent_[i] == static_cast<ClassId>(i);
  return n;
}

std::vector<ClassId> EGraph::Canonical(const std::vector<ClassId>& children) const {
  std::vector<ClassId> out(children.size());
  for (size_t i = 0; i < children.size(); ++i) {
    out[i] = children[i] == kNoClass ? kNoClass : Find(children[i]);
  }
  return out;
}

int64_t EGraph::OpKey(const std::string& domain, const std::string& op_type,
                      const std::vector<Attribute>& attributes) {
  std::string sig = absl::StrCat(domain, "|", op_type, "|");
  auto content_id = [this](const Tensor& t) { return InternConstant(t); };
  for (const Attribute& a : attributes) AppendAttr(sig, a, content_id);
  auto [it, inserted] = signatures_.emplace(sig, static_cast<int64_t>(signatures_.size()));
  return it->second;
}

std::string EGraph::HashKey(const ENode& n) const {
  // Raw bytes, not text: keys are built for every e-node on every rebuild.
  std::string key;
  key.reserve(1 + 3 * 8 + 4 * n.children.size());
  auto put = [&key](const auto& v) { key.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  key.push_back(static_cast<char>(n.kind));
  put(n.op_key);
  put(n.index);
  // Why: Split(x) into one piece and into two are different nodes with the
  // same op, attributes and children (found by tests/graph_fuzz).
  put(n.num_outputs);
  int64_t const_index = n.kind == ENodeKind::kConst ? n.const_index : -1;
  put(const_index);
  for (ClassId c : n.children) {
    ClassId canonical = c == kNoClass ? kNoClass : Find(c);
    put(canonical);
  }
  return key;
}

ClassId EGraph::Intern(ENode node, std::function<void(EClassData&)> analyze) {
  node.children = Canonical(node.children);
  std::string key = HashKey(node);
  if (auto it = hashcons_.find(key); it != hashcons_.end()) {
    return Find(node_class_[it->second]);
  }
  int32_t index = static_cast<int32_t>(nodes_.size());
  ClassId id = static_cast<ClassId>(classes_.size());
  nodes_.push_back(std::move(node));
  node_class_.push_back(id);
  parent_.push_back(id);
  classes_.emplace_back();
  EClassData data;
  data.nodes.push_back(index);
  analyze(data);
  classes_[id] = std::move(data);
  hashcons_.emplace(std::move(key), index);
  for (ClassId c : nodes_[index].children) {
    if (c != kNoClass) ++use_count_[Find(c)];
  }
  return id;
}

ClassId EGraph::AddOp(const std::string& op_type, const std::string& domain,
                      std::vector<ClassId> children, std::vector<Attribute> attributes,
                      int num_outputs) {
  // One signature node per (signature, present inputs, outputs), shared by
  // every e-node of that form: a node (and its values) per e-node was most
  // of the e-graph's memory on large graphs.
  int64_t op_key = OpKey(domain, op_type, attributes);
  std::string form = absl::StrCat(op_key, "/", num_outputs, "/");
  for (ClassId c : children) form += c == kNoClass ? '0' : '1';
  Node*& n = signature_nodes_[form];
  if (n == nullptr) {
    std::vector<Value*> ins;
    for (ClassId c : children) ins.push_back(c == kNoClass ? nullptr : scratch_.AddValue(""));
    std::vector<Value*> outs;
    for (int i = 0; i < num_outputs; ++i) outs.push_back(scratch_.AddValue(""));
    n = scratch_.AddNode(op_type, std::move(ins), std::move(outs), "", domain);
    n->attributes = std::move(attributes);
  }
  ENode e;
  e.kind = ENodeKind::kOp;
  e.op = n;
  e.children = std::move(children);
  e.op_key = op_key;
  e.num_outputs = num_outputs;
  ENode copy = e;
  return Intern(std::move(e), [&](EClassData& d) { AnalyzeOp(copy, d); });
}

ClassId EGraph::AddOpLike(const Node& proto, std::vector<ClassId> children, int num_outputs) {
  std::vector<Attribute> attrs = proto.attributes;
  return AddOp(proto.op_type, proto.domain, std::move(children), std::move(attrs), num_outputs);
}

ClassId EGraph::AddOpaque(const Node& original, std::vector<ClassId> children, int num_outputs,
                          std::vector<TypeInfo> types) {
  ENode e;
  e.kind = ENodeKind::kOpaque;
  e.op = &original;
  e.children = std::move(children);
  e.index = opaque_counter_++;
  e.num_outputs = num_outputs;
  return Intern(std::move(e), [&](EClassData& d) {
    d.types = std::move(types);
    d.values.resize(d.types.size());
    d.is_tuple = num_outputs > 1;
  });
}

ClassId EGraph::AddInput(int64_t position, TypeInfo type, std::string name, const Tensor* known) {
  ENode e;
  e.kind = ENodeKind::kInput;
  e.index = position;
  return Intern(std::move(e), [&](EClassData& d) {
    d.types = {std::move(type)};
    d.values.resize(1);
    if (known != nullptr) {
      d.values[0] = *known;
      d.weight_only = true;
    }
    d.name = std::move(name);
  });
}

int32_t EGraph::InternConstant(const Tensor& value) {
  // Keyed by TensorHash, settled by bitwise comparison: a 64-bit hash is no
  // identity ([1, -1, 4] and [-1, 1, 4] hashed alike, and two Constant ops
  // keyed by the hash alone became one: a Reshape read the other's shape).
  std::vector<int32_t>& same_hash = constants_by_hash_[TensorHash(value)];
  for (int32_t ci : same_hash) {
    if (constants_[ci].BitwiseEquals(value)) return ci;
  }
  same_hash.push_back(static_cast<int32_t>(constants_.size()));
  constants_.push_back(value);
  return same_hash.back();
}

ClassId EGraph::AddConst(Tensor value, std::string name) {
  // Constants are keyed by content: an equal one is the same e-node.
  const int32_t const_index = InternConstant(value);
  ENode e;
  e.kind = ENodeKind::kConst;
  e.const_index = const_index;
  const Tensor& t = constants_[const_index];
  ClassId id = Intern(std::move(e), [&](EClassData& d) {
    d.types = {TypeInfo::Tensor(t.dtype(), Shape::FromValues(t.dims()))};
    d.values = {t};
    d.weight_only = true;
    d.name = name;
  });
  return id;
}

ClassId EGraph::Proj(ClassId tuple, int64_t index) {
  ENode e;
  e.kind = ENodeKind::kProj;
  e.children = {tuple};
  e.index = index;
  return Intern(std::move(e), [&](EClassData& d) { AnalyzeProj(tuple, index, d); });
}

bool EGraph::Union(ClassId a, ClassId b) {
  a = Find(a);
  b = Find(b);
  if (a == b) return false;
  if (classes_[a].nodes.size() < classes_[b].nodes.size()) std::swap(a, b);
  parent_[b] = a;
  EClassData& da = classes_[a];
  EClassData& db = classes_[b];
  da.nodes.insert(da.nodes.end(), db.nodes.begin(), db.nodes.end());
  db.nodes.clear();
  MergeAnalyses(a, b);
  if (da.name.empty()) da.name = db.name;
  if (da.node_name.empty()) da.node_name = db.node_name;
  return true;
}

void EGraph::Rebuild() {
  // Congruence closure with a worklist: after one full pass, only the parents
  // of classes merged since are re-keyed. (Full passes until nothing changed
  // took one pass per level of a chain of merges: quadratic on long chains.)
  // Keys left behind by re-keyed nodes name non-canonical classes, which no
  // canonical e-node can produce again, so they never cause a false match.
  std::vector<std::vector<int32_t>> parents(classes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (ClassId c : nodes_[i].children) {
      if (c != kNoClass) parents[Find(c)].push_back(static_cast<int32_t>(i));
    }
  }
  hashcons_.clear();
  std::vector<int32_t> work(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) work[i] = static_cast<int32_t>(i);
  std::vector<char> queued(nodes_.size(), 0);
  while (!work.empty()) {
    std::vector<int32_t> next;
    for (int32_t i : work) {
      queued[i] = 0;
      ENode& n = nodes_[i];
      n.children = Canonical(n.children);
      std::string key = HashKey(n);
      auto [it, inserted] = hashcons_.emplace(std::move(key), i);
      if (inserted) continue;
      if (it->second != i && Find(node_class_[it->second]) == Find(node_class_[i])) continue;
      if (it->second == i) continue;
      ClassId a = Find(node_class_[it->second]);
      ClassId b = Find(node_class_[i]);
      Union(a, b);
      ClassId root = Find(a);
      ClassId loser = root == a ? b : a;
      // Nodes reading the loser now have a different key.
      for (int32_t p : parents[loser]) {
        if (!queued[p]) {
          queued[p] = 1;
          next.push_back(p);
        }
      }
      auto& rp = parents[root];
      rp.insert(rp.end(), parents[loser].begin(), parents[loser].end());
      parents[loser].clear();
      parents[loser].shrink_to_fit();
    }
    work = std::move(next);
  }
  // Drop duplicate e-nodes.
  absl::flat_hash_map<std::string, int32_t> rebuilt;
  for (auto& c : classes_) c.nodes.clear();
  use_count_.clear();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const ENode& n = nodes_[i];
    std::string key = HashKey(n);
    if (!rebuilt.emplace(key, static_cast<int32_t>(i)).second) continue;
    ClassId c = Find(node_class_[i]);
    classes_[c].nodes.push_back(static_cast<int32_t>(i));
    for (ClassId ch : n.children) {
      if (ch != kNoClass && Find(ch) != c) ++use_count_[Find(ch)];
    }
  }
  hashcons_ = std::move(rebuilt);
  PropagateAnalyses();
}

void EGraph::set_name(ClassId id, const std::string& name) {
  EClassData& d = classes_[Find(id)];
  if (d.name.empty()) d.name = name;
}

void EGraph::set_node_name(ClassId id, const std::string& name) {
  EClassData& d = classes_[Find(id)];
  if (d.node_name.empty()) d.node_name = name;
}

}  // namespace aic::rewrite
