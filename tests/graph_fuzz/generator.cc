#include "tests/graph_fuzz/generator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/attribute.h"
#include "ops/infer_shapes.h"
#include "session/session.h"
#include "support/half.h"

namespace aic::graph_fuzz {

namespace {

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A value recipes may build on, with what is known about its history. Pools
// are deques: a recipe holds an Entry* across the Add() calls that grow them.
struct Entry {
  Value* v = nullptr;
  // Bit for bit the same on every backend and -O level (graph inputs,
  // constants and what only moves, selects or compares them). Only such
  // values feed discontinuous ops (Floor, comparisons, ArgMax, Cast to int):
  // a rounding difference upstream would otherwise flip their results.
  bool exact = false;
  bool loose = false;  // went through float16: compared with a looser tolerance
};

class Generator;
using RecipeFn = bool (Generator::*)();

struct Recipe {
  const char* name;
  double weight;
  RecipeFn fn;
  int min_opset = 1;
};

const std::vector<Recipe>& Recipes();

class Generator {
 public:
  Generator(uint64_t seed, const GenOptions& options) : rng_(SplitMix(seed)), options_(options) {}

  absl::StatusOr<GeneratedModel> Run();

  // ---- recipes: single ops
  bool Unary();
  bool Clip();
  bool CastRoundTrip();
  bool IntegerArithmetic();
  bool PowConst();
  bool BinaryConst();
  bool BinaryValues();
  bool PRelu();
  bool Variadic();
  bool WhereCompare();
  bool Logic();
  bool MatMulConst();
  bool AttentionLike();
  bool Gemm();
  bool Conv();
  bool ConvTranspose();
  bool Pool();
  bool GlobalPool();
  bool BatchNorm();
  bool Softmax();
  bool Reduce();
  bool LayerNorm();
  bool Reshape();
  bool Flatten();
  bool SqueezeUnsqueeze();
  bool Transpose();
  bool Slice();
  bool Concat();
  bool Split();
  bool Gather();
  bool Pad();
  bool Expand();
  bool Tile();
  bool Resize();
  bool TopK();
  bool ArgMax();
  bool GroupNorm();
  bool QuantizeDequantize();
  bool Einsum();
  bool ShapeChain();
  bool RepeatNode();
  bool FoldableConstants();
  bool If();
  bool Loop();
  bool HalfIsland();
  // ---- recipes: the rewriter's patterns (and near misses)
  bool GeluPattern();
  bool GeluTanhPattern();
  bool LayerNormPattern();
  bool RmsNormPattern();
  bool HardSwishPattern();
  bool SwishPattern();
  bool ConvBnPattern();
  bool ConvAffinePattern();
  bool MatMulAddPattern();
  bool GemmBnPattern();
  bool TransposePairPattern();
  bool ReshapePairPattern();
  bool NeutralElementPattern();
  bool NoopPattern();
  bool ReluChainPattern();
  bool PadIntoPattern();
  bool TransposeGemmPattern();
  bool MatMulChainPattern();
  bool PointwiseConvPoolPattern();
  bool ReluGemmPattern();

 private:
  // ---- randomness
  int64_t Int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  double Real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  bool Chance(double p) { return Real(0, 1) < p; }
  template <typename T>
  T OneOf(std::initializer_list<T> xs) {
    auto it = xs.begin();
    std::advance(it, Int(0, static_cast<int64_t>(xs.size()) - 1));
    return *it;
  }

  // ---- building
  std::string Name(const std::string& base) { return absl::StrCat(base, "_", counter_++); }
  Value* Const(Tensor t) {
    Value* v = main_->AddValue(Name("const"), TypeInfo::Tensor(t.dtype(), Shape::FromValues(t.dims())));
    main_->SetInitializer(v, std::move(t));
    return v;
  }
  Value* ConstF(const std::vector<int64_t>& dims, double lo, double hi, DType dtype = DType::kFloat) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> vals(static_cast<size_t>(n));
    for (float& x : vals) x = static_cast<float>(Real(lo, hi));
    return Const(Convert(Tensor::FromVector<float>(vals, dims), dtype));
  }
  // Weights of a layer with `fan_in` inputs: uniform in ±gain/sqrt(fan_in),
  // so activations keep their scale through a chain of layers.
  Value* Weight(const std::vector<int64_t>& dims, int64_t fan_in, double gain = 1.0, DType dtype = DType::kFloat) {
    double s = 1.0 / std::sqrt(static_cast<double>(fan_in));
    return ConstF(dims, -s * gain, s * gain, dtype);
  }
  // Values in ±[0.5, 2]: safe divisors and scales.
  Value* ConstAwayFromZero(const std::vector<int64_t>& dims, DType dtype = DType::kFloat) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> vals(static_cast<size_t>(n));
    for (float& x : vals) x = static_cast<float>(Real(0.5, 2.0) * (Chance(0.5) ? 1 : -1));
    return Const(Convert(Tensor::FromVector<float>(vals, dims), dtype));
  }
  Value* Scalar(float x, DType dtype = DType::kFloat) { return Const(Convert(Tensor::Scalar<float>(x), dtype)); }
  Value* Ints(const std::vector<int64_t>& v) {
    return Const(Tensor::FromVector<int64_t>(v, {static_cast<int64_t>(v.size())}));
  }
  static Tensor Convert(Tensor t, DType dtype) {
    if (dtype == DType::kFloat) return t;
    Tensor out(dtype, t.dims());
    auto src = t.span<float>();
    if (dtype == DType::kFloat16) {
      auto dst = out.mutable_span<uint16_t>();
      for (size_t i = 0; i < src.size(); ++i) dst[i] = FloatToHalf(src[i]);
    } else if (dtype == DType::kDouble) {
      auto dst = out.mutable_span<double>();
      for (size_t i = 0; i < src.size(); ++i) dst[i] = src[i];
    } else {
      AIC_CHECK(false, "Convert: unsupported dtype");
    }
    return out;
  }
  Value* Op(const std::string& op, std::vector<Value*> ins, std::vector<Attribute> attrs = {}) {
    return OpN(op, std::move(ins), 1, std::move(attrs))[0];
  }
  std::vector<Value*> OpN(const std::string& op, std::vector<Value*> ins, size_t n, std::vector<Attribute> attrs = {}) {
    std::vector<Value*> outs;
    for (size_t i = 0; i < n; ++i) outs.push_back(cur_->AddValue(Name(op)));
    Node* node = cur_->AddNode(op, std::move(ins), outs, Name(op + "_node"));
    node->attributes = std::move(attrs);
    return outs;
  }
  void Add(Value* v, bool exact = false, bool loose = false) { pool_->push_back({v, exact, loose}); }
  // Shape inference over the whole model now (recipes that need the type of
  // what they just built); false when it refuses.
  bool InferNow() {
    InferOptions o;
    o.best_effort = false;
    return InferShapes(*model_, o).ok();
  }

  // Runs another recipe for the value a pattern builds on and takes that
  // value out of the pool (the pattern's result goes in instead); nullopt
  // when the recipe does not apply or its result's dims are not known.
  std::optional<Entry> Inner(RecipeFn recipe) {
    size_t before = pool_->size();
    if (!(this->*recipe)()) return std::nullopt;
    Entry e = (*pool_)[before];
    pool_->pop_back();
    if (!InferNow() || !Dims(e.v)) return std::nullopt;
    return e;
  }
  // BatchNormalization's x plus scale, bias, mean and a positive variance over c channels.
  std::vector<Value*> BatchNormInputs(Value* x, int64_t c) {
    return {x, ConstF({c}, 0.5, 1.5), ConstF({c}, -0.5, 0.5), ConstF({c}, -0.5, 0.5), ConstF({c}, 0.5, 2.0)};
  }

  // ---- what is known about a value
  // Concrete dims (symbols replaced by the values the feeds will have); empty
  // optional when the rank or a dim is not known.
  std::optional<std::vector<int64_t>> Dims(const Value* v) const {
    const TypeInfo& t = v->type();
    if (!t.is_tensor() || !t.shape.has_rank()) return std::nullopt;
    std::vector<int64_t> out;
    for (const Dim& d : t.shape.dims()) {
      if (d.is_value()) {
        out.push_back(d.value());
      } else if (d.is_symbol() && symbols_.count(d.symbol())) {
        out.push_back(symbols_.at(d.symbol()));
      } else {
        return std::nullopt;
      }
    }
    return out;
  }
  bool IsSymbolic(const Value* v, size_t i) const { return !v->type().shape.dims()[i].is_value(); }
  bool AnySymbolic(const Value* v) const {
    for (size_t i = 0; i < v->type().shape.dims().size(); ++i) {
      if (IsSymbolic(v, i)) return true;
    }
    return false;
  }
  // The dims of a constant that broadcasts against `v`: a suffix of its
  // dims, some set to 1 (always 1 where `v` is symbolic).
  std::vector<int64_t> BroadcastDims(const Value* v) {
    std::vector<int64_t> d = *Dims(v);
    if (Chance(0.2)) return {};
    size_t keep = static_cast<size_t>(Int(1, static_cast<int64_t>(std::max<size_t>(d.size(), 1))));
    if (d.empty()) return {};
    std::vector<int64_t> out(d.end() - static_cast<std::ptrdiff_t>(std::min(keep, d.size())), d.end());
    size_t offset = d.size() - out.size();
    for (size_t i = 0; i < out.size(); ++i) {
      if (IsSymbolic(v, offset + i) || Chance(0.3)) out[i] = 1;
    }
    return out;
  }

  using Pred = std::function<bool(const Entry&)>;
  Entry* Pick(const Pred& pred) {
    std::vector<Entry*> eligible;
    for (Entry& e : *pool_) {
      if (pred(e)) eligible.push_back(&e);
    }
    if (eligible.empty()) return nullptr;
    return eligible[static_cast<size_t>(Int(0, static_cast<int64_t>(eligible.size()) - 1))];
  }
  // A float32 tensor with known dims of rank in [lo, hi].
  Pred F(int64_t lo = 0, int64_t hi = 6, bool allow_half = false) const {
    return [=, this](const Entry& e) {
      DType dt = e.v->dtype();
      if (dt != DType::kFloat && !(allow_half && dt == DType::kFloat16)) return false;
      auto d = Dims(e.v);
      if (!d) return false;
      int64_t n = 1;
      for (int64_t x : *d) n *= x;
      return static_cast<int64_t>(d->size()) >= lo && static_cast<int64_t>(d->size()) <= hi && n > 0 &&
             n <= 4096;
    };
  }
  Pred ExactF(int64_t lo = 0, int64_t hi = 6) const {
    Pred f = F(lo, hi);
    return [f](const Entry& e) { return e.exact && f(e); };
  }
  // A 4-D float NCHW value with static C, H, W.
  Pred Image() const {
    Pred f = F(4, 4);
    return [f, this](const Entry& e) {
      return f(e) && !IsSymbolic(e.v, 1) && !IsSymbolic(e.v, 2) && !IsSymbolic(e.v, 3);
    };
  }
  // All dims static.
  Pred StaticF(int64_t lo = 0, int64_t hi = 6) const {
    Pred f = F(lo, hi);
    return [f, this](const Entry& e) { return f(e) && !AnySymbolic(e.v); };
  }

