// Read-only lookups over an e-graph: the known value of a class, its e-nodes
// of one op, whether it has a Const leaf, its use count, and a text dump for
// debugging. See egraph.h.
#include "rewrite/egraph/egraph.h"

#include "absl/strings/str_cat.h"
#include "ops/fused/standard_aliases.h"

namespace aic::rewrite {

const Tensor* EGraph::value(ClassId id) const {
  const EClassData& d = data(id);
  return d.values.empty() || !d.values[0] ? nullptr : &*d.values[0];
}

const ENode* EGraph::FindOp(ClassId id, const char* op_type) const {
  for (int32_t i : data(id).nodes) {
    const ENode& n = nodes_[i];
    if (n.kind == ENodeKind::kOp && n.op->op_type == op_type && HasStandardSemantics(*n.op)) return &n;
  }
  return nullptr;
}

std::vector<const ENode*> EGraph::FindOps(ClassId id, const char* op_type) const {
  std::vector<const ENode*> out;
  for (int32_t i : data(id).nodes) {
    const ENode& n = nodes_[i];
    if (n.kind == ENodeKind::kOp && n.op->op_type == op_type && HasStandardSemantics(*n.op)) {
      out.push_back(&n);
    }
  }
  return out;
}

bool EGraph::HasConstLeaf(ClassId id) const {
  for (int32_t i : data(id).nodes) {
    if (nodes_[i].kind == ENodeKind::kConst) return true;
  }
  return false;
}

int EGraph::UseCount(ClassId id) const {
  auto it = use_count_.find(Find(id));
  return it == use_count_.end() ? 0 : it->second;
}

std::string EGraph::Dump() const {
  std::string out;
  for (size_t c = 0; c < classes_.size(); ++c) {
    if (Find(static_cast<ClassId>(c)) != static_cast<ClassId>(c)) continue;
    const EClassData& d = classes_[c];
    absl::StrAppend(&out, "e", c, " ", d.name, " ", d.types.empty() ? "" : d.types[0].ToString(),
                    d.weight_only ? " W" : "", ":");
    for (int32_t i : d.nodes) {
      const ENode& n = nodes_[i];
      switch (n.kind) {
        case ENodeKind::kOp: absl::StrAppend(&out, " ", n.op->op_type, "("); break;
        case ENodeKind::kOpaque: absl::StrAppend(&out, " opaque:", n.op->op_type, "("); break;
        case ENodeKind::kInput: absl::StrAppend(&out, " input", n.index, "("); break;
        case ENodeKind::kConst: absl::StrAppend(&out, " const(", constants_[n.const_index].DebugString(3)); break;
        case ENodeKind::kProj: absl::StrAppend(&out, " proj", n.index, "("); break;
      }
      for (ClassId ch : n.children) absl::StrAppend(&out, ch == kNoClass ? -1 : Find(ch), ",");
      out += ")";
    }
    out += "\n";
  }
  return out;
}

}  // namespace aic::rewrite
