// LSTM, GRU and RNN on the CPU backend's own kernel (kernels/recurrence.h,
// lowered by ops_native_rnn.cc): on random inputs each case must agree with
// the reference kernel (ops/rnn/recurrence.cc, in double) and compile to a
// "recurrence" step with no reference fallback. The cases cover directions,
// batch and sequence sizes, ragged sequence_lens, initial states, LSTM
// peepholes / clip / input_forget, GRU linear_before_reset, non-default
// activations with alpha/beta, layout=1 and absent outputs; and the
// declines: computed weights run the reference kernel.
#include <omp.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "ops/rnn/recurrence.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

struct RnnCase {
  std::string op = "LSTM";
  std::string direction = "forward";
  int64_t batch = 1, seq = 1, input = 7, hidden = 20;
  std::vector<int32_t> lens = {};  // sequence_lens; empty: absent
  bool initial = false;       // initial_h (and initial_c)
  bool bias = true;
  bool peepholes = false;
  float clip = 0;  // 0: no attribute
  bool input_forget = false;
  int linear_before_reset = 0;
  std::vector<std::string> activations = {};
  std::vector<float> alpha = {}, beta = {};
  int64_t layout = 0;
  bool y = true, yh = true, yc = true;

  std::string Name() const {
    return absl::StrCat(op, " ", direction, " B=", batch, " S=", seq, " I=", input, " H=", hidden,
                        " lens=[", absl::StrJoin(lens, ","), "] initial=", initial, " bias=", bias, " peep=", peepholes,
                        " clip=", clip, " input_forget=", input_forget, " lbr=", linear_before_reset, " acts=[",
                        absl::StrJoin(activations, ","), "] layout=", layout, " outputs=", y, yh, yc);
  }
};

RnnCell CellOf(const std::string& op) {
  return op == "LSTM" ? RnnCell::kLstm : op == "GRU" ? RnnCell::kGru : RnnCell::kRnn;
}

int Dirs(const RnnCase& c) { return c.direction == "bidirectional" ? 2 : 1; }

std::vector<int64_t> XDims(const RnnCase& c) {
  return c.layout == 0 ? std::vector<int64_t>{c.seq, c.batch, c.input} : std::vector<int64_t>{c.batch, c.seq, c.input};
}

std::vector<int64_t> StateDims(const RnnCase& c) {
  return c.layout == 0 ? std::vector<int64_t>{Dirs(c), c.batch, c.hidden}
                       : std::vector<int64_t>{c.batch, Dirs(c), c.hidden};
}

