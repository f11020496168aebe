#pragma once
// parallel_for: run f(i) for i = 0..count-1 on `threads` threads (the caller's thread is one of them),
// indices handed out one at a time from an atomic counter. f must be safe to call concurrently for
// distinct i. An exception thrown by f stops the hand-out and the first one is rethrown to the caller
// after every thread has joined. If a thread cannot be started, the others do its share.
// Each helper thread frees MPFR's thread-local caches (constants such as log 2) before it ends: f often
// uses MPFR, and the caches of a finished thread would otherwise never be released.
#include <mpfr.h>

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace memcert {

template <class F>
void parallel_for(std::size_t count, int threads, F&& f) {
  if (threads <= 1 || count <= 1) {
    for (std::size_t i = 0; i < count; ++i) f(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    try {
      for (std::size_t i; (i = next.fetch_add(1)) < count;) f(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next.store(count);
    }
  };
  std::vector<std::thread> pool;
  try {
    for (int t = 1; t < threads; ++t)
      pool.emplace_back([&work] {
        work();
        if (mpfr_buildopt_tls_p()) mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);  // without TLS the caches are global
      });
  } catch (...) {  // a thread could not start: the started ones and this one share the work
  }
  work();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace memcert
