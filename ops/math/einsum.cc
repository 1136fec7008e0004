// Einsum: parses the equation once into per-operand label lists (ellipsis
// expanded into private labels, implicit output = labels seen once, sorted),
// then both shape inference and the reference kernel read that form. The
// kernel is the definition itself: loop over every assignment of all labels,
// multiply the operands' elements, accumulate into the output element.
#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ops/math/matmul_internal.h"
#include "ops/math/matmul_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

// Ellipsis dims become labels >= 256, so they never collide with letters.
constexpr int kEllipsisBase = 256;

struct Equation {
  std::vector<std::vector<int>> inputs;  // labels per operand axis
  std::vector<int> output;
};

int64_t LetterCount(const std::string& term) {
  return std::count_if(term.begin(), term.end(),
                       [](char ch) { return std::isalpha(static_cast<unsigned char>(ch)) != 0; });
}

// Labels of one term, with "..." expanded to its share of the `ell` widest
// ellipsis dims (right-aligned, as numpy broadcasts). rank < 0: the output
// term, whose ellipsis takes all `ell` dims.
absl::StatusOr<std::vector<int>> ParseTerm(const std::string& term, int64_t rank, int64_t ell) {
  std::vector<int> labels;
  size_t dots = term.find("...");
  for (size_t i = 0; i < term.size(); ++i) {
    char ch = term[i];
    if (i == dots) {
      int64_t e = rank < 0 ? ell : rank - LetterCount(term);
      if (e < 0) {
        return absl::InvalidArgumentError(absl::StrCat("term '", term, "' has too many labels"));
      }
      for (int64_t k = 0; k < e; ++k) labels.push_back(kEllipsisBase + static_cast<int>(ell - e + k));
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(ch))) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad character '", std::string(1, ch), "' in equation"));
    }
    labels.push_back(ch);
  }
  if (rank >= 0 && static_cast<int64_t>(labels.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("term '", term, "' has ", labels.size(), " labels for rank ", rank));
  }
  return labels;
}

absl::StatusOr<Equation> ParseEquation(std::string eq, const std::vector<int64_t>& ranks) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  size_t arrow = eq.find("->");
  std::string lhs = arrow == std::string::npos ? eq : eq.substr(0, arrow);
  std::vector<std::string> terms = absl::StrSplit(lhs, ',');
  if (terms.size() != ranks.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("equation has ", terms.size(), " operands, node has ", ranks.size()));
  }
  Equation e;
  // Ellipsis labels are right-aligned: an operand with fewer ellipsis dims uses
  // the last ones. Compute the widest first.
  int64_t ell = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].find("...") != std::string::npos) {
      ell = std::max(ell, ranks[i] - LetterCount(terms[i]));
    }
  }
  for (size_t i = 0; i < terms.size(); ++i) {
    AIC_ASSIGN_OR_RETURN(std::vector<int> labels, ParseTerm(terms[i], ranks[i], ell));
    e.inputs.push_back(std::move(labels));
  }
  if (arrow != std::string::npos) {
    AIC_ASSIGN_OR_RETURN(e.output, ParseTerm(eq.substr(arrow + 2), -1, ell));
  } else {
    std::map<int, int> count;
    for (const auto& in : e.inputs) {
      for (int l : in) ++count[l];
    }
    for (int64_t k = 0; k < ell; ++k) e.output.push_back(kEllipsisBase + static_cast<int>(k));
    for (auto [l, c] : count) {
      if (c == 1 && l < kEllipsisBase) e.output.push_back(l);
    }
  }
  return e;
}

std::vector<int64_t> Ranks(const OpContext& ctx) {
  std::vector<int64_t> r;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) r.push_back(ctx.input_shape(i).rank());
  return r;
}

absl::Status InferEinsum(OpContext& ctx) {
  DType dt = ctx.input_dtype(0);
  std::vector<int64_t> ranks = Ranks(ctx);
  if (std::count(ranks.begin(), ranks.end(), -1) > 0) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  auto eq = ParseEquation(ctx.node().GetString("equation", ""), ranks);
  if (!eq.ok()) return ctx.Error(eq.status().message());
  std::map<int, Dim> size;
  for (size_t i = 0; i < eq->inputs.size(); ++i) {
    for (size_t a = 0; a < eq->inputs[i].size(); ++a) {
      const Dim& d = ctx.input_shape(i)[a];
      auto it = size.find(eq->inputs[i][a]);
      if (it == size.end() || (it->second.is_value() && it->second.value() == 1)) {
        size[eq->inputs[i][a]] = d;
      } else if (d.is_value() && it->second.is_value() && d.value() != 1 &&
                 d.value() != it->second.value()) {
        return ctx.Error("label dims differ: ", it->second.value(), " vs ", d.value());
      } else if (d.is_value() && d.value() != 1 && !it->second.is_value()) {
        it->second = d;
      }
    }
  }
  std::vector<Dim> out;
  for (int l : eq->output) {
    if (!size.count(l)) return ctx.Error("output label not among the inputs");
    out.push_back(size[l]);
  }
  ctx.set_output(0, dt, Shape(std::move(out)));
  return absl::OkStatus();
}

