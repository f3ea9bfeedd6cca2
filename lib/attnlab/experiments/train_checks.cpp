// `train`'s checks: what must hold of any training run (the exit status), and the articles'
// claims about length, which one seed at teaching scale can show but never prove
// (demonstrations).
#include "attnlab/experiments/train_internal.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/rng.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab::train_detail {

using namespace train;

double train_memory(const TrainParams& p)
{
    const double C = dsize(p.d_model), H = dsize(p.heads), layers = dsize(p.layers), V = dsize(p.vocab);
    double worst = 0.0;
    for (long n : eval_lengths(p)) worst = std::max(worst, dsize(task_positions(p.task, n)));
    const double T_train = dsize(task_positions(p.task, p.train_len));
    const double params = layers * 12.0 * C * C + 2.0 * V * C + T_train * C + 4.0 * C;
    // a forward's caches per layer: 12 rows of C, 4 of 4C, the weights [H, T, T]; logits twice
    auto caches = [&](double sequences, double T) { return sequences * T * (layers * (12.0 * C + 16.0 * C + H * T) + 4.0 * C + 2.0 * V); };
    const double training = caches(dsize(p.batch), T_train), evaluation = caches(dsize(kEvalSequences), worst);
    // params, grads and two moments, in float64 (the gradient check) and in the run's type; a
    // checkpoint read back (three such vectors, an NPY parse costing about 9 bytes a byte)
    const double resumed = p.resume.empty() ? 0.0 : 3.0 * 10.0 * params;
    return 8.0 * (2.0 * 4.0 * params + resumed + std::max(training, evaluation) + caches(dsize(p.batch), T_train));
}

namespace {

// The loss of the batch with the model moved by delta on the first block's parameters.
double loss_moved(Model<double> m, const Batch& batch, const std::vector<double>& delta)
{
    for (std::size_t i = 0; i < delta.size(); ++i) m.params[i] += delta[i];
    Activations<double> act;
    return model_forward(m, batch, act, 1);
}

// The first block's parameters, and T5's table, which the first block reads as every block does.
bool first_block(const std::string& name) { return name.rfind("l0_", 0) == 0 || name == "rel_bias"; }

}  // namespace

// Error model, as `grad`'s: |<g, u> - D(h/2)| for a seeded direction u over the first block's
// parameters (zero elsewhere), h = 1e-5; the bound is |D(h) - D(h/2)| (three times D(h/2)'s
// truncation error), the rounding of two float64 losses over h/2 (each within u64 N (1 + loss),
// N = 2 layers (12 C + T) + 2 V + 64 operations along the chain, the loss a mean of
// log-sum-exps of its own size), and the float64 dot product.
FiniteDifference first_block_fd(const Model<double>& m, const Batch& batch, const std::vector<double>& grads, std::uint64_t seed)
{
    std::vector<double> u(m.params.size(), 0.0);
    for (const auto& e : m.layout.entries)
        if (first_block(e.name)) fill_normal(u.data() + e.offset, e.size, seed, stream::fd_direction, e.offset);
    const double h = 1e-5;
    auto central = [&](double step) {
        std::vector<double> plus(u.size()), minus(u.size());
        for (std::size_t i = 0; i < u.size(); ++i) plus[i] = step * u[i], minus[i] = -step * u[i];
        return (loss_moved(m, batch, plus) - loss_moved(m, batch, minus)) / (2.0 * step);
    };
    const double d_h = central(h), d_half = central(h / 2.0);
    double dot = 0.0, size = 0.0;
    for (std::size_t i = 0; i < u.size(); ++i) dot += grads[i] * u[i], size += std::abs(grads[i] * u[i]);
    Activations<double> act;
    const double loss = model_forward(m, batch, act, 1), u64 = unit_roundoff(DType::float64);
    const double ops = 2.0 * dsize(m.cfg.layers) * (12.0 * dsize(m.cfg.d_model) + dsize(batch.positions)) + 2.0 * dsize(m.cfg.vocab) + 64.0;
    const double bound = std::abs(d_h - d_half) + 4.0 * u64 * ops * (1.0 + std::abs(loss)) / h + u64 * dsize(static_cast<long>(u.size())) * size;
    return {diff_nan_rule(dot, d_half), bound, size};
}

