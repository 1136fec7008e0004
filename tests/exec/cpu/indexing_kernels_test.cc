// The index-driven gathers and scatters on our own kernels
// (exec/cpu/ops_native_indexing.cc, kernels/gather_elements.h, gather.h,
// scatter.h) against the reference kernels: GatherElements, GatherND,
// ScatterElements and ScatterND over ranks and axes, int32 and int64 indices
// with negative ones, f32, int64, float16 (moved as 2-byte elements) and
// byte-sized data, indices smaller than the data, GatherND's batch_dims,
// each scatter reduction with duplicate indices; each case checks the plan
// ran it natively. Out-of-range indices are errors naming the node, the
// index and its position; the threaded paths give the serial results.
#include <omp.h>

#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "exec/cpu/internal.h"
#include "exec/cpu/kernels/gather.h"
#include "exec/cpu/kernels/gather_elements.h"
#include "exec/cpu/kernels/scatter.h"
#include "ops/util/float_convert.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

Tensor RandomData(DType dt, const std::vector<int64_t>& dims, uint32_t seed, int lo = -1000, int hi = 1000) {
  switch (dt) {
    case DType::kFloat16: return NarrowFromFloat(RandomF32(dims, seed), DType::kFloat16);
    case DType::kInt64: return RandomInts<int64_t>(dims, seed, lo, hi);
    case DType::kInt32: return RandomInts<int32_t>(dims, seed, lo, hi);
    case DType::kUint8: return RandomInts<uint8_t>(dims, seed, 0, 255);
    case DType::kBool: return RandomBool(dims, seed);
    default: return RandomF32(dims, seed, static_cast<float>(lo) / 300, static_cast<float>(hi) / 300);
  }
}

// Indices of `dims` whose component j along the last dim (k of them, or all
// when per_column is empty) lies in [-range, range), range = per_column[j]
// or `range`: negative ones included.
Tensor RandomIndices(DType it, const std::vector<int64_t>& dims, uint32_t seed, int64_t range,
                     const std::vector<int64_t>& per_column = {}) {
  Tensor t(it, dims);
  std::mt19937 rng(seed);
  int64_t k = per_column.empty() ? 1 : static_cast<int64_t>(per_column.size());
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    int64_t r = per_column.empty() ? range : per_column[i % k];
    int64_t v = static_cast<int64_t>(rng() % static_cast<uint32_t>(2 * r)) - r;
    if (it == DType::kInt32) {
      t.mutable_data<int32_t>()[i] = static_cast<int32_t>(v);
    } else {
      t.mutable_data<int64_t>()[i] = v;
    }
  }
  return t;
}

std::string Describe(DType dt, DType it, const std::vector<int64_t>& data, const std::vector<int64_t>& idx) {
  return absl::StrCat(DTypeName(dt), " data ", DimsToString(data), ", ", DTypeName(it), " indices ", DimsToString(idx));
}

// --- GatherElements ---------------------------------------------------------------------

TEST(IndexingKernelsTest, GatherElementsMatchesTheReference) {
  struct Case {
    std::vector<int64_t> data, idx;
    int64_t axis;
  };
  for (const Case& c : {Case{{3, 4}, {3, 4}, 1}, Case{{3, 4}, {5, 4}, 0}, Case{{2, 3, 5}, {2, 3, 5}, -1},
                        Case{{2, 3, 5}, {2, 6, 5}, 1}, Case{{2, 3, 5}, {1, 2, 3}, 2}, Case{{4, 3, 5}, {2, 3, 4}, 0},
                        Case{{2, 3, 4, 5}, {2, 2, 7, 3}, -2}, Case{{7}, {9}, 0}, Case{{1, 12, 32, 32}, {1, 12, 32, 32}, 3},
                        Case{{64, 48, 8}, {64, 48, 8}, 1}}) {
    for (DType it : {DType::kInt64, DType::kInt32}) {
      for (DType dt : {DType::kFloat, DType::kInt64, DType::kFloat16, DType::kUint8}) {
        SCOPED_TRACE(absl::StrCat(Describe(dt, it, c.data, c.idx), " axis ", c.axis));
        int64_t axis = c.axis < 0 ? c.axis + static_cast<int64_t>(c.data.size()) : c.axis;
        GraphBuilder b;
        b.Output(b.Op("GatherElements", {b.Input("d", dt, D(c.data)), b.Input("i", it, D(c.idx))},
                      {Attribute::Int("axis", c.axis)}));
        auto model = b.Build(13);
        std::string plan = RunBoth(*model, {{"d", RandomData(dt, c.data, 5)},
                                            {"i", RandomIndices(it, c.idx, 4, c.data[axis])}});
        EXPECT_NE(plan.find("gather_elements"), std::string::npos) << plan;
      }
    }
  }
}

