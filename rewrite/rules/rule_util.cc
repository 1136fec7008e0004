// Matching helpers; see rule_util.h.
#include "rewrite/rules/rule_util.h"

#include "support/half.h"

namespace aic::rewrite {

std::optional<std::vector<int64_t>> IntValues(const EGraph& g, ClassId c) {
  if (c == kNoClass) return std::nullopt;
  const Tensor* t = g.value(c);
  if (t == nullptr) return std::nullopt;
  std::vector<int64_t> out;
  if (t->dtype() == DType::kInt64) {
    for (int64_t v : t->span<int64_t>()) out.push_back(v);
  } else if (t->dtype() == DType::kInt32) {
    for (int32_t v : t->span<int32_t>()) out.push_back(v);
  } else {
    return std::nullopt;
  }
  return out;
}

bool AllElementsEqual(const EGraph& g, ClassId c, double v) {
  if (c == kNoClass) return false;
  const Tensor* t = g.value(c);
  if (t == nullptr || t->dtype() == DType::kString || t->dtype() == DType::kUndefined) return false;
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    if (t->ElementAsDouble(i) != v) return false;
  }
  return true;
}

const Shape* RankedShape(const EGraph& g, ClassId c) {
  if (c == kNoClass) return nullptr;
  const EClassData& d = g.data(c);
  if (d.types.empty() || !d.types[0].is_tensor() || !d.types[0].shape.has_rank()) return nullptr;
  return &d.types[0].shape;
}

bool SameShape(const Shape& a, const Shape& b) {
  if (!a.has_rank() || !b.has_rank() || a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (!a[i].SameAs(b[i])) return false;
  }
  return true;
}

bool IsFloat(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16 || t == DType::kBFloat16;
}

int Uses(const EGraph& g, ClassId c) { return g.UseCount(c); }

void SetAttribute(std::vector<Attribute>& attrs, Attribute a) {
  for (Attribute& existing : attrs) {
    if (existing.name == a.name) {
      existing = std::move(a);
      return;
    }
  }
  attrs.push_back(std::move(a));
}

ClassId Child(const EGraph& g, const ENode& n, size_t i) {
  if (i >= n.children.size() || n.children[i] == kNoClass) return kNoClass;
  return g.Find(n.children[i]);
}

std::vector<double> ToDoubles(const Tensor& t) {
  // Why the fast paths: weights run to millions of elements, and
  // ElementAsDouble dispatches on the dtype per element.
  if (t.dtype() == DType::kFloat) {
    absl::Span<const float> in = t.span<float>();
    return std::vector<double>(in.begin(), in.end());
  }
  if (t.dtype() == DType::kDouble) {
    absl::Span<const double> in = t.span<double>();
    return std::vector<double>(in.begin(), in.end());
  }
  int64_t n = t.num_elements();
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[i] = t.ElementAsDouble(i);
  return out;
}

Tensor FromDoubles(const std::vector<double>& v, DType dtype, std::vector<int64_t> dims) {
  Tensor t(dtype, std::move(dims));
  switch (dtype) {
    case DType::kFloat: {
      float* p = t.mutable_data<float>();
      for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<float>(v[i]);
      break;
    }
    case DType::kDouble: {
      double* p = t.mutable_data<double>();
      for (size_t i = 0; i < v.size(); ++i) p[i] = v[i];
      break;
    }
    case DType::kFloat16: {  // through float: a rule's weights, rounded once more
      auto* p = static_cast<uint16_t*>(t.mutable_raw_data());
      for (size_t i = 0; i < v.size(); ++i) p[i] = FloatToHalf(static_cast<float>(v[i]));
      break;
    }
    case DType::kBFloat16: {
      auto* p = static_cast<uint16_t*>(t.mutable_raw_data());
      for (size_t i = 0; i < v.size(); ++i) p[i] = FloatToBFloat16(static_cast<float>(v[i]));
      break;
    }
    default:
      AIC_CHECK(false, "FromDoubles: rules only build floating-point tensors");
  }
  return t;
}

Tensor Int64Tensor(const std::vector<int64_t>& v, std::vector<int64_t> dims) {
  return Tensor::FromVector<int64_t>(v, std::move(dims));
}

std::vector<double> PerChannelValues(const Tensor& c, int64_t rank, int64_t channels) {
  if (c.num_elements() == 1) return std::vector<double>(channels, c.ElementAsDouble(0));
  if (c.num_elements() != channels || c.rank() > rank) return {};
  int64_t axis = 1 - (rank - c.rank());  // c's axis that lines up with axis 1
  if (axis < 0) return {};
  for (int64_t i = 0; i < c.rank(); ++i) {
    if (i != axis && c.dim(i) != 1) return {};
  }
  return ToDoubles(c);
}

void FoldAffine(std::vector<double>& scale, std::vector<double>& bias, const std::vector<double>& k, bool is_mul) {
  for (size_t i = 0; i < scale.size(); ++i) {
    const double ki = k[k.size() == 1 ? 0 : i];
    if (is_mul) {
      scale[i] *= ki;
      bias[i] *= ki;
    } else {
      bias[i] += ki;
    }
  }
}

ClassId AddUnsqueeze(EGraph& g, ClassId x, const std::vector<int64_t>& axes) {
  if (g.opset() < 13) return g.AddOp("Unsqueeze", "", {x}, {Attribute::Ints("axes", axes)});
  return g.AddOp("Unsqueeze", "", {x, g.AddConst(Int64Tensor(axes, {static_cast<int64_t>(axes.size())}))});
}

const Tensor* ChildValue(const EGraph& g, const ENode& n, size_t i) {
  return i < n.children.size() && n.children[i] != kNoClass ? g.value(Child(g, n, i)) : nullptr;
}

ClipBounds ClipBoundsOf(const EGraph& g, const ENode& clip) {
  return DecodeClipBounds(*clip.op, g.opset(), [&](size_t i) { return ChildValue(g, clip, i); });
}

std::optional<std::vector<std::pair<int64_t, int64_t>>> PadsOfENode(const EGraph& g, const ENode& pad) {
  const Shape* xs = pad.children.empty() ? nullptr : RankedShape(g, Child(g, pad, 0));
  auto pads = PadsOf(*pad.op, g.opset(), xs != nullptr ? xs->rank() : -1,
                     [&](size_t i) -> std::optional<std::vector<int64_t>> {
                       return i < pad.children.size() && pad.children[i] != kNoClass ? IntValues(g, Child(g, pad, i))
                                                                                       : std::nullopt;
                     });
  if (!pads.ok() || !pads->has_value()) return std::nullopt;
  return **pads;
}

std::optional<ChannelAffine> BatchNormAffineOf(const EGraph& g, const ENode& bn, int64_t channels) {
  if (bn.children.size() < 5) return std::nullopt;
  return BatchNormAsAffine(*bn.op, g.value(Child(g, bn, 1)), g.value(Child(g, bn, 2)), g.value(Child(g, bn, 3)),
                           g.value(Child(g, bn, 4)), channels);
}

ClassId AddNewerStandardOp(RuleContext& ctx, const std::string& op_type, const std::vector<ClassId>& children,
                           std::vector<Attribute> attributes) {
  std::optional<int> version = AicAliasVersion(op_type);
  AIC_CHECK(version.has_value(), "AddNewerStandardOp: not an aliased standard op");
  bool standard = ctx.g.opset() >= *version;
  return ctx.g.AddOp(op_type, standard ? "" : kAicDomain, children, std::move(attributes));
}

}  // namespace aic::rewrite
