#include "analysis/symbolic_cost.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "graph/realistic_size.h"

namespace aic::analysis {


absl::StatusOr<InputSymbols> BindInputSymbols(
    const Model& model, const std::map<std::string, std::vector<int64_t>>& shapes) {
  for (const auto& [name, dims] : shapes) {
    bool found = false;
    for (const Value* v : model.graph->inputs()) found |= v->name() == name && !v->is_initializer();
    if (!found) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a graph input"));
  }
  InputSymbols out;
  // A symbol on several inputs takes the smallest of their defaults: the
  // sequence of a float mask [batch, sequence] is the token sequence's 16,
  // not a waveform's 16000.
  auto symbol_index = [&](const std::string& name, int64_t default_size) {
    auto it = std::find(out.names.begin(), out.names.end(), name);
    if (it != out.names.end()) {
      size_t s = static_cast<size_t>(it - out.names.begin());
      if (!out.given[s]) out.values[s] = std::min(out.values[s], default_size);
      return static_cast<int>(s);
    }
    out.names.push_back(name);
    out.values.push_back(default_size);
    out.given.push_back(false);
    return static_cast<int>(out.names.size() - 1);
  };
  for (Value* v : model.graph->inputs()) {
    if (v->is_initializer()) continue;
    auto given = shapes.find(v->name());
    const Shape& shape = v->shape();
    if (!v->type().is_tensor() || !shape.has_rank()) {
      if (given != shapes.end()) {
        // A rank the file does not state: the given dims are the shape.
        TypeInfo t = v->type().is_tensor() ? v->type() : TypeInfo::Tensor(DType::kFloat, Shape());
        t.shape = Shape::FromValues(given->second);
        v->set_type(std::move(t));
      }
      continue;
    }
    if (given != shapes.end() && static_cast<int64_t>(given->second.size()) != shape.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("input '", v->name(), "' has rank ",
                                                     shape.rank(), ", the shape given has ",
                                                     given->second.size()));
    }
    std::vector<int> axes(shape.dims().size(), -1);
    bool symbolic = false;
    for (size_t k = 0; k < shape.dims().size(); ++k) {
      const Dim& d = shape.dims()[k];
      if (d.is_value()) {
        if (given != shapes.end() && given->second[k] != d.value()) {
          return absl::InvalidArgumentError(absl::StrCat("input '", v->name(), "' dim ", k, " is ",
                                                         d.value(), ", the shape given has ",
                                                         given->second[k]));
        }
        continue;
      }
      std::string name = d.is_symbol() ? d.symbol() : absl::StrCat(v->name(), "[", k, "]");
      int s = symbol_index(name, RealisticDimSize(v->type(), k));
      axes[k] = s;
      symbolic = true;
      if (given == shapes.end()) continue;
      int64_t size = given->second[k];
      if (size < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("input '", v->name(), "' dim ", k, ": size ", size, " is negative"));
      }
      if (out.given[s] && out.values[s] != size) {
        return absl::InvalidArgumentError(absl::StrCat("symbolic dim '", name, "' is given as ",
                                                       out.values[s], " and as ", size, " (input '",
                                                       v->name(), "' dim ", k, ")"));
      }
      out.values[s] = size;
      out.given[s] = true;
    }
    if (symbolic) out.axes.push_back({v, std::move(axes)});
  }
  return out;
}

void SetInputSizes(const InputSymbols& symbols, const std::vector<int64_t>& values) {
  for (const auto& [v, axes] : symbols.axes) {
    TypeInfo t = v->type();
    std::vector<Dim>& dims = t.shape.mutable_dims();
    for (size_t k = 0; k < axes.size(); ++k) {
      if (axes[k] >= 0) dims[k] = Dim(values[static_cast<size_t>(axes[k])]);
    }
    v->set_type(std::move(t));
  }
}

namespace {

void CollectTypes(const Graph& g, std::vector<std::pair<Value*, TypeInfo>>& out) {
  for (const auto& v : g.values()) out.push_back({v.get(), v->type()});
  for (const auto& n : g.nodes()) {
    for (const Graph* sub : n->Subgraphs()) CollectTypes(*sub, out);
  }
}

}  // namespace

TypeSnapshot::TypeSnapshot(const Model& model) { CollectTypes(*model.graph, types_); }

void TypeSnapshot::Restore() const {
  for (const auto& [v, t] : types_) v->set_type(t);
}

}  // namespace aic::analysis
