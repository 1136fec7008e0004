#include "cli/progress_line.h"

#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace aic::cli {

ProgressLine::ProgressLine(std::string command)
    : command_(std::move(command)), enabled_(isatty(STDERR_FILENO) != 0) {
  if (enabled_) ticker_ = std::thread([this] { Tick(); });
}

ProgressLine::~ProgressLine() {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  ticker_.join();
  if (shown_) std::fputs("\r\033[K", stderr);
}

void ProgressLine::Set(const std::string& message) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  message_ = message;
  since_ = std::chrono::steady_clock::now();
  if (shown_) Draw();
}

void ProgressLine::Tick() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!done_) {
    cv_.wait_for(lock, std::chrono::seconds(1));
    if (!done_) Draw();
  }
}

void ProgressLine::Draw() {
  shown_ = true;
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - since_).count();
  std::fprintf(stderr, "\r\033[K[aic-onnx %s] %s%s", command_.c_str(), message_.c_str(),
               secs >= 1 ? absl::StrCat(" ... ", secs, " s").c_str() : "");
  std::fflush(stderr);
}

}  // namespace aic::cli
