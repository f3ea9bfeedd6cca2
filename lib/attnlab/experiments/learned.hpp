// `learned`: learned absolute positions, as BERT and GPT-2 have them. A table pos_emb of
// max_len rows, one vector per position (nn.Embedding(max_len, D)), added to the token
// embeddings: x_pe = x + pos_emb[:L]. Two properties set it apart from the sinusoidal table
// ("Transformer（四）" §9.1; "Attention 的两个补丁" §2.2 and FAQ Q4):
//   - position max_len has no row: nn.Embedding raises IndexError there, so the table cannot
//     be used past max_len at all (extending it means new rows, trained or interpolated);
//   - pos_emb(p).pos_emb(p+k) depends on p, where PE(p).PE(p+k) depends on k alone: no fixed
//     M(k) takes every row to the row k further on.
// The table here is seeded (a trained one has no closed form either); --input pos_emb=FILE
// measures a learner's or a real model's table.
#pragma once

#include "attnlab/core/report.hpp"
#include "attnlab/experiments/experiment.hpp"

#include <string>
#include <vector>

namespace attnlab {

struct LearnedParams {
    long len = 8;       // L, the input's positions
    long dim = 8;       // D
    long max_len = 16;  // M, the table's rows
    long batch = 1;     // B
};

const Experiment<LearnedParams>& learned_experiment();
Report run_learned(const LearnedParams& p, const RunContext& ctx);
// The arguments that reproduce a run ("learned", then the options that differ from the defaults).
std::vector<std::string> learned_command(const LearnedParams& p);

}  // namespace attnlab
