// The per-e-node cost model; see cost_model.h.
#include "rewrite/egraph/cost_model.h"

#include "absl/strings/str_cat.h"
#include "ops/registry.h"

namespace aic::rewrite {

namespace {

// One kernel launch / node dispatch, in element-equivalents: it makes fewer
// nodes win when the arithmetic is equal.
constexpr double kKernelOverhead = 4096;

}  // namespace

bool IsReshapeLike(const Node& op) {
  if (!op.domain.empty()) return false;
  return op.op_type == "Reshape" || op.op_type == "Flatten" || op.op_type == "Squeeze" ||
         op.op_type == "Unsqueeze";
}

double NodeCost(const EGraph& eg, const ENode& n, ClassId cls) {
  switch (n.kind) {
    case ENodeKind::kInput:
    case ENodeKind::kConst:
    case ENodeKind::kProj:
      return 0;
    case ENodeKind::kOpaque:
      return kKernelOverhead;
    case ENodeKind::kOp:
      break;
  }
  // Computed from weights only: a runtime folds it once, so it is (nearly) free.
  if (eg.weight_only(cls)) return 1;
  // Reshape-like ops are views in every runtime: they move no bytes, so
  // a Transpose that only moves axes of size 1 loses to its Reshape.
  if (IsReshapeLike(*n.op)) return kKernelOverhead;
  const OpDef* def = OpRegistry::Global().Find(n.op->domain, n.op->op_type, eg.opset());
  double cost = kKernelOverhead;
  if (def != nullptr && def->cost) {
    std::vector<TypeInfo> types;
    std::vector<const Tensor*> consts;
    for (ClassId c : n.children) {
      if (c == kNoClass) {
        types.emplace_back();
        consts.push_back(nullptr);
      } else {
        types.push_back(eg.data(c).types.empty() ? TypeInfo() : eg.data(c).types[0]);
        consts.push_back(eg.value(c));
      }
    }
    int64_t counter = 0;
    OpContext ctx(*n.op, eg.opset(), std::move(types), std::move(consts),
                  [&counter] { return absl::StrCat("unk__c", counter++); });
    for (size_t i = 0; i < ctx.num_outputs() && i < eg.data(cls).types.size(); ++i) {
      ctx.set_output_type(i, eg.data(cls).types[i]);
    }
    Cost c = def->cost(ctx);
    // Runtimes (ONNX Runtime's, ours) run an Einsum as permuting copies of its
    // operands into the contraction's order, a product and a permuting copy
    // of its result: priced as those steps (bytes moved twice more, and up to
    // five more dispatches: three permutes and two broadcast views), so the
    // explicit Transposes, Unsqueezes and MatMul einsum_to_matmul writes are
    // never dearer.
    if (n.op->op_type == "Einsum" && n.op->domain.empty()) {
      cost += 5 * kKernelOverhead + (c.known ? (c.bytes_read + c.bytes_written) * 2 / 4.0 : 0.0);
    }
    if (c.known) return cost + c.macs + (c.bytes_read + c.bytes_written) / 4.0;
  }
  return cost + 1000;
}

}  // namespace aic::rewrite