// The op over graph input x (and sequence_lens / initial states when the
// case has them), W R B P as initializers, or W as a graph input when
// `computed_w`; each requested output is a graph output.
std::unique_ptr<Model> Build(const RnnCase& c, bool computed_w = false) {
  const bool lstm = c.op == "LSTM";
  const int64_t d = Dirs(c), g = RnnNumGates(CellOf(c.op)), h = c.hidden;
  GraphBuilder b;
  std::vector<Value*> ins(lstm ? 8 : 6, nullptr);
  ins[0] = b.Input("x", DType::kFloat, D(XDims(c)));
  ins[1] = computed_w ? b.Input("w", DType::kFloat, D({d, g * h, c.input}))
                      : b.Constant("w", RandomF32({d, g * h, c.input}, 11, -0.6f, 0.6f));
  ins[2] = b.Constant("r", RandomF32({d, g * h, h}, 12, -0.6f, 0.6f));
  if (c.bias) ins[3] = b.Constant("b", RandomF32({d, 2 * g * h}, 13, -0.5f, 0.5f));
  if (!c.lens.empty()) ins[4] = b.Input("lens", DType::kInt32, {c.batch});
  if (c.initial) {
    ins[5] = b.Input("h0", DType::kFloat, D(StateDims(c)));
    if (lstm) ins[6] = b.Input("c0", DType::kFloat, D(StateDims(c)));
  }
  if (lstm && c.peepholes) ins[7] = b.Constant("p", RandomF32({d, 3 * h}, 14, -0.5f, 0.5f));
  while (!ins.empty() && ins.back() == nullptr) ins.pop_back();

  std::vector<Value*> outs = {c.y ? b.graph().AddValue("y") : nullptr, c.yh ? b.graph().AddValue("y_h") : nullptr};
  if (lstm) outs.push_back(c.yc ? b.graph().AddValue("y_c") : nullptr);
  while (!outs.empty() && outs.back() == nullptr) outs.pop_back();
  Node* node = b.graph().AddNode(c.op, ins, outs, "rnn");
  node->attributes.push_back(Attribute::Int("hidden_size", h));
  node->attributes.push_back(Attribute::String("direction", c.direction));
  if (c.clip != 0) node->attributes.push_back(Attribute::Float("clip", c.clip));
  if (c.input_forget) node->attributes.push_back(Attribute::Int("input_forget", 1));
  if (c.op == "GRU") node->attributes.push_back(Attribute::Int("linear_before_reset", c.linear_before_reset));
  if (!c.activations.empty()) node->attributes.push_back(Attribute::Strings("activations", c.activations));
  if (!c.alpha.empty()) node->attributes.push_back(Attribute::Floats("activation_alpha", c.alpha));
  if (!c.beta.empty()) node->attributes.push_back(Attribute::Floats("activation_beta", c.beta));
  if (c.layout != 0) node->attributes.push_back(Attribute::Int("layout", c.layout));
  for (Value* o : outs) {
    if (o != nullptr) b.Output(o);
  }
  return b.Build(14);
}

std::map<std::string, RuntimeValue> Feeds(const RnnCase& c, bool computed_w = false) {
  std::map<std::string, RuntimeValue> feeds = {{"x", RandomF32(XDims(c), 1, -1.5f, 1.5f)}};
  if (!c.lens.empty()) feeds["lens"] = Tensor::FromVector<int32_t>(c.lens, {c.batch});
  if (c.initial) {
    feeds["h0"] = RandomF32(StateDims(c), 2, -1.0f, 1.0f);
    if (c.op == "LSTM") feeds["c0"] = RandomF32(StateDims(c), 3, -1.0f, 1.0f);
  }
  if (computed_w) {
    const int64_t g = RnnNumGates(CellOf(c.op));
    feeds["w"] = RandomF32({Dirs(c), g * c.hidden, c.input}, 11, -0.6f, 0.6f);
  }
  return feeds;
}

void ExpectNative(const RnnCase& c) {
  SCOPED_TRACE(c.Name());
  auto model = Build(c);
  std::string plan = RunBoth(*model, Feeds(c));
  EXPECT_NE(plan.find("recurrence\t"), std::string::npos) << plan;
}

// Directions x batch {1, 3} x seq {1, 5}, with and without initial states.
void ExpectAllShapes(RnnCase base) {
  for (const char* dir : {"forward", "reverse", "bidirectional"}) {
    for (int64_t batch : {1, 3}) {
      for (int64_t seq : {1, 5}) {
        for (bool initial : {false, true}) {
          RnnCase c = base;
          c.direction = dir;
          c.batch = batch;
          c.seq = seq;
          c.initial = initial;
          ExpectNative(c);
        }
      }
    }
  }
}

TEST(RecurrenceTest, LstmDirectionsBatchesAndSequences) { ExpectAllShapes({.op = "LSTM"}); }

TEST(RecurrenceTest, GruDirectionsBatchesAndSequences) {
  ExpectAllShapes({.op = "GRU", .linear_before_reset = 0});
  ExpectAllShapes({.op = "GRU", .linear_before_reset = 1});
}

TEST(RecurrenceTest, RnnDirectionsBatchesAndSequences) { ExpectAllShapes({.op = "RNN"}); }

