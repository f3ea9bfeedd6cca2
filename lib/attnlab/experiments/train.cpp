#include "attnlab/experiments/train.hpp"
#include "attnlab/experiments/train_internal.hpp"

#include "attnlab/core/measure.hpp"
#include "attnlab/core/report.hpp"
#include "attnlab/core/rng.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace attnlab {

namespace train_detail {

using namespace train;

std::vector<long> eval_lengths(const TrainParams& p)
{
    return p.eval_lens.empty() ? std::vector<long>{p.train_len, 2 * p.train_len, 4 * p.train_len} : p.eval_lens;
}

long longest_eval(const TrainParams& p)
{
    const std::vector<long> lens = eval_lengths(p);
    return *std::max_element(lens.begin(), lens.end());
}

std::vector<Scheme> schemes_of(const TrainParams& p)
{
    if (!p.compare) return {p.pe};
    return {Scheme::none, Scheme::sinusoidal, Scheme::learned, Scheme::rope, Scheme::t5, Scheme::alibi};
}

long seeds_of(const TrainParams& p) { return p.seeds.value_or(p.compare ? 3 : 1); }

ModelConfig model_config(const TrainParams& p, Scheme pe)
{
    return {p.vocab, p.d_model, p.layers, p.heads, task_positions(p.task, p.train_len), pe};
}

void validate(const TrainParams& p)
{
    if (p.d_model % p.heads != 0) throw InputError(fmt::format("--d-model {} is not divisible by --heads {}", p.d_model, p.heads));
    const long d = p.d_model / p.heads;
    for (Scheme s : schemes_of(p)) {
        if (s == Scheme::rope && d % 2 != 0) throw InputError(fmt::format("rope needs an even head dimension; --d-model / --heads = {}", d));
        if (s == Scheme::sinusoidal && p.d_model % 2 != 0) throw InputError(fmt::format("sinusoidal PE needs an even --d-model (got {})", p.d_model));
    }
    if (p.seeds && !p.compare) throw InputError("--seeds trains several models per scheme for --compare-schemes; give --compare-schemes");
    if (p.until_learned && *p.until_learned < p.steps) {
        throw InputError(fmt::format("--until-learned {} is the cap on all steps; it must be at least --steps {}", *p.until_learned, p.steps));
    }
    if (!p.resume.empty() && p.compare) throw InputError("--resume goes on from one scheme's checkpoint; it does not combine with --compare-schemes");
    if (p.task == Task::k_back && p.k >= p.train_len) {
        throw InputError(fmt::format("--k {} must be below --train-len {}: k-back scores positions t >= k", p.k, p.train_len));
    }
    for (long n : eval_lengths(p))
        if (n < 1 || n > kMaxEvalLen) throw InputError(fmt::format("--eval-lens must lie in 1..{} (got {})", kMaxEvalLen, n));
}

// Work of one pass over `tokens` positions of context T: the products (6 per parameter for a
// forward and a backward, through BLAS) and the attention (T d per query, four passes).
double pass_work(const TrainParams& p, double tokens, double context, bool backward)
{
    const double C = dsize(p.d_model), params = dsize(p.layers) * 12.0 * C * C + 2.0 * dsize(p.vocab) * C;
    const double factor = backward ? 3.0 : 1.0;
    return factor * (2.0 * params * tokens / kKernelSpeedup + dsize(p.layers) * tokens * context * C * 2.0);
}

double total_work(const TrainParams& p)
{
    const double T = dsize(task_positions(p.task, p.train_len)), tokens = dsize(p.batch) * T;
    double work = (dsize(step_cap(p)) + 2.0 * kThreadCheckSteps) * pass_work(p, tokens, T, true);
    if (p.until_learned) work += dsize(step_cap(p) / kLearnRound) * pass_work(p, dsize(kEvalSequences) * T, T, false);
    for (long n : eval_lengths(p)) {
        const double Tn = dsize(task_positions(p.task, n));
        work += pass_work(p, dsize(kEvalSequences) * Tn, Tn, false);
    }
    return work * dsize(static_cast<long>(schemes_of(p).size())) * dsize(seeds_of(p)) + kCheckBudget;
}

}  // namespace train_detail