template <class T>
void keep_thread_and_gradient_figures(const TrainParams& p, std::uint64_t seed, Run& run)
{
    const Scheme pe = schemes_of(p).back();
    const TaskSpec spec{p.task, p.vocab, p.k};
    // the first steps on one thread and on two: every parameter, bit for bit
    auto steps_on = [&](unsigned threads) {
        Model<T> m = init_model<T>(model_config(p, pe), seed);
        Optimizer<T> opt;
        StepConfig cfg;
        cfg.lr = p.lr, cfg.threads = threads;
        for (long s = 0; s < kThreadCheckSteps; ++s)
            train_step(m, opt, task_batch(spec, p.train_len, p.batch, seed, stream::train_data, static_cast<std::uint64_t>(s)), cfg);
        return m.params;
    };
    const std::vector<T> one = steps_on(1), two = steps_on(2);
    double diff = 0.0;
    for (std::size_t i = 0; i < one.size(); ++i) diff = worse(diff, std::abs(static_cast<double>(one[i]) - static_cast<double>(two[i])));
    run.measured["threads_max_diff"] = diff;
    // the first block's gradients at step 0, in float64
    const Model<double> m = init_model<double>(model_config(p, pe), seed);
    const Batch batch = task_batch(spec, p.train_len, p.batch, seed, stream::train_data, 0);
    Activations<double> act;
    std::vector<double> grads;
    model_forward(m, batch, act, p.threads);
    model_backward(m, batch, act, grads, p.threads);
    const FiniteDifference fd = first_block_fd(m, batch, grads, seed);
    run.measured["fd_measured"] = fd.measured, run.measured["fd_bound"] = fd.bound, run.measured["fd_scale"] = fd.scale;
}

template void keep_thread_and_gradient_figures<float>(const TrainParams&, std::uint64_t, Run&);
template void keep_thread_and_gradient_figures<double>(const TrainParams&, std::uint64_t, Run&);

