#include "ops/kernel_context.h"

namespace aic {

KernelContext::KernelContext(const Node& node, int64_t opset,
                             std::vector<const RuntimeValue*> inputs, SubgraphRunner* runner)
    : node_(node), opset_(opset), inputs_(std::move(inputs)), outputs_(node.num_outputs()),
      runner_(runner) {}

bool KernelContext::has_input(size_t i) const {
  return i < inputs_.size() && inputs_[i] != nullptr && !inputs_[i]->is_none();
}

const Tensor& KernelContext::input(size_t i) const {
  AIC_CHECK(has_input(i) && inputs_[i]->is_tensor(), node_.Describe(), ": input ", i,
            " is not a tensor");
  return inputs_[i]->tensor;
}

const RuntimeValue& KernelContext::input_value(size_t i) const {
  static const RuntimeValue kNone;
  return i < inputs_.size() && inputs_[i] != nullptr ? *inputs_[i] : kNone;
}

void KernelContext::set_output(size_t i, Tensor t) {
  if (i < outputs_.size()) outputs_[i] = RuntimeValue(std::move(t));
}

void KernelContext::set_output_value(size_t i, RuntimeValue v) {
  if (i < outputs_.size()) outputs_[i] = std::move(v);
}

}  // namespace aic
