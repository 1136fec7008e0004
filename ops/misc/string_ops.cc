// String tensor ops of opset 20: StringConcat (elementwise, broadcasting),
// StringSplit (Python's str.split, padded to the longest row) and
// RegexFullMatch. Strings are UTF-8 bytes. RegexFullMatch is specified with
// RE2 syntax; without RE2 here it runs std::regex (ECMAScript) only where the
// two agree: ASCII patterns and inputs, and none of the constructs one of
// them lacks. Anything else is Unimplemented, never a guess.
#include <algorithm>
#include <cstdint>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/misc/misc_ops.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

absl::Status RequireStrings(const KernelContext& ctx, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor()) return ctx.Error("input ", i, " is required");
    if (ctx.input(i).dtype() != DType::kString) return ctx.Error("input ", i, " must be a string tensor");
  }
  return absl::OkStatus();
}

absl::Status ExpectStringInput(const OpContext& ctx, size_t i) {
  const TypeInfo& t = ctx.input_type(i);
  if (t.known() && t.is_tensor() && t.dtype != DType::kUndefined && t.dtype != DType::kString) {
    return ctx.Error("input ", i, " must be a string tensor, got ", DTypeName(t.dtype));
  }
  return absl::OkStatus();
}

Traits StringTraits(const char* name, const char* meaning) {
  Traits t;
  t.semantic_name = name;
  t.meaning = meaning;
  t.linearity = Linearity::kNonlinear;
  t.effect_detail = "string processing";
  return t;
}

// ---- StringConcat ----

absl::Status InferStringConcat(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(ExpectStringInput(ctx, 0));
  AIC_RETURN_IF_ERROR(ExpectStringInput(ctx, 1));
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  if (!a.has_rank() || !b.has_rank()) {
    ctx.set_output(0, DType::kString, Shape::UnknownRank());
    return absl::OkStatus();
  }
  absl::StatusOr<Shape> out = BroadcastShapes({a, b}, [&ctx] { return ctx.FreshDim(); });
  if (!out.ok()) return ctx.Error(out.status().message());
  ctx.set_output(0, DType::kString, *out);
  return absl::OkStatus();
}

absl::Status StringConcatKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireStrings(ctx, 2));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  absl::StatusOr<std::vector<int64_t>> dims = BroadcastDims({a.dims(), b.dims()});
  if (!dims.ok()) return ctx.Error(dims.status().message());
  BroadcastIterator it(*dims, {a.dims(), b.dims()});
  std::vector<std::string> out(static_cast<size_t>(it.size()));
  for (int64_t i = 0; i < it.size(); ++i, it.Next()) {
    out[static_cast<size_t>(i)] = absl::StrCat(a.strings()[it.offset(0)], b.strings()[it.offset(1)]);
  }
  ctx.set_output(0, Tensor::FromStrings(std::move(out), *dims));
  return absl::OkStatus();
}

// ---- StringSplit ----

// The code point at s[i] and its byte length (a lone invalid byte is itself).
char32_t DecodeUtf8(std::string_view s, size_t i, size_t* len) {
  const auto b = static_cast<unsigned char>(s[i]);
  const size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
  if (n == 1 || i + n > s.size()) {
    *len = 1;
    return b;
  }
  char32_t cp = b & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  *len = n;
  return cp;
}

// Python's str.isspace.
bool IsPythonSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// str.split(None, maxsplit): runs of whitespace separate, none at the ends;
// after maxsplit splits the rest (leading whitespace dropped) is one piece.
std::vector<std::string> SplitOnWhitespace(std::string_view s, int64_t maxsplit) {
  std::vector<std::string> parts;
  size_t i = 0, len = 0;
  auto skip_space = [&] {
    while (i < s.size() && IsPythonSpace(DecodeUtf8(s, i, &len))) i += len;
  };
  skip_space();
  while (i < s.size()) {
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      parts.emplace_back(s.substr(i));
      break;
    }
    const size_t start = i;
    while (i < s.size() && !IsPythonSpace(DecodeUtf8(s, i, &len))) i += len;
    parts.emplace_back(s.substr(start, i - start));
    skip_space();
  }
  return parts;
}

// str.split(sep, maxsplit): every occurrence separates, empty pieces kept.
std::vector<std::string> SplitOn(std::string_view s, std::string_view sep, int64_t maxsplit) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
    const size_t at = s.find(sep, start);
    if (at == std::string_view::npos) break;
    parts.emplace_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  parts.emplace_back(s.substr(start));
  return parts;
}

absl::Status InferStringSplit(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(ExpectStringInput(ctx, 0));
  const Shape& x = ctx.input_shape(0);
  if (!x.has_rank()) {
    ctx.set_output(0, DType::kString, Shape::UnknownRank());
    if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kInt64, Shape::UnknownRank());
    return absl::OkStatus();
  }
  std::vector<Dim> dims = x.dims();
  dims.push_back(ctx.FreshDim());  // the longest split, known only from the data
  ctx.set_output(0, DType::kString, Shape(dims));
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kInt64, x);
  return absl::OkStatus();
}

