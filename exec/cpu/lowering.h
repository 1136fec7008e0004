// The lowering pass of Compile(): on the frame every backend shares
// (exec/common/lowering_frame.h: value facts, topological walk, folding,
// fallback kernel lookup, the lowering table), emits per node either oneDNN
// steps (with the node's single-consumer successors folded in as post-ops),
// our own kernels, a zero-copy view, or a reference-kernel fallback. Values
// get slots as they are produced; a consumer that needs another layout gets a
// reorder, made once per (value, layout) and shared.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "exec/common/lowering_frame.h"
#include "exec/cpu/internal.h"

namespace aic::cpu {

using ValueState = exec::ValueFacts;

// One oneDNN post-op standing for (part of) one or more graph nodes.
struct PostOp {
  bool binary = false;
  dnnl::algorithm alg = dnnl::algorithm::undef;
  float alpha = 0, beta = 0;   // eltwise
  int src1_slot = -1;          // binary
  memory::desc src1_md;
  std::vector<const Node*> nodes;  // graph nodes this post-op completes
  const Value* out = nullptr;      // value computed after it; null mid-node
  std::string name;
  // A residual add (binary, src1 an activation of the destination's layout)
  // run as oneDNN's sum post-op: the destination starts as src1's values
  // (Step::accumulate) and the primitive adds into it.
  bool sum = false;
};

struct Elt {
  dnnl::algorithm alg;
  float alpha = 0, beta = 0;
  const char* name;
};

// Whether a SiLU (`e`: eltwise_swish, alpha 1) over `dims` runs as our own
// AVX-512 step rather than as oneDNN's eltwise or a producer's post-op
// (post_ops.cc says why): it then ends a post-op chain, and runs natively
// even where its own successors could have been fused into it.
bool TranscendentalRunsNatively(const Elt& e, const std::vector<int64_t>& dims);

class Lowerer : public exec::LoweringFrame {
 public:
  Lowerer(Plan& plan, const CpuOptions& options)
      : LoweringFrame(*plan.model, plan.constants), plan_(plan), options_(options) {}
  absl::Status LowerAll();

  // --- used by the op lowerings (ops_*.cc) ---
  Plan& plan() { return plan_; }
  const CpuOptions& options() const { return options_; }
  // f32 with static dims, known (not folded away).
  bool IsF32(const Value* v);
  // Whether a conv/matmul may read `v` as bfloat16: the model declares it
  // bfloat16 (a widened value, holding bf16 values in f32 between steps:
  // rounding it is the model's own rounding) and bf16_kernels is on.
  bool ReadsAsBf16(const Value* v) const;

  int NewArenaSlot(const Value* v, const memory::desc& md, bool plain);
  int ConstSlot(const Tensor& t, const memory::desc& md);
  // A one-element s32 constant (an int8 primitive's runtime zero point);
  // its desc is ScalarS32Md().
  int ScalarS32Slot(int32_t v);
  static memory::desc ScalarS32Md() { return memory::desc({1}, memory::data_type::s32, memory::format_tag::a); }
  // Packs constant `t` (whose bytes have layout `from`) into layout `to`.
  int PackedConstSlot(const Tensor& t, const memory::desc& from, const memory::desc& to);
  // Frees the model's plain copy of a weight just packed, where that is
  // safe (see lowering.cc); reading it later unpacks `packed` again.
  void ReleasePlainCopy(const Tensor& t, const memory::desc& from, const memory::desc& to, const Tensor& packed);
  // The same for a weight our own kernel packed: `restore` writes its plain
  // bytes back (exactly) if anything reads it later.
  void ReleaseWeight(const Tensor& t, std::function<void(uint8_t* dst)> restore);
  // Where `widened` (just released) is a half weight widened to float, its
  // half original gives its bytes up too; `restore` writes the float ones.
  void ReleaseHalfOriginal(const Tensor& widened, const std::function<void(uint8_t* dst)>& restore);
  int PlainSlot(const Value* v);
  int SlotIn(const Value* v, const memory::desc& md);
  // Whether this model's convolutions write channels blocked by 16 (see
  // ops_conv.cc ConvsPreferBlocked16); decided at the first conv.
  std::optional<bool> convs_prefer_blocked16;
  // The producer's layout if it is blocked, else format_tag::any (or plain
  // when blocked layouts are off): lets oneDNN keep or pick blocked layouts.
  memory::desc SrcMdOrAny(const Value* v);
  DnnlStep* AddDnnlStep(dnnl::primitive p, const char* kind, const Node& n);
  // Lowers n now, ahead of its place in the order (its inputs must be
  // ready), and marks it done: a fusion that needs a value some later node
  // computes cheaply (a half cache's widening Cast) has it lowered first.
  absl::Status LowerEarly(const Node& n) {
    AIC_RETURN_IF_ERROR(LowerNode(n));
    MarkDone(&n);
    return absl::OkStatus();
  }
  // n was computed as part of another step (folded into weights, say).
  void MarkFused(const Node* n) {
    MarkDone(n);
    ++plan_.stats.fused_nodes;
  }