namespace {

using namespace train;
using namespace train_detail;

// How a trained model does at each evaluation length: per-token accuracy and exact match (NaN
// where a learned table cannot run), and the accuracy per position at the longest length.
struct Evaluation {
    std::vector<double> accuracy, exact_match, by_position;
};

// One scheme trained: its losses per step, its evaluation, and the figures its checks read.
struct SchemeResult {
    std::vector<double> loss;
    Evaluation eval;
    double first_max_logit = 0.0;
    double seconds = 0.0;
    long steps_run = 0;  // in this process (fewer than the losses after --resume)
};

template <class T>
double max_abs_logit(const Model<T>& m, const Batch& batch, unsigned threads)
{
    Activations<T> act;
    model_forward(m, batch, act, threads);
    double worst = 0.0;
    for (T z : act.logits) worst = worse(worst, std::abs(static_cast<double>(z)));
    return worst;
}

// The model's scores on kEvalSequences sequences of length n, batch `index` of the seed's
// evaluation stream.
template <class T>
Scores scores_at(const TrainParams& p, const Model<T>& m, long n, std::uint64_t seed, std::uint64_t index)
{
    const Batch batch = task_batch(TaskSpec{p.task, p.vocab, p.k}, n, kEvalSequences, seed, stream::eval_data, index);
    Activations<T> act;
    model_forward(m, batch, act, p.threads);
    return score_hits(hits(act, batch, p.vocab), batch.sequences, batch.positions);
}

template <class T>
Evaluation evaluate(const TrainParams& p, const Model<T>& m, std::uint64_t seed)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const long longest = longest_eval(p);
    Evaluation e;
    e.by_position.assign(static_cast<std::size_t>(task_positions(p.task, longest)), nan);
    for (long n : eval_lengths(p)) {
        if (m.cfg.pe == Scheme::learned && task_positions(p.task, n) > m.cfg.max_len) {
            e.accuracy.push_back(nan), e.exact_match.push_back(nan);  // no table row for those positions
            continue;
        }
        const Scores s = scores_at(p, m, n, seed, static_cast<std::uint64_t>(n));
        e.accuracy.push_back(s.accuracy), e.exact_match.push_back(s.exact_match);
        if (n == longest) e.by_position = s.by_position;
    }
    return e;
}

// "train alibi: step 120/800, loss 1.234, 18,000 tokens/s, 30 s left" at most twice a second.
void report_progress(const Plan& plan, Scheme pe, long step, long first, const TrainParams& p, double loss, double seconds, double& last)
{
    if (plan.progress == nullptr || seconds - last < 0.5) return;
    last = seconds;
    const double per_step = seconds / dsize(step + 1 - first), tokens = dsize(p.batch) * dsize(task_positions(p.task, p.train_len));
    const long end = std::max(p.steps, step + 1);  // past --steps, --until-learned goes round by round
    (*plan.progress)(fmt::format("train {}: step {}/{}, loss {:.4f}, {:.0f} tokens/s, {:.0f} s left", name_of(pe), step + 1, end, loss,
                                 tokens / per_step, per_step * dsize(end - step - 1)));
}

// Whether the model scores kLearned at the training length, on held-out sequences of its own
// seed (not the evaluation's).
template <class T>
bool has_learned(const TrainParams& p, const Model<T>& m, std::uint64_t seed)
{
    return scores_at(p, m, p.train_len, seed, (1ULL << 31) + static_cast<std::uint64_t>(p.train_len)).accuracy >= kLearned;
}

