// `decode`: a decoder at inference. A prefill of P tokens fills a key/value cache; then each of
// T steps adds one token and attends to the cache. With a causal mask every step equals the
// same row of one full pass ("Attention 的两个补丁" §5.1 and §5.3: what a causal mask trains
// is what generation runs), provided each new token is rotated or biased with its own
// position, not 0 ("Attention 的两个补丁" §3.4 leaves the cache's offset out of apply_rope).
//   --window W: a ring buffer of W entries, the new token included (mask --kind window).
//   --sinks S:  StreamingLLM (Xiao et al. 2024, §3.2): the first S tokens stay, the last W
//               follow, and each cached key is rotated or biased with its index in the cache,
//               the query with the last one.
//   --left-pad: prompts of these real lengths, padded on the left to P; positions are
//               cumsum(mask) - 1 and the pads are masked, as Hugging Face generates.
//   --sink-logits: gpt-oss's learned sinks, one logit per head: a column appended to every
//               row of scores before the softmax and dropped after it, so each row's weights
//               sum to less than 1 (Hugging Face's GptOss eager_attention_forward).
#pragma once

#include "attnlab/core/position/rope_scaling.hpp"
#include "attnlab/core/report.hpp"
#include "attnlab/model/block_params.hpp"
#include "attnlab/experiments/experiment.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnlab {

struct DecodeParams {
    long prefill = 4;  // P
    long steps = 3;    // T
    PeKind pe = PeKind::rope;
    RopeStyle rope_style = RopeStyle::interleaved;
    long heads = 2;                 // H
    std::optional<long> kv_heads;   // Hkv, dividing H (default H)
    long dim = 8;                   // E = H d
    long batch = 1;                 // B
    long window = 0;                // W; 0: the cache keeps every token
    long sinks = 0;                 // S, with a window
    std::vector<long> left_pad;     // real prompt lengths, one per sequence (each <= P)
    std::string sink_logits;        // gpt-oss's sinks: one logit per head, or one for every head, comma-separated
};

const Experiment<DecodeParams>& decode_experiment();
Report run_decode(const DecodeParams& p, const RunContext& ctx);
// The arguments that reproduce a run ("decode", then the options that differ from the defaults).
std::vector<std::string> decode_command(const DecodeParams& p);

}  // namespace attnlab