  // Successors of `v` that can run as post-ops of v's producer.
  std::vector<PostOp> CollectPostOps(const Value* v);
  // Tries make(attr) with the longest acceptable prefix of `chain`; returns
  // the primitive desc and the prefix length. Throws when even none works.
  template <typename Make>
  auto WithPostOps(const std::vector<PostOp>& chain, Make make) -> std::pair<decltype(make(dnnl::primitive_attr())), size_t>;
  // Marks the first k post-ops' nodes as done, binds their args on `step`,
  // gives the final value a slot of layout `dst_md`; returns that slot.
  // `arg_md`, when given, is how the primitive sees the destination's bytes.
  int FinishPostOps(DnnlStep* step, const Value* v, const std::vector<PostOp>& chain, size_t k,
                    const memory::desc& dst_md, bool dst_plain, const memory::desc* arg_md = nullptr);
  static dnnl::primitive_attr MakeAttr(const std::vector<PostOp>& chain, size_t k);

  // The eltwise ops computing node n from its activation input x, if any.
  std::vector<Elt> UnaryAsEltwise(const Node& n, const Value* x);
  // Inference BatchNormalization with constant params as y = x*scale + shift per channel.
  bool FoldBatchNorm(const Node& bn, Tensor* scale, Tensor* shift);

 private:
  absl::Status BindInput(const Value* in) override;
  absl::Status LowerNode(const Node& n) override;
  absl::Status BindOutput(const Value* out) override;
  void Folded(const Value* v, Tensor& t) override;
  absl::Status Fallback(const Node& n);

  Plan& plan_;
  const CpuOptions& options_;
  // Reordered copies of a value, by layout (made once, shared by consumers).
  absl::flat_hash_map<const Value*, std::vector<std::pair<memory::desc, int>>> layouts_;
};

template <typename Make>
auto Lowerer::WithPostOps(const std::vector<PostOp>& chain, Make make)
    -> std::pair<decltype(make(dnnl::primitive_attr())), size_t> {
  // First pass: only optimized implementations (a post-op that drags a
  // primitive onto oneDNN's reference path costs far more than a separate
  // step); second pass: whatever oneDNN has.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t k = chain.size() + 1; k-- > 0;) {
      if (k > 0 && chain[k - 1].out == nullptr) continue;  // would stop mid-node
      try {
        auto pd = make(MakeAttr(chain, k));
        // (Pooling's kind: a binary post-op whose operand is in another
        // layout drags it onto its scalar simple_nchw loop.)
        const char* kind = pd.get_kind() == dnnl::primitive::kind::pooling ? "pool" : "";
        if (pass == 0 && IsSlowImplementation(kind, pd.impl_info_str())) continue;
        if (pass == 0 && BinaryPostOpsRunApart(chain, k, pd.impl_info_str())) continue;
        if (!PostOpsReadRight(chain, k, pd.dst_desc())) continue;
        return {pd, k};
      } catch (const dnnl::error&) {
        if (k == 0 && pass == 1) throw;
      }
    }
  }
  throw dnnl::error(dnnl_unimplemented, "no post-op prefix");
}

