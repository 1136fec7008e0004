// A small command-line parser: positional arguments plus --flag[=value]
// options, each subcommand declaring which flags take values. Unknown flags
// are usage errors (exit 2), never silently ignored.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace aic::cli {

struct FlagSpec {
  std::set<std::string> with_value;  // --name VALUE or --name=VALUE
  std::set<std::string> boolean;     // --name
};

class Args {
 public:
  static absl::StatusOr<Args> Parse(const std::vector<std::string>& argv, const FlagSpec& spec);

  const std::vector<std::string>& positional() const { return positional_; }
  bool Has(const std::string& flag) const { return values_.count(flag) > 0; }
  // Last value given for the flag.
  std::optional<std::string> Get(const std::string& flag) const;
  std::string GetOr(const std::string& flag, const std::string& fallback) const;
  // All values, in order (repeatable flags like --input).
  std::vector<std::string> GetAll(const std::string& flag) const;
  absl::StatusOr<int64_t> GetInt(const std::string& flag, int64_t fallback) const;

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::vector<std::string>> values_;
};

// Takes -O0..-O3 and --no-opt (= -O0) out of argv (the generic parser does
// not read them); the last one given wins, nullopt when none is.
std::optional<int> TakeOptLevel(std::vector<std::string>& argv);

// "NAME=D,D,.." -> (NAME, dims); used by --shape and --fix-shape.
// NAME=D,D,..; with allow_keep, `?` or -1 is a dim left as the model has it (-1).
absl::StatusOr<std::pair<std::string, std::vector<int64_t>>> ParseShapeSpec(const std::string& spec,
                                                                            bool allow_keep = false);

}  // namespace aic::cli
