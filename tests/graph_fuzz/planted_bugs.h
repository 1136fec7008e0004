// Rules with a guard broken on purpose, to show that the graph fuzzer finds
// such bugs within its CI budget (ctest graph_fuzz_finds_planted_bug). Each
// is a built-in rule with one of its checks left out; they run only when
// the fuzzer is asked to plant them (--plant-bug NAME).
#pragma once

#include <string>
#include <vector>

#include "rewrite/rules/rule.h"

namespace aic::graph_fuzz {

// nullptr when there is no planted bug of that name.
const rewrite::Rule* FindPlantedBug(const std::string& name);
std::vector<std::string> PlantedBugNames();

}  // namespace aic::graph_fuzz