// --- GatherND ---------------------------------------------------------------------------

TEST(IndexingKernelsTest, GatherNDMatchesTheReference) {
  struct Case {
    std::vector<int64_t> data, idx;
    int64_t batch_dims;
  };
  for (const Case& c : {Case{{2, 2}, {2, 2}, 0}, Case{{2, 2}, {2, 1}, 0}, Case{{5, 6, 7}, {4, 3}, 0},
                        Case{{5, 6, 7}, {2, 3, 2}, 0}, Case{{2, 2, 2}, {2, 1}, 1}, Case{{3, 4, 5}, {3, 2, 2}, 1},
                        Case{{2, 3, 4, 5}, {2, 3, 6, 1}, 2}, Case{{2, 3, 4, 5}, {2, 2}, 1}, Case{{64, 300}, {500, 1}, 0}}) {
    for (DType it : {DType::kInt64, DType::kInt32}) {
      for (DType dt : {DType::kFloat, DType::kInt64, DType::kFloat16, DType::kBool}) {
        SCOPED_TRACE(absl::StrCat(Describe(dt, it, c.data, c.idx), " batch_dims ", c.batch_dims));
        int64_t k = c.idx.back();
        std::vector<int64_t> ranges(c.data.begin() + c.batch_dims, c.data.begin() + c.batch_dims + k);
        GraphBuilder b;
        b.Output(b.Op("GatherND", {b.Input("d", dt, D(c.data)), b.Input("i", it, D(c.idx))},
                      {Attribute::Int("batch_dims", c.batch_dims)}));
        auto model = b.Build(13);
        std::string plan = RunBoth(*model, {{"d", RandomData(dt, c.data, 5)},
                                            {"i", RandomIndices(it, c.idx, 4, 0, ranges)}});
        EXPECT_NE(plan.find("gather_nd"), std::string::npos) << plan;
      }
    }
  }
}

// --- ScatterND --------------------------------------------------------------------------

// Small index ranges, so tuples repeat: the last write wins (none) or all
// accumulate in order, as in the reference.
TEST(IndexingKernelsTest, ScatterNDMatchesTheReference) {
  struct Case {
    std::vector<int64_t> data, idx;
  };
  for (const Case& c : {Case{{8}, {4, 1}}, Case{{4, 4, 4}, {2, 1}}, Case{{4, 4, 4}, {2, 2, 2}}, Case{{4, 5, 6}, {3, 3}},
                        Case{{3, 5, 7}, {6, 2}}, Case{{16, 4096}, {24, 1}}, Case{{2, 64, 96}, {100, 2}}}) {
    for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
      for (DType it : {DType::kInt64, DType::kInt32}) {
        for (DType dt : {DType::kFloat, DType::kInt64, DType::kInt32, DType::kFloat16, DType::kUint8}) {
          bool arithmetic = std::string(reduction) != "none";
          if (arithmetic && (dt == DType::kFloat16 || dt == DType::kUint8)) continue;  // see HalfReductions below
          SCOPED_TRACE(absl::StrCat(Describe(dt, it, c.data, c.idx), " reduction ", reduction));
          int64_t k = c.idx.back();
          std::vector<int64_t> upd(c.idx.begin(), c.idx.end() - 1);
          upd.insert(upd.end(), c.data.begin() + k, c.data.end());
          std::vector<int64_t> ranges(c.data.begin(), c.data.begin() + k);
          GraphBuilder b;
          b.Output(b.Op("ScatterND",
                        {b.Input("d", dt, D(c.data)), b.Input("i", it, D(c.idx)), b.Input("u", dt, D(upd))},
                        {Attribute::String("reduction", reduction)}));
          auto model = b.Build(18);
          int lo = std::string(reduction) == "mul" ? -6 : -1000, hi = -lo;  // products stay in range
          std::string plan = RunBoth(*model, {{"d", RandomData(dt, c.data, 5, lo, hi)},
                                              {"i", RandomIndices(it, c.idx, 4, 0, ranges)},
                                              {"u", RandomData(dt, upd, 6, lo, hi)}});
          EXPECT_NE(plan.find("scatter_nd"), std::string::npos) << plan;
        }
      }
    }
  }
}

