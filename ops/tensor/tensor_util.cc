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

namespace {

constexpr int kMaxShapeValueDepth = 16;
constexpr int64_t kMaxShapeValueElements = 64;

std::optional<std::vector<Dim>> IntElementsAsDims(const Value* v, const Tensor* known, int64_t opset, int depth);

std::optional<std::vector<Dim>> DimsOfConstant(const Tensor& t) {
  if ((t.dtype() != DType::kInt64 && t.dtype() != DType::kInt32) || t.rank() > 1 ||
      t.num_elements() > kMaxShapeValueElements) {
    return std::nullopt;
  }
  std::vector<int64_t> v = TensorToInt64s(t);
  return std::vector<Dim>(v.begin(), v.end());
}

std::optional<std::vector<Dim>> InputDims(const Node& n, size_t i, int64_t opset, int depth) {
  return IntElementsAsDims(n.input(i), nullptr, opset, depth + 1);
}

// Known values of an input as plain integers (indices, slice bounds).
std::optional<std::vector<int64_t>> InputInts(const Node& n, size_t i, int64_t opset, int depth) {
  std::optional<std::vector<Dim>> d = InputDims(n, i, opset, depth);
  if (!d) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim& x : *d) {
    if (!x.is_value()) return std::nullopt;
    out.push_back(x.value());
  }
  return out;
}

// a op b on one element each (a dim from a shape and a constant, mostly):
// known when both are; x·1, x+0, x-0 and x/1 keep x's symbol; else unknown.
Dim ElementwiseDim(const std::string& op, const Dim& a, const Dim& b) {
  if (a.is_value() && b.is_value()) {
    int64_t x = a.value(), y = b.value();
    if (op == "Add") return Dim(x + y);
    if (op == "Sub") return Dim(x - y);
    if (op == "Mul") return Dim(x * y);
    // Integer Div truncates; only non-negative operands are certain here.
    if (op == "Div" && y > 0 && x >= 0) return Dim(x / y);
    return Dim();
  }
  if (b.is_value() && ((op == "Mul" || op == "Div") ? b.value() == 1 : b.value() == 0)) return a;
  if (op == "Mul" && a.is_value() && a.value() == 1) return b;
  if (op == "Add" && a.is_value() && a.value() == 0) return b;
  return Dim();
}

