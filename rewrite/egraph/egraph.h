// The e-graph at the heart of `aic-onnx opt`: e-classes of equivalent values,
// each holding e-nodes (an op over child e-classes, or a leaf). Union-find with
// path halving merges classes; a hashcons of canonical e-nodes makes equal
// subterms one class (CSE for free). Every class carries analysis data: the
// TypeInfo of each output, its value when statically known (small shape
// tensors and weights alike), and whether it depends on weights only.
//
// E-nodes keep their op signature (op_type, domain, attributes) in a Node of a
// private scratch Graph, so OpDef inference and reference kernels, which read a
// Node, run on e-nodes unchanged. Opaque nodes (no OpDef, unknown domain,
// nondeterministic ops, nodes with subgraphs) get a unique key: never merged,
// never matched.
//
// egraph.cc holds the storage (hashcons, union-find, Rebuild's congruence
// closure), analysis.cc the per-class analyses, query.cc the lookups.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "graph/model.h"

namespace aic::rewrite {

using ClassId = int32_t;
constexpr ClassId kNoClass = -1;

enum class ENodeKind : uint8_t {
  kOp,      // a standard or custom op over child classes
  kInput,   // graph input `index`
  kConst,   // constant tensor (initializer, Constant node or folded value)
  kOpaque,  // never matched or merged; `op` is the original node
  kProj,    // output `index` of the multi-output op in children[0]
};

struct ENode {
  ENodeKind kind = ENodeKind::kOp;
  const Node* op = nullptr;       // kOp / kOpaque: op_type, domain, attributes
  std::vector<ClassId> children;  // kNoClass for an omitted optional input
  int64_t index = 0;              // kInput: input position; kProj: output; kOpaque: unique id
  int32_t const_index = -1;       // kConst: into EGraph::constants()
  int64_t op_key = 0;             // interned op signature (op_type, domain, attributes)
  int32_t num_outputs = 1;        // kOp/kOpaque: outputs of the op
  // Never extracted: an If whose branch is inlined into its class (the
  // opaque node costs the same whatever it holds, so costs cannot decide).
  bool retired = false;
};

struct EClassData {
  std::vector<int32_t> nodes;                // indices into EGraph::nodes()
  std::vector<TypeInfo> types;               // per output (1 unless a tuple class)
  std::vector<std::optional<Tensor>> values; // statically known values, per output
  bool weight_only = false;                  // computed from constants only
  bool is_tuple = false;                     // multi-output op: read through kProj
  std::string name;                          // a name from the source graph, if any
  // The source node that computed it, if any: the emitted node takes this
  // name (a fused node its root's), so tools that key on node names (a
  // profile, a quantization config) still find them.
  std::string node_name;
};

class EGraph {
 public:
  explicit EGraph(int64_t opset, int64_t max_fold_elements = int64_t{1} << 22);
  EGraph(const EGraph&) = delete;
  EGraph& operator=(const EGraph&) = delete;

  int64_t opset() const { return opset_; }
  // Whether the analysis computes the float value of a large
  // DequantizeLinear of constants (a QDQ model's weights). Off when nothing
  // may fold it (OptimizeOptions::fold_dequantize): set before importing.
  void set_value_dequantized_weights(bool on) { value_dequantized_weights_ = on; }
  // Fresh dim symbols are "unk__rwN" from N = `first` on (see OptimizeStats::fresh_symbols).
  void set_first_symbol(int64_t first) { symbol_counter_ = first; }
  int64_t next_symbol() const { return symbol_counter_; }
  ClassId Find(ClassId id) const;
  // Merges two classes; true when they were different.
  bool Union(ClassId a, ClassId b);
  // Re-canonicalizes every e-node and merges congruent classes, until stable.
  void Rebuild();

  // Adds (or finds) an op e-node. `num_outputs` > 1 makes a tuple class whose
  // outputs are read with Proj(). Attributes are copied.
  ClassId AddOp(const std::string& op_type, const std::string& domain,
                std::vector<ClassId> children, std::vector<Attribute> attributes = {},
                int num_outputs = 1);
  // Same, copying the signature of an existing node.
  ClassId AddOpLike(const Node& proto, std::vector<ClassId> children, int num_outputs);
  ClassId AddOpaque(const Node& original, std::vector<ClassId> children, int num_outputs,
                    std::vector<TypeInfo> types);
  // A leaf for a graph input or (position < 0) a value of an enclosing graph;
  // `known`, when given, is its value (an outer initializer): folding reads
  // it, while extraction still refers to the leaf, not a copy.
  ClassId AddInput(int64_t position, TypeInfo type, std::string name, const Tensor* known = nullptr);
  ClassId AddConst(Tensor value, std::string name = "");
  ClassId Proj(ClassId tuple, int64_t index);
  // Joins into a just-imported op's class what the graph's own inference
  // knew of its outputs (one type per output): that inference follows values
  // the e-graph's per-node analysis cannot (a Reshape target read off shapes,
  // ops/tensor/tensor_util.h's ShapeValueOf), so a dim known there, or named
  // by a file or by that inference run, replaces a fresh one here. Other
  // "unk__" names (a file's, another tool's) are not taken.
  void AdoptImportedTypes(ClassId id, const std::vector<TypeInfo>& types);

