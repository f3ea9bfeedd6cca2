#!/usr/bin/env bash
# Builds the fuzzers with clang and libFuzzer (Debian's clang 14 and libclang-rt-14-dev) under
# AddressSanitizer + UndefinedBehaviorSanitizer, and runs each on a copy of its seed corpus.
# Usage: tests/fuzz/run.sh [SECONDS]  (per target; default 600). Exit status non-zero when a
# target finds a crash, a leak or a hang; the input lands in tests/fuzz/crashes/. Add the ones
# fixed to the target's corpus. ./setup.sh test runs it for 30 s a target.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-600}"
out=build/fuzz
mkdir -p "$out/obj" tests/fuzz/crashes
cmake --preset release --log-level=WARNING >/dev/null   # the generated headers
cxx=$(command -v clang++ || command -v clang++-14)
# The language standard is CMakeLists.txt's, read from the compile commands it exports.
std=$(grep -o -m1 -- '-std=[a-z0-9+]*' build/release/compile_commands.json)
flags=("$std" -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -Ilib -Ibuild/release/generated)
objects=()
for src in lib/attnlab/io/npy.cpp lib/attnlab/io/read.cpp lib/attnlab/io/files.cpp lib/attnlab/core/report.cpp \
           lib/attnlab/core/half.cpp lib/attnlab/exercise/exercise_file.cpp; do
  obj="$out/obj/$(basename "$src" .cpp).o"
  "$cxx" "${flags[@]}" -c "$src" -o "$obj" &
  objects+=("$obj")
done
wait
# The targets are built side by side, then run side by side (one core each), each on its own corpus copy.
targets=(fuzz_readers:corpus fuzz_exercise_file:corpus_exercise)
pids=()
builds=()
for target in "${targets[@]}"; do
  name=${target%%:*} corpus=tests/fuzz/${target#*:}
  "$cxx" "${flags[@]}" -fsanitize=fuzzer "tests/fuzz/$name.cpp" "${objects[@]}" -lfmt -o "$out/$name" &
  builds+=($!)
  rm -rf "$out/$name.corpus" && mkdir -p "$out/$name.corpus" && cp "$corpus"/* "$out/$name.corpus/"
done
for pid in "${builds[@]}"; do wait "$pid"; done
for target in "${targets[@]}"; do
  name=${target%%:*}
  echo "fuzz: $name for $seconds s" >&2
  "$out/$name" "$out/$name.corpus" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -seed=1 -artifact_prefix=tests/fuzz/crashes/ -print_final_stats=1 >"$out/$name.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  name=${targets[$i]%%:*}
  if ! wait "${pids[$i]}"; then
    tail -40 "$out/$name.log" >&2
    status=1
  fi
  grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)" "$out/$name.log" | sed "s/^/fuzz: $name: /" >&2 || true
done
exit $status
