// `bench`'s parameters and entry point, light enough for the app to include.
#pragma once

#include "attnlab/core/mask_spec.hpp"
#include "attnlab/core/report.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnlab {

struct BenchParams {
    long batch = 1;                 // B
    long heads = 8;                 // H
    std::optional<long> kv_heads;   // Hkv (default H)
    long len = 4096;                // L
    std::optional<long> kv_len;     // S (default L)
    long head_dim = 64;             // d
    MaskKind mask = MaskKind::causal;  // none or causal (upper-left)
    long repeat = 3;                // timed runs; the best is reported
    unsigned threads = 0;           // 0: every core
};

Report run_bench(const BenchParams& p, const RunContext& ctx);

}  // namespace attnlab
