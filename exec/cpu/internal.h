// Internals shared by the CPU executor's files: slots (where a value's bytes
// live and in which layout), steps (one kernel call each), and the Plan that
// owns them, the arena and the packed constants.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "exec/cpu/plan.h"
#include "exec/cpu/widen_half.h"
#include "graph/model.h"
#include "graph/runtime_value.h"
#include "graph/tensor.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace aic::cpu {

using dnnl::memory;

// One value in one layout. A value that oneDNN keeps blocked and some plain
// consumer needs gets a second slot (its plain twin) filled by a reorder step.
struct Slot {
  enum class Storage : uint8_t {
    kArena,     // planned bytes in the arena
    kConstant,  // owned or borrowed constant (weights, folded values)
    kFeed,      // a graph input, pointed at the caller's tensor each run
    kDynamic,   // produced by a reference kernel each run (its own allocation)
    kOutput,    // a graph output: a fresh tensor each run, written in place by its producer
  };
  std::string name;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  bool static_shape = true;  // dims known at compile time
  memory::desc md;      // the bytes' layout; zero md for non-f32 values
  bool plain = true;    // dense row-major
  Storage storage = Storage::kArena;
  int buffer = -1;      // kArena: index into Plan::buffers
  int alias_of = -1;    // kArena views: the slot whose bytes these are
  Tensor tensor;        // kConstant/kFeed/kDynamic data; kArena plain: a view of the arena
  void* ptr = nullptr;  // current address of the bytes
  // kFeed/kDynamic: this run's value when it is not a tensor (a sequence, an
  // empty optional); `tensor` is undefined then.
  bool holds_other = false;
  RuntimeValue other;
  // An output copied out of the arena (a view, an in-place result): the last
  // run's copy, written again once its caller has let it go.
  Tensor copied_out;
  size_t bytes() const { return md.get_size(); }
  RuntimeValue Get() const { return holds_other ? other : RuntimeValue(tensor); }
  void Set(RuntimeValue v) {
    holds_other = !v.is_tensor();
    if (holds_other) {
      other = std::move(v);
      tensor = Tensor();
      ptr = nullptr;
    } else {
      other = RuntimeValue();
      tensor = std::move(v.tensor);
      ptr = const_cast<void*>(tensor.raw_data());
    }
  }
};

struct ArenaBuffer {
  size_t size = 0;
  int first = -1;
  int last = -1;
  size_t offset = 0;
};

class Plan;

class Step {
 public:
  virtual ~Step() = default;
  // Creates memory objects once the arena is placed.
  virtual void Bind(Plan& plan) {}
  virtual absl::Status Execute(Plan& plan) = 0;

  std::vector<int> reads;   // slots read
  std::vector<int> writes;  // slots written
  std::string kind;         // "conv", "reorder", "fallback", ...
  std::string label;        // node description and fused post-ops
  std::string impl;         // oneDNN's implementation name for a primitive ("jit:avx512_core"); empty for ours
  bool inplace_ok = false;  // writes[0] may take reads[0]'s bytes when it dies here
  // A slot whose values writes[0] must hold when the step starts (oneDNN's
  // sum post-op adds into its destination): the arena gives both one buffer
  // where the slot dies here (ShareInPlace), else Execute copies them in.
  int accumulate = -1;
};

class Plan {
 public:
  Plan() : engine(dnnl::engine::kind::cpu, 0), stream(engine) {}

  dnnl::engine engine;
  dnnl::stream stream;
  std::unique_ptr<Model> model;  // the shape-specialized clone fallback nodes point into
  std::deque<Tensor> constants;  // folded values and packed weights
  std::vector<Slot> slots;
  std::vector<std::unique_ptr<Step>> steps;
  std::vector<ArenaBuffer> buffers;
  std::shared_ptr<Buffer> arena;
  std::vector<std::pair<std::string, int>> feeds;  // graph input -> slot
  std::vector<std::string> output_names;
  std::vector<int> outputs;                        // plain slot per graph output
  PlanStats stats;
  int threads = 0;
  // What widening the model's half values to f32 did (widen_half.h): the
  // values steps round where they write them (half_storage.h), and the half
  // type of every widened value (fallback steps run reference kernels in it).
  StoredHalfValues stored_half;
  absl::flat_hash_map<const Value*, DType> declared_half;
  absl::flat_hash_map<const Buffer*, Tensor> half_originals;  // WidenedHalf::originals
};

// A oneDNN primitive over slots; `md` may reinterpret a slot's bytes (same size).
class DnnlStep : public Step {
 public:
  struct Arg {
    int arg;
    int slot;
    memory::desc md;
  };
  dnnl::primitive primitive;
  std::vector<Arg> args;
  void AddArg(int arg, int slot, const memory::desc& md, bool is_output);
  void Bind(Plan& plan) override;
  absl::Status Execute(Plan& plan) override;

 private:
  std::unordered_map<int, memory> bound_;
  std::vector<std::pair<memory, int>> refresh_;  // non-arena slots: pointer set per run
};

// Dense row-major desc of f32 dims (scalars become {1}).
memory::desc PlainMd(const std::vector<int64_t>& dims);
// `md` with its element type replaced (layout, dims and strides kept).
memory::desc WithDataType(memory::desc md, memory::data_type type);
memory::dims ToDnnlDims(const std::vector<int64_t>& dims);
// How an f32 [N, C, spatial...] value (rank 3 to 5) laid out as `md` keeps
// its channels: C when channels-last, 16 or 8 when channel-blocked (the last
// block padded when C is not a multiple), 0 for anything else (plain
// included: callers test `Slot::plain` first).
int64_t ChannelBlockOf(const memory::desc& md, const std::vector<int64_t>& dims);
// The f32 channel-blocked desc of `dims` (rank 3 to 5) with `block` (8 or
// 16) channels per block: nCw8c .. nCdhw16c.
memory::desc ChannelBlockedMd(const std::vector<int64_t>& dims, int64_t block);
// The dense f32 channels-last desc of `dims` (rank 3 to 5): nwc .. ndhwc.
memory::desc ChannelsLastMd(const std::vector<int64_t>& dims);

// Builds the steps (compile.cc) and places the arena (arena.cc).
absl::Status LowerModel(Plan& plan, const CpuOptions& options);
absl::Status PlaceArena(Plan& plan);

}  // namespace aic::cpu
