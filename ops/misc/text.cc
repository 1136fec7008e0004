// Text ops: StringNormalizer (stop-word removal and case change) and
// TfIdfVectorizer (n-gram counts, with skips, against a fixed pool, weighted
// as TF, IDF or TF-IDF). Case mapping is ASCII-only: bytes of multi-byte
// UTF-8 characters pass unchanged.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/misc/misc_ops.h"
#include "ops/misc/numeric_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

std::string MapCase(std::string s, bool upper) {
  for (char& c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80) c = static_cast<char>(upper ? std::toupper(u) : std::tolower(u));
  }
  return s;
}

// ---- StringNormalizer ----

absl::Status StringNormalizerKernel(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor()) return ctx.Error("input is required");
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kString) return ctx.Error("input must be a string tensor");
  if (x.rank() > 2 || (x.rank() == 2 && x.dim(0) != 1)) return ctx.Error("input must be [C] or [1, C]");
  const Node& n = ctx.node();
  const std::string action = n.GetString("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER") {
    return ctx.Error("case_change_action must be NONE, LOWER or UPPER");
  }
  const bool sensitive = n.GetInt("is_case_sensitive", 0) != 0;
  std::set<std::string> stop;
  if (const Attribute* a = n.FindAttr("stopwords")) {
    for (const std::string& w : a->strings) stop.insert(sensitive ? w : MapCase(w, false));
  }
  std::vector<std::string> kept;
  for (const std::string& s : x.strings()) {
    if (stop.count(sensitive ? s : MapCase(s, false))) continue;
    kept.push_back(action == "NONE" ? s : MapCase(s, action == "UPPER"));
  }
  // Everything removed: the spec returns one empty string, not an empty tensor.
  if (kept.empty()) kept.push_back("");
  const int64_t c = static_cast<int64_t>(kept.size());
  std::vector<int64_t> dims = x.rank() == 2 ? std::vector<int64_t>{1, c} : std::vector<int64_t>{c};
  ctx.set_output(0, Tensor::FromStrings(std::move(kept), dims));
  return absl::OkStatus();
}

absl::Status InferStringNormalizer(OpContext& ctx) {
  if (ctx.input_type(0).known() && ctx.input_dtype(0) != DType::kString) {
    return ctx.Error("input must be a string tensor, got ", DTypeName(ctx.input_dtype(0)));
  }
  const Shape& s = ctx.input_shape(0);
  if (s.has_rank() && s.rank() == 2) {
    ctx.set_output(0, DType::kString, Shape({Dim(1), ctx.FreshDim()}));
  } else {
    ctx.set_output(0, DType::kString, Shape({ctx.FreshDim()}));
  }
  return absl::OkStatus();
}

// ---- TfIdfVectorizer ----

constexpr char kSep = '\x1f';  // joins the tokens of an n-gram into one key

struct NgramPool {
  std::map<std::string, int64_t> index;  // n-gram key -> output column
  int64_t width = 0;                     // output columns
};

absl::StatusOr<NgramPool> BuildPool(const Node& n) {
  const std::vector<int64_t> counts = n.GetInts("ngram_counts");
  const std::vector<int64_t> indexes = n.GetInts("ngram_indexes");
  std::vector<std::string> items;
  if (const Attribute* a = n.FindAttr("pool_strings")) items = a->strings;
  for (int64_t v : n.GetInts("pool_int64s")) items.push_back(std::to_string(v));
  NgramPool pool;
  for (int64_t i : indexes) pool.width = std::max(pool.width, i + 1);
  size_t gram = 0;  // running n-gram number, indexes ngram_indexes
  for (size_t k = 0; k < counts.size(); ++k) {
    const int64_t len = static_cast<int64_t>(k) + 1;
    const int64_t begin = counts[k];
    const int64_t end = k + 1 < counts.size() ? counts[k + 1] : static_cast<int64_t>(items.size());
    if (begin < 0 || end > static_cast<int64_t>(items.size()) || begin > end || (end - begin) % len) {
      return absl::InvalidArgumentError(absl::StrCat(n.Describe(), ": bad ngram_counts"));
    }
    for (int64_t at = begin; at < end; at += len, ++gram) {
      if (gram >= indexes.size()) {
        return absl::InvalidArgumentError(absl::StrCat(n.Describe(), ": too few ngram_indexes"));
      }
      std::vector<std::string> toks(items.begin() + at, items.begin() + at + len);
      pool.index[absl::StrJoin(toks, std::string(1, kSep))] = indexes[gram];
    }
  }
  return pool;
}

