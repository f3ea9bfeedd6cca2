#!/bin/sh
# Writes the tour's report in both languages: docs/tour.en.html and docs/tour.zh.html.
#   docs/reports.sh [ATTNLAB [FOLDER]]   (default: build/release/attnlab, docs)
# tests/python/docs_reports.py runs it into a scratch folder and holds the result to docs/.
set -eu
cd "$(dirname "$0")/.."
bin=${1:-build/release/attnlab}
out=${2:-docs}
for lang in en zh; do
  "$bin" tour --lang "$lang" --report "$out/tour.$lang.html" > /dev/null
done
