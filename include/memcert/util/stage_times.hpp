#pragma once
// Wall-clock seconds per named stage of a long computation, accumulated in first-use order (for the
// "timings" field of the CLI's JSON and for bench/). Not thread-safe: time stages from one thread.
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace memcert {

class StageTimes {
 public:
  // Adds `seconds` to stage `name` (created on first use, so the order is the order stages first ran).
  void add(const std::string& name, double seconds) {
    for (auto& e : v_)
      if (e.first == name) { e.second += seconds; return; }
    v_.emplace_back(name, seconds);
  }
  void merge(const StageTimes& o) { for (auto& e : o.v_) add(e.first, e.second); }
  const std::vector<std::pair<std::string, double>>& entries() const { return v_; }

  // Times the enclosing scope into stage `name` of `t` (t may be null: then it times nothing).
  class Scope {
   public:
    Scope(StageTimes* t, std::string name) : t_(t), name_(std::move(name)), start_(std::chrono::steady_clock::now()) {}
    ~Scope() {
      if (t_) t_->add(name_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    StageTimes* t_;
    std::string name_;
    std::chrono::steady_clock::time_point start_;
  };

 private:
  std::vector<std::pair<std::string, double>> v_;
};

}  // namespace memcert
