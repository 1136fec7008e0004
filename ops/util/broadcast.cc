#include "ops/util/broadcast.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace aic {

Dim MinDimSymbol(const Dim& d, int64_t c) {
  if (!d.is_symbol()) return Dim::Unknown();  // an unnamed dim: no name could stand for it
  return Dim::Symbol(absl::StrCat("min(", d.symbol(), ",", c, ")"));
}

namespace {

// Whether m is min(d, c) for some c (MinDimSymbol).
bool IsMinOf(const Dim& m, const Dim& d) {
  if (!m.is_symbol() || !d.is_symbol()) return false;
  const std::string& name = m.symbol();
  std::string prefix = absl::StrCat("min(", d.symbol(), ",");
  return name.size() > prefix.size() + 1 && name.compare(0, prefix.size(), prefix) == 0 && name.back() == ')' &&
         name.find_first_not_of("0123456789", prefix.size()) == name.size() - 1;
}

}  // namespace

absl::StatusOr<Shape> BroadcastShapes(const std::vector<Shape>& shapes,
                                      const std::function<Dim()>& fresh) {
  size_t rank = 0;
  for (const Shape& s : shapes) {
    if (!s.has_rank()) return Shape::UnknownRank();
    rank = std::max(rank, s.dims().size());
  }
  std::vector<Dim> out(rank, Dim(1));
  for (size_t k = 0; k < rank; ++k) {
    bool have = false;
    Dim acc(1);
    for (const Shape& s : shapes) {
      const auto& d = s.dims();
      if (d.size() + k < rank) continue;
      const Dim& dim = d[d.size() - rank + k];
      if (dim.is_value() && dim.value() == 1) continue;
      if (!have) {
        acc = dim;
        have = true;
        continue;
      }
      if (acc.SameAs(dim)) continue;
      if (acc.is_value() && dim.is_value()) {
        return absl::InvalidArgumentError(absl::StrCat("shapes cannot broadcast: dim ",
                                                       acc.value(), " against ", dim.value()));
      }
      if (acc.is_value()) continue;          // value wins over symbol/unknown
      if (dim.is_value()) { acc = dim; continue; }
      if (IsMinOf(acc, dim)) { acc = dim; continue; }
      if (IsMinOf(dim, acc)) continue;
      acc = fresh ? fresh() : Dim::Unknown();  // two different symbols
    }
    out[k] = acc;
  }
  return Shape(std::move(out));
}

absl::StatusOr<std::vector<int64_t>> BroadcastDims(const std::vector<std::vector<int64_t>>& dims) {
  size_t rank = 0;
  for (const auto& d : dims) rank = std::max(rank, d.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t k = 0; k < rank; ++k) {
    for (const auto& d : dims) {
      if (d.size() + k < rank) continue;
      int64_t v = d[d.size() - rank + k];
      if (v == 1) continue;
      if (out[k] == 1) {
        out[k] = v;
      } else if (out[k] != v) {
        return absl::InvalidArgumentError(absl::StrCat("shapes cannot broadcast: ",
                                                       DimsToString(d), " against dim ", out[k]));
      }
    }
  }
  return out;
}

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in_dims,
                                      const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> in_strides = ContiguousStrides(in_dims);
  std::vector<int64_t> strides(out_dims.size(), 0);
  size_t offset = out_dims.size() - in_dims.size();
  for (size_t i = 0; i < in_dims.size(); ++i) {
    strides[offset + i] = in_dims[i] == 1 ? 0 : in_strides[i];
  }
  return strides;
}

BroadcastIterator::BroadcastIterator(const std::vector<int64_t>& out_dims,
                                     const std::vector<std::vector<int64_t>>& in_dims)
    : out_dims_(out_dims), counter_(out_dims.size(), 0), offsets_(in_dims.size(), 0) {
  for (const auto& d : in_dims) strides_.push_back(BroadcastStrides(d, out_dims));
  size_ = NumElements(out_dims);
}

void BroadcastIterator::Next() {
  for (size_t axis = out_dims_.size(); axis-- > 0;) {
    if (++counter_[axis] < out_dims_[axis]) {
      for (size_t k = 0; k < offsets_.size(); ++k) offsets_[k] += strides_[k][axis];
      return;
    }
    counter_[axis] = 0;
    for (size_t k = 0; k < offsets_.size(); ++k) {
      offsets_[k] -= strides_[k][axis] * (out_dims_[axis] - 1);
    }
  }
}

absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace aic
