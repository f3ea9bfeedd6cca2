#!/usr/bin/env bash
# Sets attnlab up on a Debian machine and runs it. Installs only what is missing.
#   ./setup.sh run    build (release) and run the main job
#   ./setup.sh test   build with warnings as errors, run every test (ctest: each case its own
#                     entry), fuzz the file readers for 30 s a target (libFuzzer), then
#                     build and run every test again under AddressSanitizer +
#                     UndefinedBehaviorSanitizer (ctest)
set -euo pipefail
cd "$(dirname "$0")"

packages=(g++ cmake ninja-build pkg-config python3 libopenblas-dev libcli11-dev libfmt-dev libxtensor-dev xtl-dev libxsimd-dev
          doctest-dev nlohmann-json3-dev python3-numpy libcairo2-dev fonts-dejavu-core fonts-wqy-microhei
          clang-14 libclang-rt-14-dev libxml2-utils chromium bubblewrap pmccabe slurm-wlm munge zlib1g-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The release build uses Ninja; the sanitizer build CMake's default generator, Unix Makefiles,
# so that both generators build on every run. Make is told to use every core.
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
build() {
  cmake --preset "$1" --log-level=WARNING >&2
  cmake --build --preset "$1" >&2
}

case "${1:-}" in
  run)
    build release
    ./build/release/attnlab tour
    ;;
  test)
    build release
    # Each test case is its own ctest entry, and an entry fails unless it ran the case it names
    # (tests/main.cpp), so every case runs and counts.
    ctest --preset release
    tests/fuzz/run.sh 30
    # Under the sanitizers every case runs once, as its own ctest entry; an entry whose filter
    # matched no case fails (tests/main.cpp), so none passes having run nothing.
    build asan
    ctest --preset asan
    ;;
  *)
    echo "usage: ./setup.sh run|test" >&2
    exit 2
    ;;
esac
