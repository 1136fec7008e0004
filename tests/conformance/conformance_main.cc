// aic_conformance: runs the ONNX 1.12 backend test suite through one executor
// (--device reference, the default, or cpu: see devices.h). Each test runs in
// a forked child (a crash or a hang in one kernel fails that test, not the
// run). Prints one line per failure with --verbose, then
// `conformance: N passed, N failed, N skipped`.
//
//   aic_conformance [--device NAME] [--root DIR] [--sets node,simple,...] [--filter REGEX]
//                   [--allowlist FILE] [--write-allowlist FILE] [--json FILE]
//                   [--timeout SECONDS] [--verbose]
//
// With --allowlist, exits 1 when a listed test does not pass (a regression).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "session/session.h"
#include "tests/conformance/conformance.h"
#include "tests/conformance/devices.h"
#ifdef AIC_HAVE_CUDA
#include "exec/cuda/backend.h"
#endif

namespace {

namespace fs = std::filesystem;
using aic::conformance::TestResult;

struct Options {
  std::string device = "reference";
  std::string root = "/usr/share/libonnx-testdata/data";
  std::vector<std::string> sets = {"node", "pytorch-converted", "pytorch-operator", "simple"};
  std::string filter;
  std::string allowlist, write_allowlist, json;
  int timeout_s = 60;
  bool verbose = false;
};

// Runs the test in a child process; the child reports through a pipe as
// "<status>\t<shape_check>\t<coverage>\t<category>\t<reason>".
TestResult RunIsolated(const std::string& dir, const std::string& device, int timeout_s) {
  int fds[2];
  if (pipe(fds) != 0) return aic::conformance::RunBackendTest(dir, device);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    TestResult r = aic::conformance::RunBackendTest(dir, device);
    std::string reason = r.reason;
    for (char& c : reason) {
      if (c == '\n' || c == '\t') c = ' ';
    }
    std::string line = absl::StrCat(static_cast<int>(r.status), "\t", r.shape_check, "\t", r.coverage, "\t",
                                    r.category, "\t", reason.substr(0, 400), "\n");
    ssize_t unused = write(fds[1], line.data(), line.size());
    (void)unused;
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  bool done = false;
  while (std::chrono::steady_clock::now() < deadline) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      done = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  TestResult r;
  if (!done) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    close(fds[0]);
    r.category = "timeout";
    r.reason = absl::StrCat("no result within ", timeout_s, " s");
    return r;
  }
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  std::vector<std::string> parts = absl::StrSplit(out, absl::MaxSplits('\t', 4));
  if (parts.size() < 5 || !WIFEXITED(status)) {
    r.category = "crash";
    r.reason = WIFSIGNALED(status) ? absl::StrCat("killed by signal ", WTERMSIG(status))
                                   : "child exited without a result";
    return r;
  }
  r.status = static_cast<TestResult::Status>(std::stoi(parts[0]));
  r.shape_check = parts[1];
  r.coverage = parts[2];
  r.category = parts[3];
  r.reason = parts[4];
  while (!r.reason.empty() && r.reason.back() == '\n') r.reason.pop_back();
  return r;
}

std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef AIC_HAVE_CUDA
  aic::session::RegisterBackend(aic::cuda::CudaBackend());  // names it; CUDA itself starts in a test's child