  std::vector<int64_t> RandomPerm(size_t n) {
    std::vector<int64_t> p(n);
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), rng_);
    return p;
  }
  // Axes attribute or input, whichever the op takes at this opset.
  void AxesOperand(std::vector<Value*>& ins, std::vector<Attribute>& attrs, const std::vector<int64_t>& axes,
                   int64_t input_since) {
    if (opset_ >= input_since) {
      ins.push_back(Ints(axes));
    } else {
      attrs.push_back(Attribute::Ints("axes", axes));
    }
  }
  // ReduceMean(v) over `axes` (kept), axes as the opset takes them.
  Value* ReduceMeanOver(Value* v, const std::vector<int64_t>& axes) {
    std::vector<Value*> ins = {v};
    std::vector<Attribute> attrs;
    AxesOperand(ins, attrs, axes, 18);
    return Op("ReduceMean", ins, std::move(attrs));
  }
  // The input of a normalization pattern: a float tensor of rank 1..4 whose
  // last dim is known, its dims, and the axis to normalize over: the last,
  // or (a near miss the rules must decline) sometimes the one before it.
  Entry* PickNormInput(std::vector<int64_t>& dims, std::vector<int64_t>& axes) {
    Entry* e = Pick(F(1, 4));
    if (e == nullptr) return nullptr;
    dims = *Dims(e->v);
    int64_t r = static_cast<int64_t>(dims.size());
    if (IsSymbolic(e->v, static_cast<size_t>(r - 1))) return nullptr;
    axes = {Chance(0.85) ? -1 : (r >= 2 ? -2 : -1)};
    return e;
  }
  // A few body nodes over `x` (in the current scope), shape-preserving.
  // `like` has x's type (x may be too new to have one yet).
  Value* SmallChain(Value* x, const Value* like, int n);

  absl::StatusOr<GeneratedModel> Finish();
  bool FeedsAreFinite(const exec::Feeds& feeds);

  std::mt19937_64 rng_;
  GenOptions options_;
  std::unique_ptr<Model> model_;
  Graph* main_ = nullptr;
  Graph* cur_ = nullptr;
  std::deque<Entry> main_pool_;
  std::deque<Entry>* pool_ = nullptr;
  std::map<std::string, int64_t> symbols_;
  int64_t opset_ = 17;
  int counter_ = 0;
  std::vector<std::string> recipes_;
};

// ---------------------------------------------------------------- single ops

bool Generator::Unary() {
  struct U {
    const char* op;
    bool keeps_exact;
    bool needs_exact;
    int guard;  // 0 none, 1 positive input, 2 bounded input
    int since;
  };
  static const std::vector<U> kOps = {
      {"Relu", true, false, 0, 1},       {"Neg", true, false, 0, 1},        {"Abs", true, false, 0, 1},
      {"Sigmoid", false, false, 0, 1},   {"Tanh", false, false, 0, 1},      {"Exp", false, false, 2, 1},
      {"Erf", false, false, 0, 1},       {"Sin", false, false, 0, 1},       {"Cos", false, false, 0, 1},
      {"Softplus", false, false, 0, 1},  {"Softsign", false, false, 0, 1},  {"Elu", false, false, 0, 1},
      {"LeakyRelu", false, false, 0, 1}, {"HardSigmoid", false, false, 0, 1}, {"HardSwish", false, false, 0, 14},
      {"Gelu", false, false, 0, 20},     {"Identity", true, false, 0, 1},   {"Floor", true, true, 0, 1},
      {"Ceil", true, true, 0, 1},        {"Round", true, true, 0, 1},       {"Sign", true, true, 0, 1},
      {"Sqrt", false, false, 1, 1},      {"Log", false, false, 1, 1},       {"Reciprocal", false, false, 1, 1},
      {"Selu", false, false, 0, 1},      {"Celu", false, false, 0, 12},     {"Mish", false, false, 0, 18},
  };
  const U& u = kOps[static_cast<size_t>(Int(0, static_cast<int64_t>(kOps.size()) - 1))];
  if (opset_ < u.since) return false;
  bool half_ok = std::string(u.op) == "Relu" || std::string(u.op) == "Sigmoid" || std::string(u.op) == "Tanh" ||
                 std::string(u.op) == "Abs" || std::string(u.op) == "Neg";
  Entry* e = Pick(u.needs_exact ? ExactF() : F(0, 6, half_ok));
  if (e == nullptr) return false;
  Entry src = *e;
  Value* x = src.v;
  if (u.guard == 1) {  // sqrt, log, 1/x: a positive input away from zero
    x = Op("Add", {Op("Abs", {x}), Scalar(static_cast<float>(Real(0.3, 1.0)))});
  } else if (u.guard == 2) {  // exp: bounded
    x = Op("Clip", {x, Scalar(-4), Scalar(4)});
  }
  std::vector<Attribute> attrs;
  std::string op = u.op;
  if (op == "LeakyRelu" || op == "Elu" || op == "Celu") attrs.push_back(Attribute::Float("alpha", static_cast<float>(Real(0.05, 1.5))));
  if (op == "HardSigmoid" && Chance(0.5)) {
    attrs.push_back(Attribute::Float("alpha", static_cast<float>(Real(0.1, 0.4))));
    attrs.push_back(Attribute::Float("beta", static_cast<float>(Real(0.3, 0.7))));
  }
  if (op == "Gelu" && Chance(0.4)) attrs.push_back(Attribute::String("approximate", "tanh"));
  Add(Op(op, {x}, std::move(attrs)), src.exact && u.keeps_exact && u.guard == 0, src.loose);
  return true;
}

bool Generator::Clip() {
  Entry* e = Pick(F());
  if (e == nullptr) return false;
  float lo = static_cast<float>(Real(-1.5, 0.5));
  float hi = lo + static_cast<float>(Real(0.2, 3));
  std::vector<Value*> ins = {e->v, Scalar(lo)};
  if (Chance(0.8)) ins.push_back(Scalar(hi));
  Add(Op("Clip", ins), e->exact, e->loose);
  return true;
}

bool Generator::CastRoundTrip() {
  Entry* e = Pick(F());
  if (e == nullptr) return false;
  DType via = Chance(0.7) ? DType::kFloat16 : DType::kDouble;
  if (via == DType::kFloat16 && !options_.low_precision) via = DType::kDouble;
  Value* mid = Op("Cast", {e->v}, {Attribute::Int("to", static_cast<int64_t>(via))});
  Add(Op("Cast", {mid}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))}),
      e->exact && via == DType::kDouble, e->loose || via == DType::kFloat16);
  return true;
}

// Floor -> Cast int64 -> integer Add/Mul/Sub/Max/Neg/Abs -> Cast float.
bool Generator::IntegerArithmetic() {
  Entry* e = Pick(ExactF(0, 4));
  if (e == nullptr) return false;
  Value* i = Op("Cast", {Op("Floor", {Op("Mul", {e->v, Scalar(4)})})},
                {Attribute::Int("to", static_cast<int64_t>(DType::kInt64))});
  int steps = static_cast<int>(Int(1, 3));
  for (int s = 0; s < steps; ++s) {
    std::string op = OneOf<const char*>({"Add", "Mul", "Sub", "Max", "Min", "Neg", "Abs"});
    if (op == "Neg" || op == "Abs") {
      i = Op(op, {i});
    } else {
      i = Op(op, {i, Const(Tensor::Scalar<int64_t>(Int(-3, 3)))});
    }
  }
  DType back = Chance(0.3) ? DType::kInt32 : DType::kFloat;
  Value* out = Op("Cast", {i}, {Attribute::Int("to", static_cast<int64_t>(back))});
  if (back == DType::kInt32) out = Op("Cast", {out}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))});
  Add(out, true);
  return true;
}

bool Generator::PowConst() {
  Entry* e = Pick(F());
  if (e == nullptr) return false;
  Value* x = e->v;
  float p = OneOf<float>({2.0f, 3.0f, 0.5f, -1.0f, 1.5f});
  if (p != 2.0f && p != 3.0f) x = Op("Add", {Op("Abs", {x}), Scalar(0.5)});
  if (p == 3.0f) x = Op("Clip", {x, Scalar(-3), Scalar(3)});
  Add(Op("Pow", {x, Scalar(p)}), false, e->loose);
  return true;
}

bool Generator::BinaryConst() {
  Entry* e = Pick(F(0, 6, true));
  if (e == nullptr) return false;
  std::string op = OneOf<const char*>({"Add", "Sub", "Mul", "Div", "Max", "Min"});
  DType dt = e->v->dtype();
  std::vector<int64_t> cd = BroadcastDims(e->v);
  Value* c = op == "Div" || op == "Mul" ? ConstAwayFromZero(cd, dt) : ConstF(cd, -1.5, 1.5, dt);
  bool swap = op != "Div" && Chance(0.3);
  Value* out = swap ? Op(op, {c, e->v}) : Op(op, {e->v, c});
  Add(out, e->exact && (op == "Max" || op == "Min"), e->loose);
  return true;
}

// Two values of the pool, broadcast against each other.
bool Generator::BinaryValues() {
  Entry* a = Pick(F(0, 6, true));
  if (a == nullptr) return false;
  std::vector<int64_t> da = *Dims(a->v);
  DType dt = a->v->dtype();
  Entry* b = Pick([&](const Entry& e) {
    if (e.v == a->v && Chance(0.7)) return false;
    if (e.v->dtype() != dt) return false;
    auto db = Dims(e.v);
    if (!db) return false;
    // numpy broadcasting, aligned at the right
    size_t n = std::max(da.size(), db->size());
    for (size_t i = 0; i < n; ++i) {
      int64_t x = i < da.size() ? da[da.size() - 1 - i] : 1;
      int64_t y = i < db->size() ? (*db)[db->size() - 1 - i] : 1;
      if (x != y && x != 1 && y != 1) return false;
    }
    return true;
  });
  if (b == nullptr) return false;
  std::string op = OneOf<const char*>({"Add", "Sub", "Mul", "Div", "Max", "Min"});
  Value* rhs = b->v;
  if (op == "Div") rhs = Op("Add", {Op("Abs", {rhs}), Scalar(0.5, dt)});
  Add(Op(op, {a->v, rhs}), a->exact && b->exact && (op == "Max" || op == "Min"), a->loose || b->loose);
  return true;
}

bool Generator::PRelu() {
  Entry* e = Pick(F(1, 5));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  std::vector<int64_t> sd;
  if (d.size() >= 3 && !IsSymbolic(e->v, 1) && Chance(0.6)) {
    sd.assign(d.size() - 1, 1);  // per channel: [C, 1, .., 1]
    sd[0] = d[1];
  } else {
    sd = BroadcastDims(e->v);
  }
  Add(Op("PRelu", {e->v, ConstF(sd, 0.01, 0.5)}), false, e->loose);
  return true;
}

bool Generator::Variadic() {
  Entry* e = Pick(F());
  if (e == nullptr) return false;
  std::string op = OneOf<const char*>({"Sum", "Mean", "Max", "Min"});
  std::vector<Value*> ins = {e->v, ConstF(BroadcastDims(e->v), -1, 1)};
  if (Chance(0.5)) ins.push_back(e->v);
  Add(Op(op, ins), false, e->loose);
  return true;
}

bool Generator::WhereCompare() {
  Entry* a = Pick(ExactF());
  if (a == nullptr) return false;
  std::string cmp = OneOf<const char*>({"Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Equal"});
  Value* threshold = cmp == "Equal" ? Op("Floor", {a->v}) : ConstF(BroadcastDims(a->v), -0.5, 0.5);
  Value* cond = Op(cmp, {a->v, threshold});
  Entry* x = Pick(F());
  Value* other = ConstF(BroadcastDims(x->v), -1, 1);
  Value* out = Chance(0.5) ? Op("Where", {cond, x->v, other}) : Op("Where", {cond, other, x->v});
  Add(out, false, x->loose);
  return true;
}