// What `make()` builds (a (primitive_desc, post-op count) pair, as
// WithPostOps returns) when oneDNN has it with an optimized implementation;
// nullopt when it is slow (IsSlowImplementation) or not implemented. For a
// form worth trying first (a view, bf16 operands), with another to fall back on.
template <typename Make>
auto IfFast(const char* kind, Make make) -> std::optional<decltype(make())> {
  try {
    auto built = make();
    if (!IsSlowImplementation(kind, built.first.impl_info_str())) return built;
  } catch (const dnnl::error&) {
  }
  return std::nullopt;
}

// `c` dims padded on the left to out's rank, when each is 1 or equals out's.
std::optional<std::vector<int64_t>> BroadcastDims(const std::vector<int64_t>& c,
                                                   const std::vector<int64_t>& out);
// Whether oneDNN 2.6 reads the first k post-ops' binary operands right
// against a destination `dst` (both found by tests/graph_fuzz; the binary
// primitive itself is right, only post-ops are affected):
// - on an [N, C, 1, 1] destination with N > 1, an operand broadcast over some
//   dims but not all (a per-channel [1, C, 1, 1]) is indexed by the batch;
// - an operand that is neither scalar nor per-channel is indexed by the
//   destination's strides, so it must be in the destination's own layout
//   (or both plain): a plain [1, 8, 4, 3] constant subtracted from a
//   channels-last pooling output came out permuted.
// WithPostOps keeps the longest prefix that passes.
bool PostOpsReadRight(const std::vector<PostOp>& chain, size_t k, const memory::desc& dst);
// Whether the first k post-ops hold a binary one and `impl` is a GEMM-based
// oneDNN primitive, which applies binary post-ops one element at a time in a
// pass after the GEMM: a step of their own is faster (post_ops.cc has the
// numbers). WithPostOps then keeps the prefix before the first binary post-op.
bool BinaryPostOpsRunApart(const std::vector<PostOp>& chain, size_t k, const std::string& impl);
memory::desc AnyMd(const std::vector<int64_t>& dims);
// oneDNN's binary algorithm for an ONNX op type (Add, Sub, Mul, Div, Max, Min).
std::optional<dnnl::algorithm> BinaryAlg(const std::string& op);

// The ai.aic ops the lowering table covers (exec/cpu/backend.cc declares them).
std::set<std::string> LoweredAicOps();

