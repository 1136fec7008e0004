// One status line on a terminal for work that takes longer than a second
// (`report`'s SVDs, `opt`'s verification): "[aic-onnx opt] verifying ... 3 s",
// redrawn every second and erased at the end. Nothing is drawn when stderr
// is not a terminal, or for work that ends within its first second.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace aic::cli {

class ProgressLine {
 public:
  explicit ProgressLine(std::string command);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // The current step; its seconds count from here.
  void Set(const std::string& message);

 private:
  void Tick();
  void Draw();  // mu_ held

  const std::string command_;
  const bool enabled_;
  std::thread ticker_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool shown_ = false;  // drawn at least once: erase at the end
  std::string message_;
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
};

}  // namespace aic::cli
