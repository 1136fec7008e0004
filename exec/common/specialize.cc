#include "exec/common/specialize.h"

#include <algorithm>

#include "graph/clone.h"

namespace aic::exec {

std::unique_ptr<Model> SpecializedClone(const Model& model,
                                        const std::map<std::string, std::vector<int64_t>>& shapes) {
  auto m = std::make_unique<Model>();
  m->ir_version = model.ir_version;
  m->opset_imports = model.opset_imports;
  m->functions = model.functions;
  m->graph = CloneGraph(*model.graph, nullptr);
  for (Value* in : m->graph->inputs()) {
    auto it = shapes.find(in->name());
    if (it == shapes.end()) continue;
    if (in->type().known() && !in->type().is_tensor()) continue;  // passed through as they come
    DType dtype = in->type().is_tensor() ? in->dtype() : DType::kFloat;
    in->set_type(TypeInfo::Tensor(dtype, Shape::FromValues(it->second)));
  }
  return m;
}

std::optional<Tensor> ShapeOrSizeOf(const Node& node, int64_t opset, const std::vector<int64_t>& dims) {
  if (!node.domain.empty()) return std::nullopt;
  if (node.op_type == "Size") return Tensor::Scalar<int64_t>(NumElements(dims));
  if (node.op_type != "Shape") return std::nullopt;
  auto rank = static_cast<int64_t>(dims.size());
  auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank); };
  int64_t start = opset >= 15 ? clamp(node.GetInt("start", 0)) : 0;
  int64_t end = opset >= 15 ? clamp(node.GetInt("end", rank)) : rank;
  std::vector<int64_t> part(dims.begin() + start, dims.begin() + std::max(start, end));
  return Tensor::FromVector<int64_t>(part, {static_cast<int64_t>(part.size())});
}

}  // namespace aic::exec
