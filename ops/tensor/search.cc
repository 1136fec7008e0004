// Search ops: the ones that find positions by comparing values (TopK,
// ArgMax, ArgMin, NonZero, Unique). Their output sizes often depend on the
// data (NonZero, Unique), which inference reports as fresh symbolic dims.
// Comparisons run in the input's own C++ type (float16/bfloat16 widened to
// float), so int64 values compare exactly.
#include <algorithm>
#include <map>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_family.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/broadcast.h"
#include "ops/util/dispatch.h"
#include "ops/util/float_convert.h"

namespace aic {

namespace {

// Calls f(tag) with the comparable C++ type of t (after WidenToFloat), bool included.
template <typename F>
absl::Status DispatchCompare(const KernelContext& ctx, const Tensor& t, F&& f) {
  absl::Status s = DispatchNumericOrBool(t.dtype(), std::forward<F>(f));
  if (!s.ok()) return ctx.Unimplemented(s.message());
  return absl::OkStatus();
}

// outer × axis × inner decomposition of a shape around an axis.
struct Lanes {
  int64_t outer = 1, dim = 1, inner = 1;
};
Lanes LanesOf(const std::vector<int64_t>& dims, int64_t axis) {
  Lanes l;
  for (int64_t k = 0; k < axis; ++k) l.outer *= dims[k];
  l.dim = dims[axis];
  for (size_t k = axis + 1; k < dims.size(); ++k) l.inner *= dims[k];
  return l;
}

Traits SearchTraits(const OpContext& ctx, std::string semantic, std::string meaning, CollapseKind kind,
                    std::string how) {
  Traits t;
  t.semantic_name = std::move(semantic);
  t.meaning = std::move(meaning);
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = kind;
  t.collapse_how = std::move(how);
  t.effect = RepresentationEffect::kRestricts;
  t.effect_detail = ShapeChange(ctx);
  return t;
}

// ---- TopK ----

absl::Status InferTopK(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  DType dt = ctx.input_dtype(0);
  if (!in.has_rank()) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    ctx.set_output(1, DType::kInt64, Shape::UnknownRank());
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", -1), in.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<Dim> dims = in.dims();
  std::optional<int64_t> k;
  if (ctx.opset() < 10) {
    k = ctx.node().GetInt("k", -1);
  } else if (auto c = ConstantInts(ctx, 1); c && c->size() == 1) {
    k = (*c)[0];
  }
  if (k) {
    if (*k < 0 || (in[*axis].is_value() && *k > in[*axis].value())) {
      return ctx.Error("k = ", *k, " out of range for axis of ", in[*axis].ToString());
    }
    dims[*axis] = Dim(*k);
  } else {
    dims[*axis] = ctx.FreshDim();
  }
  ctx.set_output(0, dt, Shape(dims));
  ctx.set_output(1, DType::kInt64, Shape(dims));
  return absl::OkStatus();
}

absl::Status TopKKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", -1), x.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  if (ctx.opset() >= 10 && ctx.input(1).num_elements() != 1) return ctx.Error("k must hold one value");
  int64_t k = ctx.opset() < 10 ? ctx.node().GetInt("k", -1) : TensorToInt64s(ctx.input(1))[0];
  bool largest = ctx.node().GetInt("largest", 1) != 0;
  Lanes l = LanesOf(x.dims(), *axis);
  if (k < 0 || k > l.dim) return ctx.Error("k = ", k, " out of range for axis of ", l.dim);
  std::vector<int64_t> dims = x.dims();
  dims[*axis] = k;
  Tensor values(x.dtype(), dims);
  Tensor indices(DType::kInt64, dims);
  Tensor w = WidenToFloat(x);
  AIC_RETURN_IF_ERROR(DispatchCompare(ctx, w, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = w.data<T>();
    std::vector<int64_t> order(static_cast<size_t>(l.dim));
    std::vector<T> lane(static_cast<size_t>(l.dim));
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t i = 0; i < l.inner; ++i) {
        auto at = [&](int64_t j) { return (o * l.dim + j) * l.inner + i; };
        bool unordered = false;  // a NaN: no total order, the stable sort decides
        for (int64_t j = 0; j < l.dim; ++j) {
          lane[static_cast<size_t>(j)] = data[at(j)];
          unordered = unordered || lane[static_cast<size_t>(j)] != lane[static_cast<size_t>(j)];
        }
        std::iota(order.begin(), order.end(), 0);
        // Ties keep the lower index first, as the spec asks: a stable sort,
        // or (without NaN) the k best by (value, index), which is the same
        // and costs n log k instead of n log n (an SSD head's TopK keeps a
        // few hundred of thousands).
        auto better = [&](int64_t a, int64_t b) {
          const T va = lane[static_cast<size_t>(a)], vb = lane[static_cast<size_t>(b)];
          return largest ? va > vb : va < vb;
        };
        if (unordered) {
          std::stable_sort(order.begin(), order.end(), better);
        } else {
          std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
            return better(a, b) || (!better(b, a) && a < b);
          });
        }
        for (int64_t j = 0; j < k; ++j) {
          int64_t dst = (o * k + j) * l.inner + i;
          CopyElement(x, at(order[j]), values, dst);
          indices.mutable_data<int64_t>()[dst] = order[j];
        }
      }
    }
  }));
  ctx.set_output(0, std::move(values));
  ctx.set_output(1, std::move(indices));
  return absl::OkStatus();
}

