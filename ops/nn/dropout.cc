// Dropout. In inference (the only mode before opset 12 here, and
// training_mode false or ratio 0 after) it is the identity with an all-true
// mask, which is what every optimizer removes. In training mode it zeroes
// each element with probability `ratio` and scales the rest by 1/(1-ratio);
// with a `seed` attribute the mask is drawn exactly as numpy's legacy
// generator does (np.random.seed(seed); uniform(0, 1) >= ratio), so seeded
// runs are reproducible and match the ONNX suite; without one it is random.
#include <random>

#include "absl/strings/str_cat.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/dropout.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

// Ratio and mode: attributes before opset 12, optional inputs from 12.
struct DropoutMode {
  bool training = false;
  double ratio = 0.5;
};

DropoutMode ReadMode(const Node& node, int64_t opset, const Tensor* ratio, const Tensor* training) {
  DropoutMode m;
  if (opset < 12) {
    m.ratio = node.GetFloat("ratio", 0.5f);
    return m;  // before 12 there is no training switch an inference engine honours
  }
  if (ratio != nullptr && ratio->num_elements() == 1) m.ratio = ratio->ElementAsDouble(0);
  if (training != nullptr && training->num_elements() == 1) {
    m.training = training->ElementAsDouble(0) != 0.0;
  }
  return m;
}

DType MaskDType(int64_t opset, DType data) { return opset >= 10 ? DType::kBool : data; }

// numpy's legacy random_sample: 53 random bits from two MT19937 draws.
double NumpyUniform(std::mt19937& gen) {
  uint32_t a = gen() >> 5, b = gen() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

absl::Status DropoutKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor* ratio = ctx.has_input(1) ? &ctx.input(1) : nullptr;
  const Tensor* training = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  DropoutMode m = ReadMode(ctx.node(), ctx.opset(), ratio, training);
  DType mask_dtype = MaskDType(ctx.opset(), x.dtype());
  if (!m.training || m.ratio == 0.0) {
    ctx.set_output(0, x);
    if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
      std::vector<double> ones(static_cast<size_t>(x.num_elements()), 1.0);
      ctx.set_output(1, DoublesToTensor(ones, x.dims(), mask_dtype));
    }
    return absl::OkStatus();
  }
  if (!IsRealDType(x.dtype())) return ctx.Unimplemented("dtype ", DTypeName(x.dtype()));
  if (m.ratio < 0.0 || m.ratio > 1.0) return ctx.Error("ratio ", m.ratio, " outside [0, 1]");
  const Attribute* seed = ctx.node().FindAttr("seed");
  std::mt19937 gen(seed != nullptr ? static_cast<uint32_t>(seed->i) : std::random_device{}());
  std::vector<double> v = TensorToDoubles(x), mask(v.size());
  // Scale in float, as the float32 reference does, so results match bit for bit.
  float scale = static_cast<float>(1.0 / (1.0 - m.ratio));
  for (size_t i = 0; i < v.size(); ++i) {
    mask[i] = NumpyUniform(gen) >= m.ratio ? 1.0 : 0.0;
    v[i] = mask[i] != 0.0 ? static_cast<double>(static_cast<float>(v[i]) * scale) : 0.0;
  }
  ctx.set_output(0, DoublesToTensor(v, x.dims(), x.dtype()));
  if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
    ctx.set_output(1, DoublesToTensor(mask, x.dims(), mask_dtype));
  }
  return absl::OkStatus();
}

absl::Status InferDropout(OpContext& ctx) {
  const Shape& r = ctx.input_shape(1);
  if (ctx.has_input(1) && r.has_rank() && r.rank() != 0) {
    return ctx.Error("ratio must be a scalar, got ", r.ToString());
  }
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  if (ctx.num_outputs() > 1) {
    ctx.set_output(1, MaskDType(ctx.opset(), ctx.input_dtype(0)), ctx.input_shape(0));
  }
  return absl::OkStatus();
}

Traits DropoutTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = "Dropout";
  t.meaning = "y = x in inference; y = mask·x/(1 - ratio) in training";
  t.linearity = Linearity::kLinear;
  t.collapse = CollapseKind::kDropsPaths;
  t.collapse_how = "random units zeroed in training";
  t.effect = RepresentationEffect::kPreserves;
  t.elementwise = true;
  t.removable_when = "inference mode (training_mode false) or ratio 0";
  // Training mode is known only when its input is a constant.
  // (Left unknown in inference: the identity is invertible, but the op's
  // nature, reported through its collapse kind, is to drop paths.)
  bool training_known = ctx.opset() < 12 || !ctx.has_input(2) || ctx.input_constant(2) != nullptr;
  if (training_known) {
    DropoutMode m = ReadMode(ctx.node(), ctx.opset(), ctx.input_constant(1), ctx.input_constant(2));
    if (m.training && m.ratio > 0) t.invertibility = Invertibility::kIrreversible;
  }
  return t;
}

}  // namespace

void RegisterDropoutOp(OpRegistry& r) {
  // Not marked nondeterministic: in inference (what graphs are optimized for)
  // it is the identity; a training-mode Dropout without a seed is random,
  // and folding only happens when its data input is itself constant.
  r.Register(OpDef{.domain = "",
                   .op_type = "Dropout",
                   .since_version = 1,
                   .infer = InferDropout,
                   .traits = DropoutTraits,
                   .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 0); },
                   .kernel = DropoutKernel});
}

}  // namespace aic
