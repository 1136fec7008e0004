#include "analysis/node_facts.h"

#include <vector>

#include "ops/registry.h"
#include "ops/util/cost_util.h"

namespace aic::analysis {

NodeFacts FactsOf(const Model& model, const Node& node,
                  const std::function<const Tensor*(const Value*)>& constant_of) {
  int64_t opset = model.OpsetFor(node.domain);
  const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type, opset);
  std::vector<TypeInfo> types;
  std::vector<const Tensor*> consts;
  for (const Value* v : node.inputs()) {
    types.push_back(v ? v->type() : TypeInfo());
    consts.push_back(v ? constant_of(v) : nullptr);
  }
  OpContext ctx(node, opset, std::move(types), consts, nullptr);
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    if (node.output(i) != nullptr) ctx.set_output_type(i, node.output(i)->type());
  }
  NodeFacts f;
  if (def != nullptr && def->traits) f.traits = def->traits(ctx);
  if (f.traits.semantic_name.empty()) f.traits.semantic_name = node.op_type;
  f.cost = def != nullptr && def->cost ? def->cost(ctx) : BytesOnlyCost(ctx);
  return f;
}

}  // namespace aic::analysis
