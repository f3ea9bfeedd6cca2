#!/bin/sh
# Redraws docs/pictures/: runs each command docs/experiments.md shows beside a picture, as written.
#   docs/pictures.sh [ATTNLAB]   (default: build/release/attnlab)
set -eu
cd "$(dirname "$0")/.."
bin=${1:-build/release/attnlab}
grep -o '`attnlab [^`]*--plot-file docs/pictures/[^`]*`' docs/experiments.md | sed 's/^`attnlab //; s/`$//' | while IFS= read -r args; do
  eval "set -- $args"
  echo "attnlab $args" >&2
  "$bin" "$@" > /dev/null
done
