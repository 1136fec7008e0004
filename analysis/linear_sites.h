// Linear layers with a constant weight as the approximate transformations of
// `opt --apply` (low-rank, prune-dead, merge-linear) see them: a MatMul,
// Gemm or Conv node computing y = M·x (+ bias) at each position, M being
// [out, in] (Conv: in = Cin·kh·kw). This file finds them in a graph (the
// main graph or an If/Loop/Scan body: the searched graphs), reads M and the
// bias as doubles, and makes the small graph edits the three
// transformations share (a fresh initializer, a node that takes over an
// existing output value, the consumers of a value).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/model.h"

namespace aic::analysis {

enum class LinearKind { kMatMul, kGemm, kConv };

// A graph of a model the transformations may search: the main graph or a
// body of an If/Loop/Scan node at any depth.
struct ModelGraph {
  // "" for the main graph; a body: its owner's first output name, '#', the
  // body's index among the owner's subgraphs ("vad_out#1"). Edits keep it
  // (they never rename or remove a control-flow node), so it names the same
  // body in a clone of the model and after other edits.
  std::string key;
  Graph* graph = nullptr;
};
// The main graph first, then every body, depth first.
std::vector<ModelGraph> GraphsOf(const Model& model);
// The graph of `model` with that key, or nullptr.
Graph* GraphWithKey(const Model& model, const std::string& key);
// "If 'If_0' then_branch" for a body ("Loop 'l' body / If 'i' else_branch"
// nested deeper), "" for the main graph.
std::string GraphLabel(const Graph& g);

struct LinearSite {
  int node = -1;  // index in graph.nodes()
  LinearKind kind = LinearKind::kMatMul;
  const Value* weight = nullptr;
  int64_t out = 0;          // M's rows: output features / channels
  int64_t in = 0;           // M's columns
  int64_t in_channels = 0;  // Conv: Cin; MatMul/Gemm: in
  std::vector<int64_t> kernel;  // Conv: the spatial kernel dims
  // Conv: a 1×1 kernel, unit strides, no padding (a per-position matrix
  // product, as MatMul and Gemm are).
  bool pointwise = false;
  int64_t params() const { return out * in; }
};

// "MatMul 'fc1' (768 → 3072)": how notes and tables name a site.
std::string DescribeSite(const Graph& g, const LinearSite& s);
// What a candidate's description starts with: "" in the main graph, "in If
// 'If_0' then_branch: " in a body.
std::string WherePrefix(const Graph& g);

// The site at node `index`, if it is one: a MatMul with a constant 2-D float
// or double B and a data input of rank >= 2; a Gemm with a constant B (any
// alpha, beta, transA, transB) and a C that is absent or one value per
// output; a Conv with group 1 and a constant weight. A weight that another
// node also reads is not a site (changing it would change that node too, or
// double the parameters), nor is a weight of an enclosing graph (a body's
// site reads its own initializer), nor is a graph input with a default (the caller
// may feed another; before IR 4, where every initializer is listed as an
// input, the driver takes them off the input list first).
std::optional<LinearSite> SiteAt(const Graph& g, int index);
std::vector<LinearSite> FindLinearSites(const Graph& g);
// The site whose weight is the value named `weight`, if any.
std::optional<LinearSite> SiteReading(const Graph& g, const std::string& weight);

// M [out, in] row-major, with Gemm's alpha folded in.
std::vector<double> SiteMatrix(const Graph& g, const LinearSite& s);
// The bias as one value per output (Gemm's beta·C, Conv's B), empty when the
// node has none.
std::vector<double> SiteBias(const Graph& g, const LinearSite& s);

// The (node index, input slot) pairs of `g` that read `v` (a value of `g` or
// of a graph enclosing it), nested subgraphs' reads counted at the node that
// owns them (slot: SIZE_MAX).
struct Use {
  int node = -1;
  size_t slot = 0;
};
std::vector<Use> UsesOf(const Graph& g, const Value* v);
bool IsGraphOutput(const Graph& g, const Value* v);

// A new initializer of `g` named after `base` (made unique in the whole
// model, bodies included: ONNX names are one namespace) holding `t`, its
// value typed with t's dims (inference and the file's value_info read them).
Value* AddInitializer(Graph& g, const std::string& base, Tensor t);
// The same from `values` in `dtype` (float or double) with `dims`.
Value* AddWeight(Graph& g, const std::string& base, const std::vector<double>& values, DType dtype,
                 std::vector<int64_t> dims);
// A fresh intermediate value of `dtype` (shape left to inference).
Value* AddIntermediate(Graph& g, const std::string& base, DType dtype);

// Removes the nodes at `indices` (their output values stay, and the
// replacement nodes given them take them over) and the weights only they
// read, then restores a topological
// order and forgets the shapes of `reshaped` values so that inference
// computes them anew. Internal error when the edit left a cycle or a value
// without producer.
absl::Status FinishEdit(Graph& g, const std::vector<int>& removed, const std::vector<Value*>& reshaped);

}  // namespace aic::analysis