bool Generator::Logic() {
  Entry* a = Pick(ExactF());
  if (a == nullptr) return false;
  Value* p = Op("Greater", {a->v, ConstF(BroadcastDims(a->v), -0.5, 0.5)});
  Value* q = Op("Less", {a->v, ConstF(BroadcastDims(a->v), -0.5, 0.5)});
  std::string op = OneOf<const char*>({"And", "Or", "Xor"});
  Value* r = Op(op, {p, q});
  if (Chance(0.4)) r = Op("Not", {r});
  Add(Op("Cast", {r}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))}), true);
  return true;
}

bool Generator::MatMulConst() {
  Entry* e = Pick(F(1, 4, true));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  if (IsSymbolic(e->v, d.size() - 1)) return false;
  int64_t k = d.back();
  int64_t n = Int(1, 12);
  std::vector<int64_t> wd = {k, n};
  if (d.size() >= 3 && Chance(0.2) && !IsSymbolic(e->v, d.size() - 3)) wd.insert(wd.begin(), d[d.size() - 3]);
  if (d.size() == 1 && Chance(0.3)) wd = {k};  // vector . vector or matrix . vector
  Value* w = Weight(wd, k, 1.7, e->v->dtype());
  Add(Op("MatMul", {e->v, w}), false, e->loose);
  return true;
}

// Q . K^T -> scale -> Softmax -> . V, the shape of attention.
bool Generator::AttentionLike() {
  Entry* e = Pick(F(2, 4));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  if (IsSymbolic(e->v, d.size() - 1)) return false;
  int64_t k = d.back();
  int64_t r = static_cast<int64_t>(d.size());
  std::vector<int64_t> perm(d.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(r - 1)], perm[static_cast<size_t>(r - 2)]);
  Value* q = Op("MatMul", {e->v, Weight({k, k}, k)});
  Value* kt = Op("Transpose", {Op("MatMul", {e->v, Weight({k, k}, k)})}, {Attribute::Ints("perm", perm)});
  Value* scores = Op(Chance(0.5) ? "Mul" : "Div", {Op("MatMul", {q, kt}), Scalar(Chance(0.5) ? 0.5f : 2.0f)});
  Value* p = Op("Softmax", {scores}, {Attribute::Int("axis", -1)});
  Add(Op("MatMul", {p, e->v}), false, e->loose);
  return true;
}

bool Generator::Gemm() {
  Entry* e = Pick(F(2, 2));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  if (IsSymbolic(e->v, 1)) return false;
  int64_t m = d[0], k = d[1], n = Int(1, 10);
  bool trans_b = Chance(0.5);
  Value* b = trans_b ? Weight({n, k}, k) : Weight({k, n}, k);
  std::vector<Value*> ins = {e->v, b};
  if (Chance(0.7)) {
    std::vector<int64_t> cd = OneOf<std::vector<int64_t>>({{n}, {1, n}, {}});
    if (!IsSymbolic(e->v, 0) && Chance(0.2)) cd = {m, n};
    ins.push_back(ConstF(cd, -1, 1));
  }
  std::vector<Attribute> attrs;
  if (trans_b) attrs.push_back(Attribute::Int("transB", 1));
  if (Chance(0.3)) attrs.push_back(Attribute::Float("alpha", static_cast<float>(Real(0.5, 1.5))));
  if (ins.size() == 3 && Chance(0.3)) attrs.push_back(Attribute::Float("beta", static_cast<float>(Real(0.5, 1.5))));
  Add(Op("Gemm", ins, std::move(attrs)), false, e->loose);
  return true;
}

bool Generator::Conv() {
  Entry* e = Pick(Image());
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  int64_t c = d[1], h = d[2], w = d[3];
  int64_t group = 1;
  if (c > 1 && Chance(0.3)) group = Chance(0.5) ? c : (c % 2 == 0 ? 2 : 1);
  int64_t m = group * Int(1, std::max<int64_t>(1, 8 / group));
  int64_t kh = Int(1, std::min<int64_t>(3, h)), kw = Int(1, std::min<int64_t>(3, w));
  int64_t stride = Chance(0.3) ? 2 : 1;
  int64_t dil = (Chance(0.15) && kh <= (h + 1) / 2 && kw <= (w + 1) / 2) ? 2 : 1;
  std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {kh, kw})};
  if (Chance(0.15)) {
    // ONNX Runtime runs no dilated SAME convolution: VALID only with dilations.
    attrs.push_back(Attribute::String("auto_pad", dil > 1 ? "VALID" : OneOf<const char*>({"SAME_UPPER", "SAME_LOWER", "VALID"})));
  } else {
    int64_t ph = Int(0, kh - 1), pw = Int(0, kw - 1);
    attrs.push_back(Attribute::Ints("pads", {ph, pw, Int(0, kh - 1), pw}));
  }
  if (stride > 1) attrs.push_back(Attribute::Ints("strides", {stride, stride}));
  if (dil > 1) attrs.push_back(Attribute::Ints("dilations", {dil, dil}));
  if (group > 1) attrs.push_back(Attribute::Int("group", group));
  std::vector<Value*> ins = {e->v, Weight({m, c / group, kh, kw}, c / group * kh * kw, 1.7)};
  if (Chance(0.6)) ins.push_back(ConstF({m}, -0.5, 0.5));
  Add(Op("Conv", ins, std::move(attrs)), false, e->loose);
  return true;
}

bool Generator::ConvTranspose() {
  Entry* e = Pick(Image());
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  int64_t c = d[1];
  int64_t group = (c > 1 && c % 2 == 0 && Chance(0.2)) ? 2 : 1;
  int64_t m = Int(1, 4) * group;
  int64_t k = Int(1, 3);
  int64_t stride = Int(1, 2);
  int64_t pad = Int(0, k - 1);
  std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {k, k}), Attribute::Ints("strides", {stride, stride}),
                                  Attribute::Ints("pads", {pad, pad, pad, pad})};
  if (stride > 1 && Chance(0.3)) attrs.push_back(Attribute::Ints("output_padding", {1, 0}));
  if (group > 1) attrs.push_back(Attribute::Int("group", group));
  std::vector<Value*> ins = {e->v, Weight({c, m / group, k, k}, c * k * k, 1.7)};
  if (Chance(0.5)) ins.push_back(ConstF({m}, -0.5, 0.5));
  Add(Op("ConvTranspose", ins, std::move(attrs)), false, e->loose);
  return true;
}

bool Generator::Pool() {
  Entry* e = Pick(Image());
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  bool max = Chance(0.5);
  int64_t kh = Int(1, std::min<int64_t>(3, d[2])), kw = Int(1, std::min<int64_t>(3, d[3]));
  std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {kh, kw})};
  int64_t ph = Int(0, kh - 1), pw = Int(0, kw - 1);
  if (ph + pw > 0) attrs.push_back(Attribute::Ints("pads", {ph, pw, ph, pw}));
  if (Chance(0.4)) attrs.push_back(Attribute::Ints("strides", {Int(1, 2), Int(1, 2)}));
  if (Chance(0.2)) attrs.push_back(Attribute::Int("ceil_mode", 1));
  if (!max && Chance(0.4)) attrs.push_back(Attribute::Int("count_include_pad", 1));
  Add(Op(max ? "MaxPool" : "AveragePool", {e->v}, std::move(attrs)), max && e->exact, e->loose);
  return true;
}

bool Generator::GlobalPool() {
  Entry* e = Pick(F(3, 4));
  if (e == nullptr) return false;
  bool max = Chance(0.5);
  Add(Op(max ? "GlobalMaxPool" : "GlobalAveragePool", {e->v}), max && e->exact, e->loose);
  return true;
}

bool Generator::BatchNorm() {
  Entry* e = Pick(F(2, 4));
  if (e == nullptr || IsSymbolic(e->v, 1)) return false;
  std::vector<Value*> ins = BatchNormInputs(e->v, (*Dims(e->v))[1]);
  std::vector<Attribute> attrs;
  if (Chance(0.3)) attrs.push_back(Attribute::Float("epsilon", 1e-3f));
  Add(Op("BatchNormalization", ins, std::move(attrs)), false, e->loose);
  return true;
}

bool Generator::Softmax() {
  Entry* e = Pick(F(1, 5));
  if (e == nullptr) return false;
  int64_t r = e->v->type().shape.rank();
  Add(Op(Chance(0.7) ? "Softmax" : "LogSoftmax", {e->v}, {Attribute::Int("axis", Int(-r, r - 1))}), false,
      e->loose);
  return true;
}

bool Generator::Reduce() {
  Entry* e = Pick(F(1, 5));
  if (e == nullptr) return false;
  int64_t r = e->v->type().shape.rank();
  std::string op = OneOf<const char*>({"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceL2",
                                       "ReduceSumSquare", "ReduceProd"});
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < r; ++a) {
    if (Chance(0.4)) axes.push_back(Chance(0.5) ? a : a - r);
  }
  std::vector<Value*> ins = {e->v};
  std::vector<Attribute> attrs;
  if (!axes.empty() || Chance(0.5)) AxesOperand(ins, attrs, axes, op == "ReduceSum" ? 13 : 18);
  if (Chance(0.5)) attrs.push_back(Attribute::Int("keepdims", 0));
  bool exact = e->exact && (op == "ReduceMax" || op == "ReduceMin");
  Value* x = ins[0];
  if (op == "ReduceProd") {
    x = Op("Clip", {x, Scalar(-1.2f), Scalar(1.2f)});  // bounded product
    ins[0] = x;
  }
  Add(Op(op, ins, std::move(attrs)), exact, e->loose);
  return true;
}

bool Generator::LayerNorm() {
  Entry* e = Pick(F(1, 4));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  int64_t r = static_cast<int64_t>(d.size());
  int64_t axis = Int(-r, -1);
  for (int64_t i = r + axis; i < r; ++i) {
    if (IsSymbolic(e->v, static_cast<size_t>(i))) return false;
  }
  std::vector<int64_t> nd(d.begin() + (r + axis), d.end());
  std::vector<Value*> ins = {e->v, ConstF(nd, 0.5, 1.5)};
  if (Chance(0.7)) ins.push_back(ConstF(nd, -0.5, 0.5));
  Add(Op("LayerNormalization", ins, {Attribute::Int("axis", axis)}), false, e->loose);
  return true;
}

bool Generator::Reshape() {
  Entry* e = Pick(F(1, 5, true));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  // Symbolic dims must lead; they are kept with 0.
  size_t lead = 0;
  while (lead < d.size() && IsSymbolic(e->v, lead)) ++lead;
  for (size_t i = lead; i < d.size(); ++i) {
    if (IsSymbolic(e->v, i)) return false;
  }
  int64_t n = 1;
  for (size_t i = lead; i < d.size(); ++i) n *= d[i];
  std::vector<int64_t> target(lead, 0);
  if (lead == 0 && Chance(0.3) && !d.empty()) {
    target.push_back(0);  // copy dim 0
    n /= d[0];
  }
  // Factor what is left into 1..3 dims.
  int pieces = static_cast<int>(Int(1, 3));
  std::vector<int64_t> rest;
  int64_t left = n;
  for (int p = 0; p + 1 < pieces; ++p) {
    std::vector<int64_t> divisors;
    for (int64_t f = 1; f <= left; ++f) {
      if (left % f == 0) divisors.push_back(f);
    }
    int64_t f = divisors[static_cast<size_t>(Int(0, static_cast<int64_t>(divisors.size()) - 1))];
    rest.push_back(f);
    left /= f;
  }
  rest.push_back(left);
  if (Chance(0.3)) rest[static_cast<size_t>(Int(0, static_cast<int64_t>(rest.size()) - 1))] = -1;
  target.insert(target.end(), rest.begin(), rest.end());
  Add(Op("Reshape", {e->v, Ints(target)}), e->exact, e->loose);
  return true;
}