#endif
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "aic_conformance: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--device") opt.device = value();
    else if (a == "--root") opt.root = value();
    else if (a == "--sets") opt.sets = absl::StrSplit(value(), ',');
    else if (a == "--filter") opt.filter = value();
    else if (a == "--allowlist") opt.allowlist = value();
    else if (a == "--write-allowlist") opt.write_allowlist = value();
    else if (a == "--json") opt.json = value();
    else if (a == "--timeout") opt.timeout_s = std::stoi(value());
    else if (a == "--verbose") opt.verbose = true;
    else {
      std::fprintf(stderr, "aic_conformance: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (!aic::conformance::IsKnownDevice(opt.device)) {
    std::fprintf(stderr, "aic_conformance: unknown device %s\n", opt.device.c_str());
    return 2;
  }
  if (!fs::exists(opt.root)) {
    std::printf("conformance: suite not found at %s (install libonnx-testdata); skipped\n",
                opt.root.c_str());
    return 0;
  }
  std::regex filter(opt.filter.empty() ? ".*" : opt.filter);
  std::map<std::string, std::map<std::string, int>> per_set;  // set -> status -> count
  std::map<std::string, TestResult> results;                  // "set/test" -> result
  int passed = 0, failed = 0, skipped = 0;
  std::map<std::string, int> shape_counts, coverage_counts;
  for (const std::string& set : opt.sets) {
    fs::path set_dir = fs::path(opt.root) / set;
    if (!fs::exists(set_dir)) continue;
    std::vector<std::string> tests;
    for (const auto& e : fs::directory_iterator(set_dir)) {
      if (fs::exists(e.path() / "model.onnx")) tests.push_back(e.path().filename().string());
    }
    std::sort(tests.begin(), tests.end());
    for (const std::string& test : tests) {
      if (!std::regex_search(test, filter)) continue;
      TestResult r = RunIsolated((set_dir / test).string(), opt.device, opt.timeout_s);
      std::string key = set + "/" + test;
      results[key] = r;
      switch (r.status) {
        case TestResult::Status::kPassed: ++passed; per_set[set]["passed"]++; break;
        case TestResult::Status::kFailed: ++failed; per_set[set]["failed"]++; break;
        case TestResult::Status::kSkipped: ++skipped; per_set[set]["skipped"]++; break;
      }
      if (r.status == TestResult::Status::kPassed) {
        shape_counts[r.shape_check]++;
        if (!r.coverage.empty()) coverage_counts[r.coverage]++;
      }
      if (opt.verbose && r.status != TestResult::Status::kPassed) {
        std::printf("%s %s: [%s] %s\n", r.status == TestResult::Status::kFailed ? "FAIL" : "SKIP",
                    key.c_str(), r.category.c_str(), r.reason.c_str());
      }
    }
  }
  for (const auto& [set, counts] : per_set) {
    std::printf("  %-18s %d passed, %d failed, %d skipped\n", set.c_str(), counts.count("passed") ? counts.at("passed") : 0,
                counts.count("failed") ? counts.at("failed") : 0, counts.count("skipped") ? counts.at("skipped") : 0);
  }
  std::printf("  shape inference on passing tests: %d match, %d mismatch, %d not static\n",
              shape_counts["match"], shape_counts["mismatch"], shape_counts["unknown"]);
  if (!coverage_counts.empty()) {
    std::printf("  plans of passing tests: %d fast, %d mixed, %d reference kernels only, %d folded\n",
                coverage_counts["fast"], coverage_counts["mixed"], coverage_counts["reference"],
                coverage_counts["folded"]);
  }

  if (!opt.json.empty()) {
    std::ofstream f(opt.json);
    f << "{\n  \"tests\": [\n";
    bool first = true;
    for (const auto& [key, r] : results) {
      if (!first) f << ",\n";
      first = false;
      const char* st = r.status == TestResult::Status::kPassed   ? "passed"
                       : r.status == TestResult::Status::kFailed ? "failed"
                                                                 : "skipped";
      f << "    {\"test\": \"" << key << "\", \"status\": \"" << st << "\", \"category\": \""
        << JsonEscape(r.category) << "\", \"reason\": \"" << JsonEscape(r.reason)
        << "\", \"shape_check\": \"" << r.shape_check << "\", \"coverage\": \"" << r.coverage << "\"}";
    }
    f << "\n  ]\n}\n";
  }
  if (!opt.write_allowlist.empty()) {
    std::ofstream f(opt.write_allowlist);
    f << "# Backend-suite tests that pass on --device " << opt.device << "; CI fails if one regresses.\n"
      << "# Regenerate with: tests/conformance/update_conformance.sh\n";
    for (const auto& [key, r] : results) {
      if (r.status == TestResult::Status::kPassed) f << key << "\n";
    }
  }
  int regressions = 0;
  if (!opt.allowlist.empty()) {
    std::ifstream f(opt.allowlist);
    std::string line;
    while (std::getline(f, line)) {
      if (line.empty() || line[0] == '#') continue;
      auto it = results.find(line);
      if (it == results.end()) continue;  // filtered out in this run
      if (it->second.status != TestResult::Status::kPassed) {
        ++regressions;
        std::printf("REGRESSION %s: [%s] %s\n", line.c_str(), it->second.category.c_str(),
                    it->second.reason.c_str());
      }
    }
  }
  std::printf("conformance: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
  if (!opt.allowlist.empty()) {
    std::printf("allow-list: %d regressions\n", regressions);
    return regressions == 0 ? 0 : 1;
  }
  return 0;
}