namespace {

// The accuracy table as rows of schemes: [scheme][length].
struct Table {
    std::vector<Scheme> schemes;
    std::vector<long> lens;
    std::vector<double> acc;
    double at(Scheme s, std::size_t l) const
    {
        for (std::size_t r = 0; r < schemes.size(); ++r)
            if (schemes[r] == s) return acc[r * lens.size() + l];
        return std::numeric_limits<double>::quiet_NaN();
    }
    bool has(Scheme s) const { return std::find(schemes.begin(), schemes.end(), s) != schemes.end(); }
};
Table table_of(const TrainParams& p, const Run& run)
{
    const Tensor& t = run.at(p.compare ? "extrapolation" : "accuracy");
    return {schemes_of(p), eval_lengths(p), t.values.to_vector()};
}

std::optional<Check> check_loss0(const TrainParams& p, const Run& run, const CheckEnv& env)
{
    const Tensor& loss = run.at("loss");
    const std::vector<Scheme> schemes = schemes_of(p);
    double worst = 0.0;
    for (std::size_t s = 0; s < schemes.size(); ++s) {
        const double z = run.measured.at("max_logit0:" + std::string(name_of(schemes[s])));
        worst = worse(worst, std::abs(loss.values[s * static_cast<std::size_t>(step_cap(p))] - std::log(dsize(p.vocab))) / (2.0 * z));
    }
    // -log softmax_t(z) - ln V = logsumexp(z) - ln V - z_t, and both logsumexp(z) - ln V and z_t
    // lie in [min z, max z]: |loss - ln V| <= 2 max |z| for every row, so for their mean.
    return within_bound(tr(env, "the loss of step 0 is near ln(V) = {:.4f}: within 2 max |logit| of it, as any cross-entropy is",
                           "第 0 步的损失接近 ln(V) = {:.4f}：与之相差不超过 2 max |logit|，任何交叉熵都如此", std::log(dsize(p.vocab))),
                        tr(env, "|loss_0 - ln V| / (2 max |logit_0|)", "|loss_0 - ln V| / (2 max |logit_0|)"), worst, 1.0);
}

std::optional<Check> check_threads(const TrainParams&, const Run& run, const CheckEnv& env)
{
    return bit_identical(tr(env, "the first {} steps on one thread and on two give the same parameters, bit for bit",
                            "前 {} 步在一个线程与两个线程上得到的参数逐位相同", kThreadCheckSteps),
                         tr(env, "max |params(1 thread) - params(2 threads)|", "max |参数(1 线程) - 参数(2 线程)|"), run.measured.at("threads_max_diff"));
}

std::optional<Check> check_fd(const TrainParams&, const Run& run, const CheckEnv& env)
{
    return at_most(tr(env, "the backward pass of the first block is the loss's gradient: central differences in float64 agree",
                      "第一个块的反向传播是损失的梯度：与 float64 中心差分一致"),
                   tr(env, "|<grad, u> - central difference along u|, u seeded over the first block's parameters, step 0",
                      "|<grad, u> - 沿 u 的中心差分|，u 带种子、覆盖第一个块的参数，第 0 步"),
                   run.measured.at("fd_measured"), run.measured.at("fd_bound"), run.measured.at("fd_scale"));
}

// The lengths past the training length, by their index in eval_lens.
std::vector<std::size_t> longer(const TrainParams& p)
{
    std::vector<std::size_t> out;
    const auto lens = eval_lengths(p);
    for (std::size_t l = 0; l < lens.size(); ++l)
        if (lens[l] > p.train_len) out.push_back(l);
    return out;
}

// How many training seeds a table rests on, said after a demonstration's claim.
std::string seeds_said(const TrainParams& p, const CheckEnv& env)
{
    const long N = seeds_of(p);
    if (N == 1) return tr(env, " (one seed, teaching scale)", "（单个种子，教学规模）");
    return tr(env, " (median of {} seeds, teaching scale)", "（{} 个种子的中位数，教学规模）", N);
}

// The table of each scheme's lowest accuracy over the seeds (the one table with one seed).
Table lowest_of(const TrainParams& p, const Run& run)
{
    Table t = table_of(p, run);
    if (run.has("extrapolation_min")) t.acc = run.at("extrapolation_min").values.to_vector();
    return t;
}

// NOT SHOWN, naming the scheme of `schemes` that did not learn the task in table t (below
// kLearned at the training length), with `measured` saying which figure that is; nothing
// where every one of them learned it.
std::optional<Check> unless_learned_in(const Table& t, std::vector<Scheme> schemes, const std::string& claim, const CheckEnv& env,
                                       const std::string& measured_en, const std::string& measured_zh, long train_len)
{
    std::optional<Scheme> worst;
    for (Scheme s : schemes)
        if (t.has(s) && t.at(s, 0) < kLearned && (!worst || t.at(s, 0) < t.at(*worst, 0))) worst = s;
    if (!worst) return std::nullopt;
    return demonstration(claim + tr(env, ": not judged, as {} did not learn the task", "：无法判断，{} 没有学会任务", name_of(*worst)),
                         fmt::format(fmt::runtime(env.lang == Lang::zh ? measured_zh : measured_en), name_of(*worst), train_len), t.at(*worst, 0),
                         kLearned, Compare::ge);
}

// A length demonstration over these schemes is shown only where each of them learned the task
// at its training length, with every seed; otherwise NOT SHOWN, naming the lowest, with its
// lowest accuracy there.
std::optional<Check> unless_learned(const TrainParams& p, const Run& run, std::vector<Scheme> schemes, const std::string& claim, const CheckEnv& env)
{
    return unless_learned_in(lowest_of(p, run), std::move(schemes), claim, env,
                             "lowest acc({}) at the training length {} over the seeds (each compared model must learn the task first)",
                             "acc({}) 在训练长度 {} 上各种子中的最低值（参与比较的模型须先学会任务）", p.train_len);
}

// An article's claim is judged from the medians only where the median model of each scheme it
// reads learned the task at the training length; otherwise it is NOT SHOWN, naming the scheme:
// a model at chance "keeps" its accuracy, and says nothing of its positions.
std::optional<Check> unless_median_learned(const TrainParams& p, const Run& run, std::vector<Scheme> schemes, const std::string& claim,
                                           const CheckEnv& env)
{
    return unless_learned_in(table_of(p, run), std::move(schemes), claim, env,
                             "acc({}) at the training length {}, the median the claim reads (the model must learn the task first)",
                             "acc({}) 在训练长度 {} 上的中位数，即论断所读的值（模型须先学会任务）", p.train_len);
}

std::optional<Check> check_alibi(const TrainParams& p, const Run& run, const CheckEnv& env)
{
    const Table t = table_of(p, run);
    if (!p.compare || longer(p).empty()) return std::nullopt;
    const std::string claim = tr(env, "ALiBi keeps its accuracy past the training length better than sinusoidal and learned PE (\"Attention 的两个补丁\" §4.3 and FAQ Q18; Press et al. 2022, Fig. 1){}",
                                 "ALiBi 在训练长度之外比正弦与可学习位置编码更能保持准确率（《Attention 的两个补丁》§4.3 与 FAQ Q18；Press et al. 2022 图 1）{}",
                                 seeds_said(p, env));
    if (auto unlearned = unless_learned(p, run, {Scheme::alibi, Scheme::sinusoidal, Scheme::learned}, claim, env)) return unlearned;
    double margin = std::numeric_limits<double>::infinity();
    for (std::size_t l : longer(p)) {
        auto or0 = [](double a) { return std::isnan(a) ? 0.0 : a; };
        margin = std::min(margin, t.at(Scheme::alibi, l) - std::max(or0(t.at(Scheme::sinusoidal, l)), or0(t.at(Scheme::learned, l))));
    }
    return demonstration(claim,
                         tr(env, "min over longer lengths of acc(alibi) - max(acc(sinusoidal), acc(learned)), a learned table that cannot run counted 0",
                            "各更长长度上 acc(alibi) - max(acc(sinusoidal), acc(learned)) 的最小值，无法运行的可学习表记为 0"),
                         margin, 0.0, Compare::gt);
}

std::optional<Check> check_learned(const TrainParams& p, const Run& run, const CheckEnv& env)
{
    const Table t = table_of(p, run);
    if (!t.has(Scheme::learned) || longer(p).empty()) return std::nullopt;
    double cannot = 0.0;
    for (std::size_t l : longer(p)) cannot += std::isnan(t.at(Scheme::learned, l));
    return demonstration(tr(env, "a learned position table stops at its rows: it cannot run past max_len (\"Transformer（四）\" §9.1)",
                            "可学习位置表止于其行数：超过 max_len 就无法运行（《Transformer（四）》§9.1）"),
                         tr(env, "longer lengths the learned model cannot run at, of {}", "可学习模型无法运行的更长长度数（共 {} 个）", longer(p).size()),
                         cannot, dsize(static_cast<long>(longer(p).size())), Compare::ge);
}

std::optional<Check> check_sinusoidal(const TrainParams& p, const Run& run, const CheckEnv& env)
{
    const Table t = table_of(p, run);
    if (!t.has(Scheme::sinusoidal) || longer(p).empty()) return std::nullopt;
    const double drop = t.at(Scheme::sinusoidal, longer(p).back()) - t.at(Scheme::sinusoidal, 0);
    const std::string claim = tr(env, "sinusoidal PE can compute any position, but the model does not carry its accuracy past the training length (\"Transformer（四）\" §10, misconception 2){}",
                                 "正弦编码能算出任意位置，但模型在训练长度之外保持不了准确率（《Transformer（四）》§10 误区二）{}", seeds_said(p, env));
    if (auto unlearned = unless_learned(p, run, {Scheme::sinusoidal}, claim, env)) return unlearned;
    return demonstration(claim,
                         tr(env, "acc(sinusoidal) at the longest length - at the first", "最长长度的 acc(sinusoidal) - 第一个长度的"), drop, 0.0, Compare::lt);
}

std::optional<Check> check_nope(const TrainParams& p, const Run& run, const CheckEnv& env)
{
    const Table t = table_of(p, run);
    if (p.task != Task::k_back || !t.has(Scheme::none)) return std::nullopt;
    return demonstration(tr(env, "without any PE, a decoder still learns k-back under the causal mask (\"Attention 的两个补丁\" FAQ Q5){}",
                            "没有任何位置编码时，因果掩码下的解码器仍能学会 k-back（《Attention 的两个补丁》FAQ Q5）{}", seeds_said(p, env)),
                         tr(env, "accuracy of the model without PE at length {}", "无位置编码模型在长度 {} 上的准确率", t.lens.front()), t.at(Scheme::none, 0), kLearned,
                         Compare::ge);
}

// How many positions the evaluation at length n scores (kEvalSequences sequences).
double scored_at(const TrainParams& p, long n, std::uint64_t seed)
{
    const Batch b = task_batch(TaskSpec{p.task, p.vocab, p.k}, n, kEvalSequences, seed, stream::eval_data, static_cast<std::uint64_t>(n));
    return static_cast<double>(std::count_if(b.targets.begin(), b.targets.end(), [](long t) { return t >= 0; }));
}

// Three standard errors of the difference of two accuracies, each the share of n scored
// positions that came out right: 3 sqrt(1/4n1 + 1/4n2), the binomial variance at its largest
// (a = 1/2). The evaluation's sampling error only: seed-to-seed spread of training is not in it.
double sampling_tol(double n1, double n2) { return 3.0 * std::sqrt(0.25 / n1 + 0.25 / n2); }

// The largest fall of a scheme's accuracy from the training length to a longer one, and the
// sampling tolerance of the worst such pair.
struct Fall {
    double drop = -std::numeric_limits<double>::infinity(), tol = 0.0;
};
Fall fall_of(const TrainParams& p, const Table& t, Scheme s, std::uint64_t seed)
{
    Fall f;
    const double n0 = scored_at(p, t.lens.front(), seed);
    for (std::size_t l : longer(p)) {
        const double drop = t.at(s, 0) - t.at(s, l);
        if (drop > f.drop || std::isnan(drop)) f = {drop, sampling_tol(n0, scored_at(p, t.lens[l], seed))};
    }
    return f;
}

// The tolerance of a length claim: the evaluation's sampling error, not the seeds' spread.
std::string sampling_said(const TrainParams& p, const CheckEnv& env)
{
    const long N = seeds_of(p);
    if (N == 1) return tr(env, "within 3 standard errors of the evaluation's sampling (one training seed)", "容差为评估抽样的 3 个标准误（单个训练种子）");
    return tr(env, "within 3 standard errors of the evaluation's sampling (the median of {} training seeds; their spread is in extrapolation_min and _max)",
              "容差为评估抽样的 3 个标准误（{} 个训练种子的中位数；其离散见 extrapolation_min 与 _max）", N);
}

// An article's claim that a scheme's model keeps its accuracy past the training length, judged
// from the length table: its largest fall from the training length, held to the sampling error.
struct KeepsClaim {
    Scheme scheme;
    const char *claim_en, *claim_zh;
    const char* quote;  // the article's words, as it wrote them
    const char *reading_en, *reading_zh;
};
std::optional<Check> keeps_accuracy(const TrainParams& p, const Run& run, const CheckEnv& env, const KeepsClaim& k)
{
    const Table t = table_of(p, run);
    if (!p.compare || !t.has(k.scheme) || longer(p).empty()) return std::nullopt;
    if (auto unlearned = unless_median_learned(p, run, {k.scheme}, env.lang == Lang::zh ? k.claim_zh : k.claim_en, env)) return unlearned;
    const Fall f = fall_of(p, t, k.scheme, env.seed);
    const std::string name(name_of(k.scheme));
    return quoting(article_claim(env.lang == Lang::zh ? k.claim_zh : k.claim_en,
                                 tr(env, "largest fall of acc({}) from length {} to a longer one, {}", "acc({}) 从长度 {} 到更长长度的最大降幅，{}", name, t.lens.front(),
                                    sampling_said(p, env)),
                                 f.drop, f.tol),
                   k.quote, env.lang == Lang::zh ? k.reading_zh : k.reading_en);
}

// "Attention 的两个补丁" §2.2: with sinusoidal PE a model "extrapolates more easily to long
// sequences it did not see in training".
std::optional<Check> check_sinusoidal_easily(const TrainParams& p, const Run& run, const CheckEnv& env)
{
    return keeps_accuracy(p, run, env,
                          {Scheme::sinusoidal, "with sinusoidal PE a model carries its accuracy to sequences longer than it trained on (§2.2)",
                           "使用正弦位置编码，模型在比训练更长的序列上保持准确率（§2.2）", "外推到训练时没见过的长序列更容易",
                           "a model with sinusoidal PE keeps working on sequences longer than those it trained on", "使用正弦位置编码的模型，在比训练时更长的序列上仍然有效"});
}

// "Attention 的两个补丁" FAQ Q18: ALiBi extrapolates because its bias "depends on the relative
// distance alone". RoPE's scores depend on i - j alone too: if that were the reason, the RoPE
// model would keep its accuracy past the training length as well.
std::optional<Check> check_alibi_because_relative(const TrainParams& p, const Run& run, const CheckEnv& env)
{
    return keeps_accuracy(p, run, env,
                          {Scheme::rope, "a scheme whose scores depend on i - j alone extrapolates as ALiBi does (FAQ Q18): so RoPE keeps its accuracy too",
                           "得分只取决于 i - j 的方案就能像 ALiBi 一样外推（FAQ Q18）：那么 RoPE 也应保持准确率", "这个性质源于 ALiBi 的偏置项 -m·|i-j| 只跟\"相对距离\"有关",
                           "depending on i - j alone is what lets ALiBi extrapolate; any scheme with that property would",
                           "只依赖 i - j 正是 ALiBi 能外推的原因；具有这一性质的方案都应能外推"});
}

// "Attention 的两个补丁" §4.3's table: RoPE is "slightly weaker than sinusoidal on short
// sequences". Judged at the training length, the shortest the table has.
std::optional<Check> check_rope_weaker_short(const TrainParams& p, const Run& run, const CheckEnv& env)
{
    const Table t = table_of(p, run);
    if (!p.compare || !t.has(Scheme::sinusoidal) || !t.has(Scheme::rope)) return std::nullopt;
    const std::string claim = tr(env, "RoPE does slightly worse than sinusoidal PE on short sequences (§4.3 table)", "RoPE 在短序列上略弱于正弦位置编码（§4.3 表）");
    if (auto unlearned = unless_median_learned(p, run, {Scheme::sinusoidal, Scheme::rope}, claim, env)) return unlearned;
    const double n0 = scored_at(p, t.lens.front(), env.seed);
    return quoting(article_claim(claim,
                                 tr(env, "acc(sinusoidal) - acc(rope) at the training length {}, {}", "训练长度 {} 上的 acc(sinusoidal) - acc(rope)，{}", t.lens.front(),
                                    sampling_said(p, env)),
                                 t.at(Scheme::sinusoidal, 0) - t.at(Scheme::rope, 0), sampling_tol(n0, n0), Compare::gt),
                   "短序列上效果略弱于 sinusoidal",
                   tr(env, "at short lengths a RoPE model scores a little below a sinusoidal one (its own FAQ Q16 says the two are about equal)",
                      "短序列上 RoPE 模型的效果比正弦位置编码的略差（它自己的 FAQ Q16 却说两者差不多）"));
}


}  // namespace

