// Linear layers with a constant weight as the approximate transformations of
// `opt --apply` (low-rank, prune-dead, merge-linear) see them: a MatMul,
// Gemm or Conv node computing y = M·x (+ bias) at each position, M being
// [out, in] (Conv: in = Cin·kh·kw). This file finds them in a graph, reads
// M and the bias as doubles, and makes the small graph edits the three
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

// The site at node `index`, if it is one: a MatMul with a constant 2-D float
// or double B and a data input of rank >= 2; a Gemm with a constant B (any
// alpha, beta, transA, transB) and a C that is absent or one value per
// output; a Conv with group 1 and a constant weight. A weight that another
// node also reads is not a site (changing it would change that node too, or
// double the parameters), nor is a graph input with a default (the caller
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

// For each value of the main graph, the (node index, input slot) pairs that
// read it, nested subgraphs' reads counted at the node that owns them.
struct Use {
  int node = -1;
  size_t slot = 0;
};
std::vector<Use> UsesOf(const Graph& g, const Value* v);
bool IsGraphOutput(const Graph& g, const Value* v);

// A new initializer named after `base` (made unique), `values` in `dtype`
// (float or double) with `dims`.
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
absl::Status FinishEdit(Model& model, const std::vector<int>& removed, const std::vector<Value*>& reshaped);

}  // namespace aic::analysis
