// One ONNX recurrent op (RNN, GRU, LSTM) over dense f32, with the semantics
// of the reference kernel (ops/rnn/recurrence.cc): its gate order (LSTM
// i o f c, GRU z r h), clip, input_forget, peepholes, linear_before_reset,
// each direction's activations, sequence_lens (a row's steps past its length
// leave Y zero and its state at the last value) and both layouts. It computes
// in f32 where the reference computes in double (sgemm products, a rational
// tanh and ExpApprox's sigmoid), so results agree within 1e-5, not bitwise
// (tests/exec/cpu/recurrence_test.cc). The weights are constants, prepared once (the
// biases summed, absent B and P as zeros, the activations decoded), because
// the reference converts them to double on every run: silero VAD's small
// LSTM (hidden 128, one step) on the reference was nearly all of that model's time.
// The input projection of every time step is one GEMM (oneDNN's sgemm) before
// the time loop; each step is one GEMM of the state with R (two for GRU's
// default linear_before_reset=0, whose candidate multiplies R by r⊙h), then
// the gate math one batch row at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "exec/cpu/kernels/panel_gemm.h"
#include "graph/tensor.h"
#include "ops/rnn/recurrence.h"
#include "ops/rnn/rnn_activation.h"

namespace aic::cpu::kernels {

struct RecurrenceConfig {
  RnnCell cell = RnnCell::kLstm;
  int64_t seq = 1, batch = 1, input = 1, hidden = 1;
  int dirs = 1;
  bool reverse = false;      // direction=reverse: the one direction walks the sequence backwards
  bool batch_first = false;  // layout=1: X [B, S, I], Y [B, S, D, H], states [B, D, H]
  float clip = 0;            // <= 0: none
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM
};

// One run's operands; null where absent (an optional input not given, an
// output not requested).
struct RecurrenceIo {
  const float* x = nullptr;      // [S, B, I] or [B, S, I]
  const void* lens = nullptr;    // sequence_lens, B entries
  bool lens_int64 = false;       // else int32
  const float* h0 = nullptr;     // initial_h, in the states' layout
  const float* c0 = nullptr;     // initial_c (LSTM)
  float* y = nullptr;
  float* yh = nullptr;
  float* yc = nullptr;           // LSTM
  float* scratch = nullptr;      // Recurrence::ScratchFloats() floats
};

// An RNN activation (rnn_activation.h) decoded for f32 row loops.
struct GateActivation {
  enum class Kind {
    kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu, kSoftsign,
    kSoftplus,
  };
  Kind kind = Kind::kTanh;
  float alpha = 0, beta = 0;
};

class Recurrence {
 public:
  // w [D, G·H, I] (held, not copied) and r [D, G·H, H] (read into panels,
  // then let go) f32 tensors; b
  // [D, 2·G·H] and p [D, 3·H] (LSTM) null when absent; `acts` as
  // ParseRnnActivations gives them (one direction's after another's).
  Recurrence(const RecurrenceConfig& cfg, Tensor w, Tensor r, const float* b, const float* p,
             const std::vector<RnnActivation>& acts);
  // The scratch one run needs: the input projection [S·B, G·H], the
  // recurrent product [B, G·H] and three [B, H] rows (h, c, and GRU's r⊙h
  // or LSTM's activated c).
  int64_t ScratchFloats() const;
  // InvalidArgument for a sequence length outside [0, S].
  absl::Status Run(const RecurrenceIo& io) const;

 private:
  struct Direction {
    const float* w;              // [G·H, I]
    PanelMatrix rec;             // Rᵀ packed (GRU without linear_before_reset: z and r's rows only)
    PanelMatrix rec_candidate;   // GRU without linear_before_reset: the candidate's rows of R
    std::vector<float> bias;     // Wb + Rb per gate (Wb only for linear_before_reset's candidate)
    std::vector<float> rec_bias; // GRU linear_before_reset: the candidate's Rb, inside r⊙(...)
    std::vector<float> peep;     // LSTM: P (i, o, f), zeros when absent, as the reference
    GateActivation act[3];
  };
  RecurrenceConfig cfg_;
  int64_t gates_;
  Tensor w_;
  std::vector<Direction> dirs_;
};

}  // namespace aic::cpu::kernels