absl::Status TfIdfKernel(KernelContext& ctx) {
  const Node& n = ctx.node();
  AIC_ASSIGN_OR_RETURN(NgramPool pool, BuildPool(n));
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor()) return ctx.Error("input is required");
  const Tensor& x = ctx.input(0);
  if (x.rank() < 1 || x.rank() > 2) return ctx.Error("input must be [C] or [B, C]");
  std::vector<std::string> tokens;
  if (x.dtype() == DType::kString) {
    tokens = x.strings();
  } else if (IsInteger(x.dtype())) {
    for (int64_t v : ToInt64s(x)) tokens.push_back(std::to_string(v));
  } else {
    return ctx.Error("input must be string or integer, got ", DTypeName(x.dtype()));
  }
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
  const int64_t len = x.rank() == 2 ? x.dim(1) : x.dim(0);
  const int64_t min_gram = std::max<int64_t>(n.GetInt("min_gram_length", 1), 1);
  const int64_t max_gram = n.GetInt("max_gram_length", 1);
  const int64_t max_skip = n.GetInt("max_skip_count", 0);
  const std::string mode = n.GetString("mode", "TF");
  const std::vector<float> weights = n.GetFloats("weights");
  std::vector<double> out(static_cast<size_t>(rows * pool.width), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double* row = out.data() + r * pool.width;
    for (int64_t start = 0; start < len; ++start) {
      for (int64_t skip = 0; skip <= max_skip; ++skip) {
        for (int64_t g = min_gram; g <= max_gram; ++g) {
          if (g == 1 && skip > 0) continue;  // a unigram has no gaps: count it once
          const int64_t last = start + (g - 1) * (skip + 1);
          if (last >= len) continue;
          std::string key;
          for (int64_t j = 0; j < g; ++j) {
            if (j) key += kSep;
            key += tokens[static_cast<size_t>(r * len + start + j * (skip + 1))];
          }
          auto it = pool.index.find(key);
          if (it != pool.index.end()) row[it->second] += 1;
        }
      }
    }
    for (int64_t k = 0; k < pool.width; ++k) {
      const double w = k < static_cast<int64_t>(weights.size()) ? weights[static_cast<size_t>(k)] : 1.0;
      if (mode == "IDF") row[k] = row[k] > 0 ? w : 0;
      else if (mode == "TFIDF") row[k] *= w;
    }
  }
  std::vector<int64_t> dims = x.rank() == 2 ? std::vector<int64_t>{rows, pool.width}
                                            : std::vector<int64_t>{pool.width};
  ctx.set_output(0, FromDoubles(out, dims, DType::kFloat));
  return absl::OkStatus();
}

absl::Status InferTfIdf(OpContext& ctx) {
  const std::string mode = ctx.node().GetString("mode", "TF");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") return ctx.Error("mode must be TF, IDF or TFIDF");
  int64_t width = 0;
  for (int64_t i : ctx.node().GetInts("ngram_indexes")) width = std::max(width, i + 1);
  const Shape& s = ctx.input_shape(0);
  if (s.has_rank() && (s.rank() < 1 || s.rank() > 2)) return ctx.Error("input must have rank 1 or 2");
  if (s.has_rank() && s.rank() == 2) {
    ctx.set_output(0, DType::kFloat, Shape({s[0], Dim(width)}));
  } else if (s.has_rank()) {
    ctx.set_output(0, DType::kFloat, Shape({Dim(width)}));
  } else {
    ctx.set_output(0, DType::kFloat, Shape::UnknownRank());
  }
  return absl::OkStatus();
}

Traits TextTraits(const char* name, const char* meaning) {
  Traits t;
  t.semantic_name = name;
  t.meaning = meaning;
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kSelects;
  t.collapse_how = "tokens outside the vocabulary / in the stop list are dropped";
  return t;
}

}  // namespace

void RegisterTextOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = "",
      .op_type = "StringNormalizer",
      .since_version = 10,
      .infer = InferStringNormalizer,
      .traits = [](const OpContext&) {
        return TextTraits("StringNormalizer", "y = case-mapped x without stop words");
      },
      .cost = [](const OpContext& ctx) { return BytesOnlyCost(ctx); },
      .kernel = StringNormalizerKernel,
  });
  r.Register(OpDef{
      .domain = "",
      .op_type = "TfIdfVectorizer",
      .since_version = 9,
      .infer = InferTfIdf,
      .traits = [](const OpContext& ctx) {
        Traits t = TextTraits("TfIdfVectorizer", "y[k] = weight(count of pool n-gram k in x)");
        t.effect_detail = "token sequence → n-gram histogram";
        t.collapse = CollapseKind::kReduces;
        t.collapse_how = "token order reduced to n-gram counts";
        return t;
      },
      .cost = [](const OpContext& ctx) { return BytesOnlyCost(ctx); },
      .kernel = TfIdfKernel,
  });
}

}  // namespace aic
