// The shared machinery of RNN, GRU and LSTM: input layout, per-direction
// weights, sequence lengths, initial states, and the time loop are the same
// for all three; only the cell update differs. Shape inference and the
// reference kernel both take the cell kind.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ops/kernel_context.h"
#include "ops/op_context.h"

namespace aic {

enum class RnnCell { kRnn, kGru, kLstm };

const char* RnnCellName(RnnCell cell);
// Gates stacked in W and R: 1 (RNN), 3 (GRU: z r h), 4 (LSTM: i o f c).
int RnnNumGates(RnnCell cell);
// One direction's default activation names.
std::vector<std::string> RnnDefaultActivations(RnnCell cell);
// 1, or 2 for direction=bidirectional; -1 for an unknown direction string.
int RnnNumDirections(const Node& node);

absl::Status InferRecurrence(OpContext& ctx, RnnCell cell);
absl::Status RecurrenceKernel(KernelContext& ctx, RnnCell cell);

}  // namespace aic
