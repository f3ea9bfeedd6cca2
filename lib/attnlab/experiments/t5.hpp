// `t5`: T5's bucketed relative position bias ("Transformer（四）" §9.2: the relative distance of
// query and key added to the scores). Offsets j - i fall into N buckets, exact for small
// distances and log-spaced up to max_distance, and each head adds a learned scalar per bucket:
// bias[h, i, j] = bucket_bias[bucket[i, j], h]. The bucket rule is core/position/t5.hpp.
// A block of queries after a cache (--query-offset O, a decoder step) sees O + L keys, with
// offsets j - (O + i), as Hugging Face's compute_bias with cache_position.
#pragma once

#include "attnlab/core/position/t5.hpp"
#include "attnlab/core/report.hpp"
#include "attnlab/experiments/experiment.hpp"

#include <string>
#include <vector>

namespace attnlab {

struct T5Params {
    long len = 16;              // L queries (and L keys after the offset)
    long query_offset = 0;      // O: the queries sit at O .. O+L-1 after O cached tokens; keys 0 .. O+L-1
    long buckets = 32;          // N
    long max_distance = 128;    // D
    T5Direction direction = T5Direction::bidirectional;
    long heads = 4;             // H, the columns of bucket_bias
};

const Experiment<T5Params>& t5_experiment();
Report run_t5(const T5Params& p, const RunContext& ctx);
// The arguments that reproduce a run ("t5", then the options that differ from the defaults).
std::vector<std::string> t5_command(const T5Params& p);

}  // namespace attnlab