bool Generator::Flatten() {
  Entry* e = Pick(F(1, 5));
  if (e == nullptr) return false;
  int64_t r = e->v->type().shape.rank();
  Add(Op("Flatten", {e->v}, {Attribute::Int("axis", Int(0, r))}), e->exact, e->loose);
  return true;
}

bool Generator::SqueezeUnsqueeze() {
  Entry* e = Pick(F(0, 5));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  int64_t r = static_cast<int64_t>(d.size());
  std::vector<int64_t> ones;
  for (int64_t i = 0; i < r; ++i) {
    if (d[static_cast<size_t>(i)] == 1 && !IsSymbolic(e->v, static_cast<size_t>(i))) ones.push_back(i);
  }
  std::vector<Value*> ins = {e->v};
  std::vector<Attribute> attrs;
  if (!ones.empty() && Chance(0.5)) {
    std::vector<int64_t> axes = {ones[static_cast<size_t>(Int(0, static_cast<int64_t>(ones.size()) - 1))]};
    if (Chance(0.5)) axes[0] -= r;
    AxesOperand(ins, attrs, axes, 13);
    Add(Op("Squeeze", ins, std::move(attrs)), e->exact, e->loose);
    return true;
  }
  std::vector<int64_t> axes = {Int(-(r + 1), r)};
  if (Chance(0.3)) {  // two new dims, as positions in the rank-(r+2) output
    int64_t a = Int(0, r + 1), b = Int(0, r + 1);
    axes = a == b ? std::vector<int64_t>{a} : std::vector<int64_t>{a, b};
  }
  AxesOperand(ins, attrs, axes, 13);
  Add(Op("Unsqueeze", ins, std::move(attrs)), e->exact, e->loose);
  return true;
}

bool Generator::Transpose() {
  Entry* e = Pick(F(1, 5, true));
  if (e == nullptr) return false;
  size_t r = static_cast<size_t>(e->v->type().shape.rank());
  std::vector<Attribute> attrs;
  if (Chance(0.9)) attrs.push_back(Attribute::Ints("perm", RandomPerm(r)));
  Add(Op("Transpose", {e->v}, std::move(attrs)), e->exact, e->loose);
  return true;
}

bool Generator::Slice() {
  Entry* e = Pick(F(1, 5));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  int64_t r = static_cast<int64_t>(d.size());
  std::vector<int64_t> starts, ends, axes, steps;
  for (int64_t a = 0; a < r; ++a) {
    if (!Chance(0.5) && !(a == r - 1 && axes.empty())) continue;
    int64_t n = d[static_cast<size_t>(a)];
    int64_t step = Chance(0.2) ? -1 : (Chance(0.2) ? 2 : 1);
    int64_t s = Int(0, std::max<int64_t>(0, n - 1));
    int64_t t = Int(s + 1, n);
    if (step < 0) {
      std::swap(s, t);
      s -= 1;
      t -= 1;
      if (t < 0) t = Chance(0.5) ? -n - 1 : INT64_MIN / 2;  // past the front
    }
    if (Chance(0.2) && step > 0) t = INT64_MAX / 2;  // clamped
    if (Chance(0.2) && s >= 0) s -= n;                 // negative index
    starts.push_back(s);
    ends.push_back(t);
    axes.push_back(Chance(0.3) ? a - r : a);
    steps.push_back(step);
  }
  std::vector<Value*> ins = {e->v, Ints(starts), Ints(ends), Ints(axes)};
  if (Chance(0.8)) ins.push_back(Ints(steps));
  else if (std::any_of(steps.begin(), steps.end(), [](int64_t s) { return s != 1; })) return false;
  Add(Op("Slice", ins), e->exact, e->loose);
  return true;
}

bool Generator::Concat() {
  Entry* a = Pick(F(1, 5, true));
  if (a == nullptr) return false;
  std::vector<int64_t> da = *Dims(a->v);
  int64_t r = static_cast<int64_t>(da.size());
  int64_t axis = Int(0, r - 1);
  if (IsSymbolic(a->v, static_cast<size_t>(axis))) return false;
  std::vector<Value*> ins = {a->v};
  bool exact = a->exact, loose = a->loose;
  int extra = static_cast<int>(Int(1, 2));
  for (int i = 0; i < extra; ++i) {
    Entry* b = Pick([&](const Entry& e) {
      auto db = Dims(e.v);
      if (!db || db->size() != da.size() || e.v->dtype() != a->v->dtype()) return false;
      for (int64_t k = 0; k < r; ++k) {
        if (k != axis && ((*db)[static_cast<size_t>(k)] != da[static_cast<size_t>(k)] ||
                          IsSymbolic(e.v, static_cast<size_t>(k)) != IsSymbolic(a->v, static_cast<size_t>(k)))) {
          return false;
        }
      }
      return !IsSymbolic(e.v, static_cast<size_t>(axis));
    });
    if (b != nullptr && Chance(0.7)) {
      ins.push_back(b->v);
      exact = exact && b->exact;
      loose = loose || b->loose;
    } else if (!AnySymbolic(a->v)) {
      std::vector<int64_t> cd = da;
      cd[static_cast<size_t>(axis)] = Int(1, 3);
      ins.push_back(ConstF(cd, -1, 1, a->v->dtype()));
    }
  }
  Add(Op("Concat", ins, {Attribute::Int("axis", Chance(0.3) ? axis - r : axis)}), exact, loose);
  return true;
}

bool Generator::Split() {
  Entry* e = Pick(F(1, 5));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  int64_t r = static_cast<int64_t>(d.size());
  int64_t axis = Int(0, r - 1);
  int64_t n = d[static_cast<size_t>(axis)];
  if (n < 2 || IsSymbolic(e->v, static_cast<size_t>(axis))) return false;
  int64_t parts = Int(2, std::min<int64_t>(3, n));
  std::vector<Value*> ins = {e->v};
  std::vector<Attribute> attrs = {Attribute::Int("axis", axis)};
  bool sizes_input = Chance(0.6) || n % parts != 0;
  if (opset_ >= 18 && (!sizes_input || Chance(0.3))) {
    attrs.push_back(Attribute::Int("num_outputs", parts));  // an uneven last piece is allowed
  } else if (sizes_input) {
    std::vector<int64_t> sizes;
    int64_t left = n;
    for (int64_t p = 0; p + 1 < parts; ++p) {
      int64_t s = Int(1, left - (parts - 1 - p));
      sizes.push_back(s);
      left -= s;
    }
    sizes.push_back(left);
    if (opset_ >= 13) {
      ins.push_back(Ints(sizes));
    } else {
      attrs.push_back(Attribute::Ints("split", sizes));
    }
  }
  for (Value* v : OpN("Split", ins, static_cast<size_t>(parts), std::move(attrs))) Add(v, e->exact, e->loose);
  return true;
}

bool Generator::Gather() {
  Entry* e = Pick(F(1, 4));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  int64_t r = static_cast<int64_t>(d.size());
  int64_t axis = Int(0, r - 1);
  int64_t n = d[static_cast<size_t>(axis)];
  if (IsSymbolic(e->v, static_cast<size_t>(axis))) return false;
  std::vector<int64_t> idx_dims = OneOf<std::vector<int64_t>>({{}, {Int(1, 4)}, {2, Int(1, 3)}});
  int64_t count = 1;
  for (int64_t x : idx_dims) count *= x;
  std::vector<int64_t> idx(static_cast<size_t>(count));
  for (int64_t& i : idx) i = Int(-n, n - 1);
  Value* indices = Const(Tensor::FromVector<int64_t>(idx, idx_dims));
  Add(Op("Gather", {e->v, indices}, {Attribute::Int("axis", Chance(0.3) ? axis - r : axis)}), e->exact, e->loose);
  return true;
}

bool Generator::Pad() {
  Entry* e = Pick(F(1, 4));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  size_t r = d.size();
  std::string mode = OneOf<const char*>({"constant", "constant", "reflect", "edge"});
  // ONNX Runtime's reflect wants every axis at least 2 long, padded or not.
  if (mode == "reflect" && std::any_of(d.begin(), d.end(), [](int64_t x) { return x < 2; })) mode = "edge";
  std::vector<int64_t> pads(2 * r, 0);
  for (size_t i = 0; i < r; ++i) {
    if (IsSymbolic(e->v, i) || !Chance(0.5)) continue;
    int64_t hi = mode == "reflect" ? std::min<int64_t>(2, d[i] - 1) : 2;
    pads[i] = Int(0, hi);
    pads[r + i] = Int(0, hi);
    if (mode == "constant" && Chance(0.1) && d[i] > 1) pads[r + i] = -1;  // a crop
  }
  std::vector<Value*> ins = {e->v, Ints(pads)};
  if (mode == "constant" && Chance(0.5)) ins.push_back(Scalar(static_cast<float>(Real(-1, 1))));
  Add(Op("Pad", ins, {Attribute::String("mode", mode)}), e->exact && mode != "constant", e->loose);
  return true;
}

bool Generator::Expand() {
  Entry* e = Pick(F(0, 4));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  std::vector<int64_t> target;
  if (Chance(0.4)) target.push_back(Int(1, 3));  // a new leading dim
  for (size_t i = 0; i < d.size(); ++i) {
    target.push_back(d[i] == 1 && !IsSymbolic(e->v, i) && Chance(0.6) ? Int(2, 4) : (Chance(0.3) ? 1 : d[i]));
    if (IsSymbolic(e->v, i)) target.back() = 1;  // 1 keeps what the input has
  }
  Add(Op("Expand", {e->v, Ints(target)}), e->exact, e->loose);
  return true;
}

bool Generator::Tile() {
  Entry* e = Pick(F(1, 4));
  if (e == nullptr) return false;
  size_t r = static_cast<size_t>(e->v->type().shape.rank());
  std::vector<int64_t> reps(r);
  for (int64_t& x : reps) x = Chance(0.4) ? 2 : 1;
  Add(Op("Tile", {e->v, Ints(reps)}), e->exact, e->loose);
  return true;
}

bool Generator::Resize() {
  Entry* e = Pick(Image());
  if (e == nullptr) return false;
  std::string mode = OneOf<const char*>({"nearest", "linear"});
  std::string ctm = OneOf<const char*>({"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"});
  if (mode == "nearest" && ctm == "align_corners" && Chance(0.5)) ctm = "asymmetric";
  // Scales that give whole output sizes: where in * scale is rounded,
  // ONNX Runtime maps coordinates differently from the spec (and from onnx's
  // reference implementation, which agrees with ours).
  std::vector<int64_t> d = *Dims(e->v);
  auto whole = [&](float sc, int64_t n) {
    double x = sc * static_cast<double>(n);
    return x == std::floor(x) ? sc : 2.0f;
  };
  float sh = whole(OneOf<float>({2.0f, 0.5f, 1.5f, 3.0f}), d[2]), sw = whole(OneOf<float>({2.0f, 1.0f, 0.5f}), d[3]);
  std::vector<Attribute> attrs = {Attribute::String("mode", mode),
                                  Attribute::String("coordinate_transformation_mode", ctm)};
  if (mode == "nearest") attrs.push_back(Attribute::String("nearest_mode", OneOf<const char*>({"floor", "round_prefer_floor", "round_prefer_ceil"})));
  Value* scales = Const(Tensor::FromVector<float>({1, 1, sh, sw}, {4}));
  Add(Op("Resize", {e->v, nullptr, scales}, std::move(attrs)), false, e->loose);
  return true;
}

