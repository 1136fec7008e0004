#include "ops/tensor/tensor_util.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "ops/util/cost_util.h"

namespace aic {

std::vector<int64_t> TensorToInt64s(const Tensor& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    switch (t.dtype()) {
      case DType::kInt64: out[i] = t.data<int64_t>()[i]; break;
      case DType::kInt32: out[i] = t.data<int32_t>()[i]; break;
      default: out[i] = static_cast<int64_t>(t.ElementAsDouble(i)); break;
    }
  }
  return out;
}

std::optional<std::vector<int64_t>> ConstantInts(const OpContext& ctx, size_t i) {
  const Tensor* t = ctx.input_constant(i);
  if (t == nullptr || t->dtype() == DType::kString) return std::nullopt;
  return TensorToInt64s(*t);
}

bool IsCopyableDType(DType t) {
  return t == DType::kString || (t != DType::kUndefined && !IsSubByte(t) && ElementSize(t) > 0);
}

void CopyElement(const Tensor& src, int64_t si, Tensor& dst, int64_t di) {
  if (src.dtype() == DType::kString) {
    dst.mutable_strings()[static_cast<size_t>(di)] = src.strings()[static_cast<size_t>(si)];
    return;
  }
  size_t es = ElementSize(src.dtype());
  std::memcpy(static_cast<uint8_t*>(dst.mutable_raw_data()) + di * es,
              static_cast<const uint8_t*>(src.raw_data()) + si * es, es);
}

void CopyElements(const Tensor& src, int64_t si, Tensor& dst, int64_t di, int64_t n) {
  if (n <= 0) return;
  if (src.dtype() == DType::kString) {
    for (int64_t k = 0; k < n; ++k) CopyElement(src, si + k, dst, di + k);
    return;
  }
  size_t es = ElementSize(src.dtype());
  std::memcpy(static_cast<uint8_t*>(dst.mutable_raw_data()) + di * es,
              static_cast<const uint8_t*>(src.raw_data()) + si * es, es * n);
}

absl::Status CheckCopyable(const KernelContext& ctx, DType t) {
  if (!IsCopyableDType(t)) return ctx.Unimplemented("dtype ", DTypeName(t), " not supported");
  return absl::OkStatus();
}

std::function<Dim()> FreshFn(const OpContext& ctx) {
  return [&ctx] { return ctx.FreshDim(); };
}

int64_t OffsetOf(const std::vector<int64_t>& idx, const std::vector<int64_t>& strides) {
  int64_t o = 0;
  for (size_t k = 0; k < idx.size(); ++k) o += idx[k] * strides[k];
  return o;
}

OpDef MakeOp(std::string op_type, int since_version, InferFn infer, TraitsFn traits, CostFn cost,
             KernelFn kernel) {
  OpDef d;
  d.op_type = std::move(op_type);
  d.since_version = since_version;
  d.infer = std::move(infer);
  d.traits = std::move(traits);
  d.cost = cost ? std::move(cost) : CostFn(MovementCost);
  d.kernel = std::move(kernel);
  return d;
}

Cost MovementCost(const OpContext& ctx) { return BytesOnlyCost(ctx); }

bool NextIndex(std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  for (size_t k = idx.size(); k-- > 0;) {
    if (++idx[k] < dims[k]) return true;
    idx[k] = 0;
  }
  return false;
}

Tensor Remap(const Tensor& src, const std::vector<int64_t>& dims,
             const std::function<int64_t(const std::vector<int64_t>&)>& source) {
  Tensor out(src.dtype(), dims);
  if (out.num_elements() == 0) return out;
  std::vector<int64_t> idx(dims.size(), 0);
  int64_t o = 0;
  do {
    int64_t s = source(idx);
    if (s >= 0) CopyElement(src, s, out, o);
    ++o;
  } while (NextIndex(idx, dims));
  return out;
}

std::pair<int64_t, int64_t> ShapeRange(const Node& node, int64_t opset, int64_t rank) {
  if (opset < 15) return {0, rank};
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clamp(node.GetInt("start", 0));
  int64_t end = node.HasAttr("end") ? clamp(node.GetInt("end", rank)) : rank;
  return {start, std::max(start, end)};
}

std::optional<std::vector<Dim>> ShapeValueOf(const OpContext& ctx, size_t i) {
  const Value* v = ctx.node().input(i);
  if (v == nullptr || v->producer() == nullptr) return std::nullopt;
  const Node& p = *v->producer();
  if (p.op_type != "Shape" || !p.domain.empty() || p.input(0) == nullptr) return std::nullopt;
  const Shape& s = p.input(0)->shape();
  if (!p.input(0)->type().is_tensor() || !s.has_rank()) return std::nullopt;
  auto [start, end] = ShapeRange(p, ctx.opset(), s.rank());
  return std::vector<Dim>(s.dims().begin() + start, s.dims().begin() + end);
}

Dim DimProduct(const std::vector<Dim>& dims, const std::function<Dim()>& fresh) {
  int64_t known = 1;
  const Dim* symbol = nullptr;
  int symbols = 0;
  for (const Dim& d : dims) {
    if (d.is_value()) {
      known *= d.value();
    } else {
      ++symbols;
      symbol = &d;
    }
  }
  if (known == 0) return Dim(0);
  if (symbols == 0) return Dim(known);
  if (symbols == 1 && known == 1 && symbol->is_symbol()) return *symbol;
  return fresh();
}

Dim DimAdd(const Dim& a, const Dim& b, const std::function<Dim()>& fresh) {
  if (a.is_value() && b.is_value()) return Dim(a.value() + b.value());
  if (a.is_value() && a.value() == 0 && b.is_symbol()) return b;
  if (b.is_value() && b.value() == 0 && a.is_symbol()) return a;
  return fresh();
}

absl::StatusOr<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes,
                                                   int64_t rank) {
  std::vector<int64_t> out;
  std::set<int64_t> seen;
  for (int64_t a : axes) {
    int64_t n = a < 0 ? a + rank : a;
    if (n < 0 || n >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("axis ", a, " out of range for rank ", rank));
    }
    if (!seen.insert(n).second) {
      return absl::InvalidArgumentError(absl::StrCat("axis ", a, " repeated"));
    }
    out.push_back(n);
  }
  return out;
}

std::string ShapeChange(const OpContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  const TypeInfo& out = ctx.output_type(0);
  if (!in.is_tensor() || !out.is_tensor()) return "";
  return absl::StrCat(in.shape.ToString(), " → ", out.shape.ToString());
}

Traits ReindexTraits(const OpContext& ctx, std::string semantic, std::string meaning) {
  Traits t;
  t.semantic_name = std::move(semantic);
  t.meaning = std::move(meaning);
  t.linearity = Linearity::kLinear;
  t.invertibility = Invertibility::kInvertible;
  t.collapse = CollapseKind::kNone;
  t.effect = RepresentationEffect::kPreserves;
  t.effect_detail = ShapeChange(ctx);
  return t;
}

Traits SelectTraits(const OpContext& ctx, std::string semantic, std::string meaning, bool keeps_all,
                    std::string how) {
  Traits t = ReindexTraits(ctx, std::move(semantic), std::move(meaning));
  if (!keeps_all) {
    t.invertibility = Invertibility::kIrreversible;
    t.collapse = CollapseKind::kSelects;
    t.collapse_how = std::move(how);
    t.effect = RepresentationEffect::kRestricts;
  }
  return t;
}

}  // namespace aic
