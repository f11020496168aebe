#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz/ with clang-14 under AddressSanitizer and
# UndefinedBehaviorSanitizer (build directory build-fuzz/) and runs each for a fixed number of
# executions from the seed corpus tests/fuzz/corpus/<harness>/ (copied, so the repository is not
# modified). Built at -O1 with assertions on (what fuzzing wants, and quick to compile): only the checker
# and the data and model-file readers, not the engine, so CI's fuzz step (build + 2000 runs each) takes a few minutes. A crash, a sanitizer report, a leak, a timeout or an internal error stops the script
# with a non-zero status and leaves the reproducer in build-fuzz/findings/.
#   scripts/fuzz.sh            2000 executions per harness (CI; the runs take under a minute after the build)
#   scripts/fuzz.sh 200000     a longer campaign
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-2000}
JOBS=${JOBS:-2}
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DMEMCERT_BUILD_TESTS=OFF -DMEMCERT_BUILD_PYTHON=OFF -DMEMCERT_BUILD_EXAMPLES=OFF \
  -DMEMCERT_FUZZ=ON -DMEMCERT_SANITIZE=address,undefined >/dev/null
harnesses=(checker_json checker data_json npy npz txt pt safetensors)
nice cmake --build build-fuzz -j"$JOBS" --target "${harnesses[@]/#/fuzz_}"
mkdir -p build-fuzz/findings
for h in "${harnesses[@]}"; do
  work=build-fuzz/corpus/$h
  rm -rf "$work" && mkdir -p "$work"
  cp tests/fuzz/corpus/"$h"/* "$work"/ 2>/dev/null || true
  echo "fuzz_$h: $RUNS executions"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ./build-fuzz/tests/fuzz/fuzz_"$h" -runs="$RUNS" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix=build-fuzz/findings/"$h"- "$work" 2>build-fuzz/fuzz_"$h".log ||
    { echo "fuzz_$h FAILED (see build-fuzz/fuzz_$h.log)"; tail -30 build-fuzz/fuzz_"$h".log; exit 1; }
done
echo "fuzz: all harnesses ran $RUNS executions without a finding"