bool Generator::TopK() {
  Entry* e = Pick(ExactF(1, 4));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  int64_t r = static_cast<int64_t>(d.size());
  int64_t axis = Int(0, r - 1);
  if (IsSymbolic(e->v, static_cast<size_t>(axis))) return false;
  int64_t k = Int(1, d[static_cast<size_t>(axis)]);
  std::vector<Attribute> attrs = {Attribute::Int("axis", axis)};
  if (Chance(0.3)) attrs.push_back(Attribute::Int("largest", 0));
  std::vector<Value*> outs = OpN("TopK", {e->v, Ints({k})}, 2, std::move(attrs));
  Add(outs[0], true);
  Add(Op("Cast", {outs[1]}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))}), true);
  return true;
}

// InstanceNormalization, or GroupNormalization (opset 18's per-group scale
// and bias) over a static channel dim.
bool Generator::GroupNorm() {
  Entry* e = Pick(F(3, 5));
  if (e == nullptr || IsSymbolic(e->v, 1)) return false;
  int64_t c = (*Dims(e->v))[1];
  float eps = Chance(0.5) ? 1e-5f : 1e-3f;
  if (opset_ < 18 || Chance(0.5)) {
    Add(Op("InstanceNormalization", {e->v, ConstF({c}, 0.5, 1.5), ConstF({c}, -0.5, 0.5)},
           {Attribute::Float("epsilon", eps)}),
        false, e->loose);
    return true;
  }
  std::vector<int64_t> divisors;
  for (int64_t g = 1; g <= c; ++g) {
    if (c % g == 0) divisors.push_back(g);
  }
  int64_t groups = divisors[static_cast<size_t>(Int(0, static_cast<int64_t>(divisors.size()) - 1))];
  Add(Op("GroupNormalization", {e->v, ConstF({groups}, 0.5, 1.5), ConstF({groups}, -0.5, 0.5)},
         {Attribute::Int("num_groups", groups), Attribute::Float("epsilon", eps)}),
      false, e->loose);
  return true;
}

// QuantizeLinear then DequantizeLinear (an ORT QDQ pair), per tensor or per
// axis, int8 or uint8. Rounding is discontinuous: only exact inputs.
bool Generator::QuantizeDequantize() {
  Entry* e = Pick(ExactF(1, 4));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  auto r = static_cast<int64_t>(d.size());
  int64_t axis = Int(0, r - 1);
  bool per_axis = Chance(0.5) && !IsSymbolic(e->v, static_cast<size_t>(axis));
  int64_t channels = per_axis ? d[static_cast<size_t>(axis)] : 1;
  bool is_signed = Chance(0.5);
  std::vector<int64_t> pdims = per_axis ? std::vector<int64_t>{channels} : std::vector<int64_t>{};
  Tensor scale(DType::kFloat, pdims), zero(is_signed ? DType::kInt8 : DType::kUint8, pdims);
  for (int64_t i = 0; i < channels; ++i) {
    scale.mutable_data<float>()[i] = static_cast<float>(Real(0.01, 0.1));
    if (is_signed) {
      zero.mutable_data<int8_t>()[i] = static_cast<int8_t>(Int(-20, 20));
    } else {
      zero.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(Int(100, 150));
    }
  }
  std::vector<Attribute> attrs;
  if (per_axis) attrs.push_back(Attribute::Int("axis", Chance(0.5) ? axis : axis - r));
  Value* s = Const(scale);
  Value* z = Const(zero);
  Value* q = Op("QuantizeLinear", {e->v, s, z}, attrs);
  Add(Op("DequantizeLinear", {q, s, z}, attrs), true, e->loose);
  return true;
}

// Two-operand Einsums that are one batched product, against a constant
// second operand, in the spellings attention and bmm exports use.
bool Generator::Einsum() {
  Entry* e = Pick(StaticF(2, 4));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  int64_t k = Int(1, 6);
  std::string eq;
  std::vector<int64_t> wdims;
  if (d.size() == 2) {
    eq = Chance(0.5) ? "ij,jk->ik" : "ij,jk->ki";
    wdims = {d[1], k};
  } else if (d.size() == 3) {
    eq = Chance(0.5) ? "bij,bjk->bik" : "bij,bkj->bki";
    wdims = eq == "bij,bjk->bik" ? std::vector<int64_t>{d[0], d[2], k} : std::vector<int64_t>{d[0], k, d[2]};
  } else {
    eq = Chance(0.5) ? "bhqd,bhkd->bhqk" : "bhqd,bhdk->bhqk";
    wdims = eq == "bhqd,bhkd->bhqk" ? std::vector<int64_t>{d[0], d[1], k, d[3]} : std::vector<int64_t>{d[0], d[1], d[3], k};
  }
  int64_t fan_in = d.back();
  Add(Op("Einsum", {e->v, Weight(wdims, fan_in)}, {Attribute::String("equation", eq)}), false, e->loose);
  return true;
}

bool Generator::ArgMax() {
  Entry* e = Pick(ExactF(1, 4));
  if (e == nullptr) return false;
  int64_t r = e->v->type().shape.rank();
  std::vector<Attribute> attrs = {Attribute::Int("axis", Int(-r, r - 1))};
  if (Chance(0.5)) attrs.push_back(Attribute::Int("keepdims", 0));
  Value* i = Op(Chance(0.5) ? "ArgMax" : "ArgMin", {e->v}, std::move(attrs));
  Add(Op("Cast", {i}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))}), true);
  return true;
}

// The exporters' dynamic reshape: Shape(x) -> Gather/Slice -> arithmetic ->
// Concat with constants -> Reshape(x, ..).
bool Generator::ShapeChain() {
  Entry* e = Pick(F(2, 4));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  int64_t r = static_cast<int64_t>(d.size());
  Value* shape = Op("Shape", {e->v});
  int variant = static_cast<int>(Int(0, 3));
  std::vector<Value*> parts;
  if (variant == 0) {
    // [d0, -1]: flatten behind a (maybe dynamic) batch
    parts = {Op("Unsqueeze", {Op("Gather", {shape, Const(Tensor::Scalar<int64_t>(0))}, {Attribute::Int("axis", 0)}),
                              Ints({0})}),
             Ints({-1})};
  } else if (variant == 1) {
    // [d0, .., d(r-3), d(r-2) * d(r-1)]
    Value* head = Op("Slice", {shape, Ints({0}), Ints({r - 2})});
    Value* a = Op("Gather", {shape, Const(Tensor::Scalar<int64_t>(r - 2))});
    Value* b = Op("Gather", {shape, Const(Tensor::Scalar<int64_t>(r - 1))});
    parts = {head, Op("Unsqueeze", {Op("Mul", {a, b}), Ints({0})})};
  } else if (variant == 2) {
    // [d0, d1, .., last / g, g] (heads split)
    int64_t last = d.back();
    int64_t g = 1;
    for (int64_t f = 2; f <= last; ++f) {
      if (last % f == 0) {
        g = f;
        if (Chance(0.5)) break;
      }
    }
    if (IsSymbolic(e->v, static_cast<size_t>(r - 1))) return false;
    Value* head = Op("Slice", {shape, Ints({0}), Ints({r - 1})});
    Value* q = Op("Div", {Op("Gather", {shape, Ints({r - 1})}), Ints({g})});
    parts = {head, q, Ints({g})};
  } else {
    // Shape -> Cast float -> arithmetic -> Cast int64 (torch's size arithmetic)
    Value* n = Op("Cast", {Op("ReduceProd", {shape}, {Attribute::Int("keepdims", 1)})},
                  {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))});
    Value* back = Op("Cast", {Op("Mul", {n, Scalar(1.0f)})}, {Attribute::Int("to", static_cast<int64_t>(DType::kInt64))});
    parts = {back};
  }
  Value* target = parts.size() == 1 ? parts[0] : Op("Concat", parts, {Attribute::Int("axis", 0)});
  Add(Op("Reshape", {e->v, target}), e->exact, e->loose);
  return true;
}

// The same node twice (common subexpressions).
bool Generator::RepeatNode() {
  if (cur_->num_nodes() == 0) return false;
  const Node& n = *cur_->nodes()[static_cast<size_t>(Int(0, static_cast<int64_t>(cur_->num_nodes()) - 1))];
  if (!n.Subgraphs().empty()) return false;
  std::vector<Value*> outs = OpN(n.op_type, n.inputs(), n.num_outputs(), n.attributes);
  for (size_t i = 0; i < outs.size(); ++i) {
    Entry* orig = nullptr;
    for (Entry& e : *pool_) {
      if (e.v == n.output(i)) orig = &e;
    }
    if (orig != nullptr) Add(outs[i], orig->exact, orig->loose);
  }
  return true;
}

// A subgraph of constants only (exporters' weight transposes and scales).
bool Generator::FoldableConstants() {
  Entry* e = Pick(F(1, 4));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  if (IsSymbolic(e->v, d.size() - 1)) return false;
  int64_t k = d.back(), n = Int(1, 8);
  Value* w = Op("Transpose", {Weight({n, k}, k)}, {Attribute::Ints("perm", {1, 0})});
  if (Chance(0.5)) w = Op("Mul", {w, Scalar(static_cast<float>(Real(0.5, 1.5)))});
  if (Chance(0.3)) w = Op("Add", {w, Op("Sqrt", {ConstF({1, n}, 0.1, 0.2)})});
  Add(Op("MatMul", {e->v, w}), false, e->loose);
  return true;
}

Value* Generator::SmallChain(Value* x, const Value* like, int n) {
  for (int i = 0; i < n; ++i) {
    switch (Int(0, 4)) {
      case 0: x = Op(OneOf<const char*>({"Relu", "Tanh", "Sigmoid", "Neg", "Abs"}), {x}); break;
      case 1: x = Op("Add", {x, ConstF(BroadcastDims(like), -1, 1)}); break;
      case 2: x = Op("Mul", {x, ConstAwayFromZero(BroadcastDims(like))}); break;
      case 3: {
        Pred f = F();
        Entry* other = Pick([&](const Entry& e) { return !e.loose && f(e); });  // the result is not marked loose
        if (other != nullptr && other->v->type().shape == like->type().shape) x = Op("Add", {x, other->v});
        else x = Op("Sub", {x, Scalar(0.25f)});
        break;
      }
      default: x = Op("Max", {x, Scalar(-0.5f)}); break;
    }
  }
  return x;
}

bool Generator::If() {
  Entry* e = Pick(StaticF(0, 4));
  if (e == nullptr) return false;
  Value* cond;
  if (Chance(0.4)) {
    cond = Const(Tensor::Scalar<bool>(Chance(0.5)));  // folds: the If can go away
  } else {
    Entry* c = Pick(ExactF());
    if (c == nullptr) return false;
    cond = Op("Greater", {Op("ReduceMax", {c->v}, {Attribute::Int("keepdims", 0)}), Scalar(static_cast<float>(Real(-0.3, 0.3)))});
  }
  Graph* outer = cur_;
  std::deque<Entry>* outer_pool = pool_;
  auto make_branch = [&](const char* name) {
    auto body = std::make_shared<Graph>();
    body->name = Name(name);
    body->set_parent(outer);
    std::deque<Entry> body_pool = *outer_pool;  // outer values are readable inside
    cur_ = body.get();
    pool_ = &body_pool;
    Value* out = SmallChain(e->v, e->v, static_cast<int>(Int(1, 3)));
    if (out == e->v) out = Op("Identity", {e->v});
    body->AddOutput(out);
    out->set_type(e->v->type());
    cur_ = outer;
    pool_ = outer_pool;
    return body;
  };
  auto then_branch = make_branch("then");
  auto else_branch = make_branch("else");
  Value* out = Op("If", {cond}, {Attribute::GraphValue("then_branch", then_branch),
                                Attribute::GraphValue("else_branch", else_branch)});
  Add(out, false, e->loose);
  return true;
}