// Trains `state` (of scheme pe) on to p.steps steps in all, then with --until-learned on in
// rounds until it has learned the task or reached the cap.
template <class T>
SchemeResult train_scheme(const TrainParams& p, Scheme pe, const Plan& plan, TrainState<T>& state, std::uint64_t seed)
{
    const TaskSpec spec{p.task, p.vocab, p.k};
    StepConfig cfg;
    cfg.lr = p.lr, cfg.threads = p.threads;
    SchemeResult r;
    const Batch first = task_batch(spec, p.train_len, p.batch, seed, stream::train_data, 0);
    const long from = state.opt.step;  // 0, or the steps a resumed checkpoint took: its step-0 model is drawn again
    if (from == 0) r.first_max_logit = max_abs_logit(state.model, first, p.threads);
    else r.first_max_logit = max_abs_logit(fresh_state<T>(p, pe, seed).model, first, p.threads);
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    double last = 0.0;
    StepBuffers<T> buffers;
    auto train_to = [&](long end) {
        for (long step = state.opt.step; step < end; ++step) {
            const Batch batch = task_batch(spec, p.train_len, p.batch, seed, stream::train_data, static_cast<std::uint64_t>(step));
            state.loss.push_back(train_step(state.model, state.opt, batch, cfg, buffers));
            report_progress(plan, pe, step, from, p, state.loss.back(), elapsed(), last);
        }
    };
    train_to(p.steps);
    while (state.opt.step < step_cap(p) && !has_learned(p, state.model, seed)) train_to(std::min(step_cap(p), state.opt.step + kLearnRound));
    r.seconds = elapsed();
    r.steps_run = state.opt.step - from;
    if (plan.progress != nullptr) (*plan.progress)("");
    r.loss = state.loss;
    r.loss.resize(static_cast<std::size_t>(step_cap(p)), std::numeric_limits<double>::quiet_NaN());
    r.eval = evaluate(p, state.model, plan.seed);  // every training seed on the same evaluation data
    return r;
}

// A training step frees its buffers at the heap's top, and glibc's malloc gives anything past
// 128 KiB back to the system, to fault it in again at the next step: a third of a small run's
// time went to that. Freed memory is kept for reuse instead (up to 256 MiB; this raises no peak,
// since the heap only ever grows to hold what is live). Process-wide, set once per run.
void keep_freed_heap()
{
#if defined(__GLIBC__)
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
#endif
}

bool wants_checkpoint(const Plan& plan)
{
    return plan.wants("model_params") || plan.wants("adam_m") || plan.wants("adam_v") || plan.wants("steps_done");
}

// Each cell's median over the seeds' tables, with its lowest and highest value; NaN where a
// seed has NaN (a learned table that cannot run, a position never scored: the same in every seed).
struct SeedTables {
    std::vector<double> median, lo, hi;
};
SeedTables over_seeds(const std::vector<std::vector<double>>& tables)
{
    SeedTables out;
    for (std::size_t c = 0; c < tables.front().size(); ++c) {
        std::vector<double> v;
        for (const auto& t : tables) v.push_back(t[c]);
        if (std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); })) {
            for (auto* col : {&out.median, &out.lo, &out.hi}) col->push_back(std::numeric_limits<double>::quiet_NaN());
            continue;
        }
        std::sort(v.begin(), v.end());
        const std::size_t n = v.size();
        out.median.push_back(n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0);
        out.lo.push_back(v.front()), out.hi.push_back(v.back());
    }
    return out;
}

// The steps each model took, [scheme, seed], from their order of training ([seed, scheme]).
Tensor steps_taken(const std::vector<double>& by_seed, std::size_t schemes, std::size_t seeds)
{
    std::vector<double> v(by_seed.size());
    for (std::size_t k = 0; k < seeds; ++k)
        for (std::size_t s = 0; s < schemes; ++s) v[s * seeds + k] = by_seed[k * schemes + s];
    return Tensor{"steps_taken", {"scheme", "seed"}, Elem::index, {schemes, seeds}, v};
}