// A computed data value dying at the scatter lends it its bytes (no copy);
// one read again later does not, and keeps its values.
TEST(IndexingKernelsTest, ScatterNDInPlaceAndNot) {
  for (bool read_later : {false, true}) {
    SCOPED_TRACE(read_later ? "data read later" : "data dies at the scatter");
    GraphBuilder b;
    Value* r = b.Op("Relu", {b.Input("x", DType::kFloat, D({6, 32}))});
    Value* s = b.Op("ScatterND", {r, b.Input("i", DType::kInt64, D({3, 1})), b.Input("u", DType::kFloat, D({3, 32}))});
    b.Output(read_later ? b.Op("Add", {s, r}) : b.Op("Neg", {s}));
    auto model = b.Build(13);
    std::map<std::string, RuntimeValue> feeds = {{"x", RandomF32({6, 32}, 1)},
                                                 {"i", Tensor::FromVector<int64_t>({4, -1, 0}, {3, 1})},
                                                 {"u", RandomF32({3, 32}, 2)}};
    RunBoth(*model, feeds);
    CpuExecutor cpu(*model);
    auto plan = cpu.PlanFor(feeds);
    ASSERT_TRUE(plan.ok());
    int data_buffer = -1, out_buffer = -2;
    for (const Slot& slot : (*plan)->slots) {
      if (slot.name == r->name()) data_buffer = slot.buffer;
      if (slot.name == s->name()) out_buffer = slot.buffer;
    }
    EXPECT_EQ(data_buffer == out_buffer, !read_later) << DescribePlan(**plan);
  }
}

// The reference accumulates half values in float and rounds once; these
// stay on it.
TEST(IndexingKernelsTest, HalfReductionsStayOnTheReference) {
  GraphBuilder b;
  b.Output(b.Op("ScatterND",
                {b.Input("d", DType::kFloat16, D({4, 3})), b.Input("i", DType::kInt64, D({3, 1})),
                 b.Input("u", DType::kFloat16, D({3, 3}))},
                {Attribute::String("reduction", "add")}));
  auto model = b.Build(18);
  std::string plan = RunBoth(*model, {{"d", RandomData(DType::kFloat16, {4, 3}, 1)},
                                      {"i", Tensor::FromVector<int64_t>({1, 1, -1}, {3, 1})},
                                      {"u", RandomData(DType::kFloat16, {3, 3}, 2)}},
                             1);
  EXPECT_NE(plan.find("fallback"), std::string::npos) << plan;
}

// --- ScatterElements --------------------------------------------------------------------

TEST(IndexingKernelsTest, ScatterElementsMatchesTheReference) {
  struct Case {
    std::vector<int64_t> data, idx;
    int64_t axis;
  };
  for (const Case& c : {Case{{3, 4}, {2, 4}, 0}, Case{{3, 4}, {3, 7}, 1}, Case{{2, 3, 4}, {2, 5, 4}, 1},
                        Case{{2, 3, 4}, {1, 2, 3}, -1}, Case{{4, 3, 5}, {6, 2, 5}, 0}, Case{{9}, {20}, 0},
                        Case{{8, 64, 64}, {8, 80, 64}, 1}, Case{{32, 700}, {32, 900}, 1}}) {
    for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
      for (DType it : {DType::kInt64, DType::kInt32}) {
        for (DType dt : {DType::kFloat, DType::kInt64, DType::kInt32, DType::kFloat16, DType::kBool}) {
          bool arithmetic = std::string(reduction) != "none";
          if (arithmetic && (dt == DType::kFloat16 || dt == DType::kBool)) continue;
          SCOPED_TRACE(absl::StrCat(Describe(dt, it, c.data, c.idx), " axis ", c.axis, " reduction ", reduction));
          int64_t axis = c.axis < 0 ? c.axis + static_cast<int64_t>(c.data.size()) : c.axis;
          GraphBuilder b;
          b.Output(b.Op("ScatterElements",
                        {b.Input("d", dt, D(c.data)), b.Input("i", it, D(c.idx)), b.Input("u", dt, D(c.idx))},
                        {Attribute::Int("axis", c.axis), Attribute::String("reduction", reduction)}));
          auto model = b.Build(18);
          int lo = std::string(reduction) == "mul" ? -3 : -1000, hi = -lo;
          std::string plan = RunBoth(*model, {{"d", RandomData(dt, c.data, 5, lo, hi)},
                                              {"i", RandomIndices(it, c.idx, 4, c.data[axis])},
                                              {"u", RandomData(dt, c.idx, 6, lo, hi)}});
          EXPECT_NE(plan.find("scatter_elements"), std::string::npos) << plan;
        }
      }
    }
  }
}