bool Generator::Loop() {
  Entry* e = Pick(StaticF(0, 3));
  if (e == nullptr) return false;
  int64_t trips = Int(1, 4);
  Graph* outer = cur_;
  std::deque<Entry>* outer_pool = pool_;
  auto body = std::make_shared<Graph>();
  body->name = Name("loop_body");
  body->set_parent(outer);
  Value* iter = body->AddValue(Name("iter"), TypeInfo::Tensor(DType::kInt64, Shape::Scalar()));
  Value* cond_in = body->AddValue(Name("cond_in"), TypeInfo::Tensor(DType::kBool, Shape::Scalar()));
  Value* carried = body->AddValue(Name("carried"), e->v->type());
  body->AddInput(iter);
  body->AddInput(cond_in);
  body->AddInput(carried);
  std::deque<Entry> body_pool = *outer_pool;
  cur_ = body.get();
  pool_ = &body_pool;
  Value* cond_out = Op("Identity", {cond_in});
  // Keep the carried value bounded whatever the trip count.
  Value* next = Op("Tanh", {Op("Add", {Op("Mul", {carried, ConstAwayFromZero(BroadcastDims(e->v))}), e->v})});
  bool scan_out = Chance(0.5);
  Value* scanned = scan_out ? Op("Mul", {next, Op("Cast", {iter}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))})}) : nullptr;
  cur_ = outer;
  pool_ = outer_pool;
  body->AddOutput(cond_out);
  body->AddOutput(next);
  cond_out->set_type(TypeInfo::Tensor(DType::kBool, Shape::Scalar()));
  next->set_type(e->v->type());
  if (scanned) {
    body->AddOutput(scanned);
    scanned->set_type(e->v->type());
  }
  Value* m = Const(Tensor::Scalar<int64_t>(trips));
  std::vector<Value*> outs = OpN("Loop", {m, nullptr, e->v}, scan_out ? 2 : 1, {Attribute::GraphValue("body", body)});
  for (Value* v : outs) Add(v, false, e->loose);
  return true;
}

// Cast to float16, a few ops there, Cast back.
bool Generator::HalfIsland() {
  if (!options_.low_precision) return false;
  Entry* e = Pick(F(1, 4));
  if (e == nullptr) return false;
  Value* h = Op("Cast", {Op("Clip", {e->v, Scalar(-8), Scalar(8)})}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat16))});
  int steps = static_cast<int>(Int(1, 3));
  for (int s = 0; s < steps; ++s) {
    switch (Int(0, 3)) {
      case 0: h = Op(OneOf<const char*>({"Relu", "Sigmoid", "Tanh", "Abs"}), {h}); break;
      case 1: h = Op(OneOf<const char*>({"Add", "Mul", "Sub"}), {h, ConstAwayFromZero(BroadcastDims(e->v), DType::kFloat16)}); break;
      case 2: {
        std::vector<int64_t> d = *Dims(e->v);
        if (IsSymbolic(e->v, d.size() - 1)) break;
        int64_t k = d.back();
        h = Op("MatMul", {h, Weight({k, k}, k, 1.0, DType::kFloat16)});
        break;
      }
      default: h = Op("Transpose", {h}); break;
    }
  }
  Add(Op("Cast", {h}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))}), false, true);
  return true;
}

// ---------------------------------------------------------------- patterns

// x * 0.5 * (1 + erf(x / sqrt(2))) in the groupings exporters write.
bool Generator::GeluPattern() {
  Entry* e = Pick(F());
  if (e == nullptr) return false;
  Value* x = e->v;
  Value* erf = Chance(0.5) ? Op("Erf", {Op("Div", {x, Scalar(1.4142135f)})})
                           : Op("Erf", {Op("Mul", {x, Scalar(0.70710677f)})});
  Value* one_plus = Chance(0.5) ? Op("Add", {erf, Scalar(1)}) : Op("Add", {Scalar(1), erf});
  Value* out;
  switch (Int(0, 2)) {
    case 0: out = Op("Mul", {Op("Mul", {x, one_plus}), Scalar(0.5)}); break;
    case 1: out = Op("Mul", {Op("Mul", {x, Scalar(0.5)}), one_plus}); break;
    default: out = Op("Mul", {x, Op("Mul", {one_plus, Scalar(0.5)})}); break;
  }
  Add(out, false, e->loose);
  return true;
}

bool Generator::GeluTanhPattern() {
  Entry* e = Pick(F());
  if (e == nullptr) return false;
  Value* x = e->v;
  Value* cube = Chance(0.5) ? Op("Pow", {x, Scalar(3)}) : Op("Mul", {Op("Mul", {x, x}), x});
  Value* inner = Op("Mul", {Op("Add", {x, Op("Mul", {cube, Scalar(0.044715f)})}), Scalar(0.7978846f)});
  Value* out = Op("Mul", {Op("Mul", {x, Scalar(0.5)}), Op("Add", {Op("Tanh", {inner}), Scalar(1)})});
  Add(out, false, e->loose);
  return true;
}

// (x - mean) / sqrt(var + eps) [* g + b], as torch.onnx below opset 17 and
// tf2onnx write it; sometimes with the wrong axis or a missing piece (a near miss).
bool Generator::LayerNormPattern() {
  std::vector<int64_t> d, axes;
  Entry* e = PickNormInput(d, axes);
  if (e == nullptr) return false;
  int64_t r = static_cast<int64_t>(d.size());
  auto mean = [&](Value* v) { return ReduceMeanOver(v, axes); };
  // A ramp along the normalized axis keeps rows from being constant (a Clip
  // or Max upstream can make them so): over a zero variance, x - mean is
  // rounding noise that 1/sqrt(eps) amplifies past any tolerance, on every
  // backend alike (ONNX Runtime's included), which is not a bug.
  size_t axis = static_cast<size_t>(r + axes[0]);
  if (IsSymbolic(e->v, axis)) return false;
  int64_t len = d[axis];
  std::vector<float> ramp(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i) {
    ramp[static_cast<size_t>(i)] = len == 1 ? 0.0f : -1.0f + 2.0f * static_cast<float>(i) / static_cast<float>(len - 1);
  }
  std::vector<int64_t> ramp_dims = {len};
  if (axes[0] == -2) ramp_dims.push_back(1);
  Value* x = Op("Add", {e->v, Const(Tensor::FromVector<float>(ramp, ramp_dims))});
  Value* dev = Op("Sub", {x, mean(x)});
  Value* sq = Chance(0.5) ? Op("Pow", {dev, Scalar(2)}) : Op("Mul", {dev, dev});
  Value* denom = Op("Sqrt", {Op("Add", {mean(sq), Scalar(Chance(0.5) ? 1e-5f : 1e-6f)})});
  Value* out = Chance(0.7) ? Op("Div", {dev, denom}) : Op("Mul", {dev, Op("Reciprocal", {denom})});
  if (Chance(0.7)) {
    std::vector<int64_t> gd = Chance(0.85) ? std::vector<int64_t>{d.back()} : std::vector<int64_t>{};
    out = Op("Mul", {out, ConstF(gd, 0.5, 1.5)});
    if (Chance(0.7)) out = Op("Add", {out, ConstF(gd, -0.5, 0.5)});
  }
  Add(out, false, e->loose);
  return true;
}

// x * rsqrt(mean(x^2) + eps) [* g], as torch writes RMSNorm (rsqrt as
// Reciprocal(Sqrt) or 1 / Sqrt, or x / Sqrt); sometimes over another axis
// (a near miss the rule must decline).
bool Generator::RmsNormPattern() {
  std::vector<int64_t> d, axes;
  Entry* e = PickNormInput(d, axes);
  if (e == nullptr) return false;
  Value* square = Chance(0.5) ? Op("Pow", {e->v, Scalar(2)}) : Op("Mul", {e->v, e->v});
  Value* denom = Op("Sqrt", {Op("Add", {ReduceMeanOver(square, axes), Scalar(Chance(0.5) ? 1e-5f : 1e-6f)})});
  double form = Real(0, 1);
  Value* out = form < 0.4   ? Op("Div", {e->v, denom})
               : form < 0.8 ? Op("Mul", {e->v, Op("Reciprocal", {denom})})
                            : Op("Mul", {e->v, Op("Div", {Scalar(1), denom})});
  if (Chance(0.7)) {
    std::vector<int64_t> gd = Chance(0.85) ? std::vector<int64_t>{d.back()} : std::vector<int64_t>{};
    out = Op("Mul", {out, ConstF(gd, 0.5, 1.5)});
  }
  Add(out, false, e->loose);
  return true;
}

// x * clip(x + 3, 0, 6) / 6 and x * HardSigmoid(x), with near misses.
bool Generator::HardSwishPattern() {
  Entry* e = Pick(F());
  if (e == nullptr) return false;
  Value* x = e->v;
  Value* out;
  if (Chance(0.6)) {
    float three = Chance(0.85) ? 3.0f : 2.0f;
    Value* clip = Op("Clip", {Op("Add", {x, Scalar(three)}), Scalar(0), Scalar(6)});
    out = Chance(0.5) ? Op("Div", {Op("Mul", {x, clip}), Scalar(6)})
                      : Op("Mul", {x, Op("Div", {clip, Scalar(6)})});
  } else {
    float alpha = Chance(0.85) ? 1.0f / 6 : 0.2f;
    out = Op("Mul", {x, Op("HardSigmoid", {x}, {Attribute::Float("alpha", alpha), Attribute::Float("beta", 0.5f)})});
  }
  Add(out, false, e->loose);
  return true;
}

// x * Sigmoid(x) (SiLU), and the near miss x * Sigmoid(y).
bool Generator::SwishPattern() {
  Entry* e = Pick(F());
  if (e == nullptr) return false;
  Value* x = e->v;
  Value* gate = x;
  if (Chance(0.2)) {
    Entry* other = Pick(F());
    if (other != nullptr && other->v != x && Dims(other->v) == Dims(x)) gate = other->v;
  }
  Add(Op("Mul", Chance(0.5) ? std::vector<Value*>{x, Op("Sigmoid", {gate})} : std::vector<Value*>{Op("Sigmoid", {gate}), x}),
      false, e->loose);
  return true;
}

bool Generator::ConvBnPattern() {
  std::optional<Entry> conv = Inner(&Generator::Conv);
  if (!conv || IsSymbolic(conv->v, 1)) return false;
  Value* out = Op("BatchNormalization", BatchNormInputs(conv->v, (*Dims(conv->v))[1]));
  if (Chance(0.5)) {
    std::string act = OneOf<const char*>({"Relu", "Sigmoid", "HardSwish", "LeakyRelu"});
    if (act == "HardSwish" && opset_ < 14) act = "Relu";
    out = Op(act, {out});
  }
  Add(out, false, conv->loose);
  return true;
}

// Conv(x) + bias-shaped constant, Conv(x) * per-channel scale.
bool Generator::ConvAffinePattern() {
  std::optional<Entry> conv = Inner(&Generator::Conv);
  if (!conv) return false;
  std::vector<int64_t> d = *Dims(conv->v);
  int64_t m = d[1];
  std::vector<int64_t> cd = OneOf<std::vector<int64_t>>({{m, 1, 1}, {1, m, 1, 1}, {1}, {}});
  if (Chance(0.15)) cd = {d[3]};  // not per channel: must not fold into the bias
  bool add = Chance(0.5);
  Value* c = add ? ConstF(cd, -1, 1) : ConstAwayFromZero(cd);
  Value* out = Chance(0.7) ? Op(add ? "Add" : "Mul", {conv->v, c}) : Op(add ? "Add" : "Mul", {c, conv->v});
  Add(out, false, conv->loose);
  return true;
}

