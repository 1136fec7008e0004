// aic_graph_fuzz: random valid models through opt and every executor
// (generator.h, oracle.h), findings shrunk to small models (shrink.h).
//
//   aic_graph_fuzz --seconds 150 --seed 1 --out build/graph-fuzz [--ort-dir DIR]
//   aic_graph_fuzz --replay tests/graph_fuzz/findings/<case>   # one saved model
//   aic_graph_fuzz --plant-bug planted_mul_by_splat --expect-finding
//
// Every model's oracles run in a child process with a time limit, so a crash
// or a hang is a finding like a wrong answer. Exit status: 0 nothing found
// (with --expect-finding: something found), 1 the opposite, 2 bad usage.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/clone.h"
#include "onnx_io/load.h"
#include "onnx_io/npy.h"
#include "onnx_io/save.h"
#include "rewrite/rules/rule.h"
#include "tests/graph_fuzz/generator.h"
#include "tests/graph_fuzz/oracle.h"
#include "tests/graph_fuzz/planted_bugs.h"
#include "tests/graph_fuzz/shrink.h"

namespace {

namespace fs = std::filesystem;
using aic::graph_fuzz::Finding;
using aic::graph_fuzz::OracleOptions;
using aic::graph_fuzz::OracleReport;

struct Options {
  double seconds = 60;
  uint64_t seed = 1;
  int64_t max_models = -1;
  std::string out = "graph-fuzz";
  std::string ort_dir;
  int ort_every = 1;
  int timeout_s = 60;
  bool shrink = true;
  bool expect_finding = false;
  std::string plant_bug;
  std::string replay;
  int max_steps = 24;
  bool cpu = true;
};

[[noreturn]] void Usage(const std::string& why) {
  std::cerr << "aic_graph_fuzz: " << why << "\n"
            << "usage: aic_graph_fuzz [--seconds N] [--seed S] [--models N] [--out DIR] [--ort-dir DIR]\n"
            << "       [--ort-every K] [--timeout S] [--no-shrink] [--max-steps N] [--no-cpu]\n"
            << "       [--plant-bug NAME --expect-finding] | --replay DIR\n";
  std::exit(2);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(a + " needs a value");
      return argv[++i];
    };
    auto number = [&](double& out) {
      std::string v = value();
      if (!absl::SimpleAtod(v, &out)) Usage(absl::StrCat(a, ": not a number: ", v));
    };
    double d = 0;
    if (a == "--seconds") {
      number(o.seconds);
    } else if (a == "--seed") {
      number(d);
      o.seed = static_cast<uint64_t>(d);
    } else if (a == "--models") {
      number(d);
      o.max_models = static_cast<int64_t>(d);
    } else if (a == "--out") {
      o.out = value();
    } else if (a == "--ort-dir") {
      o.ort_dir = value();
    } else if (a == "--ort-every") {
      number(d);
      o.ort_every = std::max(1, static_cast<int>(d));
    } else if (a == "--timeout") {
      number(d);
      o.timeout_s = static_cast<int>(d);
    } else if (a == "--max-steps") {
      number(d);
      o.max_steps = static_cast<int>(d);
    } else if (a == "--no-shrink") {
      o.shrink = false;
    } else if (a == "--no-cpu") {
      o.cpu = false;
    } else if (a == "--expect-finding") {
      o.expect_finding = true;
    } else if (a == "--plant-bug") {
      o.plant_bug = value();
      if (aic::graph_fuzz::FindPlantedBug(o.plant_bug) == nullptr) {
        Usage(absl::StrCat("unknown planted bug '", o.plant_bug, "' (",
                           absl::StrJoin(aic::graph_fuzz::PlantedBugNames(), ", "), ")"));
      }
    } else if (a == "--replay") {
      o.replay = value();
    } else {
      Usage("unknown option " + a);
    }
  }
  return o;
}

std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  return s.substr(0, 600);
}

// The oracle's report through a pipe, one record per line.
std::string Encode(const OracleReport& r) {
  std::string out;
  for (const Finding& f : r.findings) absl::StrAppend(&out, "F\t", f.kind, "\t", f.config, "\t", OneLine(f.detail), "\n");
  for (const auto& [rule, n] : r.rule_counts) absl::StrAppend(&out, "R\t", rule, "\t", n, "\n");
  for (const std::string& op : r.ops) absl::StrAppend(&out, "O\t", op, "\n");
  absl::StrAppend(&out, "C\t", r.configs, "\n");
  return out;
}