// ---- ArgMax, ArgMin ----

absl::Status InferArg(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  if (!in.has_rank()) {
    ctx.set_output(0, DType::kInt64, Shape::UnknownRank());
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), in.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<Dim> dims = in.dims();
  if (ctx.node().GetInt("keepdims", 1) != 0) {
    dims[*axis] = Dim(1);
  } else {
    dims.erase(dims.begin() + *axis);
  }
  ctx.set_output(0, DType::kInt64, Shape(dims));
  return absl::OkStatus();
}

KernelFn ArgKernel(bool is_max) {
  return [is_max](KernelContext& ctx) -> absl::Status {
    const Tensor& x = ctx.input(0);
    absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), x.rank());
    if (!axis.ok()) return ctx.Error(axis.status().message());
    bool last = ctx.opset() >= 12 && ctx.node().GetInt("select_last_index", 0) != 0;
    Lanes l = LanesOf(x.dims(), *axis);
    if (l.dim == 0) return ctx.Error("arg-reduction over an empty axis");
    std::vector<int64_t> dims = x.dims();
    dims[*axis] = 1;
    if (ctx.node().GetInt("keepdims", 1) == 0) dims.erase(dims.begin() + *axis);
    Tensor out(DType::kInt64, dims);
    Tensor w = WidenToFloat(x);
    AIC_RETURN_IF_ERROR(DispatchCompare(ctx, w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* data = w.data<T>();
      for (int64_t o = 0; o < l.outer; ++o) {
        for (int64_t i = 0; i < l.inner; ++i) {
          int64_t best = 0;
          for (int64_t j = 1; j < l.dim; ++j) {
            T v = data[(o * l.dim + j) * l.inner + i], b = data[(o * l.dim + best) * l.inner + i];
            bool better = is_max ? (v > b || (last && v == b)) : (v < b || (last && v == b));
            if (better) best = j;
          }
          out.mutable_data<int64_t>()[o * l.inner + i] = best;
        }
      }
    }));
    ctx.set_output(0, std::move(out));
    return absl::OkStatus();
  };
}

// ---- NonZero ----

absl::Status InferNonZero(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  ctx.set_output(0, DType::kInt64,
                 Shape({in.has_rank() ? Dim(in.rank()) : ctx.FreshDim(), ctx.FreshDim()}));
  return absl::OkStatus();
}

// The coordinates of every nonzero element of x, in row-major order, into
// out [rank, n]: one pass counts, a second walks the coordinates as an
// odometer (no division per element: a division per coordinate made a
// 200K-element bool mask take 4 ms).
template <typename IsHit>
Tensor NonZeroCoordinates(const std::vector<int64_t>& dims, int64_t count, IsHit is_hit) {
  int64_t n = 0;
  for (int64_t i = 0; i < count; ++i) n += is_hit(i) ? 1 : 0;
  const auto rank = static_cast<int64_t>(dims.size());
  Tensor out(DType::kInt64, {rank, n});
  int64_t* o = out.mutable_data<int64_t>();
  std::vector<int64_t> at(dims.size(), 0);
  int64_t j = 0;
  for (int64_t i = 0; i < count && j < n; ++i) {
    if (is_hit(i)) {
      for (int64_t k = 0; k < rank; ++k) o[k * n + j] = at[static_cast<size_t>(k)];
      ++j;
    }
    for (int64_t k = rank - 1; k >= 0; --k) {  // the next element's coordinates
      if (++at[static_cast<size_t>(k)] < dims[static_cast<size_t>(k)]) break;
      at[static_cast<size_t>(k)] = 0;
    }
  }
  return out;
}

absl::Status NonZeroKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor w = WidenToFloat(x);
  if (w.dtype() == DType::kString) {
    ctx.set_output(0, NonZeroCoordinates(x.dims(), w.num_elements(), [&](int64_t i) { return !w.strings()[i].empty(); }));
    return absl::OkStatus();
  }
  return DispatchCompare(ctx, w, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = w.data<T>();
    ctx.set_output(0, NonZeroCoordinates(x.dims(), w.num_elements(), [data](int64_t i) { return data[i] != T(0); }));
  });
}

// ---- Unique ----

