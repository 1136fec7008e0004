#include "ops/evaluate.h"

#include "ops/registry.h"

namespace aic {

bool Evaluation::AllValuesKnown() const {
  for (const auto& v : values) {
    if (!v) return false;
  }
  return true;
}

Evaluation EvaluateNode(const Node& node, int64_t opset, const std::vector<TypeInfo>& input_types,
                        const std::vector<const Tensor*>& input_values, const EvaluateLimits& limits,
                        std::function<std::string()> fresh_symbol) {
  Evaluation e;
  e.types.assign(node.num_outputs(), TypeInfo());
  e.values.assign(node.num_outputs(), std::nullopt);
  const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type, opset);
  if (def == nullptr) return e;
  e.has_def = true;
  e.nondeterministic = def->nondeterministic;
  if (def->infer) {
    OpContext ctx(node, opset, input_types, input_values, std::move(fresh_symbol));
    if (def->infer(ctx).ok()) {
      for (size_t i = 0; i < node.num_outputs() && i < ctx.num_outputs(); ++i) {
        e.types[i] = ctx.output_type(i);
        if (ctx.output_constants()[i] && !def->nondeterministic) e.values[i] = *ctx.output_constants()[i];
      }
    }
  }
  // An omitted optional output needs no value.
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    if (node.output(i) == nullptr && !e.values[i]) e.values[i] = Tensor();
  }
  if (e.AllValuesKnown() || !def->kernel || def->nondeterministic || !node.Subgraphs().empty()) return e;
  int64_t elements = 0;
  std::vector<RuntimeValue> holders(node.num_inputs());
  std::vector<const RuntimeValue*> inputs(node.num_inputs(), nullptr);
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    if (node.input(i) == nullptr) continue;
    const Tensor* t = i < input_values.size() ? input_values[i] : nullptr;
    if (t == nullptr) return e;
    elements += t->num_elements();
    holders[i] = RuntimeValue(*t);
    inputs[i] = &holders[i];
  }
  if (elements > limits.max_input_elements) return e;
  KernelContext kctx(node, opset, std::move(inputs), nullptr);
  if (!def->kernel(kctx).ok()) return e;  // whoever runs the node reports it
  for (size_t i = 0; i < node.num_outputs() && i < kctx.outputs().size(); ++i) {
    if (node.output(i) == nullptr) continue;
    RuntimeValue& rv = kctx.outputs()[i];
    if (!rv.is_tensor() || rv.tensor.num_elements() > limits.max_output_elements) continue;
    if (!e.types[i].is_tensor() || !e.types[i].shape.IsStatic()) {
      e.types[i] = TypeInfo::Tensor(rv.tensor.dtype(), Shape::FromValues(rv.tensor.dims()));
    }
    e.values[i] = std::move(rv.tensor);
  }
  return e;
}

}  // namespace aic