template <class T>
Run compute_train(const TrainParams& p, const Plan& plan)
{
    if (!std::is_same_v<T, float> && !std::is_same_v<T, double>) {
        throw InputError("train runs in float32 or float64 (--dtype); its 16-bit runs would be a mixed-precision recipe of their own");
    }
    using Work = std::conditional_t<std::is_same_v<T, double>, double, float>;
    keep_freed_heap();
    Run run;
    const std::vector<Scheme> schemes = schemes_of(p);
    const std::vector<long> lens = eval_lengths(p);
    const Elem elem = std::is_same_v<T, double> ? Elem::float64 : Elem::float32;
    std::vector<double> losses, taken;  // taken: steps each model took, [seed, scheme]
    // per seed, each scheme's rows one after the other: accuracy, exact match, by position
    const auto N = static_cast<std::size_t>(seeds_of(p));
    std::vector<std::vector<double>> acc(N), exact(N), by_pos(N);
    double seconds = 0.0, steps_run = 0.0;
    for (std::size_t k = 0; k < N; ++k) {
        const std::uint64_t seed = plan.seed + k;  // seed k trains the k-th model of each scheme
        for (Scheme s : schemes) {
            TrainState<Work> state = p.resume.empty() ? fresh_state<Work>(p, s, seed) : load_checkpoint<Work>(p, plan, run.read_files);
            const SchemeResult r = train_scheme<Work>(p, s, plan, state, seed);
            acc[k].insert(acc[k].end(), r.eval.accuracy.begin(), r.eval.accuracy.end());
            exact[k].insert(exact[k].end(), r.eval.exact_match.begin(), r.eval.exact_match.end());
            by_pos[k].insert(by_pos[k].end(), r.eval.by_position.begin(), r.eval.by_position.end());
            seconds += r.seconds, steps_run += dsize(r.steps_run);
            taken.push_back(dsize(state.opt.step));
            if (k > 0) continue;  // the losses, the step-0 logits and a checkpoint are the first seed's
            losses.insert(losses.end(), r.loss.begin(), r.loss.end());
            run.measured["max_logit0:" + std::string(name_of(s))] = r.first_max_logit;
            if (wants_checkpoint(plan)) add_checkpoint(state, elem, run);
        }
    }
    const auto S = schemes.size(), steps = static_cast<std::size_t>(step_cap(p)), L = lens.size();
    const auto T_long = static_cast<std::size_t>(task_positions(p.task, longest_eval(p)));
    run.add(Tensor{"eval_lens", {"length"}, Elem::index, {L}, std::vector<double>(lens.begin(), lens.end())});
    const SeedTables a = over_seeds(acc);
    if (p.compare) {
        run.add(Tensor{"loss", {"scheme", "step"}, elem, {S, steps}, losses});
        run.add(Tensor{"extrapolation", {"scheme", "length"}, Elem::float64, {S, L}, a.median});
        run.add(Tensor{"extrapolation_min", {"scheme", "length"}, Elem::float64, {S, L}, a.lo});
        run.add(Tensor{"extrapolation_max", {"scheme", "length"}, Elem::float64, {S, L}, a.hi});
        run.add(Tensor{"exact_match", {"scheme", "length"}, Elem::float64, {S, L}, over_seeds(exact).median});
        run.add(Tensor{"position_accuracy", {"scheme", "pos"}, Elem::float64, {S, T_long}, over_seeds(by_pos).median});
    } else {
        run.add(Tensor{"loss", {"step"}, elem, {steps}, losses});
        run.add(Tensor{"accuracy", {"length"}, Elem::float64, {L}, a.median});
        run.add(Tensor{"exact_match", {"length"}, Elem::float64, {L}, exact.front()});
        run.add(Tensor{"position_accuracy", {"pos"}, Elem::float64, {T_long}, by_pos.front()});
    }
    if (p.until_learned) run.add(steps_taken(taken, S, N));
    std::vector<std::string> names;  // the rows of every [scheme, ...] tensor, for the pictures' curves
    for (Scheme s : schemes) names.emplace_back(name_of(s));
    for (Tensor& t : run.tensors)
        if (t.axes.front() == "scheme") t.entry_names = names;
    const double tokens = steps_run * dsize(p.batch) * dsize(task_positions(p.task, p.train_len));
    set_param(run.measurements, "train_seconds", seconds);
    if (steps_run > 0.0) set_param(run.measurements, "tokens_per_second", tokens / seconds);  // none when a resume had no step left
    keep_thread_and_gradient_figures<Work>(p, plan.seed, run);
    return run;
}