bool Generator::MatMulAddPattern() {
  Entry* e = Pick(F(1, 4));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  if (IsSymbolic(e->v, d.size() - 1)) return false;
  int64_t k = d.back(), n = Int(1, 10);
  Value* mm = Op("MatMul", {e->v, Weight({k, n}, k)});
  std::vector<int64_t> bd = OneOf<std::vector<int64_t>>({{n}, {n}, {1, n}, {}});
  if (d.size() >= 2 && !IsSymbolic(e->v, d.size() - 2) && Chance(0.15)) bd = {d[d.size() - 2], n};
  Value* b = ConstF(bd, -1, 1);
  Add(Chance(0.7) ? Op("Add", {mm, b}) : Op("Add", {b, mm}), false, e->loose);
  return true;
}

bool Generator::GemmBnPattern() {
  std::optional<Entry> gemm = Inner(&Generator::Gemm);
  if (!gemm) return false;
  Add(Op("BatchNormalization", BatchNormInputs(gemm->v, (*Dims(gemm->v))[1])), false, gemm->loose);
  return true;
}

bool Generator::TransposePairPattern() {
  Entry* e = Pick(F(2, 5));
  if (e == nullptr) return false;
  size_t r = static_cast<size_t>(e->v->type().shape.rank());
  std::vector<int64_t> p1 = RandomPerm(r);
  std::vector<int64_t> p2 = RandomPerm(r);
  if (Chance(0.4)) {  // the inverse: the pair is the identity
    for (size_t i = 0; i < r; ++i) p2[static_cast<size_t>(p1[i])] = static_cast<int64_t>(i);
  }
  Value* t = Op("Transpose", {e->v}, {Attribute::Ints("perm", p1)});
  Add(Op("Transpose", {t}, {Attribute::Ints("perm", p2)}), e->exact, e->loose);
  return true;
}

bool Generator::ReshapePairPattern() {
  std::optional<Entry> first = Inner(&Generator::Reshape);
  if (!first) return false;
  pool_->push_back(*first);  // the middle stays in the pool
  // Reshape (or flatten) the reshaped value again.
  std::deque<Entry> only = {*first};
  std::deque<Entry>* outer = pool_;
  pool_ = &only;
  bool ok = Chance(0.7) ? Reshape() : Flatten();
  pool_ = outer;
  if (!ok) return false;
  Add(only.back().v, only.back().exact, only.back().loose);
  return true;
}

// x + 0, x - 0, x * 1, x / 1, x ^ 1 and splats near them (x * 2 is not x).
bool Generator::NeutralElementPattern() {
  Entry* e = Pick(F(0, 6, true));
  if (e == nullptr) return false;
  std::string op = OneOf<const char*>({"Add", "Sub", "Mul", "Div", "Pow", "Mul"});
  float neutral = (op == "Add" || op == "Sub") ? 0.0f : 1.0f;
  float value = Chance(0.75) ? neutral : OneOf<float>({2.0f, -1.0f, 0.5f});
  if (op == "Pow" && value != neutral) value = 2.0f;
  DType dt = e->v->dtype();
  std::vector<int64_t> cd = BroadcastDims(e->v);
  int64_t n = 1;
  for (int64_t x : cd) n *= x;
  Value* c = Const(Convert(Tensor::FromVector<float>(std::vector<float>(static_cast<size_t>(n), value), cd), dt));
  bool swap = (op == "Add" || op == "Mul") && Chance(0.4);
  Value* out = swap ? Op(op, {c, e->v}) : Op(op, {e->v, c});
  Add(out, e->exact && value == neutral, e->loose);
  return true;
}

// Ops that keep the tensor as it is (and near misses that do not).
bool Generator::NoopPattern() {
  Entry* e = Pick(F(1, 5));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  int64_t r = static_cast<int64_t>(d.size());
  Value* x = e->v;
  Value* out = nullptr;
  bool has_one = std::find(d.begin(), d.end(), 1) != d.end();
  switch (Int(0, 10)) {
    case 0: out = Op("Identity", {x}); break;
    case 10:
      // Squeeze without axes squeezes every 1: nothing here when there is none.
      out = has_one || AnySymbolic(x) ? Op("Identity", {x}) : Op("Squeeze", {x});
      break;
    case 1: out = opset_ >= 12 && Chance(0.5) ? Op("Dropout", {x, Scalar(0.3f)}) : Op("Dropout", {x}); break;
    case 2: out = Op("Cast", {x}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))}); break;
    case 3: {
      std::vector<int64_t> target;
      for (int64_t i = 0; i < r; ++i) target.push_back(IsSymbolic(x, static_cast<size_t>(i)) ? 0 : d[static_cast<size_t>(i)]);
      out = Op("Reshape", {x, Ints(target)});
      break;
    }
    case 4: {
      std::vector<int64_t> ones(static_cast<size_t>(r), 1);
      out = Op("Expand", {x, Ints(ones)});
      break;
    }
    case 5: {
      // The whole range: step 1 keeps x, step -1 reverses it (same shape!).
      int64_t axis = Int(0, r - 1);
      bool reverse = Chance(0.3);
      int64_t n = d[static_cast<size_t>(axis)];
      out = reverse ? Op("Slice", {x, Ints({-1}), Ints({-n - 1}), Ints({axis}), Ints({-1})})
                    : Op("Slice", {x, Ints({0}), Ints({Chance(0.5) ? n : INT64_MAX}), Ints({axis}), Ints({1})});
      break;
    }
    case 6: {
      std::vector<int64_t> perm(static_cast<size_t>(r));
      std::iota(perm.begin(), perm.end(), 0);
      if (Chance(0.2) && r >= 2) std::swap(perm[0], perm[1]);
      out = Op("Transpose", {x}, {Attribute::Ints("perm", perm)});
      break;
    }
    case 7: out = Op("Concat", {x}, {Attribute::Int("axis", Int(0, r - 1))}); break;
    case 8: {
      std::vector<int64_t> pads(2 * static_cast<size_t>(r), 0);
      out = Op("Pad", {x, Ints(pads)});
      break;
    }
    default: {
      std::vector<Value*> ins = {x};
      std::vector<Attribute> attrs = {Attribute::Int("axis", 0)};
      if (opset_ >= 18) attrs.push_back(Attribute::Int("num_outputs", 1));
      out = OpN("Split", ins, 1, std::move(attrs))[0];
      break;
    }
  }
  Add(out, e->exact, e->loose);
  return true;
}

bool Generator::ReluChainPattern() {
  Entry* e = Pick(F());
  if (e == nullptr) return false;
  Value* r = Op("Relu", {e->v});
  Value* out;
  if (Chance(0.5)) {
    out = Op("Relu", {r});
  } else {
    float lo = OneOf<float>({0.0f, 0.5f, -0.5f});  // a negative lower bound keeps the Relu
    out = Op("Clip", {r, Scalar(lo), Scalar(static_cast<float>(Real(1, 6)))});
  }
  Add(out, e->exact, e->loose);
  return true;
}

// Pad then Conv / AveragePool: the pads move into the op.
bool Generator::PadIntoPattern() {
  Entry* e = Pick(Image());
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  int64_t p = Int(1, 2);
  std::vector<int64_t> pads = {0, 0, p, Int(0, 2), 0, 0, Int(0, 2), p};
  std::vector<Value*> pad_ins = {e->v, Ints(pads)};
  if (Chance(0.2)) pad_ins.push_back(Scalar(0.5f));  // not zero: must stay a Pad
  bool reflect = Chance(0.15) && std::all_of(d.begin(), d.end(), [](int64_t x) { return x >= 2; }) &&
                 p < std::min(d[2], d[3]) && pads[3] < d[3] && pads[6] < d[2];
  Value* padded = Op("Pad", pad_ins, {Attribute::String("mode", reflect ? "reflect" : "constant")});
  if (Chance(0.5)) {
    int64_t c = d[1], m = Int(1, 6);
    Add(Op("Conv", {padded, Weight({m, c, 3, 3}, c * 9)}, {Attribute::Ints("kernel_shape", {3, 3})}), false, e->loose);
  } else {
    Add(Op("AveragePool", {padded}, {Attribute::Ints("kernel_shape", {2, 2})}), false, e->loose);
  }
  return true;
}

bool Generator::TransposeGemmPattern() {
  Entry* e = Pick(F(2, 2));
  if (e == nullptr || IsSymbolic(e->v, 0)) return false;
  std::vector<int64_t> d = *Dims(e->v);
  // Gemm(Transpose(x), B): x is [K, M]
  int64_t k = d[0], n = Int(1, 8);
  Value* t = Op("Transpose", {e->v}, {Attribute::Ints("perm", {1, 0})});
  std::vector<Value*> ins = {t, Weight({k, n}, k)};
  if (Chance(0.5)) ins.push_back(ConstF({n}, -1, 1));
  Add(Op("Gemm", ins), false, e->loose);
  return true;
}

// MatMul(MatMul(x, A), B): merge_linear_ops at -O3 when the middle is wide.
bool Generator::MatMulChainPattern() {
  Entry* e = Pick(F(1, 3));
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  if (IsSymbolic(e->v, d.size() - 1)) return false;
  int64_t k = d.back(), h = Int(1, 16), n = Int(1, 8);
  Value* mid = Op("MatMul", {e->v, Weight({k, h}, k)});
  Add(Op("MatMul", {mid, Weight({h, n}, h)}), false, e->loose);
  return true;
}

// A 1x1 conv then average pooling: pool_before_pointwise_conv swaps them
// when the pool is unpadded (a padded or ceil_mode pool must stay after).
bool Generator::PointwiseConvPoolPattern() {
  Entry* e = Pick(Image());
  if (e == nullptr) return false;
  std::vector<int64_t> d = *Dims(e->v);
  int64_t c = d[1], m = Int(1, 6);
  std::vector<Value*> ins = {e->v, Weight({m, c, 1, 1}, c)};
  if (Chance(0.6)) ins.push_back(ConstF({m}, -1, 1));
  Value* conv = Op("Conv", ins);
  if (Chance(0.3)) {
    Add(Op("GlobalAveragePool", {conv}), false, e->loose);
    return true;
  }
  int64_t k = std::min<int64_t>(Int(1, 3), std::min(d[2], d[3]));
  int64_t s = Int(1, 2);
  std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {k, k}), Attribute::Ints("strides", {s, s})};
  if (Chance(0.2) && k > 1) attrs.push_back(Attribute::Ints("pads", {1, 0, 0, 1}));
  if (Chance(0.2)) attrs.push_back(Attribute::Int("ceil_mode", 1));
  if (Chance(0.3)) attrs.push_back(Attribute::Int("count_include_pad", 1));
  Add(Op("AveragePool", {conv}, std::move(attrs)), false, e->loose);
  return true;
}

bool Generator::ReluGemmPattern() {
  std::optional<Entry> gemm = Inner(&Generator::Gemm);
  if (!gemm) return false;
  Add(Op("Relu", {gemm->v}), false, gemm->loose);
  return true;
}

// ---------------------------------------------------------------- the model