// The elements of a small 0-D/1-D integer value as dims: known values, the
// symbols of the shapes they were read from, or unknown; followed through
// Shape, Gather, Slice, Concat, Unsqueeze/Squeeze/Reshape/Identity, Cast,
// elementwise arithmetic with constants and Where(Equal(..)) over them.
// `known`: v's value when the caller has it (a folded constant).
std::optional<std::vector<Dim>> IntElementsAsDims(const Value* v, const Tensor* known, int64_t opset, int depth) {
  if (v == nullptr || depth > kMaxShapeValueDepth) return std::nullopt;
  if (known != nullptr) return DimsOfConstant(*known);
  if (const Tensor* init = v->initializer()) return DimsOfConstant(*init);
  const Node* p = v->producer();
  if (p == nullptr || !p->domain.empty()) return std::nullopt;
  // Only 0-D and 1-D values: a flat list of elements says nothing of a matrix.
  const Shape& vs = v->shape();
  if (!v->type().is_tensor() || !vs.has_rank() || vs.rank() > 1) return std::nullopt;
  const std::string& op = p->op_type;
  if (op == "Constant") {
    absl::StatusOr<Tensor> t = ConstantNodeValue(*p);
    return t.ok() ? DimsOfConstant(*t) : std::nullopt;
  }
  if (op == "Shape") {
    const Shape& s = p->input(0) != nullptr ? p->input(0)->shape() : Shape::UnknownRank();
    if (p->input(0) == nullptr || !p->input(0)->type().is_tensor() || !s.has_rank()) return std::nullopt;
    auto [start, end] = ShapeRange(*p, opset, s.rank());
    return std::vector<Dim>(s.dims().begin() + start, s.dims().begin() + end);
  }
  if (op == "Identity" || op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten") {
    return InputDims(*p, 0, opset, depth);
  }
  if (op == "Cast") {
    auto to = static_cast<DType>(p->GetInt("to", 0));
    if (to != DType::kInt64 && to != DType::kInt32) return std::nullopt;
    const Value* in = p->input(0);
    if (in == nullptr || (in->dtype() != DType::kInt64 && in->dtype() != DType::kInt32)) return std::nullopt;
    return InputDims(*p, 0, opset, depth);
  }
  if (op == "Concat") {
    std::vector<Dim> out;
    for (size_t i = 0; i < p->num_inputs(); ++i) {
      std::optional<std::vector<Dim>> part = InputDims(*p, i, opset, depth);
      if (!part) return std::nullopt;
      out.insert(out.end(), part->begin(), part->end());
    }
    return out;
  }
  if (op == "Gather") {
    std::optional<std::vector<Dim>> data = InputDims(*p, 0, opset, depth);
    std::optional<std::vector<int64_t>> idx = InputInts(*p, 1, opset, depth);
    if (!data || !idx) return std::nullopt;
    std::vector<Dim> out;
    auto n = static_cast<int64_t>(data->size());
    for (int64_t i : *idx) {
      if (i < -n || i >= n) return std::nullopt;
      out.push_back((*data)[static_cast<size_t>(i < 0 ? i + n : i)]);
    }
    return out;
  }
  if (op == "Slice" && opset >= 10) {
    std::optional<std::vector<Dim>> data = InputDims(*p, 0, opset, depth);
    std::optional<std::vector<int64_t>> starts = InputInts(*p, 1, opset, depth);
    std::optional<std::vector<int64_t>> ends = InputInts(*p, 2, opset, depth);
    if (!data || !starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
    int64_t step = 1;
    if (p->has_input(3)) {
      std::optional<std::vector<int64_t>> axes = InputInts(*p, 3, opset, depth);
      if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
    }
    if (p->has_input(4)) {
      std::optional<std::vector<int64_t>> steps = InputInts(*p, 4, opset, depth);
      if (!steps || steps->size() != 1 || (*steps)[0] <= 0) return std::nullopt;
      step = (*steps)[0];
    }
    auto n = static_cast<int64_t>(data->size());
    auto clamp = [n](int64_t x) { return std::clamp<int64_t>(x < 0 ? x + n : x, 0, n); };
    std::vector<Dim> out;
    for (int64_t k = clamp((*starts)[0]); k < clamp((*ends)[0]); k += step) out.push_back((*data)[static_cast<size_t>(k)]);
    return out;
  }
  if (op == "Where") {
    // Where(Equal(s, c), a, b) elementwise, as torch writes Expand targets
    // (Where(shape == -1, 1, shape)): decided where both sides are known, or
    // where a dim (a symbol: always >= 0) meets a negative constant.
    const Node* eq = p->input(0) != nullptr ? p->input(0)->producer() : nullptr;
    if (eq == nullptr || eq->op_type != "Equal" || !eq->domain.empty()) return std::nullopt;
    std::optional<std::vector<Dim>> l = InputDims(*eq, 0, opset, depth + 1);
    std::optional<std::vector<Dim>> r = InputDims(*eq, 1, opset, depth + 1);
    std::optional<std::vector<Dim>> a = InputDims(*p, 1, opset, depth);
    std::optional<std::vector<Dim>> b = InputDims(*p, 2, opset, depth);
    if (!l || !r || !a || !b) return std::nullopt;
    size_t count = std::max({l->size(), r->size(), a->size(), b->size()});
    auto at = [count](const std::vector<Dim>& v, size_t k) -> const Dim* {
      if (v.size() == 1) return &v[0];
      return v.size() == count ? &v[k] : nullptr;
    };
    std::vector<Dim> out;
    for (size_t k = 0; k < count; ++k) {
      const Dim *x = at(*l, k), *y = at(*r, k), *pa = at(*a, k), *pb = at(*b, k);
      if (!x || !y || !pa || !pb) return std::nullopt;
      std::optional<bool> equal;
      if (x->is_value() && y->is_value()) equal = x->value() == y->value();
      if ((x->is_symbol() && y->is_value() && y->value() < 0) || (y->is_symbol() && x->is_value() && x->value() < 0)) {
        equal = false;
      }
      out.push_back(!equal ? Dim() : (*equal ? *pa : *pb));
    }
    return out;
  }
  if (op == "ConstantOfShape") {
    // torch's legacy exporter spells the `1` and `-1` of its Expand targets
    // as ConstantOfShape(Shape(target)) (times -1): a fill of known length.
    std::optional<std::vector<Dim>> len = InputDims(*p, 0, opset, depth);
    const Attribute* fill = p->FindAttr("value");
    if (!len || len->size() != 1 || !(*len)[0].is_value() || (*len)[0].value() > kMaxShapeValueElements) {
      return std::nullopt;
    }
    int64_t value = 0;
    if (fill != nullptr) {
      if (fill->t.num_elements() != 1 || (fill->t.dtype() != DType::kInt64 && fill->t.dtype() != DType::kInt32)) {
        return std::nullopt;
      }
      value = static_cast<int64_t>(fill->t.ElementAsDouble(0));
    }
    return std::vector<Dim>(static_cast<size_t>((*len)[0].value()), Dim(value));
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    std::optional<std::vector<Dim>> a = InputDims(*p, 0, opset, depth);
    std::optional<std::vector<Dim>> b = InputDims(*p, 1, opset, depth);
    if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1)) return std::nullopt;
    size_t count = std::max(a->size(), b->size());
    std::vector<Dim> out;
    for (size_t k = 0; k < count; ++k) {
      out.push_back(ElementwiseDim(op, (*a)[a->size() == 1 ? 0 : k], (*b)[b->size() == 1 ? 0 : k]));
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Tensor> ConstantNodeValue(const Node& node) {
  if (node.HasAttr("sparse_value")) return absl::UnimplementedError("sparse_value not supported");
  if (const Attribute* a = node.FindAttr("value")) return a->t;
  if (const Attribute* a = node.FindAttr("value_float")) return Tensor::Scalar<float>(a->f);
  if (const Attribute* a = node.FindAttr("value_floats")) {
    return Tensor::FromVector<float>(a->floats, {static_cast<int64_t>(a->floats.size())});
  }
  if (const Attribute* a = node.FindAttr("value_int")) return Tensor::Scalar<int64_t>(a->i);
  if (const Attribute* a = node.FindAttr("value_ints")) {
    return Tensor::FromVector<int64_t>(a->ints, {static_cast<int64_t>(a->ints.size())});
  }
  if (const Attribute* a = node.FindAttr("value_string")) return Tensor::FromStrings({a->s}, {});
  if (const Attribute* a = node.FindAttr("value_strings")) {
    return Tensor::FromStrings(a->strings, {static_cast<int64_t>(a->strings.size())});
  }
  return absl::InvalidArgumentError("no value attribute");
}

std::optional<std::vector<Dim>> ShapeValueOf(const OpContext& ctx, size_t i) {
  const Value* v = ctx.node().input(i);
  if (v == nullptr || v->producer() == nullptr) return std::nullopt;
  std::optional<std::vector<Dim>> dims = IntElementsAsDims(v, nullptr, ctx.opset(), 0);
  // Only a value that depends on some shape: a constant one is the caller's
  // ConstantInts, and an all-unknown one says nothing.
  if (!dims || std::all_of(dims->begin(), dims->end(), [](const Dim& d) { return d.is_unknown(); })) {
    return std::nullopt;
  }
  return dims;
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
