// Every model the graph fuzzer found a bug with, shrunk, replayed through
// the same oracles (tests/graph_fuzz/findings/<case>/model.onnx + inputs/).
#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "onnx_io/load.h"
#include "onnx_io/npy.h"
#include "tests/graph_fuzz/generator.h"
#include "tests/graph_fuzz/oracle.h"

namespace aic::graph_fuzz {
namespace {

namespace fs = std::filesystem;

TEST(GraphFuzzFindings, EverySavedFindingPassesTheOracles) {
  fs::path root = fs::path(AIC_SOURCE_DIR) / "tests/graph_fuzz/findings";
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (!entry.is_directory()) continue;
    SCOPED_TRACE(entry.path().string());
    auto model = LoadModel((entry.path() / "model.onnx").string());
    ASSERT_TRUE(model.ok()) << model.status();
    exec::Feeds feeds;
    for (const Value* v : (*model)->graph->inputs()) {
      auto t = ReadNpy((entry.path() / "inputs" / (v->name() + ".npy")).string());
      ASSERT_TRUE(t.ok()) << t.status();
      feeds[v->name()] = RuntimeValue(*t);
    }
    OracleReport r = CheckModel(**model, feeds);
    for (const Finding& f : r.findings) ADD_FAILURE() << f.Key() << ": " << f.detail;
    EXPECT_GT(r.configs, 1);
    ++cases;
  }
  EXPECT_GT(cases, 0) << "no saved findings under " << root;
}

// The generator is deterministic in its seed and its models are valid: our
// own inference accepts them strictly and the reference executor runs them.
TEST(GraphFuzzGenerator, DeterministicAndValid) {
  int built = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    auto a = GenerateModel(seed);
    auto b = GenerateModel(seed);
    ASSERT_EQ(a.ok(), b.ok());
    if (!a.ok()) continue;
    ++built;
    ASSERT_EQ(a->model->graph->num_nodes(), b->model->graph->num_nodes());
    ASSERT_EQ(a->recipes, b->recipes);
    for (const auto& [name, v] : a->feeds) {
      const Tensor& x = v.tensor;
      const Tensor& y = b->feeds.at(name).tensor;
      ASSERT_EQ(x.dims(), y.dims());
      ASSERT_EQ(0, std::memcmp(x.raw_data(), y.raw_data(), x.byte_size()));
    }
    OracleOptions o;
    o.cpu = false;
    OracleReport r = CheckModel(*a->model, a->feeds, o);
    for (const Finding& f : r.findings) ADD_FAILURE() << "seed " << seed << ": " << f.Key() << ": " << f.detail;
  }
  EXPECT_GE(built, 30);
}

}  // namespace
}  // namespace aic::graph_fuzz
