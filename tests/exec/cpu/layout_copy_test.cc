// Reorders run as our strided copy (exec/cpu/layout_copy.h) against oneDNN's
// reorder of the same buffers, bit for bit: plain <-> channels-last <->
// channel-blocked, 3-, 4- and 5-D, f32 and bf16; padded blocks are left to
// oneDNN.
#include "exec/cpu/layout_copy.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace aic::cpu {
namespace {

using tag = memory::format_tag;

// Bytes of floats of `elem` bytes (little-endian) that are normal numbers:
// a reorder may go through f32 arithmetic, which flushes subnormals and
// quiets NaNs (oneDNN's bf16 reorder does on CPUs without AVX-512), where a
// copy keeps every bit.
std::vector<uint8_t> Pattern(size_t bytes, size_t elem) {
  std::vector<uint8_t> v(bytes);
  for (size_t i = 0; i < bytes; ++i) {
    v[i] = static_cast<uint8_t>((i * 73 + i / 509) & 0xff);
    // The exponent's top bits 10: neither all zeros nor all ones.
    if (i % elem == elem - 1) v[i] = static_cast<uint8_t>((v[i] | 0x40) & ~0x20);
  }
  return v;
}

TEST(LayoutCopyTest, MatchesOneDnnReordersBitForBit) {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  struct Case {
    memory::dims dims;
    tag from, to;
  };
  const std::vector<Case> cases = {
      {{1, 1024, 14, 14}, tag::nhwc, tag::nchw},    {{1, 64, 56, 56}, tag::nchw, tag::nhwc},
      {{2, 48, 9, 13}, tag::nChw16c, tag::nchw},    {{2, 48, 9, 13}, tag::nchw, tag::nChw16c},
      {{2, 40, 7, 5}, tag::nChw8c, tag::nchw},      {{2, 48, 9, 13}, tag::nChw16c, tag::nhwc},
      {{2, 48, 9, 13}, tag::nhwc, tag::nChw16c},    {{1, 384, 2998}, tag::nwc, tag::ncw},
      {{1, 80, 3000}, tag::ncw, tag::nwc},          {{1, 32, 3, 5, 7}, tag::nCdhw16c, tag::ncdhw},
      {{1, 32, 3, 5, 7}, tag::ncdhw, tag::ndhwc},   {{3, 16, 1, 1}, tag::nChw16c, tag::nchw},
  };
  for (memory::data_type type : {memory::data_type::f32, memory::data_type::bf16}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(absl::StrCat("case dims[1]=", c.dims[1], " rank ", c.dims.size(), " type ", static_cast<int>(type)));
      memory::desc from(c.dims, type, c.from), to(c.dims, type, c.to);
      std::optional<kernels::StridedCopyPlan> plan = LayoutCopyPlan(from, to);
      ASSERT_TRUE(plan.has_value());
      std::vector<uint8_t> src = Pattern(from.get_size(), type == memory::data_type::f32 ? 4 : 2);
      std::vector<uint8_t> ours(to.get_size(), 0), theirs(to.get_size(), 0);
      kernels::RunStridedCopy(*plan, src.data(), ours.data());
      memory a(from, engine, src.data()), b(to, engine, theirs.data());
      dnnl::reorder(a, b).execute(stream, a, b);
      stream.wait();
      size_t first = 0;
      while (first < ours.size() && ours[first] == theirs[first]) ++first;
      ASSERT_EQ(first, ours.size()) << "first difference at byte " << first << ": " << int(ours[first]) << " vs "
                                    << int(theirs[first]) << " (next " << int(ours[first ^ 1]) << " vs "
                                    << int(theirs[first ^ 1]) << ")";
    }
  }
}

TEST(LayoutCopyTest, PaddedBlocksAndTwoLevelBlocksAreLeftToOneDnn) {
  // 20 channels in blocks of 16: the buffer holds 32, the last 12 zero.
  memory::desc padded({1, 20, 4, 4}, memory::data_type::f32, tag::nChw16c);
  memory::desc plain({1, 20, 4, 4}, memory::data_type::f32, tag::nchw);
  EXPECT_FALSE(LayoutCopyPlan(padded, plain).has_value());
  EXPECT_FALSE(LayoutCopyPlan(plain, padded).has_value());
  memory::desc weights({32, 32, 3, 3}, memory::data_type::f32, tag::OIhw16i16o);
  memory::desc oihw({32, 32, 3, 3}, memory::data_type::f32, tag::oihw);
  EXPECT_FALSE(LayoutCopyPlan(oihw, weights).has_value());
  // Different element types are a conversion, not a copy.
  memory::desc bf16({1, 16, 4, 4}, memory::data_type::bf16, tag::nhwc);
  EXPECT_FALSE(LayoutCopyPlan(memory::desc({1, 16, 4, 4}, memory::data_type::f32, tag::nchw), bf16).has_value());
}

}  // namespace
}  // namespace aic::cpu