// Rows shorter than S (one of length 0): Y stays zero past a row's length
// (before it, for reverse), Y_h holds the row's last state.
TEST(RecurrenceTest, SequenceLensShorterThanSequence) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    for (const char* dir : {"forward", "reverse", "bidirectional"}) {
      for (bool initial : {false, true}) {
        for (int64_t layout : {0, 1}) {
          ExpectNative({.op = op, .direction = dir, .batch = 3, .seq = 5, .lens = {5, 2, 0}, .initial = initial,
                        .layout = layout});
        }
      }
      ExpectNative({.op = op, .direction = dir, .batch = 1, .seq = 5, .lens = {3}});
      ExpectNative({.op = op, .direction = dir, .batch = 3, .seq = 5, .lens = {5, 5, 5}});
    }
  }
  ExpectNative({.op = "GRU", .batch = 3, .seq = 5, .lens = {4, 1, 3}, .linear_before_reset = 1});
}

TEST(RecurrenceTest, LstmPeepholesClipAndInputForget) {
  for (const char* dir : {"forward", "reverse", "bidirectional"}) {
    ExpectNative({.direction = dir, .batch = 3, .seq = 5, .initial = true, .peepholes = true});
    ExpectNative({.direction = dir, .batch = 3, .seq = 5, .initial = true, .clip = 0.4f});
    ExpectNative({.direction = dir, .batch = 3, .seq = 5, .initial = true, .input_forget = true});
    ExpectNative({.direction = dir,
                  .batch = 3,
                  .seq = 5,
                  .lens = {3, 5, 1},
                  .initial = true,
                  .peepholes = true,
                  .clip = 0.7f,
                  .input_forget = true});
  }
  ExpectNative({.batch = 2, .seq = 4, .bias = false, .peepholes = true});
}

TEST(RecurrenceTest, GruAndRnnClipAndNoBias) {
  for (int lbr : {0, 1}) {
    ExpectNative({.op = "GRU", .batch = 3, .seq = 5, .initial = true, .clip = 0.3f, .linear_before_reset = lbr});
    ExpectNative({.op = "GRU", .batch = 3, .seq = 5, .initial = true, .bias = false, .linear_before_reset = lbr});
  }
  ExpectNative({.op = "RNN", .batch = 3, .seq = 5, .initial = true, .clip = 0.5f});
  ExpectNative({.op = "RNN", .batch = 3, .seq = 5, .bias = false});
}

// Every activation the ops name, alpha/beta consumed in order by the
// functions that take them; a bidirectional op's second list differs.
TEST(RecurrenceTest, NonDefaultActivations) {
  ExpectNative({.op = "LSTM",
                .batch = 3,
                .seq = 5,
                .initial = true,
                .activations = {"HardSigmoid", "LeakyRelu", "Tanh"},
                .alpha = {0.3f, 0.1f},
                .beta = {0.45f}});
  ExpectNative({.op = "LSTM",
                .direction = "bidirectional",
                .batch = 3,
                .seq = 5,
                .initial = true,
                .activations = {"Sigmoid", "Tanh", "Tanh", "HardSigmoid", "ScaledTanh", "Softsign"},
                .alpha = {0.25f, 1.5f},
                .beta = {0.5f, 0.7f}});
  ExpectNative({.op = "LSTM",
                .direction = "bidirectional",
                .batch = 2,
                .seq = 3,
                .activations = {"Sigmoid", "Elu", "Softplus"},  // one list for both directions
                .alpha = {0.8f}});
  ExpectNative({.op = "GRU",
                .batch = 3,
                .seq = 5,
                .initial = true,
                .linear_before_reset = 1,
                .activations = {"HardSigmoid", "Affine"},
                .alpha = {0.2f, 0.5f},
                .beta = {0.5f, -0.1f}});
  ExpectNative({.op = "GRU",
                .direction = "reverse",
                .batch = 3,
                .seq = 5,
                .activations = {"Sigmoid", "ThresholdedRelu"},
                .alpha = {0.1f}});
  ExpectNative({.op = "RNN", .batch = 3, .seq = 5, .initial = true, .activations = {"Relu"}});
  ExpectNative({.op = "RNN",
                .direction = "bidirectional",
                .batch = 3,
                .seq = 5,
                .activations = {"LeakyRelu", "Softplus"},
                .alpha = {0.05f}});
  // Case-insensitive names, as ParseRnnActivations reads them.
  ExpectNative({.op = "RNN", .batch = 2, .seq = 3, .activations = {"tanh"}});
}

