#include "exec/common/specialize.h"

#include <algorithm>

#include "graph/clone.h"
#include "ops/kernel_context.h"
#include "ops/registry.h"

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

std::optional<std::vector<Tensor>> FoldNode(const Node& node, int64_t opset,
                                            const std::vector<const Tensor*>& constant_inputs,
                                            const std::vector<int64_t>* input0_dims) {
  if (!node.Subgraphs().empty()) return std::nullopt;  // bodies may read non-constant outer values
  const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type, opset);
  if (def == nullptr || !def->kernel || def->nondeterministic) return std::nullopt;
  if (input0_dims != nullptr && node.output(0) != nullptr) {
    // Shape and Size read only the dims, which are concrete here.
    if (std::optional<Tensor> t = ShapeOrSizeOf(node, opset, *input0_dims)) return std::vector<Tensor>{*t};
  }
  std::vector<RuntimeValue> holders(node.num_inputs());
  std::vector<const RuntimeValue*> inputs(node.num_inputs(), nullptr);
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    if (node.input(i) == nullptr) continue;
    if (constant_inputs[i] == nullptr) return std::nullopt;
    holders[i] = RuntimeValue(*constant_inputs[i]);
    inputs[i] = &holders[i];
  }
  KernelContext ctx(node, opset, std::move(inputs), nullptr);
  if (!def->kernel(ctx).ok()) return std::nullopt;
  std::vector<Tensor> outputs(node.num_outputs());
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    if (node.output(i) == nullptr) continue;
    if (!ctx.outputs()[i].is_tensor()) return std::nullopt;
    outputs[i] = ctx.outputs()[i].tensor;
  }
  return outputs;
}

}  // namespace aic::exec
