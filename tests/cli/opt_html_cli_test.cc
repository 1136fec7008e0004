// `aic-onnx opt IN OUT --html PAGE`: the page is written beside the model, and
// a bad page path fails the way a bad OUT does: before any work, one line
// naming it, exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/testing/run_cli.h"

namespace {

using Result = aic::testing::CliResult;

Result RunAic(const std::string& args) { return aic::testing::RunAicOnnx(args); }

TEST(OptHtmlCli, WritesThePageOfChanges) {
  std::string dir = std::string(AIC_BINARY_DIR) + "/opt_html_cli_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string model = std::string(AIC_SOURCE_DIR) + "/testdata/seed_mlp.onnx";
  Result r = RunAic("opt " + model + " " + dir + "/o.onnx --no-verify --html " + dir + "/changes.html");
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream f(dir + "/changes.html");
  std::string html((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<svg id=\"a-graph\""), std::string::npos);
  EXPECT_NE(html.find("<svg id=\"b-graph\""), std::string::npos);
  EXPECT_NE(html.find("<table id=\"op-table\">"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir + "/changes.html.tmp"));
}

TEST(OptHtmlCli, ABadPageFailsBeforeAnyWork) {
  std::string dir = std::string(AIC_BINARY_DIR) + "/opt_html_cli_test_bad";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string model = std::string(AIC_SOURCE_DIR) + "/testdata/seed_mlp.onnx";
  std::string missing = dir + "/no/such/changes.html";
  Result r = RunAic("opt " + model + " " + dir + "/o.onnx --html " + missing);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find(missing + ": no folder"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/o.onnx"));
  Result folder = RunAic("opt " + model + " " + dir + "/o.onnx --html " + dir);
  EXPECT_EQ(folder.code, 2);
  EXPECT_NE(folder.out.find(dir + ": is a folder"), std::string::npos) << folder.out;
  // Both on standard output cannot be.
  Result both = RunAic("opt " + model + " - --html -");
  EXPECT_EQ(both.code, 2);
  EXPECT_EQ(std::count(both.out.begin(), both.out.end(), '\n'), 1) << both.out;
}

}  // namespace