  const EClassData& data(ClassId id) const { return classes_[Find(id)]; }
  const ENode& node(int32_t index) const { return nodes_[index]; }
  size_t num_nodes() const { return nodes_.size(); }
  size_t num_classes() const { return classes_.size(); }
  size_t num_live_classes() const;
  const std::vector<Tensor>& constants() const { return constants_; }
  const Tensor& constant(int32_t index) const { return constants_[index]; }

  // Analysis shortcuts for single-output classes.
  const TypeInfo& type(ClassId id) const { return data(id).types[0]; }
  const Tensor* value(ClassId id) const;
  bool weight_only(ClassId id) const { return data(id).weight_only; }
  // The first kOp e-node of the class with that op_type, or nullptr.
  const ENode* FindOp(ClassId id, const char* op_type) const;
  // All kOp e-nodes of the class with that op_type.
  std::vector<const ENode*> FindOps(ClassId id, const char* op_type) const;
  // Whether the class has a Const leaf already.
  bool HasConstLeaf(ClassId id) const;
  // Number of distinct e-classes using `id` as a child (an over-approximation
  // of consumers in any extracted graph), recomputed by Rebuild().
  int UseCount(ClassId id) const;

  // The class e-node `node_index` is in now.
  ClassId ClassOfNode(int32_t node_index) const { return Find(node_class_[node_index]); }
  // Marks an e-node as never to be extracted (see ENode::retired).
  void Retire(int32_t node_index) { nodes_[node_index].retired = true; }

  void set_name(ClassId id, const std::string& name);
  void set_node_name(ClassId id, const std::string& name);
  std::string Dump() const;

 private:
  // Storage and hashcons (egraph.cc).
  int64_t OpKey(const std::string& domain, const std::string& op_type,
                const std::vector<Attribute>& attributes);
  std::vector<ClassId> Canonical(const std::vector<ClassId>& children) const;
  ClassId Intern(ENode node, std::function<void(EClassData&)> analyze);
  std::string HashKey(const ENode& n) const;
  // The index in constants_ of a tensor equal to `value` (bitwise), added if
  // new: constants' e-nodes and tensor attributes in op signatures name
  // contents by it.
  int32_t InternConstant(const Tensor& value);
  // Analyses (analysis.cc): a new op's or projection's data, the join of two
  // classes' facts when Union merges `merged` into `root`, and Rebuild's
  // re-analysis of the classes reading what unions taught.
  void AnalyzeOp(const ENode& node, EClassData& data);
  void AnalyzeProj(ClassId tuple, int64_t index, EClassData& data) const;
  void MergeAnalyses(ClassId root, ClassId merged);
  void PropagateAnalyses();

  int64_t opset_;
  int64_t max_fold_elements_;
  mutable std::vector<ClassId> parent_;
  // Deques: rules hold references to e-nodes while adding new ones.
  std::deque<EClassData> classes_;
  std::deque<ENode> nodes_;
  std::vector<ClassId> node_class_;  // class each e-node was added to (before unions)
  // Classes whose analysis data may have grown since PropagateAnalyses last
  // looked (union roots, classes it updated): only their readers are redone.
  std::vector<char> dirty_;
  std::vector<Tensor> constants_;
  absl::flat_hash_map<uint64_t, std::vector<int32_t>> constants_by_hash_;  // TensorHash -> indices
  absl::flat_hash_map<std::string, int32_t> hashcons_;  // key -> node index
  absl::flat_hash_map<ClassId, int> use_count_;
  absl::flat_hash_map<std::string, int64_t> signatures_;
  absl::flat_hash_map<std::string, Node*> signature_nodes_;  // see AddOp
  Graph scratch_;  // holds the op signature nodes
  int64_t opaque_counter_ = 0;
  bool value_dequantized_weights_ = true;
  int64_t symbol_counter_ = 0;
};

// 64-bit content hash of a tensor (dtype, dims and bytes).
uint64_t TensorHash(const Tensor& t);

}  // namespace aic::rewrite