// The article rows judged from a scheme's accuracy rest on a model that learned the task: where
// one did not, the note says so beside them.
std::optional<std::string> unlearned_note(const TrainParams& p, const Run& run, const CheckEnv& env)
{
    if (!p.compare) return std::nullopt;
    const Table t = lowest_of(p, run);
    std::vector<std::string> unlearned;
    for (Scheme s : {Scheme::sinusoidal, Scheme::rope})
        if (t.at(s, 0) < kLearned) unlearned.push_back(fmt::format("{} ({:.3g})", name_of(s), t.at(s, 0)));
    if (unlearned.empty()) return std::nullopt;
    return tr(env, "not learned at the training length (lowest accuracy over the seeds, below {}): {}; the articles' length claims read from "
                   "those rows rest on a model that never learned the task: train longer (--steps) before reading them",
              "在训练长度上没有学会（各种子中最低准确率低于 {}）：{}；从这些行读出的文章长度论断基于从未学会任务的模型：先用更多步数（--steps）训练再看",
              kLearned, fmt::format("{}", fmt::join(unlearned, ", ")));
}

namespace {

// The schemes that ran at the longest length, best first by the table's median there, each as
// "name 0.97".
std::vector<std::string> ranked_at_longest(const Table& t)
{
    std::vector<Scheme> ran;
    const std::size_t last = t.lens.size() - 1;
    for (Scheme s : t.schemes)
        if (!std::isnan(t.at(s, last))) ran.push_back(s);
    std::stable_sort(ran.begin(), ran.end(), [&](Scheme a, Scheme b) { return t.at(a, last) > t.at(b, last); });
    std::vector<std::string> out;
    for (Scheme s : ran) out.push_back(fmt::format("{} {:.2f}", name_of(s), t.at(s, last)));
    return out;
}

// Where a scheme stands at the longest length: 1 + the schemes strictly above it (ties share).
long rank_at_longest(const Table& t, Scheme s)
{
    const std::size_t last = t.lens.size() - 1;
    long above = 0;
    for (Scheme o : t.schemes) above += !std::isnan(t.at(o, last)) && t.at(o, last) > t.at(s, last);
    return 1 + above;
}

// The first finding, read from per-token accuracy: ALiBi's fall from the training length to the
// longest is the smallest of the schemes Press et al. compared (sinusoidal, rotary, T5, ALiBi)
// that learned the task (a model at chance has nothing to lose).
std::string first_finding(const Table& t, const CheckEnv& env)
{
    const std::size_t last = t.lens.size() - 1;
    if (t.at(Scheme::alibi, 0) < kLearned) return tr(env, "cannot be read (ALiBi did not learn the task)", "无法判断（ALiBi 没有学会任务）");
    auto fall = [&](Scheme s) { return t.at(s, 0) - t.at(s, last); };
    for (Scheme s : {Scheme::sinusoidal, Scheme::rope, Scheme::t5})
        if (t.at(s, 0) >= kLearned && !(fall(Scheme::alibi) < fall(s)))
            return tr(env, "differs (ALiBi does not fall least from the training length)", "不一致（ALiBi 从训练长度起降得不是最少）");
    return tr(env, "agrees (ALiBi falls least from the training length)", "一致（ALiBi 从训练长度起降得最少）");
}

// Why this run's ranking can differ from the papers': the task and the size.
std::string setting_said(const TrainParams& p, const CheckEnv& env)
{
    const std::string task(name_of(p.task));
    const std::string recency = p.task == Task::k_back ? tr(env, " (k-back is recency: ALiBi's distance penalty suits it by construction)",
                                                            "（k-back 看的是最近的词元：ALiBi 的距离惩罚天生适合它）")
                                                       : "";
    return tr(env, "task {}{}, a {}-layer model of width {} trained at length {}, against their language models and reasoning tasks",
              "任务 {}{}，{} 层、宽 {} 的模型在长度 {} 上训练；而论文用的是语言模型与推理任务",
              task, recency, p.layers, p.d_model, p.train_len);
}

}  // namespace

