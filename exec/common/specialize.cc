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

std::string ShapeSignature(const std::map<std::string, RuntimeValue>& feeds,
                           std::map<std::string, std::vector<int64_t>>* shapes) {
  std::string key;
  for (const auto& [name, v] : feeds) {
    if (!v.is_tensor()) {  // a sequence or optional: the plan does not depend on it
      key += name + ":value;";
      continue;
    }
    key += name + DimsToString(v.tensor.dims()) + ";";
    if (shapes != nullptr) (*shapes)[name] = v.tensor.dims();
  }
  return key;
}

}  // namespace aic::exec
