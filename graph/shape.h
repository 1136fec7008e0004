// Dim and Shape: what is known statically about a tensor's extent. A Dim is a
// known int64, a named symbol ("batch", "seq"), or unknown (ONNX allows a dim with
// neither value nor name). A Shape is a list of Dims, or "rank unknown".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aic {

class Dim {
 public:
  Dim() = default;  // unknown
  Dim(int64_t value) : kind_(Kind::kValue), value_(value) {}  // NOLINT: implicit by design
  static Dim Symbol(std::string name) {
    Dim d;
    d.kind_ = Kind::kSymbol;
    d.symbol_ = std::move(name);
    return d;
  }
  static Dim Unknown() { return Dim(); }

  bool is_value() const { return kind_ == Kind::kValue; }
  bool is_symbol() const { return kind_ == Kind::kSymbol; }
  bool is_unknown() const { return kind_ == Kind::kUnknown; }
  int64_t value() const { return value_; }
  const std::string& symbol() const { return symbol_; }

  // Known dims equal by value, symbols by name; unknown equals nothing (not even itself).
  bool SameAs(const Dim& other) const;
  bool operator==(const Dim& other) const {
    return kind_ == other.kind_ && value_ == other.value_ && symbol_ == other.symbol_;
  }
  std::string ToString() const;  // "3", "batch", "?"

 private:
  enum class Kind : uint8_t { kUnknown, kValue, kSymbol };
  Kind kind_ = Kind::kUnknown;
  int64_t value_ = 0;
  std::string symbol_;
};

class Shape {
 public:
  Shape() = default;  // rank unknown
  Shape(std::vector<Dim> dims) : dims_(std::move(dims)) {}  // NOLINT
  static Shape UnknownRank() { return Shape(); }
  static Shape FromValues(const std::vector<int64_t>& values);
  static Shape Scalar() { return Shape(std::vector<Dim>{}); }

  bool has_rank() const { return dims_.has_value(); }
  int64_t rank() const { return dims_ ? static_cast<int64_t>(dims_->size()) : -1; }
  const std::vector<Dim>& dims() const;
  std::vector<Dim>& mutable_dims();
  const Dim& operator[](size_t i) const { return dims()[i]; }

  // All dims known integers.
  bool IsStatic() const;
  // The dims as integers; requires IsStatic().
  std::vector<int64_t> Values() const;
  // Product of dims when static, else nullopt.
  std::optional<int64_t> NumElements() const;

  bool operator==(const Shape& other) const { return dims_ == other.dims_; }
  std::string ToString() const;  // "[1, 10]", "[batch, 3, ?, ?]", "unknown rank"

 private:
  std::optional<std::vector<Dim>> dims_;
};

}  // namespace aic