// Op lowerings: each returns true when it emitted steps for n, false to let
// the caller fall back to the reference kernel (nothing emitted then).
bool LowerView(Lowerer& L, const Node& n);
bool LowerUnary(Lowerer& L, const Node& n);
bool LowerBinary(Lowerer& L, const Node& n);
bool LowerConv(Lowerer& L, const Node& n);
bool LowerQLinearConv(Lowerer& L, const Node& n);  // int8, ops_conv.cc
bool LowerConvTranspose(Lowerer& L, const Node& n);
bool LowerPool(Lowerer& L, const Node& n);
bool LowerGlobalPoolOrNative(Lowerer& L, const Node& n);  // the native spatial reduction first (ops_native_axis.cc)
bool LowerMatMul(Lowerer& L, const Node& n);
bool LowerGemm(Lowerer& L, const Node& n);
bool LowerFusedLinearReLU(Lowerer& L, const Node& n);  // ai.aic
// A product of at most kernels::GemvMatrix::kMaxRows rows by a constant
// weight (a classifier head, a 1x1 conv at 1x1, a decoder step) on our own
// kernel, with the row bias and activations after it (ops_gemv.cc).
struct FewRowsProduct {
  const Value* a = nullptr;    // m rows of k, dense in its plain layout
  const Value* out = nullptr;  // the node's output: m rows of n
  int64_t m = 0, k = 0, n = 0;
  const Tensor* weights = nullptr;  // k x n, or n x k when `transposed`
  // The value `weights` holds, where it is the graph's (not a copy scaled by
  // a folded BatchNorm): a DequantizeLinear of 8-bit constants stays 8-bit.
  const Value* weights_value = nullptr;
  bool transposed = false;
  float scale = 1.0f;                    // of the weights (Gemm's alpha)
  const Tensor* bias = nullptr;          // n values or one; null: none, or a following Add's row
  float bias_scale = 1.0f;               // Gemm's beta
  bool release_weights = false;          // `weights` is the model's own tensor
  bool relu = false;                     // a ReLU that is part of the node (ai.aic FusedLinearReLU)
};
bool LowerFewRowsProduct(Lowerer& L, const Node& n, const FewRowsProduct& p);
// A leading Add of a constant row ([N], [1, .., 1, N]) taken off `chain`
// (ops_matmul.cc): a product's own bias. nullopt leaves the chain as it was.
std::optional<PostOp> TakeRowBias(Lowerer& L, std::vector<PostOp>& chain, int64_t n);
bool LowerBatchNorm(Lowerer& L, const Node& n);
bool LowerSoftmax(Lowerer& L, const Node& n);
bool LowerConcat(Lowerer& L, const Node& n);
bool LowerReduce(Lowerer& L, const Node& n);
bool LowerTransposeAsView(Lowerer& L, const Node& n);  // f32 read only by MatMuls
bool LowerResize(Lowerer& L, const Node& n);
// Native kernels (ops_native*.cc, exec/cpu/kernels/); the *OrNative ones try
// the oneDNN lowering first.
bool LowerNativeUnary(Lowerer& L, const Node& n);
// Exp, Sigmoid, Tanh, Softplus, Mish, Gelu (tanh form) and HardSigmoid with
// nothing fused after them, on our own kernels where this CPU has them
// (AVX-512F; HardSigmoid anywhere), in the input's layout where that is sound.
bool LowerBareUnaryNative(Lowerer& L, const Node& n);
bool LowerNativeElementwise(Lowerer& L, const Node& n);
bool LowerBinaryOrNative(Lowerer& L, const Node& n);
// Mul by a run-time per-channel [N, C, 1, 1] in the other operand's layout (ops_eltwise.cc).
bool LowerChannelScale(Lowerer& L, const Node& n);
bool LowerUnaryOrNative(Lowerer& L, const Node& n);
bool LowerResizeOrNative(Lowerer& L, const Node& n);
bool LowerGridSample(Lowerer& L, const Node& n);  // ops_native_tensor.cc
bool LowerLayerNorm(Lowerer& L, const Node& n);
bool LowerRmsNorm(Lowerer& L, const Node& n);
bool LowerAttention(Lowerer& L, const Node& n);  // ops_native_attention.cc
bool LowerHalfAttention(Lowerer& L, const Node& cast_in);  // Cast(f16)s -> Attention -> Cast(f16)s: one step
bool LowerSwiGlu(Lowerer& L, const Node& n);
bool LowerRotaryEmbedding(Lowerer& L, const Node& n);  // ops_native_rotary.cc
bool LowerGather(Lowerer& L, const Node& n);
// ops_native_indexing.cc: by an index tensor, any element size.
bool LowerGatherElements(Lowerer& L, const Node& n);
bool LowerGatherND(Lowerer& L, const Node& n);
bool LowerScatterND(Lowerer& L, const Node& n);
bool LowerScatterElements(Lowerer& L, const Node& n);  // ScatterElements, Scatter
bool LowerPad(Lowerer& L, const Node& n);
bool LowerCast(Lowerer& L, const Node& n);
bool LowerExpand(Lowerer& L, const Node& n);
bool LowerConcatOrNative(Lowerer& L, const Node& n);  // oneDNN for blocked inputs
bool LowerSplit(Lowerer& L, const Node& n);
bool LowerSliceOrNative(Lowerer& L, const Node& n);    // strided copies, any dtype and steps
// widen_half's edges around one op: Cast(x16: f16 -> f32) whose output only
// `op` reads, as its first input; op's first output (f32, x16's dims) only a
// Cast back to f16 reads. What a half op between half tensors becomes.
struct HalfEdges {
  const Value* x16 = nullptr;  // ready to read
  const Node* op = nullptr;
  const Node* back = nullptr;
  const Value* y16 = nullptr;
};
std::optional<HalfEdges> HalfEdgesAround(Lowerer& L, const Node& cast_in);
// The Cast to f16 that alone reads `y` (f32, of `dims`, not a graph output), or null.
const Node* HalfCastOf(Lowerer& L, const Value* y, const std::vector<int64_t>& dims);
// The same for op's first output, any other output of op unread.
const Node* CastBackToHalf(Lowerer& L, const Node& op, const std::vector<int64_t>& dims);
bool LowerHalfRowNorm(Lowerer& L, const Node& cast_in);  // Cast(f16) -> Layer/RMSNorm -> Cast(f16): one step
bool LowerHalfBinary(Lowerer& L, const Node& cast_in);  // Cast(f16)s -> Add..Min -> Cast(f16): one step
bool LowerHalfUnary(Lowerer& L, const Node& cast_in);   // Cast(f16) -> Relu, Tanh.. -> Cast(f16) (ops_eltwise.cc)
bool LowerHalfRotary(Lowerer& L, const Node& cast_in);  // Cast(f16) -> RotaryEmbedding -> Cast(f16): one step
bool LowerTransposeOrNative(Lowerer& L, const Node& n);  // a view for MatMuls, else tiled copies
bool LowerDepthSpace(Lowerer& L, const Node& n);         // DepthToSpace/SpaceToDepth: a 6-D transpose
bool LowerTile(Lowerer& L, const Node& n);
bool LowerNativePredicate(Lowerer& L, const Node& n);  // IsNaN, IsInf
bool LowerNativeNot(Lowerer& L, const Node& n);  // bool Not (ops_native.cc)
bool LowerQuantizeLinear(Lowerer& L, const Node& n);
bool LowerDequantizeLinear(Lowerer& L, const Node& n);
bool LowerQLinearLookup(Lowerer& L, const Node& n);  // ai.aic
bool LowerQLinearBinary(Lowerer& L, const Node& n);  // ai.aic QLinearAdd, QLinearMul
bool LowerDynamicQuantizeLinear(Lowerer& L, const Node& n);  // ops_native_integer.cc
bool LowerMatMulInteger(Lowerer& L, const Node& n);
bool LowerQLinearMatMul(Lowerer& L, const Node& n);  // int8, constant B
// Whether oneDNN's u8·s8 products are exact here (VNNI; ops_native_integer.cc).
bool ExactInt8Products();
// Tests: true lowers int8 products as on a CPU without VNNI (on the pair
// kernels, where the CPU has AVX2), so CI on a VNNI machine covers them too.
void ForceInt8WithoutVnni(bool on);
// The Mul reading `out` through a Cast to float, when both are out's and the
// Cast's only readers, neither is a graph output, and the Mul's other operand
// is a one-element f32 value: then *scale is that operand
// (quantize_dynamic's dequantization of an integer product).
const Node* ScaledCastOf(Lowerer& L, const Value* out, const Value** scale);
// Marks that Cast and Mul (and `add` after them, when given) fused into
// `step`, which writes the last one's output, and names them in its label.
void FuseScaledCast(Lowerer& L, const Value* out, const Node* mul, const Node* add, Step* step);
bool LowerConvInteger(Lowerer& L, const Node& n);  // on the pair kernels (ops_conv.cc)
bool LowerSoftmaxOrNative(Lowerer& L, const Node& n);  // Softmax, LogSoftmax
bool LowerCumSum(Lowerer& L, const Node& n);
bool LowerReduceOrNative(Lowerer& L, const Node& n);   // Reduce{Sum,Mean,Max,Min,SumSquare,L1,L2,LogSumExp}
bool LowerGroupNorm(Lowerer& L, const Node& n);  // InstanceNormalization, GroupNormalization
bool LowerTopK(Lowerer& L, const Node& n);
bool LowerArgExtreme(Lowerer& L, const Node& n);  // ArgMax, ArgMin
bool LowerRecurrence(Lowerer& L, const Node& n);  // LSTM, GRU, RNN (ops_native_rnn.cc)
// ai.onnx.ml (ops_native_ml.cc)
bool LowerTreeEnsemble(Lowerer& L, const Node& n);  // TreeEnsembleClassifier/Regressor, TreeEnsemble
bool LowerScaler(Lowerer& L, const Node& n);
bool LowerNormalizer(Lowerer& L, const Node& n);
bool LowerLinearModel(Lowerer& L, const Node& n);  // LinearClassifier, LinearRegressor
bool LowerSvm(Lowerer& L, const Node& n);          // SVMClassifier, SVMRegressor
bool LowerArrayFeatureExtractor(Lowerer& L, const Node& n);

}  // namespace aic::cpu