// What the rows and columns of the tables are, and what the demonstrations rest on.
std::optional<std::string> table_note(const TrainParams& p, const Run&, const CheckEnv& env)
{
    const std::string lens = fmt::format("{}", fmt::join(eval_lengths(p), ", "));
    if (!p.compare) {
        return tr(env, "accuracy: the share of scored positions whose most likely token is the target, at task lengths {} ({} sequences each); "
                       "exact_match: the share of sequences right at every scored position; position_accuracy: the accuracy at each position "
                       "of the longest length ({}), NaN where nothing is scored",
                  "accuracy：被评分位置中最可能的词元即目标的比例，任务长度 {}（每个长度 {} 个序列）；exact_match：每个被评分位置都对的序列比例；"
                  "position_accuracy：最长长度（{}）上每个位置的准确率，不评分的位置为 NaN",
                  lens, kEvalSequences, longest_eval(p));
    }
    const long N = seeds_of(p);
    return tr(env, "extrapolation: rows none, sinusoidal, learned, rope, t5, alibi; columns task lengths {}; NaN where a learned table has no row "
                   "for a position. Every scheme trained from the same seeds and batches; each cell is the median over {} training seed{} "
                   "(extrapolation_min and extrapolation_max: their range), evaluated on the same sequences; exact_match and position_accuracy "
                   "(at length {}) likewise medians",
              "extrapolation：行依次为 none、sinusoidal、learned、rope、t5、alibi；列为任务长度 {}；可学习位置表没有对应行时为 NaN。"
              "各方案用同样的种子与数据训练；每格是 {} 个训练种子{}的中位数（extrapolation_min、extrapolation_max 为其范围），在同一批序列上评估；"
              "exact_match 与 position_accuracy（长度 {}）同样取中位数",
              lens, N, env.lang == Lang::zh ? "" : N == 1 ? "" : "s", longest_eval(p));
}

template <class T>
Typed<TrainParams> train_typed()
{
    return {compute_train<T>, train_checks(), {table_note, unlearned_note, findings_note}};
}

std::vector<OptionRow<TrainParams>> train_options()
{
    using P = TrainParams;
    std::vector<OptionRow<P>> rows{
        option<P>("--task", "copy|reverse|k-back|induction|count: a task only the tokens' order solves (count: after the separator, one mark per input token, then stop)", &P::task),
        option<P>("--pe", "none|sinusoidal|learned|rope|t5|alibi|shaw: how position enters the decoder (t5: a learned bias per bucket of i - j and head, "
                           "32 causal buckets to distance 128, one table for every layer, as T5's decoder; shaw: Shaw et al.'s learned rel_k and rel_v "
                           "per layer, distances clipped at 16)", &P::pe),
        option<P>("--steps", "Training steps (AdamW), in total", &P::steps, whole_range(1, 100000)),
        option<P>("--vocab", "Vocabulary V: token 0 separates, 1..V-1 are content", &P::vocab, whole_range(3, 4096)),
        option<P>("--d-model", "Model dimension C", &P::d_model, whole_range(2, 1024)),
        option<P>("--layers", "Decoder blocks (pre-norm: attention, then an MLP of 4C)", &P::layers, whole_range(1, 8)),
        option<P>("--heads", "Heads H, dividing --d-model", &P::heads, whole_range(1, 64)),
        option<P>("--train-len", "Task length L the model trains at (copy and reverse see 2L positions)", &P::train_len, whole_range(2, 512)),
        option<P>("--eval-lens", "Task lengths evaluated after training (default L, 2L and 4L)", &P::eval_lens),
        option<P>("--batch", "Sequences per step", &P::batch, whole_range(1, 1024)),
        option<P>("--lr", "AdamW's learning rate (betas 0.9, 0.999, eps 1e-8, weight decay 0.01; gradients clipped to norm 1)", &P::lr, positive()),
        option<P>("--k", "k-back's distance: position t answers the token at t - k", &P::k, whole_range(1, 512)),
        option<P>("--compare-schemes", "Train six schemes (none, sinusoidal, learned, rope, t5, alibi) with the same seeds and data, and print the extrapolation table", &P::compare),
        option<P>("--seeds", "--compare-schemes: models per scheme, from seeds --seed, --seed + 1, ...; each cell their median (default 3)",
                  &P::seeds, whole_range(1, 16)),
        option<P>("--until-learned", "After --steps, train on in rounds of 100 steps until the accuracy at the training length reaches 0.9 "
                                     "on held-out sequences, or this many steps in all (steps_taken: each model's)",
                  &P::until_learned, whole_range(1, 100000)),
        option<P>("--threads", "Threads of the attention passes (0: every core; the results are the same bits)", &P::threads, whole_range(0, 1024)),
        option<P>("--resume", "Go on from the state a `train --save DIR` wrote in DIR (same options; --steps is the total)", &P::resume)};
    row_of(rows, "--eval-lens").reported = [](const P& p) { return list_or_null(eval_lengths(p)); };
    row_of(rows, "--compare-schemes").excludes = {"--pe"};
    row_of(rows, "--seeds").reported = [](const P& p) { return ParamValue(seeds_of(p)); };
    return rows;
}