const std::vector<Recipe>& Recipes() {
  static const std::vector<Recipe> kRecipes = {
      {"unary", 6, &Generator::Unary},
      {"clip", 1, &Generator::Clip},
      {"cast_round_trip", 1, &Generator::CastRoundTrip},
      {"integer_arithmetic", 1, &Generator::IntegerArithmetic},
      {"pow", 1, &Generator::PowConst},
      {"binary_const", 5, &Generator::BinaryConst},
      {"binary_values", 3, &Generator::BinaryValues},
      {"prelu", 0.7, &Generator::PRelu},
      {"variadic", 0.5, &Generator::Variadic},
      {"where_compare", 1, &Generator::WhereCompare},
      {"logic", 0.5, &Generator::Logic},
      {"matmul", 2, &Generator::MatMulConst},
      {"attention_like", 0.7, &Generator::AttentionLike},
      {"gemm", 1.2, &Generator::Gemm},
      {"conv", 2, &Generator::Conv},
      {"conv_transpose", 0.6, &Generator::ConvTranspose},
      {"pool", 1.2, &Generator::Pool},
      {"global_pool", 0.5, &Generator::GlobalPool},
      {"batch_norm", 0.8, &Generator::BatchNorm},
      {"softmax", 1, &Generator::Softmax},
      {"reduce", 1.2, &Generator::Reduce},
      {"layer_norm", 1, &Generator::LayerNorm, 17},
      {"reshape", 1.5, &Generator::Reshape},
      {"flatten", 0.5, &Generator::Flatten},
      {"squeeze_unsqueeze", 1, &Generator::SqueezeUnsqueeze},
      {"transpose", 1.5, &Generator::Transpose},
      {"slice", 1.5, &Generator::Slice},
      {"concat", 1, &Generator::Concat},
      {"split", 1, &Generator::Split},
      {"gather", 1, &Generator::Gather},
      {"pad", 1, &Generator::Pad},
      {"expand", 0.7, &Generator::Expand},
      {"tile", 0.3, &Generator::Tile},
      {"resize", 0.7, &Generator::Resize},
      {"topk", 0.4, &Generator::TopK},
      {"argmax", 0.4, &Generator::ArgMax},
      {"group_norm", 0.5, &Generator::GroupNorm},
      {"quantize_dequantize", 0.5, &Generator::QuantizeDequantize},
      {"einsum", 0.4, &Generator::Einsum, 12},
      {"shape_chain", 2.5, &Generator::ShapeChain},
      {"repeat_node", 1, &Generator::RepeatNode},
      {"foldable_constants", 0.8, &Generator::FoldableConstants},
      {"if", 0.6, &Generator::If},
      {"loop", 0.5, &Generator::Loop},
      {"half_island", 0.6, &Generator::HalfIsland},
      {"gelu_pattern", 1, &Generator::GeluPattern},
      {"gelu_tanh_pattern", 0.5, &Generator::GeluTanhPattern},
      {"layer_norm_pattern", 1, &Generator::LayerNormPattern},
      {"rms_norm_pattern", 0.7, &Generator::RmsNormPattern},
      {"hard_swish_pattern", 0.7, &Generator::HardSwishPattern},
      {"swish_pattern", 0.6, &Generator::SwishPattern},
      {"conv_bn_pattern", 1, &Generator::ConvBnPattern},
      {"conv_affine_pattern", 0.8, &Generator::ConvAffinePattern},
      {"matmul_add_pattern", 1, &Generator::MatMulAddPattern},
      {"gemm_bn_pattern", 0.3, &Generator::GemmBnPattern},
      {"transpose_pair_pattern", 0.7, &Generator::TransposePairPattern},
      {"reshape_pair_pattern", 0.7, &Generator::ReshapePairPattern},
      {"neutral_element_pattern", 1.2, &Generator::NeutralElementPattern},
      {"noop_pattern", 1.2, &Generator::NoopPattern},
      {"relu_chain_pattern", 0.4, &Generator::ReluChainPattern},
      {"pad_into_pattern", 0.5, &Generator::PadIntoPattern},
      {"transpose_gemm_pattern", 0.5, &Generator::TransposeGemmPattern},
      {"matmul_chain_pattern", 0.5, &Generator::MatMulChainPattern},
      {"pointwise_conv_pool_pattern", 0.5, &Generator::PointwiseConvPoolPattern},
      {"relu_gemm_pattern", 0.5, &Generator::ReluGemmPattern},
  };
  return kRecipes;
}

absl::StatusOr<GeneratedModel> Generator::Run() {
  opset_ = OneOf<int64_t>({13, 14, 17, 17, 17, 18, 20});
  model_ = std::make_unique<Model>();
  model_->ir_version = opset_ >= 19 ? 9 : 8;
  model_->opset_imports = {{"", opset_}};
  model_->producer_name = "aic-graph-fuzz";
  main_ = cur_ = model_->graph.get();
  main_->name = "fuzz";
  pool_ = &main_pool_;

  // Inputs: one family of shapes, 1-3 inputs, maybe a symbolic batch/sequence.
  int family = static_cast<int>(Int(0, 3));
  bool sym_batch = Chance(0.4), sym_seq = Chance(0.25);
  symbols_["batch"] = Int(1, 3);
  symbols_["seq"] = Int(1, 6);
  auto batch = [&]() -> Dim { return sym_batch ? Dim::Symbol("batch") : Dim(symbols_["batch"]); };
  std::vector<Dim> base;
  switch (family) {
    case 0: base = {batch(), Int(1, 6), Int(3, 9), Int(3, 9)}; break;                                     // image
    case 1: base = {batch(), sym_seq ? Dim::Symbol("seq") : Dim(symbols_["seq"]), Int(2, 16)}; break;  // sequence
    case 2: base = {Int(1, 8), Int(1, 12)}; break;                                                         // matrix
    default: base = {Int(1, 16)}; break;                                                                   // vector
  }
  int inputs = static_cast<int>(Int(1, 3));
  for (int i = 0; i < inputs; ++i) {
    std::vector<Dim> dims = base;
    if (i > 0 && Chance(0.5)) {
      for (Dim& d : dims) {
        if (d.is_value() && Chance(0.3)) d = Dim(1);
      }
    }
    Value* v = main_->AddValue(absl::StrCat("input_", i), TypeInfo::Tensor(DType::kFloat, Shape(dims)));
    main_->AddInput(v);
    Add(v, /*exact=*/true);
  }

  const std::vector<Recipe>& recipes = Recipes();
  double total = 0;
  for (const Recipe& r : recipes) total += r.weight;
  int steps = static_cast<int>(Int(1, options_.max_steps));
  for (int s = 0, tries = 0; s < steps && tries < steps * 4; ++tries) {
    double pick = Real(0, total);
    const Recipe* r = &recipes.back();
    for (const Recipe& cand : recipes) {
      if (pick < cand.weight) {
        r = &cand;
        break;
      }
      pick -= cand.weight;
    }
    if (opset_ < r->min_opset) continue;
    if (!options_.control_flow && (r->fn == &Generator::If || r->fn == &Generator::Loop)) continue;
    size_t nodes_before = main_->num_nodes();
    size_t pool_before = pool_->size();
    std::set<Value*> inits_before(main_->initializers().begin(), main_->initializers().end());
    bool ok = (this->*(r->fn))() && InferNow();
    if (ok) {
      // Every new value must have a known type (the oracles feed and compare them).
      for (size_t i = pool_before; i < pool_->size() && ok; ++i) ok = Dims((*pool_)[i].v).has_value();
    }
    if (!ok) {
      std::set<const Node*> added;
      for (size_t i = nodes_before; i < main_->num_nodes(); ++i) added.insert(main_->nodes()[i].get());
      main_->RemoveNodesIf([&](const Node& n) { return added.count(&n) > 0; });
      std::vector<Value*> now(main_->initializers().begin(), main_->initializers().end());
      for (Value* v : now) {
        if (!inits_before.count(v)) main_->ClearInitializer(v);
      }
      pool_->resize(pool_before);
      continue;
    }
    recipes_.push_back(r->name);
    ++s;
  }
  return Finish();
}

absl::StatusOr<GeneratedModel> Generator::Finish() {
  if (main_->num_nodes() == 0) return absl::NotFoundError("no node could be built");
  // Outputs: every value nobody reads, so nothing is dead (ONNX Runtime has
  // mishandled dead subgraphs its fusions matched).
  std::set<const Value*> read;
  std::function<void(const Graph&)> mark = [&](const Graph& g) {
    for (const auto& n : g.nodes()) {
      for (const Value* v : n->inputs()) read.insert(v);
      for (const Graph* b : n->Subgraphs()) mark(*b);
    }
  };
  mark(*main_);
  std::vector<std::string> loose;
  for (const Entry& e : main_pool_) {
    if (read.count(e.v) || e.v->is_graph_input()) continue;
    main_->AddOutput(e.v);
    if (e.loose) loose.push_back(e.v->name());
  }
  if (main_->outputs().empty()) main_->AddOutput(main_pool_.back().v);
  // Inputs nobody reads go.
  std::vector<Value*> used_inputs;
  for (Value* v : main_->inputs()) {
    if (read.count(v) || std::count(main_->outputs().begin(), main_->outputs().end(), v)) used_inputs.push_back(v);
  }
  main_->set_inputs(used_inputs);
  if (!loose.empty()) model_->metadata_props.push_back({kLooseOutputsKey, absl::StrJoin(loose, ",")});

  // Feeds: uniform in [-s, s], smaller s until every intermediate is finite.
  for (double scale : {2.0, 1.0, 0.5, 0.25}) {
    exec::Feeds feeds;
    for (const Value* v : main_->inputs()) {
      std::vector<int64_t> d = *Dims(v);
      int64_t n = 1;
      for (int64_t x : d) n *= x;
      std::vector<float> vals(static_cast<size_t>(n));
      for (float& x : vals) x = static_cast<float>(Real(-scale, scale));
      feeds[v->name()] = RuntimeValue(Tensor::FromVector<float>(vals, d));
    }
    if (FeedsAreFinite(feeds)) {
      GeneratedModel out;
      out.model = std::move(model_);
      out.feeds = std::move(feeds);
      out.recipes = std::move(recipes_);
      return out;
    }
  }
  return absl::NotFoundError("no feeds keep every intermediate finite");
}

bool IsTame(const Tensor& t) {
  constexpr double kLimit = 1e4;
  if (t.dtype() == DType::kFloat) {
    for (float x : t.span<float>()) {
      if (!std::isfinite(x) || std::fabs(x) > kLimit) return false;
    }
  } else if (t.dtype() == DType::kFloat16) {
    for (uint16_t h : t.span<uint16_t>()) {
      float x = HalfToFloat(h);
      if (!std::isfinite(x) || std::fabs(x) > kLimit) return false;
    }
  } else if (t.dtype() == DType::kDouble) {
    for (double x : t.span<double>()) {
      if (!std::isfinite(x) || std::fabs(x) > kLimit) return false;
    }
  }
  return true;
}

bool Generator::FeedsAreFinite(const exec::Feeds& feeds) {
  session::SessionOptions so;
  so.device = "reference";
  so.opt_level = 0;
  auto session = session::Session::Create(*model_, so);
  if (!session.ok()) return false;
  bool tame = true;
  exec::NodeObserver observer = [&](const Node&, const std::vector<RuntimeValue>& outs) {
    for (const RuntimeValue& v : outs) {
      if (v.is_tensor() && !IsTame(v.tensor)) tame = false;
    }
  };
  exec::RunOptions ro;
  ro.observer = &observer;
  auto outs = (*session)->Run(feeds, ro);
  return outs.ok() && tame;
}

}  // namespace

absl::StatusOr<GeneratedModel> GenerateModel(uint64_t seed, const GenOptions& options) {
  Generator g(seed, options);
  return g.Run();
}

std::vector<std::string> RecipeNames() {
  std::vector<std::string> names;
  for (const Recipe& r : Recipes()) names.push_back(r.name);
  return names;
}

}  // namespace aic::graph_fuzz