absl::Status StringSplitKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireStrings(ctx, 1));
  const Tensor& x = ctx.input(0);
  const std::string sep = ctx.node().GetString("delimiter", "");
  const int64_t maxsplit = ctx.node().GetInt("maxsplit", -1);
  std::vector<std::vector<std::string>> rows;
  int64_t widest = 0;
  for (const std::string& s : x.strings()) {
    rows.push_back(sep.empty() ? SplitOnWhitespace(s, maxsplit) : SplitOn(s, sep, maxsplit));
    widest = std::max<int64_t>(widest, static_cast<int64_t>(rows.back().size()));
  }
  std::vector<int64_t> dims = x.dims();
  dims.push_back(widest);
  std::vector<std::string> pieces(static_cast<size_t>(x.num_elements() * widest));
  std::vector<int64_t> counts;
  for (size_t r = 0; r < rows.size(); ++r) {
    counts.push_back(static_cast<int64_t>(rows[r].size()));
    for (size_t j = 0; j < rows[r].size(); ++j) pieces[r * static_cast<size_t>(widest) + j] = std::move(rows[r][j]);
  }
  ctx.set_output(0, Tensor::FromStrings(std::move(pieces), dims));
  if (ctx.num_outputs() > 1) ctx.set_output(1, Tensor::FromVector<int64_t>(counts, x.dims()));
  return absl::OkStatus();
}

// ---- RegexFullMatch ----

constexpr size_t kMaxRegexInput = 4096;

bool IsAscii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// Why RE2 and ECMAScript could read `pattern` differently, or empty when they
// agree: RE2-only escapes and groups, and ECMAScript-only backreferences and
// lookarounds (which RE2 rejects).
std::string DialectGap(std::string_view pattern) {
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      const char e = pattern[i + 1];
      if (std::string_view("AzQECpPx").find(e) != std::string_view::npos || (e >= '1' && e <= '9')) {
        return absl::StrCat("escape \\", std::string(1, e));
      }
      ++i;
    } else if (pattern[i] == '(' && pattern[i + 1] == '?') {
      if (i + 2 < pattern.size() && pattern[i + 2] == ':') continue;  // plain non-capturing group
      return "a (?...) group";
    }
  }
  return "";
}

absl::Status RegexFullMatchKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireStrings(ctx, 1));
  const Tensor& x = ctx.input(0);
  const std::string pattern = ctx.node().GetString("pattern", "");
  if (!IsAscii(pattern)) return ctx.Unimplemented("a non-ASCII pattern (needs RE2's UTF-8 semantics)");
  if (std::string gap = DialectGap(pattern); !gap.empty()) {
    return ctx.Unimplemented("pattern uses ", gap, ", which std::regex reads unlike RE2");
  }
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return ctx.Error("pattern '", pattern, "' does not compile: ", e.what());
  }
  Tensor y(DType::kBool, x.dims());
  bool* out = y.mutable_data<bool>();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const std::string& s = x.strings()[static_cast<size_t>(i)];
    // '.' and \W are per code point in RE2 but per byte here: only ASCII agrees.
    if (!IsAscii(s)) return ctx.Unimplemented("a non-ASCII input (needs RE2's UTF-8 semantics)");
    // std::regex recurses per character: a long input could exhaust the stack.
    if (s.size() > kMaxRegexInput) return ctx.Unimplemented("an input of ", s.size(), " bytes (std::regex recurses)");
    try {
      out[i] = std::regex_match(s, re);
    } catch (const std::regex_error& e) {
      return ctx.Error("matching '", pattern, "' failed: ", e.what());
    }
  }
  ctx.set_output(0, std::move(y));
  return absl::OkStatus();
}

absl::Status InferRegexFullMatch(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(ExpectStringInput(ctx, 0));
  const TypeInfo& x = ctx.input_type(0);
  ctx.set_output(0, DType::kBool, x.known() ? x.shape : Shape::UnknownRank());
  return absl::OkStatus();
}

}  // namespace

void RegisterStringOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = "",
      .op_type = "StringConcat",
      .since_version = 20,
      .infer = InferStringConcat,
      .traits = [](const OpContext&) { return StringTraits("StringConcat", "z = x + y (string concatenation)"); },
      .cost = [](const OpContext& ctx) { return BytesOnlyCost(ctx); },
      .kernel = StringConcatKernel,
  });
  r.Register(OpDef{
      .domain = "",
      .op_type = "StringSplit",
      .since_version = 20,
      .infer = InferStringSplit,
      .traits = [](const OpContext&) { return StringTraits("StringSplit", "y[i, :] = x[i].split(delimiter, maxsplit)"); },
      .cost = [](const OpContext& ctx) { return BytesOnlyCost(ctx); },
      .kernel = StringSplitKernel,
  });
  r.Register(OpDef{
      .domain = "",
      .op_type = "RegexFullMatch",
      .since_version = 20,
      .infer = InferRegexFullMatch,
      .traits = [](const OpContext&) {
        Traits t = StringTraits("RegexFullMatch", "y = x matches pattern entirely");
        t.invertibility = Invertibility::kIrreversible;
        t.collapse = CollapseKind::kQuantizes;
        t.collapse_how = "every string mapped to true/false";
        return t;
      },
      .cost = [](const OpContext& ctx) { return BytesOnlyCost(ctx); },
      .kernel = RegexFullMatchKernel,
  });
}

}  // namespace aic