OracleReport Decode(const std::string& text) {
  OracleReport r;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f[0] == "F" && f.size() >= 4) r.findings.push_back({f[1], f[2], f[3]});
    if (f[0] == "R" && f.size() >= 3) r.rule_counts[f[1]] += std::stoll(f[2]);
    if (f[0] == "O" && f.size() >= 2) r.ops.insert(f[1]);
    if (f[0] == "C" && f.size() >= 2) r.configs = std::stoi(f[1]);
  }
  return r;
}

// CheckModel in a child: a crash, a hang or an exit without a report are
// findings of their own.
OracleReport CheckIsolated(const aic::Model& model, const aic::exec::Feeds& feeds, const OracleOptions& oo,
                           int timeout_s) {
  int fds[2];
  OracleReport r;
  if (pipe(fds) != 0) {
    r.findings.push_back({"harness", "pipe", "pipe() failed"});
    return r;
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    alarm(static_cast<unsigned>(timeout_s) + 5);  // a safety net behind the parent's own limit
    std::string text = Encode(aic::graph_fuzz::CheckModel(model, feeds, oo));
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  bool exited = false, timed_out = false;
  char buf[4096];
  // Drain the pipe while waiting (a large report must not block the child).
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  while (true) {
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  if (timed_out) {
    r.findings.push_back({"hang", "oracles", absl::StrCat("no answer within ", timeout_s, " s")});
    return r;
  }
  if (exited && WIFSIGNALED(status)) {
    r = Decode(text);
    r.findings.push_back({"crash", "oracles", absl::StrCat("killed by signal ", WTERMSIG(status), " (",
                                                           strsignal(WTERMSIG(status)), ")")});
    return r;
  }
  if (text.find("C\t") == std::string::npos) {
    r.findings.push_back({"crash", "oracles", absl::StrCat("exited with status ", WEXITSTATUS(status), " without a report")});
    return r;
  }
  return Decode(text);
}

void SaveCase(const std::string& dir, const aic::Model& model, const aic::exec::Feeds& feeds) {
  fs::create_directories(fs::path(dir) / "inputs");
  (void)aic::SaveModel(model, (fs::path(dir) / "model.onnx").string());
  for (const auto& [name, v] : feeds) {
    (void)aic::WriteNpy(v.tensor, (fs::path(dir) / "inputs" / (name + ".npy")).string());
  }
}

int64_t CountNodes(const aic::Graph& g) { return static_cast<int64_t>(g.TotalNodeCount()); }

int Replay(const Options& o, const OracleOptions& oo) {
  auto model = aic::LoadModel((fs::path(o.replay) / "model.onnx").string());
  if (!model.ok()) {
    std::cerr << "aic_graph_fuzz: " << model.status().message() << "\n";
    return 2;
  }
  aic::exec::Feeds feeds;
  for (const aic::Value* v : (*model)->graph->inputs()) {
    auto t = aic::ReadNpy((fs::path(o.replay) / "inputs" / (v->name() + ".npy")).string());
    if (!t.ok()) {
      std::cerr << "aic_graph_fuzz: " << o.replay << ": input '" << v->name() << "': " << t.status().message() << "\n";
      return 2;
    }
    feeds[v->name()] = aic::RuntimeValue(*t);
  }
  OracleReport r = CheckIsolated(**model, feeds, oo, o.timeout_s);
  for (const Finding& f : r.findings) std::cout << "finding: " << f.Key() << ": " << f.detail << "\n";
  std::cout << o.replay << ": " << r.configs << " configurations, " << r.findings.size() << " findings\n";
  return r.findings.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseArgs(argc, argv);
  OracleOptions oo;
  oo.cpu = o.cpu;
  if (!o.plant_bug.empty()) oo.extra_rules.push_back(aic::graph_fuzz::FindPlantedBug(o.plant_bug));
  if (!o.replay.empty()) return Replay(o, oo);

  aic::graph_fuzz::GenOptions go;
  go.max_steps = o.max_steps;
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  int64_t models = 0, discarded = 0, nodes = 0, configs = 0;
  std::map<std::string, int64_t> rules, recipes;
  std::set<std::string> ops;
  std::set<std::string> keys_seen;
  int findings = 0;
  for (uint64_t i = 0; elapsed() < o.seconds && (o.max_models < 0 || models < o.max_models); ++i) {
    uint64_t seed = o.seed * 1000003ULL + i;
    absl::StatusOr<aic::graph_fuzz::GeneratedModel> gen = aic::graph_fuzz::GenerateModel(seed, go);
    if (!gen.ok()) {
      ++discarded;
      continue;
    }
    ++models;
    nodes += CountNodes(*gen->model->graph);
    for (const std::string& r : gen->recipes) ++recipes[r];
    OracleOptions this_oo = oo;
    if (!o.ort_dir.empty() && models % o.ort_every == 0) this_oo.save_dir = (fs::path(o.ort_dir) / std::to_string(seed)).string();
    OracleReport r = CheckIsolated(*gen->model, gen->feeds, this_oo, o.timeout_s);
    configs += r.configs;
    for (const auto& [rule, n] : r.rule_counts) rules[rule] += n;
    ops.insert(r.ops.begin(), r.ops.end());
    if (r.findings.empty()) continue;

    const Finding& f = r.findings.front();
    ++findings;
    std::string dir = (fs::path(o.out) / absl::StrCat("finding-", seed)).string();
    std::cout << "finding (seed " << seed << ", " << CountNodes(*gen->model->graph) << " nodes): " << f.Key() << ": "
              << f.detail << "\n";
    for (size_t k = 1; k < r.findings.size() && k < 4; ++k) std::cout << "  also: " << r.findings[k].Key() << "\n";
    SaveCase((fs::path(dir) / "original").string(), *gen->model, gen->feeds);
    std::unique_ptr<aic::Model> small = aic::CloneModel(*gen->model);
    aic::exec::Feeds small_feeds = gen->feeds;
    std::string detail = f.detail;
    if (o.shrink) {
      std::string key = f.Key();
      auto still_fails = [&](const aic::Model& m, const aic::exec::Feeds& feeds) {
        OracleReport rr = CheckIsolated(m, feeds, oo, o.timeout_s);
        for (const Finding& g : rr.findings) {
          if (g.Key() == key) {
            detail = g.detail;
            return true;
          }
        }
        return false;
      };
      aic::graph_fuzz::ShrinkResult s = aic::graph_fuzz::Shrink(*gen->model, gen->feeds, still_fails);
      small = std::move(s.model);
      small_feeds = std::move(s.feeds);
      std::cout << "  shrunk to " << CountNodes(*small->graph) << " nodes (" << s.attempts << " candidates)\n";
    }
    SaveCase(dir, *small, small_feeds);
    std::ofstream(fs::path(dir) / "finding.txt")
        << f.Key() << "\n" << detail << "\nseed " << seed << "\nreplay: aic_graph_fuzz --replay " << dir << "\n";
    std::cout << "  saved " << dir << " (replay: aic_graph_fuzz --replay " << dir << ")\n";
    if (o.expect_finding) break;
  }

  std::vector<std::string> fired;
  for (const auto& [rule, n] : rules) fired.push_back(absl::StrCat(rule, " ", n));
  std::cout << "graph fuzz: " << models << " models (" << discarded << " draws discarded: no finite inputs), "
            << nodes << " nodes, " << configs << " configurations in " << static_cast<int>(elapsed()) << " s; "
            << ops.size() << " op types; " << rules.size() << " rules fired: " << absl::StrJoin(fired, ", ") << "\n";
  std::vector<std::string> unused;
  for (const std::string& name : aic::graph_fuzz::RecipeNames()) {
    if (!recipes.count(name)) unused.push_back(name);
  }
  if (!unused.empty()) std::cout << "recipes never built: " << absl::StrJoin(unused, ", ") << "\n";
  std::cout << "op types: " << absl::StrJoin(ops, " ") << "\n";
  std::cout << findings << " findings\n";
  if (o.expect_finding) return findings > 0 ? 0 : 1;
  return findings > 0 ? 1 : 0;
}