absl::Status InferUnique(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  DType dt = ctx.input_dtype(0);
  Dim uniques = ctx.FreshDim();
  if (!ctx.node().HasAttr("axis")) {
    ctx.set_output(0, dt, Shape({uniques}));
    auto n = in.NumElements();
    ctx.set_output(2, DType::kInt64, Shape({n ? Dim(*n) : ctx.FreshDim()}));
  } else if (in.has_rank()) {
    absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), in.rank());
    if (!axis.ok()) return ctx.Error(axis.status().message());
    std::vector<Dim> dims = in.dims();
    dims[*axis] = uniques;
    ctx.set_output(0, dt, Shape(dims));
    ctx.set_output(2, DType::kInt64, Shape({in[*axis]}));
  } else {
    ctx.set_output(0, dt, Shape::UnknownRank());
    ctx.set_output(2, DType::kInt64, Shape({ctx.FreshDim()}));
  }
  ctx.set_output(1, DType::kInt64, Shape({uniques}));
  ctx.set_output(3, DType::kInt64, Shape({uniques}));
  return absl::OkStatus();
}

absl::Status UniqueKernel(KernelContext& ctx) {
  Tensor x = ctx.input(0);
  int64_t axis = 0;
  if (ctx.node().HasAttr("axis")) {
    absl::StatusOr<int64_t> a = NormalizeAxis(ctx.node().GetInt("axis", 0), x.rank());
    if (!a.ok()) return ctx.Error(a.status().message());
    axis = *a;
  } else {
    x = x.WithDims({x.num_elements()});
  }
  bool sorted = ctx.node().GetInt("sorted", 1) != 0;
  Lanes l = LanesOf(x.dims(), axis);
  Tensor w = WidenToFloat(x);
  // Slice s of the axis (all outer × inner elements), compared lexicographically.
  std::vector<int64_t> first;   // first occurrence of each unique slice, in output order
  std::vector<int64_t> inverse(static_cast<size_t>(l.dim));
  std::vector<int64_t> counts;
  AIC_RETURN_IF_ERROR(DispatchCompare(ctx, w, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = w.data<T>();
    auto slice = [&](int64_t s) {
      std::vector<T> v;
      for (int64_t o = 0; o < l.outer; ++o) {
        for (int64_t i = 0; i < l.inner; ++i) v.push_back(data[(o * l.dim + s) * l.inner + i]);
      }
      return v;
    };
    std::map<std::vector<T>, int64_t> seen;  // slice → first index
    std::vector<int64_t> slice_first(static_cast<size_t>(l.dim));
    for (int64_t s = 0; s < l.dim; ++s) {
      auto [it, inserted] = seen.emplace(slice(s), s);
      slice_first[s] = it->second;
      if (inserted) first.push_back(s);
    }
    if (sorted) {
      first.clear();
      for (const auto& [v, s] : seen) first.push_back(s);
    }
    std::map<int64_t, int64_t> position;  // first index → output position
    for (size_t p = 0; p < first.size(); ++p) position[first[p]] = static_cast<int64_t>(p);
    counts.assign(first.size(), 0);
    for (int64_t s = 0; s < l.dim; ++s) {
      inverse[s] = position[slice_first[s]];
      ++counts[inverse[s]];
    }
  }));
  int64_t u = static_cast<int64_t>(first.size());
  std::vector<int64_t> dims = x.dims();
  dims[axis] = u;
  Tensor y(x.dtype(), dims);
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t p = 0; p < u; ++p) {
      CopyElements(x, (o * l.dim + first[p]) * l.inner, y, (o * u + p) * l.inner, l.inner);
    }
  }
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, Tensor::FromVector<int64_t>(first, {u}));
  ctx.set_output(2, Tensor::FromVector<int64_t>(inverse, {l.dim}));
  ctx.set_output(3, Tensor::FromVector<int64_t>(counts, {u}));
  return absl::OkStatus();
}

}  // namespace

void RegisterSearchOps(OpRegistry& r) {
  r.Register(MakeOp(
      "TopK", 1, InferTopK,
      [](const OpContext& ctx) {
        return SearchTraits(ctx, "TopK", "y = the k largest (or smallest) x along axis",
                            CollapseKind::kSelects, "all but the k extreme values are discarded");
      },
      nullptr, TopKKernel));
  r.Register(MakeOp(
      "ArgMax", 1, InferArg,
      [](const OpContext& ctx) {
        return SearchTraits(ctx, "ArgMax", "y = argmax(x, axis)", CollapseKind::kReduces,
                            "an axis summarised by the position of its maximum");
      },
      nullptr, ArgKernel(true)));
  r.Register(MakeOp(
      "ArgMin", 1, InferArg,
      [](const OpContext& ctx) {
        return SearchTraits(ctx, "ArgMin", "y = argmin(x, axis)", CollapseKind::kReduces,
                            "an axis summarised by the position of its minimum");
      },
      nullptr, ArgKernel(false)));
  r.Register(MakeOp(
      "NonZero", 9, InferNonZero,
      [](const OpContext& ctx) {
        return SearchTraits(ctx, "NonZero", "y = indices where x ≠ 0", CollapseKind::kQuantizes,
                            "values reduced to zero / nonzero");
      },
      nullptr, NonZeroKernel));
  r.Register(MakeOp(
      "Unique", 11, InferUnique,
      [](const OpContext& ctx) {
        return SearchTraits(ctx, "Unique", "y = unique(x), with indices, inverse and counts",
                            CollapseKind::kSelects, "repeated values are merged");
      },
      nullptr, UniqueKernel));
}

}  // namespace aic
