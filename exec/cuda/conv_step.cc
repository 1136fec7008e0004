// Convolution: cuDNN's forward convolution when the build has cuDNN and the
// plan got a handle, else our implicit-GEMM kernel (kernels_conv.cu). The bias,
// folded BatchNorm, residual and activation run after it as one elementwise
// program (lowering), so this step is the bare convolution.
#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "exec/cuda/cuda_status.h"
#include "exec/cuda/kernels_host.h"
#include "exec/cuda/steps.h"
#ifdef AIC_HAVE_CUDNN
#include <cudnn.h>
#endif

namespace aic::cuda {

struct ConvStep::Dnn {
#ifdef AIC_HAVE_CUDNN
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  ~Dnn() {
    if (x != nullptr) cudnnDestroyTensorDescriptor(x);
    if (y != nullptr) cudnnDestroyTensorDescriptor(y);
    if (w != nullptr) cudnnDestroyFilterDescriptor(w);
    if (conv != nullptr) cudnnDestroyConvolutionDescriptor(conv);
  }
#endif
};

ConvStep::ConvStep(const ConvDesc& d, int x, int w, int y) : d_(d), x_(x), w_(w), y_(y) {
  reads = {x, w};
  writes = {y};
  kind = "conv";
}

ConvStep::~ConvStep() = default;

namespace {

constexpr size_t kMaxConvWorkspace = size_t{256} << 20;

}  // namespace

absl::Status ConvStep::Prepare(const Plan& plan, DeviceContext& ctx) {
  absl::Status s = PrepareCudnn(ctx);
  if (!s.ok()) {
    // cuDNN declined this convolution: the implicit-GEMM kernel computes it, and the plan says so.
    dnn_.reset();
    workspace_ = 0;
    absl::StrAppend(&label, " (implicit GEMM: ", s.message(), ")");
  }
  return absl::OkStatus();
}

absl::Status ConvStep::PrepareCudnn(DeviceContext& ctx) {
#ifdef AIC_HAVE_CUDNN
  if (ctx.cudnn == nullptr) return absl::OkStatus();
  auto dnn = std::make_unique<Dnn>();
  auto i32 = [](int64_t v) { return static_cast<int>(v); };
  AIC_CUDNN_CHECK(cudnnCreateTensorDescriptor(&dnn->x));
  AIC_CUDNN_CHECK(cudnnCreateTensorDescriptor(&dnn->y));
  AIC_CUDNN_CHECK(cudnnCreateFilterDescriptor(&dnn->w));
  AIC_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&dnn->conv));
  AIC_CUDNN_CHECK(cudnnSetTensor4dDescriptor(dnn->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i32(d_.n), i32(d_.c),
                                             i32(d_.h), i32(d_.w)));
  AIC_CUDNN_CHECK(cudnnSetTensor4dDescriptor(dnn->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i32(d_.n), i32(d_.k),
                                             i32(d_.oh), i32(d_.ow)));
  AIC_CUDNN_CHECK(cudnnSetFilter4dDescriptor(dnn->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, i32(d_.k),
                                             i32(d_.c / d_.groups), i32(d_.kh), i32(d_.kw)));
  AIC_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(dnn->conv, i32(d_.ph), i32(d_.pw), i32(d_.sh), i32(d_.sw), i32(d_.dh),
                                                  i32(d_.dw), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  AIC_CUDNN_CHECK(cudnnSetConvolutionGroupCount(dnn->conv, i32(d_.groups)));
  // Full fp32 unless TF32 is allowed (cuDNN's default math would use TF32 on sm_80+).
  AIC_CUDNN_CHECK(cudnnSetConvolutionMathType(dnn->conv, ctx.allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
  // Check cuDNN agrees on the output shape the plan inferred.
  int n, k, oh, ow;
  AIC_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(dnn->conv, dnn->x, dnn->w, &n, &k, &oh, &ow));
  if (oh != d_.oh || ow != d_.ow) {
    return absl::InternalError(
        absl::StrCat(label, ": cuDNN output ", oh, "x", ow, ", the plan has ", d_.oh, "x", d_.ow));
  }
  constexpr int kCandidates = 8;
  cudnnConvolutionFwdAlgoPerf_t perf[kCandidates];
  int found = 0;
  AIC_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(static_cast<cudnnHandle_t>(ctx.cudnn), dnn->x, dnn->w,
                                                         dnn->conv, dnn->y, kCandidates, &found, perf));
  bool chosen = false;
  for (int i = 0; i < found && !chosen; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > kMaxConvWorkspace) continue;
    dnn->algo = perf[i].algo;
    workspace_ = perf[i].memory;
    chosen = true;
  }
  if (!chosen) {
    AIC_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(static_cast<cudnnHandle_t>(ctx.cudnn), dnn->x, dnn->w,
                                                            dnn->conv, dnn->y, dnn->algo, &workspace_));
  }
  dnn_ = std::move(dnn);
#endif
  return absl::OkStatus();
}

absl::Status ConvStep::Launch(const Plan& plan, DeviceContext& ctx) {
  const float* x = plan.Ptr<const float>(x_, ctx.mem);
  const float* w = plan.Ptr<const float>(w_, ctx.mem);
  float* y = plan.Ptr<float>(y_, ctx.mem);
#ifdef AIC_HAVE_CUDNN
  if (dnn_ != nullptr) {
    auto handle = static_cast<cudnnHandle_t>(ctx.cudnn);
    AIC_CUDNN_CHECK(cudnnSetStream(handle, ctx.stream));
    float one = 1.0f, zero = 0.0f;
    AIC_CUDNN_CHECK(cudnnConvolutionForward(handle, &one, dnn_->x, x, dnn_->w, w, dnn_->conv, dnn_->algo, ctx.workspace,
                                            ctx.workspace_bytes, &zero, dnn_->y, y));
    return absl::OkStatus();
  }
#endif
  AIC_CUDA_CHECK(LaunchConvImplicitGemm(d_, x, w, y, ctx.stream));
  return absl::OkStatus();
}

absl::Status ConvStep::Emulate(const Plan& plan, const Memory& mem) {
  host::ConvImplicitGemm(d_, plan.Ptr<const float>(x_, mem), plan.Ptr<const float>(w_, mem), plan.Ptr<float>(y_, mem));
  return absl::OkStatus();
}

}  // namespace aic::cuda