template <typename Acc>
std::vector<Acc> RunEinsum(const Equation& eq, const std::vector<std::vector<Acc>>& vals,
                           const std::vector<std::vector<int64_t>>& dims,
                           const std::map<int, int64_t>& size, std::vector<int64_t>* out_dims) {
  std::vector<int> labels;
  for (const auto& [l, s] : size) labels.push_back(l);
  std::vector<int64_t> extent;
  for (int l : labels) extent.push_back(size.at(l));
  auto slot = [&](int l) {
    return static_cast<size_t>(std::find(labels.begin(), labels.end(), l) - labels.begin());
  };
  // Per operand, the stride each label moves by (repeated labels add up:
  // the diagonal; size-1 broadcast axes move by 0).
  std::vector<std::vector<int64_t>> strides(vals.size(), std::vector<int64_t>(labels.size(), 0));
  for (size_t i = 0; i < vals.size(); ++i) {
    int64_t st = 1;
    for (size_t a = dims[i].size(); a-- > 0;) {
      if (dims[i][a] != 1) strides[i][slot(eq.inputs[i][a])] += st;
      st *= dims[i][a];
    }
  }
  std::vector<int64_t> out_strides(labels.size(), 0);
  int64_t st = 1;
  out_dims->clear();
  for (int l : eq.output) out_dims->push_back(size.at(l));
  for (size_t a = eq.output.size(); a-- > 0;) {
    out_strides[slot(eq.output[a])] = st;
    st *= (*out_dims)[a];
  }
  std::vector<Acc> out(static_cast<size_t>(NumElements(*out_dims)), 0);
  for (int64_t e : extent) {
    if (e == 0) return out;
  }
  std::vector<int64_t> idx(labels.size(), 0);
  do {
    Acc p = 1;
    for (size_t i = 0; i < vals.size(); ++i) {
      int64_t off = 0;
      for (size_t k = 0; k < idx.size(); ++k) off += idx[k] * strides[i][k];
      p *= vals[i][static_cast<size_t>(off)];
    }
    int64_t o = 0;
    for (size_t k = 0; k < idx.size(); ++k) o += idx[k] * out_strides[k];
    out[static_cast<size_t>(o)] += p;
  } while (NextMultiIndex(idx, extent));
  return out;
}

absl::Status EinsumKernel(KernelContext& ctx) {
  std::vector<int64_t> ranks;
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    ranks.push_back(ctx.input(i).rank());
    dims.push_back(ctx.input(i).dims());
  }
  auto eq = ParseEquation(ctx.node().GetString("equation", ""), ranks);
  if (!eq.ok()) return ctx.Error(eq.status().message());
  std::map<int, int64_t> size;
  for (size_t i = 0; i < dims.size(); ++i) {
    for (size_t a = 0; a < dims[i].size(); ++a) {
      int64_t& s = size.try_emplace(eq->inputs[i][a], dims[i][a]).first->second;
      if (s == 1) s = dims[i][a];
      if (dims[i][a] != 1 && dims[i][a] != s) return ctx.Error("label dims differ");
    }
  }
  for (int l : eq->output) {
    if (!size.count(l)) return ctx.Error("output label not among the inputs");
  }
  DType dt = ctx.input(0).dtype();
  std::vector<int64_t> out_dims;
  if (IsRealDType(dt)) {
    std::vector<std::vector<double>> vals;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) vals.push_back(TensorToDoubles(ctx.input(i)));
    std::vector<double> out = RunEinsum(*eq, vals, dims, size, &out_dims);
    ctx.set_output(0, DoublesToTensor(out, out_dims, dt));
  } else if (IsInteger(dt)) {
    std::vector<std::vector<int64_t>> vals;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) vals.push_back(TensorToInt64(ctx.input(i)));
    std::vector<int64_t> out = RunEinsum(*eq, vals, dims, size, &out_dims);
    ctx.set_output(0, Int64ToTensor(out, out_dims, dt));
  } else {
    return ctx.Unimplemented("dtype ", DTypeName(dt));
  }
  return absl::OkStatus();
}

Traits EinsumTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = "Einsum";
  t.meaning = absl::StrCat("y = einsum(\"", ctx.node().GetString("equation", ""), "\")");
  // One operand: a linear map (transpose, trace, sum); more: multilinear.
  t.linearity = ctx.num_inputs() == 1 ? Linearity::kLinear : Linearity::kNonlinear;
  return t;
}

// MACs: one multiply per (operands - 1) for every assignment of all labels.
Cost EinsumCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx);
  std::vector<int64_t> ranks = Ranks(ctx);
  auto eq = ParseEquation(ctx.node().GetString("equation", ""), ranks);
  if (!eq.ok() || !c.known) {
    c.known = false;
    return c;
  }
  std::map<int, int64_t> size;
  for (size_t i = 0; i < eq->inputs.size(); ++i) {
    if (!ctx.input_shape(i).IsStatic()) {
      c.known = false;
      return c;
    }
    for (size_t a = 0; a < eq->inputs[i].size(); ++a) {
      int64_t d = ctx.input_shape(i)[a].value();
      size[eq->inputs[i][a]] = std::max(size[eq->inputs[i][a]], d);
    }
  }
  int64_t iters = 1;
  for (const auto& [l, s] : size) iters *= s;
  c.macs = iters * std::max<int64_t>(1, static_cast<int64_t>(eq->inputs.size()) - 1);
  c.flops = 2 * c.macs;
  return c;
}

}  // namespace

void RegisterEinsumOp(OpRegistry& r) {
  r.Register(OpDef{.domain = "", .op_type = "Einsum",
                   .since_version = 12,
                   .infer = InferEinsum,
                   .traits = EinsumTraits,
                   .cost = EinsumCost,
                   .kernel = EinsumKernel});
}

}  // namespace aic
