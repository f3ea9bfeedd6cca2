#!/usr/bin/env bash
# Builds the readers' fuzzer with clang and libFuzzer (Debian's clang 14 ships it) and runs it
# on a copy of the seed corpus. Usage: tests/fuzz/run.sh [SECONDS] (default 600).
# New crashes land in tests/fuzz/crashes/; add the ones fixed to tests/fuzz/corpus/.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-600}"
out=build/fuzz
mkdir -p "$out" "$out/corpus" tests/fuzz/crashes
cmake --preset release --log-level=WARNING >/dev/null   # the generated headers
clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -Ilib -Ibuild/release/generated \
  tests/fuzz/fuzz_readers.cpp lib/attnlab/io/npy.cpp lib/attnlab/io/read.cpp lib/attnlab/core/report.cpp \
  -lfmt -o "$out/fuzz_readers"
cp tests/fuzz/corpus/* "$out/corpus/"
"$out/fuzz_readers" "$out/corpus" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix=tests/fuzz/crashes/ -print_final_stats=1
