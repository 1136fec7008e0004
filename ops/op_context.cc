#include "ops/op_context.h"

namespace aic {

namespace {
const TypeInfo& NoType() {
  static const TypeInfo kNone;
  return kNone;
}
}  // namespace

OpContext::OpContext(const Node& node, int64_t opset, std::vector<TypeInfo> input_types,
                     std::vector<const Tensor*> input_constants,
                     std::function<std::string()> fresh_symbol)
    : node_(node),
      opset_(opset),
      input_types_(std::move(input_types)),
      input_constants_(std::move(input_constants)),
      output_types_(node.num_outputs()),
      output_constants_(node.num_outputs()),
      fresh_symbol_(std::move(fresh_symbol)) {
  input_constants_.resize(input_types_.size(), nullptr);
  if (!fresh_symbol_) {
    fresh_symbol_ = [n = 0]() mutable { return absl::StrCat("unk__", n++); };
  }
}

const TypeInfo& OpContext::input_type(size_t i) const {
  return i < input_types_.size() ? input_types_[i] : NoType();
}

const Tensor* OpContext::input_constant(size_t i) const {
  return i < input_constants_.size() ? input_constants_[i] : nullptr;
}

const TypeInfo& OpContext::output_type(size_t i) const {
  return i < output_types_.size() ? output_types_[i] : NoType();
}

void OpContext::set_output_type(size_t i, TypeInfo type) {
  if (i < output_types_.size()) output_types_[i] = std::move(type);
}

}  // namespace aic

namespace aic {

void OpContext::set_output_constant(size_t i, Tensor t) {
  if (i < output_constants_.size()) output_constants_[i] = std::move(t);
}

}  // namespace aic