std::vector<TensorDecl<TrainParams>> train_tensors()
{
    using P = TrainParams;
    auto compare = [](const P& p) { return p.compare; };
    auto single = [](const P& p) { return !p.compare; };
    auto lens = [](const P& p) { return dsize(static_cast<long>(eval_lengths(p).size())); };
    auto rows = [](const P& p) { return dsize(static_cast<long>(schemes_of(p).size())); };
    auto per_length = [=](const P& p) { return p.compare ? std::vector<double>{rows(p), lens(p)} : std::vector<double>{lens(p)}; };
    auto per_pos = [=](const P& p) {
        const double T = dsize(task_positions(p.task, longest_eval(p)));
        return p.compare ? std::vector<double>{rows(p), T} : std::vector<double>{T};
    };
    auto params = [](const P& p) { return std::vector<double>{dsize(static_cast<long>(model_layout(model_config(p, p.pe)).total))}; };
    return {{"eval_lens", {"length"}, Need::always, [=](const P& p) { return std::vector<double>{lens(p)}; }, {}, {}},
            {"loss", {"step"}, Need::always,
             [=](const P& p) { return p.compare ? std::vector<double>{rows(p), dsize(step_cap(p))} : std::vector<double>{dsize(step_cap(p))}; }, {}, {"scheme", "step"}},
            {"accuracy", {"length"}, Need::always, [=](const P& p) { return std::vector<double>{lens(p)}; }, single, {}},
            {"extrapolation", {"scheme", "length"}, Need::always, [=](const P& p) { return std::vector<double>{rows(p), lens(p)}; }, compare, {}},
            {"extrapolation_min", {"scheme", "length"}, Need::always, [=](const P& p) { return std::vector<double>{rows(p), lens(p)}; }, compare, {}},
            {"extrapolation_max", {"scheme", "length"}, Need::always, [=](const P& p) { return std::vector<double>{rows(p), lens(p)}; }, compare, {}},
            {"exact_match", {"length"}, Need::always, per_length, {}, {"scheme", "length"}},
            {"position_accuracy", {"pos"}, Need::always, per_pos, {}, {"scheme", "pos"}},
            {"steps_taken", {"scheme", "seed"}, Need::always, [=](const P& p) { return std::vector<double>{rows(p), dsize(seeds_of(p))}; },
             [](const P& p) { return p.until_learned.has_value(); }, {}},
            {"model_params", {"parameter"}, Need::saved, params, single, {}},
            {"adam_m", {"parameter"}, Need::saved, params, single, {}},
            {"adam_v", {"parameter"}, Need::saved, params, single, {}},
            {"steps_done", {"value"}, Need::saved, [](const P&) { return std::vector<double>{1.0}; }, single, {}}};
}

Experiment<TrainParams> make_train_experiment()
{
    Experiment<TrainParams> e;
    e.command = "train";
    e.summary = "A tiny decoder trained on copy, reverse, k-back, induction or count with each position scheme, evaluated past its training length";
    e.example = "attnlab train --task k-back --pe alibi";
    e.options = train_options();
    e.main_tensor = "loss";
    e.tensors = train_tensors();
    e.validate = validate;
    e.derived_params = [](const TrainParams& p) {
        return ParamList{{"context", task_positions(p.task, p.train_len)},
                         {"parameters", static_cast<long>(model_layout(model_config(p, p.compare ? Scheme::learned : p.pe)).total)}};
    };
    e.scratch_bytes = [](const TrainParams& p, DType) { return train_memory(p); };
    e.work = [](const TrainParams& p, const Plan&) { return total_work(p); };
    e.work_what = [](const TrainParams& p) {
        return fmt::format("{}{} steps of {} sequences of {} positions{}", p.until_learned ? "up to " : "", step_cap(p), p.batch, task_positions(p.task, p.train_len), p.compare ? fmt::format(", {} schemes, {} seed{}", schemes_of(p).size(), seeds_of(p), seeds_of(p) == 1 ? "" : "s") : "");
    };
    e.set_typed([](auto t) { return train_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

const Experiment<TrainParams>& train_experiment()
{
    static const Experiment<TrainParams> e = make_train_experiment();
    return e;
}

Report run_train(const TrainParams& p, const RunContext& ctx) { return run_experiment(train_experiment(), p, ctx); }

}  // namespace attnlab