// The published findings on length, each beside this run's table at its longest length, read
// in the paper's own metric (per-token for a language model's perplexity, exact match for the
// NoPE paper's tasks): where they agree, and where they differ and why. The note reads the
// medians; which schemes did not learn, the note before it says.
std::optional<std::string> findings_note(const TrainParams& p, const Run& run, const CheckEnv& env)
{
    if (!p.compare || longer(p).empty()) return std::nullopt;
    const Table t = table_of(p, run);
    Table exact = t;
    exact.acc = run.at("exact_match").values.to_vector();
    const std::size_t last = t.lens.size() - 1;
    const long nope = rank_at_longest(exact, Scheme::none), ran = static_cast<long>(ranked_at_longest(exact).size());
    return tr(env, "published: Press et al. 2022, Fig. 1 (language models on WikiText-103 trained at L = 512 and 1024, perplexity): sinusoidal, "
                   "rotary and T5's bias degrade past L, ALiBi does not; Kazemnejad et al. 2023 (synthetic tasks, exact match on longer instances): "
                   "no position encoding generalises best, T5's bias next. Here at length {} ({}x the training length), per-token accuracy: {}; "
                   "exact match: {}. The first finding {}; the second {}: by exact match no PE ranks {} of {} (ties share a rank). The settings differ: {}",
              "已发表：Press et al. 2022 图 1（在 WikiText-103 上以 L = 512 和 1024 训练的语言模型，困惑度）：正弦、旋转与 T5 偏置在 L 之外退化，ALiBi 不会；"
              "Kazemnejad et al. 2023（合成任务，更长实例上的完全匹配）：不用位置编码泛化最好，T5 偏置其次。这里在长度 {}（训练长度的 {} 倍）上，逐词元准确率：{}；"
              "完全匹配：{}。第一条{}；第二条{}：按完全匹配，无位置编码排第 {}（共 {} 个，并列同名次）。设置不同：{}",
              t.lens[last], fmt::format("{:.3g}", dsize(t.lens[last]) / dsize(p.train_len)), fmt::join(ranked_at_longest(t), ", "),
              fmt::join(ranked_at_longest(exact), ", "),
              first_finding(t, env),
              nope == 1 ? tr(env, "agrees", "一致") : tr(env, "differs", "不一致"), nope, ran, setting_said(p, env));
}

std::vector<CheckDef<TrainParams>> train_checks()
{
    return {{"loss_at_step_0_near_ln_vocab", {"loss"}, check_loss0},
            {"steps_bit_identical_across_threads", {}, check_threads},
            {"first_block_gradients_match_finite_differences", {}, check_fd},
            {"alibi_extrapolates_best", {"extrapolation"}, check_alibi},
            {"learned_stops_at_max_len", {}, check_learned},
            {"sinusoidal_does_not_extrapolate", {}, check_sinusoidal},
            {"nope_learns_k_back", {}, check_nope},
            {"sinusoidal_extrapolates_easily", {"extrapolation"}, check_sinusoidal_easily},
            {"rope_weaker_on_short_sequences", {"extrapolation"}, check_rope_weaker_short},
            {"alibi_extrapolates_because_relative", {"extrapolation"}, check_alibi_because_relative}};
}

}  // namespace attnlab::train_detail