TEST(RecurrenceTest, BatchFirstLayout) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    for (const char* dir : {"forward", "reverse", "bidirectional"}) {
      ExpectNative({.op = op, .direction = dir, .batch = 3, .seq = 5, .initial = true, .layout = 1});
    }
  }
}

TEST(RecurrenceTest, AbsentOutputs) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    ExpectNative({.op = op, .batch = 3, .seq = 5, .initial = true, .y = false});               // only the states
    ExpectNative({.op = op, .batch = 3, .seq = 5, .initial = true, .yh = false, .yc = false});  // only Y
  }
  ExpectNative({.op = "LSTM", .batch = 3, .seq = 5, .y = false, .yh = false});  // only Y_c
  ExpectNative({.op = "LSTM", .direction = "bidirectional", .batch = 3, .seq = 5, .lens = {2, 5, 0}, .layout = 1,
                .yc = false});
}

// silero VAD's LSTM: input and hidden 128, one step of one row, states given.
TEST(RecurrenceTest, SileroShapedLstm) {
  ExpectNative({.batch = 1, .seq = 1, .input = 128, .hidden = 128, .initial = true});
  ExpectNative({.batch = 2, .seq = 9, .input = 128, .hidden = 128, .initial = true});
}

// Batches of 5 and 9 rows: the products' four-row tiles and their 1-3 row
// remainders, hidden sizes that leave a partial 16-column panel (20) or
// none (32), ragged lengths; on two threads, where batches of 4 rows and
// more split their rows over the threads for the whole step.
TEST(RecurrenceTest, WideBatchesOnTwoThreads) {
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    for (const char* op : {"LSTM", "GRU", "RNN"}) {
      for (int64_t hidden : {20, 32}) {
        for (int lbr : {0, 1}) {
          if (lbr == 1 && std::string(op) != "GRU") continue;
          SCOPED_TRACE(absl::StrCat(threads, " threads"));
          ExpectNative({.op = op, .direction = "bidirectional", .batch = 9, .seq = 4, .hidden = hidden,
                        .lens = {4, 1, 0, 3, 4, 2, 4, 4, 3}, .initial = true, .linear_before_reset = lbr});
          ExpectNative({.op = op, .batch = 5, .seq = 3, .hidden = hidden, .linear_before_reset = lbr});
        }
      }
    }
  }
  omp_set_num_threads(saved);
}

// Weights computed at run time: the reference kernel runs the node.
TEST(RecurrenceTest, ComputedWeightsRunTheReference) {
  RnnCase c{.batch = 3, .seq = 5, .initial = true};
  auto model = Build(c, /*computed_w=*/true);
  std::string plan = RunBoth(*model, Feeds(c, /*computed_w=*/true), /*max_fallbacks=*/1);
  EXPECT_EQ(plan.find("recurrence\t"), std::string::npos) << plan;
  EXPECT_NE(plan.find("fallback\t"), std::string::npos) << plan;
}

// A sequence length past S is the caller's error, named with the node.
TEST(RecurrenceTest, SequenceLengthOutOfRangeIsAnError) {
  RnnCase c{.batch = 3, .seq = 5, .lens = {5, 6, 1}};
  auto model = Build(c);
  CpuExecutor cpu(*model);
  auto got = cpu.Run(Feeds(c));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
  EXPECT_NE(got.status().message().find("rnn"), std::string::npos) << got.status();
}

}  // namespace
}  // namespace aic::cpu
