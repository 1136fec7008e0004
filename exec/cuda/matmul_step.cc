// GEMMs through cuBLASLt. Our tensors are row-major and cuBLASLt is
// column-major, so out = A·B is computed as outᵀ = Bᵀ·Aᵀ: a row-major matrix
// read column-major is its own transpose, so B goes in as cuBLASLt's "A", A as
// its "B", and the per-column bias of `out` is cuBLASLt's per-row bias.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cmath>

#include "exec/cuda/cuda_status.h"
#include "exec/cuda/steps.h"

namespace aic::cuda {

struct MatMulStep::Lt {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~Lt() {
    if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
    if (b != nullptr) cublasLtMatrixLayoutDestroy(b);
    if (c != nullptr) cublasLtMatrixLayoutDestroy(c);
    if (op != nullptr) cublasLtMatmulDescDestroy(op);
  }
};

MatMulStep::MatMulStep(const MatMulDesc& d, int a, int b, int bias, int c, int out)
    : d_(d), a_(a), b_(b), bias_(bias), c_(c), out_(out) {
  reads = {a, b};
  if (bias >= 0) reads.push_back(bias);
  if (c >= 0) reads.push_back(c);
  writes = {out};
  kind = "gemm";
}

MatMulStep::~MatMulStep() = default;

namespace {

cublasLtEpilogue_t ToLt(Epilogue e) {
  switch (e) {
    case Epilogue::kBias:
      return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::kRelu:
      return CUBLASLT_EPILOGUE_RELU;
    case Epilogue::kReluBias:
      return CUBLASLT_EPILOGUE_RELU_BIAS;
    case Epilogue::kGelu:
      return CUBLASLT_EPILOGUE_GELU;
    case Epilogue::kGeluBias:
      return CUBLASLT_EPILOGUE_GELU_BIAS;
    case Epilogue::kDefault:
      break;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

absl::Status Layout(cublasLtMatrixLayout_t* l, int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride) {
  AIC_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(l, CUDA_R_32F, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld));
  if (batch > 1) {
    int32_t count = static_cast<int32_t>(batch);
    AIC_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    AIC_CUBLAS_CHECK(
        cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return absl::OkStatus();
}

constexpr size_t kLtWorkspaceBytes = size_t{32} << 20;

}  // namespace

absl::Status MatMulStep::Prepare(const Plan& plan, DeviceContext& ctx) {
  lt_ = std::make_unique<Lt>();
  cublasComputeType_t compute = ctx.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  AIC_CUBLAS_CHECK(cublasLtMatmulDescCreate(&lt_->op, compute, CUDA_R_32F));
  // cuBLASLt's A is our B: op N when B is stored K×N (column-major N×K), T when stored N×K.
  cublasOperation_t op_a = d_.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t op_b = d_.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  AIC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(lt_->op, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  AIC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(lt_->op, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  cublasLtEpilogue_t epi = ToLt(d_.epilogue);
  AIC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(lt_->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  if (bias_ >= 0) {
    const void* bias = plan.Ptr(bias_, ctx.mem);
    AIC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(lt_->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  }
  // Stored shapes, column-major view: B is (trans_b ? K×N : N×K) with ld ldb, A likewise.
  AIC_RETURN_IF_ERROR(
      Layout(&lt_->a, d_.trans_b ? d_.k : d_.n, d_.trans_b ? d_.n : d_.k, d_.ldb, d_.batch, d_.stride_b));
  AIC_RETURN_IF_ERROR(
      Layout(&lt_->b, d_.trans_a ? d_.m : d_.k, d_.trans_a ? d_.k : d_.m, d_.lda, d_.batch, d_.stride_a));
  AIC_RETURN_IF_ERROR(Layout(&lt_->c, d_.n, d_.m, d_.n, d_.batch, d_.m * d_.n));

  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  auto query = [&]() -> cublasStatus_t {
    cublasLtMatmulPreference_t pref = nullptr;
    cublasStatus_t st = cublasLtMatmulPreferenceCreate(&pref);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    size_t limit = kLtWorkspaceBytes;
    st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof(limit));
    if (st == CUBLAS_STATUS_SUCCESS) {
      st = cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(ctx.cublaslt), lt_->op, lt_->a, lt_->b, lt_->c,
                                          lt_->c, pref, 1, &result, &found);
    }
    cublasLtMatmulPreferenceDestroy(pref);
    return st;
  };
  cublasStatus_t st = query();
  if ((st != CUBLAS_STATUS_SUCCESS || found == 0) && d_.epilogue != Epilogue::kDefault) {
    // No kernel fuses this epilogue for this shape: a plain GEMM, then the epilogue as a program.
    epi = CUBLASLT_EPILOGUE_DEFAULT;
    AIC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(lt_->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
    split_epilogue_ = true;
    st = query();
  }
  AIC_CUBLAS_CHECK(st);
  if (found == 0) return absl::UnimplementedError("cuBLASLt has no algorithm for " + label);
  lt_->algo = result.algo;
  workspace_ = result.workspaceSize;
  return absl::OkStatus();
}

EltProgram EpilogueAsProgram(const MatMulDesc& d, bool has_bias) {
  EltProgram p;
  p.rank = 2;
  p.dims[0] = d.batch * d.m;
  p.dims[1] = d.n;
  p.count = p.dims[0] * p.dims[1];
  p.n_inputs = has_bias ? 2 : 1;
  p.strides[0][0] = d.n;
  p.strides[0][1] = 1;
  p.strides[1][1] = has_bias ? 1 : 0;  // the bias: one row for every output row
  if (has_bias) p.instr[p.n_instr++] = EltInstr{EltOp::kAdd, 1, false, 0, 0};
  switch (d.epilogue) {
    case Epilogue::kRelu:
    case Epilogue::kReluBias:
      p.instr[p.n_instr++] = EltInstr{EltOp::kRelu, -1, false, 0, 0};
      break;
    case Epilogue::kGelu:
    case Epilogue::kGeluBias:
      p.instr[p.n_instr++] = EltInstr{EltOp::kGeluTanh, -1, false, 0, 0};
      break;
    default:
      break;
  }
  return p;
}

absl::Status MatMulStep::Launch(const Plan& plan, DeviceContext& ctx) {
  float beta = c_ >= 0 ? d_.beta : 0.0f;
  void* out = plan.Ptr(out_, ctx.mem);
  const void* c = c_ >= 0 ? plan.Ptr(c_, ctx.mem) : out;
  AIC_CUBLAS_CHECK(cublasLtMatmul(static_cast<cublasLtHandle_t>(ctx.cublaslt), lt_->op, &d_.alpha,
                                  plan.Ptr(b_, ctx.mem), lt_->a, plan.Ptr(a_, ctx.mem), lt_->b, &beta, c, lt_->c, out,
                                  lt_->c, &lt_->algo, ctx.workspace, ctx.workspace_bytes, ctx.stream));
  if (split_epilogue_) {
    EltProgram p = EpilogueAsProgram(d_, bias_ >= 0);
    const float* ins[2] = {static_cast<const float*>(out),
                           bias_ >= 0 ? plan.Ptr<const float>(bias_, ctx.mem) : nullptr};
    AIC_CUDA_CHECK(LaunchEltwise(p, ins, static_cast<float*>(out), ctx.stream));
  }
  return absl::OkStatus();
}

absl::Status MatMulStep::Emulate(const Plan& plan, const Memory& mem) {
  EmulateMatMul(d_, plan.Ptr<const float>(a_, mem), plan.Ptr<const float>(b_, mem),
                bias_ >= 0 ? plan.Ptr<const float>(bias_, mem) : nullptr,
                c_ >= 0 ? plan.Ptr<const float>(c_, mem) : nullptr, plan.Ptr<float>(out_, mem));
  return absl::OkStatus();
}

void EmulateMatMul(const MatMulDesc& d, const float* a, const float* b, const float* bias, const float* c, float* out) {
  for (int64_t bt = 0; bt < d.batch; ++bt) {
    const float* ab = a + bt * d.stride_a;
    const float* bb = b + bt * d.stride_b;
    for (int64_t i = 0; i < d.m; ++i) {
      for (int64_t j = 0; j < d.n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < d.k; ++p) {
          float av = d.trans_a ? ab[p * d.lda + i] : ab[i * d.lda + p];
          float bv = d.trans_b ? bb[j * d.ldb + p] : bb[p * d.ldb + j];
          acc += static_cast<double>(av) * bv;
        }
        int64_t o = (bt * d.m + i) * d.n + j;
        float v = d.alpha * static_cast<float>(acc);
        if (c != nullptr) v += d.beta * c[o];
        if (bias != nullptr) v += bias[j];
        switch (d.epilogue) {
          case Epilogue::kRelu:
          case Epilogue::kReluBias:
            v = v > 0 ? v : 0;
            break;
          case Epilogue::kGelu:
          case Epilogue::kGeluBias:
            v = 0.5f * v * (1.0f + std::tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
            break;
          default:
            break;
        }
        out[o] = v;
      }
    }
  }
}

}  // namespace aic::cuda