// Scatter, ScatterElements' name before opset 11.
TEST(IndexingKernelsTest, ScatterOpset9) {
  GraphBuilder b;
  b.Output(b.Op("Scatter", {b.Input("d", DType::kFloat, D({3, 4})), b.Input("i", DType::kInt64, D({3, 2})),
                            b.Input("u", DType::kFloat, D({3, 2}))},
                {Attribute::Int("axis", 1)}));
  auto model = b.Build(9);
  std::string plan = RunBoth(*model, {{"d", RandomF32({3, 4}, 1)},
                                      {"i", Tensor::FromVector<int64_t>({0, 3, 1, 1, 2, 0}, {3, 2})},
                                      {"u", RandomF32({3, 2}, 2)}});
  EXPECT_NE(plan.find("scatter_elements"), std::string::npos) << plan;
}

// --- out-of-range indices ---------------------------------------------------------------

struct BadCase {
  const char* op;
  std::vector<int64_t> data, idx, upd;
  std::vector<Attribute> attrs;
  std::vector<int64_t> indices;
  const char* want;  // in the message, after the node's name
};

TEST(IndexingKernelsTest, OutOfRangeIndexIsAnErrorNamingTheNode) {
  std::vector<BadCase> cases = {
      {"GatherElements", {3, 4}, {2, 3}, {}, {Attribute::Int("axis", 1)}, {0, 1, 2, 3, 4, -4},
       "index 4 at indices[1, 1] is out of range [-4, 4) for axis 1"},
      {"GatherElements", {3, 4}, {3, 2}, {}, {Attribute::Int("axis", -1)}, {0, 1, 2, -5, 3, 1},
       "index -5 at indices[1, 1] is out of range [-4, 4) for axis 1"},
      {"GatherElements", {3, 4}, {2, 2}, {}, {}, {0, -4, 1, 2}, "index -4 at indices[0, 1] is out of range [-3, 3) for axis 0"},
      {"GatherND", {2, 3, 4}, {2, 2}, {}, {Attribute::Int("batch_dims", 1)}, {1, 4, 2, 0},
       "index 4 at indices[0, 1] is out of range [-4, 4) for axis 2"},
      {"ScatterND", {3, 4}, {2, 2}, {2}, {}, {0, 1, -5, 0}, "index -5 at indices[1, 0] is out of range [-3, 3) for axis 0"},
      {"ScatterElements", {3, 4}, {1, 3}, {1, 3}, {Attribute::Int("axis", 1)}, {1, 2, 9},
       "index 9 at indices[0, 2] is out of range [-4, 4) for axis 1"},
  };
  for (const BadCase& c : cases) {
    for (DType it : {DType::kInt64, DType::kInt32}) {
      SCOPED_TRACE(absl::StrCat(c.op, " ", DTypeName(it)));
      GraphBuilder b;
      std::vector<Value*> ins = {b.Input("d", DType::kFloat, D(c.data)), b.Input("i", it, D(c.idx))};
      if (!c.upd.empty()) ins.push_back(b.Input("u", DType::kFloat, D(c.upd)));
      b.Output(b.Op(c.op, ins, c.attrs));
      b.last_node()->name = "picky";
      auto model = b.Build(18);
      Tensor idx(it, c.idx);
      for (size_t i = 0; i < c.indices.size(); ++i) {
        if (it == DType::kInt32) {
          idx.mutable_data<int32_t>()[i] = static_cast<int32_t>(c.indices[i]);
        } else {
          idx.mutable_data<int64_t>()[i] = c.indices[i];
        }
      }
      std::map<std::string, RuntimeValue> feeds = {{"d", RandomF32(c.data, 1)}, {"i", idx}};
      if (!c.upd.empty()) feeds["u"] = RandomF32(c.upd, 2);
      CpuExecutor cpu(*model);
      auto got = cpu.Run(feeds);
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_EQ(got.status().message(), absl::StrCat(c.op, " 'picky': ", c.want, " of the data")) << got.status();
      auto plan = cpu.PlanFor(feeds);
      ASSERT_TRUE(plan.ok());
      EXPECT_EQ(StatsOf(**plan).fallback_steps, 0) << DescribePlan(**plan);
    }
  }
}

