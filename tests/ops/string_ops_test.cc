// Tests of the string ops of opset 20 (ops/misc/string_ops.cc): StringConcat
// broadcasting, StringSplit as Python's str.split (with a delimiter or on
// whitespace, with maxsplit, padded with "" to the longest row) and
// RegexFullMatch (whole-string matches; RE2-only syntax is Unimplemented).
// Expected splits are CPython's.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::Op;
using testing::RunNode;
using testing::SingleNode;

using Strings = std::vector<std::string>;

Tensor S(Strings v, std::vector<int64_t> dims) { return Tensor::FromStrings(std::move(v), std::move(dims)); }
Tensor S(Strings v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return S(std::move(v), {n});
}

void ExpectErrorNaming(const absl::Status& s, const std::string& op) {
  ASSERT_FALSE(s.ok()) << op;
  EXPECT_NE(s.message().find(op + " '"), std::string::npos) << s;
}

TEST(StringConcatTest, Broadcasts) {
  auto out = RunNode(Op("StringConcat", {}, 20), {S({"a", "b"}), S({"x"})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].strings(), (Strings{"ax", "bx"}));
  // [2, 1] + [3] -> [2, 3]; empty strings concatenate too.
  auto grid = RunNode(Op("StringConcat", {}, 20), {S({"p", ""}, {2, 1}), S({"1", "", "3"})});
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_EQ((*grid)[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*grid)[0].strings(), (Strings{"p1", "p", "p3", "1", "", "3"}));
  ExpectErrorNaming(RunNode(Op("StringConcat", {}, 20), {S({"a", "b"}), S({"x", "y", "z"})}).status(), "StringConcat");
  ExpectErrorNaming(RunNode(Op("StringConcat", {}, 20), {S({"a"}), Tensor::FromVector<float>({1}, {1})}).status(),
                    "StringConcat");
}

struct SplitCase {
  std::vector<Attribute> attrs;
  Strings x;
  Strings pieces;  // padded rows, row-major
  std::vector<int64_t> counts;
};

TEST(StringSplitTest, DelimiterWhitespaceAndMaxsplit) {
  const Attribute comma = Attribute::String("delimiter", ",");
  const std::vector<SplitCase> cases = {
      // Every delimiter separates; empty pieces stay; "" is one empty piece.
      {{comma}, {"a,b,,c", "d", ""}, {"a", "b", "", "c", "d", "", "", "", "", "", "", ""}, {4, 1, 1}},
      {{comma, Attribute::Int("maxsplit", 1)}, {"a,b,,c", "d", ""}, {"a", "b,,c", "d", "", "", ""}, {2, 1, 1}},
      // No delimiter: runs of whitespace, none at the ends; blank is no piece.
      {{}, {"  hello   world ", "a\tb\nc", "   "}, {"hello", "world", "", "a", "b", "c", "", "", ""}, {2, 3, 0}},
      // maxsplit keeps the rest whole, its trailing whitespace included.
      {{Attribute::Int("maxsplit", 1)},
       {"  hello   world ", "a\tb\nc", "   "},
       {"hello", "world ", "a", "b\nc", "", ""},
       {2, 2, 0}},
      {{Attribute::Int("maxsplit", 0)}, {"  hello   world ", "   "}, {"hello   world ", ""}, {1, 0}},
      {{Attribute::String("delimiter", "::")}, {"x::y::"}, {"x", "y", ""}, {3}},
  };
  for (const SplitCase& c : cases) {
    auto out = RunNode(Op("StringSplit", c.attrs, 20, 2), {S(c.x)});
    ASSERT_TRUE(out.ok()) << out.status();
    const int64_t width = static_cast<int64_t>(c.pieces.size() / c.x.size());
    EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{static_cast<int64_t>(c.x.size()), width}));
    EXPECT_EQ((*out)[0].strings(), c.pieces) << c.x[0];
    EXPECT_EQ(std::vector<int64_t>((*out)[1].data<int64_t>(), (*out)[1].data<int64_t>() + c.x.size()), c.counts)
        << c.x[0];
  }
}

TEST(StringSplitTest, KeepsTheInputShapeAndRejectsNumbers) {
  auto out = RunNode(Op("StringSplit", {Attribute::String("delimiter", "-")}, 20, 2), {S({"a-b", "c", "d-e-f", ""}, {2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{2, 2}));
  auto types = InferNode(Op("StringSplit", {}, 20, 2), {TypeInfo::Tensor(DType::kString, Shape({Dim::Symbol("N")}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.rank(), 2);
  EXPECT_EQ((*types)[1].dtype, DType::kInt64);
  ExpectErrorNaming(RunNode(Op("StringSplit", {}, 20, 2), {Tensor::FromVector<float>({1}, {1})}).status(),
                    "StringSplit");
  EXPECT_FALSE(InferNode(Op("StringSplit", {}, 20, 2), {TypeInfo::Tensor(DType::kFloat, Shape({2}))}).ok());
}

TEST(RegexFullMatchTest, MatchesWholeStringsOnly) {
  auto out = RunNode(Op("RegexFullMatch", {Attribute::String("pattern", "[a-z]+@[a-z]+\\.com")}, 20),
                     {S({"abc@def.com", "abc@def.com.", "x@y.com", "ABC@def.com"}, {2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dtype(), DType::kBool);
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 2}));
  const bool* m = (*out)[0].data<bool>();
  EXPECT_EQ(std::vector<bool>(m, m + 4), (std::vector<bool>{true, false, true, false}));
  // A prefix match is not a full match.
  auto prefix = RunNode(Op("RegexFullMatch", {Attribute::String("pattern", "ab")}, 20), {S({"abc", "ab"})});
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  EXPECT_FALSE((*prefix)[0].data<bool>()[0]);
  EXPECT_TRUE((*prefix)[0].data<bool>()[1]);
}

TEST(RegexFullMatchTest, BadPatternsAreErrorsAndRe2OnlySyntaxIsUnimplemented) {
  auto bad = RunNode(Op("RegexFullMatch", {Attribute::String("pattern", "(ab")}, 20), {S({"ab"})});
  ExpectErrorNaming(bad.status(), "RegexFullMatch");
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
  // \pL is a Unicode class in RE2 and something else to std::regex: no guess.
  auto re2 = RunNode(Op("RegexFullMatch", {Attribute::String("pattern", "\\pL+")}, 20), {S({"ab"})});
  ASSERT_FALSE(re2.ok());
  EXPECT_TRUE(absl::IsUnimplemented(re2.status())) << re2.status();
  EXPECT_NE(re2.status().message().find("RegexFullMatch"), std::string::npos) << re2.status();
  ExpectErrorNaming(RunNode(Op("RegexFullMatch", {Attribute::String("pattern", "a")}, 20),
                            {Tensor::FromVector<int64_t>({1}, {1})})
                        .status(),
                    "RegexFullMatch");
}

}  // namespace
}  // namespace aic
