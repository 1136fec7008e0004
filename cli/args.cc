#include "cli/args.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace aic::cli {

absl::StatusOr<Args> Args::Parse(const std::vector<std::string>& argv, const FlagSpec& spec) {
  Args args;
  bool only_positional = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (only_positional || a.size() < 2 || a[0] != '-' || a == "-") {
      args.positional_.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positional = true;
      continue;
    }
    std::string name = a, value;
    bool has_inline_value = false;
    size_t eq = a.find('=');
    if (eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      has_inline_value = true;
    }
    if (spec.with_value.count(name)) {
      if (!has_inline_value) {
        if (i + 1 >= argv.size()) return absl::InvalidArgumentError(absl::StrCat(name, " needs a value"));
        value = argv[++i];
      }
      args.values_[name].push_back(value);
    } else if (spec.boolean.count(name)) {
      if (has_inline_value) {
        return absl::InvalidArgumentError(absl::StrCat(name, " takes no value"));
      }
      args.values_[name].push_back("");
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown option ", name));
    }
  }
  return args;
}

std::optional<std::string> Args::Get(const std::string& flag) const {
  auto it = values_.find(flag);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::string Args::GetOr(const std::string& flag, const std::string& fallback) const {
  auto v = Get(flag);
  return v ? *v : fallback;
}

std::vector<std::string> Args::GetAll(const std::string& flag) const {
  auto it = values_.find(flag);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

absl::StatusOr<int64_t> Args::GetInt(const std::string& flag, int64_t fallback) const {
  auto v = Get(flag);
  if (!v) return fallback;
  int64_t out;
  if (!absl::SimpleAtoi(*v, &out)) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " expects an integer, got '", *v, "'"));
  }
  return out;
}

std::optional<int> TakeOptLevel(std::vector<std::string>& argv) {
  std::optional<int> level;
  std::vector<std::string> rest;
  for (const std::string& a : argv) {
    if (a.size() == 3 && a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3') {
      level = a[2] - '0';
    } else if (a == "--no-opt") {
      level = 0;
    } else {
      rest.push_back(a);
    }
  }
  argv = std::move(rest);
  return level;
}

absl::StatusOr<std::pair<std::string, std::vector<int64_t>>> ParseShapeSpec(const std::string& spec,
                                                                            bool allow_keep) {
  size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(absl::StrCat("expected NAME=D,D,..., got '", spec, "'"));
  }
  std::vector<int64_t> dims;
  std::string dims_text = spec.substr(eq + 1);
  if (!dims_text.empty()) {
    for (absl::string_view part : absl::StrSplit(dims_text, ',')) {
      int64_t d;
      if (allow_keep && (part == "?" || part == "-1")) {
        dims.push_back(-1);
        continue;
      }
      if (!absl::SimpleAtoi(part, &d) || d < 0) {
        return absl::InvalidArgumentError(absl::StrCat("bad dim '", part, "' in '", spec, "'"));
      }
      dims.push_back(d);
    }
  }
  return std::make_pair(spec.substr(0, eq), dims);
}

}  // namespace aic::cli