// --- threads ----------------------------------------------------------------------------

// The kernels split across threads only where no two pieces meet on an
// element: with 4 threads the results are the serial ones, duplicate
// indices and reductions included.
TEST(IndexingKernelsTest, ThreadedKernelsGiveTheSerialResults) {
  int saved = omp_get_max_threads();
  auto both = [&](auto run) {
    omp_set_num_threads(1);
    Tensor serial = run();
    omp_set_num_threads(4);
    Tensor threaded = run();
    omp_set_num_threads(saved);
    ASSERT_EQ(std::memcmp(serial.raw_data(), threaded.raw_data(), serial.byte_size()), 0);
  };
  std::vector<int64_t> dd = {4, 256, 96}, id = {4, 300, 96};
  Tensor data = RandomF32(dd, 1);
  for (int64_t axis : {0, 1, 2}) {
    std::vector<int64_t> ad = dd;
    ad[axis] = id[axis];
    auto ge = kernels::MakeAxisIndexMap(dd, dd, axis);
    auto se = kernels::MakeAxisIndexMap(dd, ad, axis);
    ASSERT_TRUE(ge && se);
    Tensor sidx = RandomIndices(DType::kInt32, ad, 4, dd[axis]);
    Tensor supd = RandomF32(ad, 5);
    Tensor gidx = RandomIndices(DType::kInt64, dd, 6, dd[axis]);
    both([&] {
      Tensor y(DType::kFloat, dd);
      EXPECT_EQ(kernels::GatherElements(*ge, data.raw_data(), gidx.raw_data(), 8, y.mutable_raw_data(), 4), -1);
      return y;
    });
    for (auto r : {kernels::ScatterReduction::kNone, kernels::ScatterReduction::kAdd}) {
      both([&] {
        Tensor y(DType::kFloat, dd);
        EXPECT_EQ(kernels::ScatterElements(*se, data.raw_data(), data.num_elements(), sidx.raw_data(), 4,
                                           supd.raw_data(), y.mutable_raw_data(), DType::kFloat, r),
                  -1);
        return y;
      });
    }
  }
  // GatherElements along a long last axis, rows cut into pieces.
  std::vector<int64_t> ld = {3, 5000};
  auto lm = kernels::MakeAxisIndexMap(ld, ld, 1);
  ASSERT_TRUE(lm);
  Tensor ldata = RandomF32(ld, 10), lidx = RandomIndices(DType::kInt32, ld, 11, 5000);
  both([&] {
    Tensor y(DType::kFloat, ld);
    EXPECT_EQ(kernels::GatherElements(*lm, ldata.raw_data(), lidx.raw_data(), 4, y.mutable_raw_data(), 4), -1);
    return y;
  });
  // ScatterND by columns of 8192-element slices, 40 tuples over 8 rows.
  std::vector<int64_t> nd = {8, 8192}, nu = {40, 8192};
  Tensor ndata = RandomF32(nd, 7), nupd = RandomF32(nu, 8);
  Tensor nidx = RandomIndices(DType::kInt64, {40, 1}, 9, 8);
  auto m = kernels::MakeTupleIndexMap(nd, {40, 1}, 0);
  ASSERT_TRUE(m);
  for (auto r : {kernels::ScatterReduction::kNone, kernels::ScatterReduction::kAdd}) {
    both([&] {
      Tensor y(DType::kFloat, nd);
      EXPECT_EQ(kernels::ScatterND(*m, ndata.raw_data(), ndata.num_elements(), nidx.raw_data(), 8, nupd.raw_data(),
                                   y.mutable_raw_data(), DType::kFloat, r),
                -1);
      return y;
    });
  }
}

}  // namespace
}  // namespace aic::cpu
