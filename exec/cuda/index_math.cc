#include "exec/cuda/index_math.h"

#include <algorithm>

namespace aic::cuda {

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

std::optional<std::vector<int64_t>> BroadcastStrides(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  if (in.size() > out.size()) return std::nullopt;
  size_t pad = out.size() - in.size();
  std::vector<int64_t> in_strides = ContiguousStrides(in);
  std::vector<int64_t> s(out.size(), 0);
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == out[pad + d]) {
      s[pad + d] = in[d] == 1 ? 0 : in_strides[d];
    } else if (in[d] != 1) {
      return std::nullopt;
    }
  }
  return s;
}

void Coalesce(std::vector<int64_t>& dims, std::vector<std::vector<int64_t>>& strides) {
  std::vector<int64_t> nd;
  std::vector<std::vector<int64_t>> ns(strides.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;  // contributes nothing to any address
    bool merge = !nd.empty();
    for (size_t j = 0; merge && j < strides.size(); ++j) {
      // The previous kept dim steps exactly over this one for operand j.
      merge = ns[j].back() == strides[j][d] * dims[d];
    }
    if (merge) {
      nd.back() *= dims[d];
      for (size_t j = 0; j < strides.size(); ++j) ns[j].back() = strides[j][d];
    } else {
      nd.push_back(dims[d]);
      for (size_t j = 0; j < strides.size(); ++j) ns[j].push_back(strides[j][d]);
    }
  }
  dims = std::move(nd);
  strides = std::move(ns);
}

bool SetEltShape(EltProgram& p, const std::vector<int64_t>& out_dims,
                 const std::vector<std::vector<int64_t>>& input_dims) {
  if (input_dims.size() > static_cast<size_t>(kMaxEltInputs)) return false;
  std::vector<int64_t> dims = out_dims;
  std::vector<std::vector<int64_t>> strides;
  for (const auto& in : input_dims) {
    auto s = BroadcastStrides(in, out_dims);
    if (!s) return false;
    strides.push_back(*s);
  }
  Coalesce(dims, strides);
  if (dims.size() > static_cast<size_t>(kMaxRank)) return false;
  p.rank = static_cast<int>(dims.size());
  p.n_inputs = static_cast<int>(input_dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    p.dims[d] = dims[d];
    for (size_t j = 0; j < strides.size(); ++j) p.strides[j][d] = strides[j][d];
  }
  p.count = 1;
  for (int64_t d : out_dims) p.count *= d;
  return true;
}

namespace {

std::optional<StridedCopy> Finish(std::vector<int64_t> dims, std::vector<int64_t> in_strides,
                                  std::vector<int64_t> out_strides, int64_t in_offset, int64_t out_offset,
                                  int elem_size) {
  std::vector<std::vector<int64_t>> s = {std::move(in_strides), std::move(out_strides)};
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  Coalesce(dims, s);
  if (dims.size() > static_cast<size_t>(kMaxRank)) return std::nullopt;
  StridedCopy c;
  c.rank = static_cast<int>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    c.dims[d] = dims[d];
    c.in_strides[d] = s[0][d];
    c.out_strides[d] = s[1][d];
  }
  c.in_offset = in_offset;
  c.out_offset = out_offset;
  c.count = count;
  c.elem_size = elem_size;
  return c;
}

}  // namespace

std::optional<StridedCopy> TransposeCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& perm,
                                         int elem_size) {
  if (perm.size() != in_dims.size()) return std::nullopt;
  std::vector<int64_t> in_s = ContiguousStrides(in_dims), dims, strides;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in_dims.size())) return std::nullopt;
    dims.push_back(in_dims[p]);
    strides.push_back(in_s[p]);
  }
  return Finish(dims, strides, ContiguousStrides(dims), 0, 0, elem_size);
}

std::optional<StridedCopy> SliceCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& starts,
                                     const std::vector<int64_t>& steps, const std::vector<int64_t>& out_dims,
                                     int elem_size) {
  if (starts.size() != in_dims.size() || steps.size() != in_dims.size() || out_dims.size() != in_dims.size()) {
    return std::nullopt;
  }
  std::vector<int64_t> in_s = ContiguousStrides(in_dims), strides(in_dims.size());
  int64_t offset = 0;
  for (size_t d = 0; d < in_dims.size(); ++d) {
    if (out_dims[d] > 0) offset += starts[d] * in_s[d];
    strides[d] = steps[d] * in_s[d];
  }
  return Finish(out_dims, strides, ContiguousStrides(out_dims), offset, 0, elem_size);
}

std::optional<StridedCopy> ConcatPartCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                                          int64_t axis, int64_t axis_offset, int elem_size) {
  if (in_dims.size() != out_dims.size() || axis < 0 || axis >= static_cast<int64_t>(out_dims.size())) {
    return std::nullopt;
  }
  std::vector<int64_t> out_s = ContiguousStrides(out_dims);
  return Finish(in_dims, ContiguousStrides(in_dims), out_s, 0, axis_offset * out_s[axis], elem_size);
}

std::optional<StridedCopy> ExpandCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                                      int elem_size) {
  auto s = BroadcastStrides(in_dims, out_dims);
  if (!s) return std::nullopt;
  return Finish(out_dims, *s, ContiguousStrides(out_dims), 0, 0, elem_size);
}

std::optional<ReduceDesc> MakeReduce(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& axes,
                                     ReduceOp op) {
  std::vector<int64_t> strides = ContiguousStrides(in_dims);
  std::vector<int64_t> od, os, rd, rs;
  for (size_t d = 0; d < in_dims.size(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    (reduced ? rd : od).push_back(in_dims[d]);
    (reduced ? rs : os).push_back(strides[d]);
  }
  std::vector<std::vector<int64_t>> o = {os}, r = {rs};
  Coalesce(od, o);
  Coalesce(rd, r);
  if (od.size() > static_cast<size_t>(kMaxRank) || rd.size() > static_cast<size_t>(kMaxRank)) return std::nullopt;
  ReduceDesc d;
  d.op = op;
  d.out_rank = static_cast<int>(od.size());
  d.red_rank = static_cast<int>(rd.size());
  d.out_count = d.red_count = 1;
  for (size_t i = 0; i < od.size(); ++i) {
    d.out_dims[i] = od[i];
    d.out_in_strides[i] = o[0][i];
    d.out_count *= od[i];
  }
  for (size_t i = 0; i < rd.size(); ++i) {
    d.red_dims[i] = rd[i];
    d.red_strides[i] = r[0][i];
    d.red_count *= rd[i];
  }
  for (int64_t x : in_dims) {
    if (x == 0) d.out_count = d.red_count = 0;
  }
  return d;
}

}  // namespace aic::cuda
