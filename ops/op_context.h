// OpContext: the static view of one node that shape inference, traits and cost
// formulas read: attributes, input types, constant inputs when known, and (for
// inference) the output types being written.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/graph.h"

namespace aic {

class OpContext {
 public:
  // `fresh_symbol` names a dim that cannot be known statically; it must give a
  // new name each call ("unk__0", "unk__1", ...).
  OpContext(const Node& node, int64_t opset, std::vector<TypeInfo> input_types,
            std::vector<const Tensor*> input_constants, std::function<std::string()> fresh_symbol);

  const Node& node() const { return node_; }
  int64_t opset() const { return opset_; }

  size_t num_inputs() const { return input_types_.size(); }
  size_t num_outputs() const { return output_types_.size(); }
  bool has_input(size_t i) const { return i < num_inputs() && node_.input(i) != nullptr; }
  // kNone type when the input is absent or untyped.
  const TypeInfo& input_type(size_t i) const;
  DType input_dtype(size_t i) const { return input_type(i).dtype; }
  const Shape& input_shape(size_t i) const { return input_type(i).shape; }
  // The input's value when it is known before running (initializer or a folded
  // constant), else nullptr.
  const Tensor* input_constant(size_t i) const;

  const TypeInfo& output_type(size_t i) const;
  void set_output_type(size_t i, TypeInfo type);
  void set_output(size_t i, DType dtype, Shape shape) {
    set_output_type(i, TypeInfo::Tensor(dtype, std::move(shape)));
  }
  const std::vector<TypeInfo>& output_types() const { return output_types_; }
  // Records output i's value when it is known statically (Shape of a static
  // shape, Size, ...), so later nodes see it as input_constant().
  void set_output_constant(size_t i, Tensor t);
  const std::vector<std::optional<Tensor>>& output_constants() const { return output_constants_; }

  // A new symbolic dim for what cannot be known statically.
  Dim FreshDim() const { return Dim::Symbol(fresh_symbol_()); }

  // InvalidArgument "Conv 'conv_12': <message>".
  template <typename... Args>
  absl::Status Error(const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(node_.Describe(), ": ", args...));
  }

 private:
  const Node& node_;
  int64_t opset_;
  std::vector<TypeInfo> input_types_;
  std::vector<const Tensor*> input_constants_;
  std::vector<TypeInfo> output_types_;
  std::vector<std::optional<Tensor>> output_constants_;
  std::function<std::string()> fresh_symbol_;
};

}  // namespace aic
