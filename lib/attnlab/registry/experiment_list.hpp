// The one list of experiments, typed: for_each_experiment(f) calls f on each experiment's
// descriptor (an Experiment<P>), in the order --help lists them. The registry builds the
// command line's entries from it, and the random tests loop over it, so no other list of
// experiments is kept.
#pragma once

#include "attnlab/experiments/alibi.hpp"
#include "attnlab/experiments/attend.hpp"
#include "attnlab/experiments/bench.hpp"
#include "attnlab/experiments/decode.hpp"
#include "attnlab/experiments/grad.hpp"
#include "attnlab/experiments/learned.hpp"
#include "attnlab/experiments/mask.hpp"
#include "attnlab/experiments/nope.hpp"
#include "attnlab/experiments/pe.hpp"
#include "attnlab/experiments/permute.hpp"
#include "attnlab/experiments/rerotate.hpp"
#include "attnlab/experiments/rope.hpp"
#include "attnlab/experiments/shaw.hpp"
#include "attnlab/experiments/t5.hpp"
#include "attnlab/experiments/train.hpp"

namespace attnlab {

template <class F>
void for_each_experiment(F&& f)
{
    f(permute_experiment()), f(pe_experiment()), f(learned_experiment()), f(shaw_experiment()), f(t5_experiment());
    f(rope_experiment()), f(rerotate_experiment()), f(alibi_experiment()), f(mask_experiment()), f(nope_experiment()), f(decode_experiment());
    f(attend_experiment()), f(grad_experiment()), f(train_experiment()), f(bench_experiment());
}

}  // namespace attnlab
