#include "attnlab/experiments/t5.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/half.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/core/xt.hpp"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <map>

namespace attnlab {

namespace {

bool bidirectional(const T5Params& p) { return p.direction == T5Direction::bidirectional; }
// The keys: the O cached tokens and the block's own L.
long keys(const T5Params& p) { return p.query_offset + p.len; }
T5Side side_of(const T5Params& p) { return t5_side(p.direction, p.buckets); }

// The [L, O + L] map of rule(j - (O + i)): query i sits at position O + i, key j at j
// (Hugging Face's relative_position = memory_position - context_position).
std::vector<double> offset_map(const T5Params& p, const std::function<long(long d)>& rule)
{
    const auto L = static_cast<std::size_t>(p.len), S = static_cast<std::size_t>(keys(p));
    std::vector<double> out(L * S);
    for (std::size_t i = 0; i < L; ++i)
        for (std::size_t j = 0; j < S; ++j) out[i * S + j] = static_cast<double>(rule(static_cast<long>(j) - p.query_offset - static_cast<long>(i)));
    return out;
}

// relative_position and bucket are whole numbers (int64); bucket_bias [N, H] is a seeded
// normal in T and bias [H, L, O + L] gathers from it, so it is exact in T.
template <class T>
Run compute_t5(const T5Params& p, const Plan& plan)
{
    const auto L = static_cast<std::size_t>(p.len), S = static_cast<std::size_t>(keys(p));
    const auto N = static_cast<std::size_t>(p.buckets), H = static_cast<std::size_t>(p.heads);
    std::vector<double> offset = offset_map(p, [](long d) { return d; });
    std::vector<double> bucket = offset_map(p, [&](long d) { return t5_bucket(d, p.direction, p.buckets, p.max_distance); });
    Mat<T> table = xt::zeros<T>({N, H});
    fill_normal(table.data(), table.size(), plan.seed, stream::bucket_bias);
    Ten3<T> bias = xt::zeros<T>({H, L, S});
    for (std::size_t h = 0; h < H; ++h)
        for (std::size_t n = 0; n < L * S; ++n) bias.data()[h * L * S + n] = table(static_cast<std::size_t>(bucket[n]), h);
    Run run;
    run.add(Tensor{"relative_position", {"query", "key"}, Elem::index, {L, S}, std::move(offset)});
    run.add(Tensor{"bucket", {"query", "key"}, Elem::index, {L, S}, std::move(bucket)});
    run.add(to_tensor("bucket_bias", {"bucket", "head"}, table, elem_of<T>()));
    run.add(to_tensor("bias", {"head", "query", "key"}, bias, elem_of<T>()));
    return run;
}

// --- checks: each reads any [L, O + L] bucket map, through the bucket it holds for each offset ---

// The bucket a map holds for offset d = j - (O + i), read on its first row (d >= -O) or its
// first column; O is the map's columns less its rows.
double at_offset(const Tensor& bucket, long d)
{
    const auto L = static_cast<long>(bucket.dim(0)), S = static_cast<long>(bucket.dim(1)), O = S - L;
    return d >= -O ? bucket.values[static_cast<std::size_t>(d + O)] : bucket.values[static_cast<std::size_t>((-d - O) * S)];
}

// How many offsets of the map, -(O+L-1) .. L-1, break `holds`.
long offsets_breaking(const Tensor& bucket, const std::function<bool(long d, double b)>& holds, const std::function<bool(long d)>& applies)
{
    const long L = static_cast<long>(bucket.dim(0)), S = static_cast<long>(bucket.dim(1));
    long count = 0;
    for (long d = 1 - S; d < L; ++d) count += applies(d) && !holds(d, at_offset(bucket, d));
    return count;
}

std::optional<Check> check_toeplitz(const T5Params&, const Run& run, const CheckEnv& env)
{
    return exact_zero(tr(env, "the bucket depends on j - i alone", "桶只取决于 j - i"), tr(env, "max spread along a diagonal", "对角线上的最大极差"),
                      max_diagonal_spread(run.at("bucket")));
}

std::optional<Check> check_exact(const T5Params& p, const Run& run, const CheckEnv& env)
{
    const T5Side s = side_of(p);
    auto near = [&](long d) { return t5_distance(d, p.direction) < s.max_exact; };
    auto exact = [&](long d, double b) { return b == static_cast<double>((d > 0 ? s.base_of_later : 0) + t5_distance(d, p.direction)); };
    return exact_zero(bidirectional(p) ? tr(env, "distances below {0} have a bucket each: |j - i|, plus {1} for a later key",
                                            "小于 {0} 的距离各占一个桶：|j - i|，后面的键再加 {1}", s.max_exact, s.base_of_later)
                                       : tr(env, "distances below {0} have a bucket each: i - j, and 0 for every later key",
                                            "小于 {0} 的距离各占一个桶：i - j，后面的键都是 0", s.max_exact),
                      tr(env, "offsets in another bucket", "落在别的桶里的偏移数"), static_cast<double>(offsets_breaking(run.at("bucket"), exact, near)));
}

// Error model: x = log(n/e) / log(D/e) (S - e) is computed in float32 by four roundings and a
// log within 1 ulp, so HF's x is within 6 u(float32) x of the exact one; a bucket is right
// when it is e + floor of some value within 8 u(float32) max(x, 1) of the exact x.
std::optional<Check> check_log(const T5Params& p, const Run& run, const CheckEnv& env)
{
    const T5Side s = side_of(p);
    if (keys(p) - 1 < s.max_exact) return std::nullopt;
    auto mid = [&](long d) { const long n = t5_distance(d, p.direction); return n >= s.max_exact && n < p.max_distance; };
    auto logged = [&](long d, double b) {
        const long double x = t5_log_position(t5_distance(d, p.direction), s, p.max_distance);
        const long double slack = 8.0L * static_cast<long double>(unit_roundoff(DType::float32)) * std::max(x, 1.0L);
        const double base = static_cast<double>((d > 0 ? s.base_of_later : 0) + s.max_exact), top = static_cast<double>(s.buckets - s.max_exact - 1);
        const double lo = std::min(static_cast<double>(std::floor(x - slack)), top), hi = std::min(static_cast<double>(std::floor(x + slack)), top);
        return b - base >= lo && b - base <= hi;
    };
    return exact_zero(tr(env, "distances {0} .. {1} fall in log-spaced buckets: {0} + floor(log(n/{0}) / log({2}/{0}) * {3})",
                         "距离 {0} .. {1} 落在按对数间隔的桶里：{0} + floor(log(n/{0}) / log({2}/{0}) * {3})", s.max_exact,
                         std::min(p.max_distance, keys(p)) - 1,
                         p.max_distance, s.buckets - s.max_exact),
                      tr(env, "offsets in another bucket", "落在别的桶里的偏移数"), static_cast<double>(offsets_breaking(run.at("bucket"), logged, mid)));
}

std::optional<Check> check_far(const T5Params& p, const Run& run, const CheckEnv& env)
{
    if (keys(p) - 1 < p.max_distance) return std::nullopt;
    const T5Side s = side_of(p);
    auto far = [&](long d) { return t5_distance(d, p.direction) >= p.max_distance; };
    auto last = [&](long d, double b) { return b == static_cast<double>((d > 0 ? s.base_of_later : 0) + s.buckets - 1); };
    return exact_zero(tr(env, "every distance >= {} falls in its side's last bucket", "每个 >= {} 的距离都落在它那一侧的最后一个桶里", p.max_distance),
                      tr(env, "offsets in another bucket", "落在别的桶里的偏移数"), static_cast<double>(offsets_breaking(run.at("bucket"), last, far)));
}

std::optional<Check> check_monotone(const T5Params& p, const Run& run, const CheckEnv& env)
{
    if (keys(p) < 2) return std::nullopt;
    const Tensor& bucket = run.at("bucket");
    // Moving one step farther on the same side never lowers the bucket.
    auto farther = [&](long d) { return d != 0 && (bidirectional(p) || d < 0); };
    auto no_lower = [&](long d, double b) { return b >= at_offset(bucket, d > 0 ? d - 1 : d + 1); };
    return exact_zero(tr(env, "the buckets never fall as the distance grows, on each side", "在每一侧，桶号都不随距离增大而减小"),
                      tr(env, "steps one farther with a lower bucket", "远一步桶号反而更小的次数"), static_cast<double>(offsets_breaking(bucket, no_lower, farther)));
}

std::optional<Check> check_sign(const T5Params& p, const Run& run, const CheckEnv& env)
{
    if (p.len < 2) return std::nullopt;
    const Tensor& bucket = run.at("bucket");
    auto later = [](long d) { return d > 0; };
    if (bidirectional(p)) {
        auto apart = [&](long d, double b) { return b != at_offset(bucket, -d); };
        return exact_zero(tr(env, "bidirectional buckets tell the sign apart: j - i = d and -d never share a bucket", "双向的桶能区分正负：j - i = d 与 -d 从不同桶"),
                          tr(env, "distances whose two signs share a bucket", "正负两侧同桶的距离数"), static_cast<double>(offsets_breaking(bucket, apart, later)));
    }
    auto folded = [&](long, double b) { return b == at_offset(bucket, 0); };
    return exact_zero(tr(env, "causal buckets do not tell the sign apart: every later key shares bucket 0 with j = i (the causal mask hides them)",
                         "因果的桶不区分正负：所有后面的键都与 j = i 同在桶 0（因果掩码会把它们遮住）"),
                      tr(env, "later keys outside bucket 0", "不在桶 0 的后面的键数"), static_cast<double>(offsets_breaking(bucket, folded, later)));
}

// How coarse the buckets are far away: the most distances of one side that share a bucket.
// Exact near, so "distance 5 and distance 10 are told apart" ("Attention 的两个补丁" §1, 问题二)
// holds there; far away many distances get one bias. Depends on L: a demonstration.
std::optional<Check> check_shared(const T5Params& p, const Run& run, const CheckEnv& env)
{
    if (keys(p) < 2) return std::nullopt;
    const Tensor& bucket = run.at("bucket");
    std::map<double, long> earlier;  // bucket -> distances on the earlier-key side (every run has it)
    for (long n = 0; n < keys(p); ++n) ++earlier[at_offset(bucket, -n)];
    long most = 0;
    double which = 0.0;
    for (const auto& [b, count] : earlier)
        if (count > most) most = count, which = b;
    return demonstration(tr(env, "far distances share a bucket, so one bias: {} distances to earlier keys fall in bucket {} (of {} distances 0 .. {})",
                            "远的距离共用一个桶，也就共用一个偏置：{} 个到前面的键的距离落在桶 {}（共 {} 个距离 0 .. {}）", most, which, keys(p), keys(p) - 1),
                         tr(env, "most distances in one bucket", "同一个桶里最多的距离数"), static_cast<double>(most), 1.0, Compare::gt);
}

std::optional<Check> check_bias(const T5Params& p, const Run& run, const CheckEnv& env)
{
    const Tensor &bias = run.at("bias"), &table = run.at("bucket_bias"), &bucket = run.at("bucket");
    const std::size_t H = table.dim(1), LL = bucket.size();
    double worst = 0.0;
    for (std::size_t h = 0; h < H; ++h)
        for (std::size_t n = 0; n < LL; ++n)
            worst = worse(worst, diff_nan_rule(bias.values[h * LL + n], table.values[static_cast<std::size_t>(bucket.values[n]) * H + h]));
    return bit_identical(tr(env, "bias[h, i, j] = bucket_bias[bucket[i, j], h]: each head adds its own scalar per bucket ({} heads)",
                            "bias[h, i, j] = bucket_bias[bucket[i, j], h]：每个头对每个桶加自己的一个标量（{} 个头）", p.heads),
                         "max |bias - bucket_bias[bucket]|", worst);
}

std::optional<std::string> note_odd(const T5Params& p, const Run&, const CheckEnv& env)
{
    if (!bidirectional(p) || p.buckets % 2 == 0) return std::nullopt;
    return tr(env, "bucket {0} is never used: each side gets {1} = floor({2}/2) buckets, as in Hugging Face", "桶 {0} 从不会用到：每侧分到 {1} = floor({2}/2) 个桶，与 Hugging Face 相同",
              p.buckets - 1, p.buckets / 2, p.buckets);
}

template <class T>
Typed<T5Params> t5_typed()
{
    return {compute_t5<T>,
            {{"bucket_depends_on_offset_only", {"bucket"}, check_toeplitz},
             {"exact_buckets_near", {"bucket"}, check_exact},
             {"log_buckets_far", {"bucket"}, check_log},
             {"beyond_max_distance_last_bucket", {"bucket"}, check_far},
             {"buckets_monotone_in_distance", {"bucket"}, check_monotone},
             {"sign_told_apart_bidirectional_only", {"bucket"}, check_sign},
             {"far_distances_share_a_bucket", {"bucket"}, check_shared},
             {"bias_reads_bucket_table", {"bias"}, check_bias}},
            {note_odd}};
}

// --- the catalogue of usual mistakes ---

Tensor bucket_map(const T5Params& p, const std::function<long(long d)>& rule)
{
    return Tensor{"bucket", {"query", "key"}, Elem::float64, {static_cast<std::size_t>(p.len), static_cast<std::size_t>(keys(p))}, offset_map(p, rule)};
}

std::vector<Mistake<T5Params>> t5_mistakes()
{
    return {{"sign_ignored", "bucket", "the sign is ignored: a later key gets the bucket of an earlier one, |j - i| on one side only",
             "忽略了正负号：后面的键和前面的键用同一个桶，只按 |j - i| 分在一侧",
             [](const T5Params& p, const Run&) {
                 if (!bidirectional(p)) return Tensor{};
                 return bucket_map(p, [&](long d) { return t5_bucket(-std::labs(d), T5Direction::causal, p.buckets / 2, p.max_distance); });
             }},
            {"no_log_buckets", "bucket", "no log buckets: every distance gets its own bucket, clipped at the side's last",
             "没有对数分桶：每个距离一个桶，超出后截在该侧的最后一个桶",
             [](const T5Params& p, const Run&) {
                 const T5Side s = side_of(p);
                 return bucket_map(p, [&](long d) { return (d > 0 ? s.base_of_later : 0) + std::min(t5_distance(d, p.direction), s.buckets - 1); });
             }}};
}

std::vector<OptionRow<T5Params>> t5_options()
{
    using P = T5Params;
    return {option<P>("--len", "Queries L (and L keys after the --query-offset ones)", &P::len, whole_range(1, 1L << 14)),
            option<P>("--query-offset", "Queries at positions O .. O+L-1 after O cached tokens, keys 0 .. O+L-1: a decoder step "
                                        "(Hugging Face's compute_bias with cache_position)", &P::query_offset, whole_range(0, 1L << 14)),
            option<P>("--buckets", "Buckets N (T5: 32); a bidirectional run gives each sign N/2", &P::buckets, whole_range(2, 1L << 20)),
            option<P>("--max-distance", "Distance D from which every offset shares its side's last bucket (T5: 128)", &P::max_distance,
                      whole_range(2, 1L << 30)),
            option<P>("--direction", "bidirectional (T5's encoder) or causal (its decoder)", &P::direction),
            option<P>("--heads", "Heads H, the columns of bucket_bias", &P::heads, whole_range(1, 1024))};
}

std::vector<TensorDecl<T5Params>> t5_tensors()
{
    using P = T5Params;
    auto ll = [](const P& p) { return std::vector<double>{dsize(p.len), dsize(keys(p))}; };
    return {{"relative_position", {"query", "key"}, Need::always, ll, {}, {}},
            {"bucket", {"query", "key"}, Need::always, ll, {}, {}},
            {"bucket_bias", {"bucket", "head"}, Need::always, [](const P& p) { return std::vector<double>{dsize(p.buckets), dsize(p.heads)}; }, {}, {}},
            {"bias", {"head", "query", "key"}, Need::always, [](const P& p) { return std::vector<double>{dsize(p.heads), dsize(p.len), dsize(keys(p))}; }, {}, {}}};
}

void validate_t5(const T5Params& p)
{
    const T5Side s = side_of(p);
    if (s.max_exact < 1) {
        throw InputError(fmt::format("--buckets {} leaves no exact bucket: a {} run needs at least {}", p.buckets, name_of(p.direction),
                                     bidirectional(p) ? 4 : 2));
    }
    if (p.max_distance <= s.max_exact) {
        throw InputError(fmt::format("--max-distance {} must exceed the exact range, {} distances ({} buckets, {}): the log buckets divide by "
                                     "log(D / {})",
                                     p.max_distance, s.max_exact, p.buckets, name_of(p.direction), s.max_exact));
    }
}

// Random valid parameters for the random tests: the far buckets always reached.
T5Params sample_t5(Rng& rng)
{
    T5Params p;
    p.len = between(rng, 2, 40), p.buckets = between(rng, 4, 40), p.direction = rng.below(2) ? T5Direction::causal : T5Direction::bidirectional;
    p.max_distance = t5_side(p.direction, p.buckets).max_exact + between(rng, 1, 40);
    p.heads = between(rng, 1, 4);
    if (rng.below(10) < 3) p.query_offset = between(rng, 1, 40);
    return p;
}

Experiment<T5Params> make_t5_experiment()
{
    Experiment<T5Params> e;
    e.command = "t5";
    e.summary = "T5's relative position buckets: exact near, log-spaced far, one learned scalar per bucket and head added to the scores";
    e.example = "attnlab t5 --len 24 --buckets 8 --max-distance 16 --show bucket";
    e.options = t5_options();
    e.main_tensor = "bucket";
    e.tensors = t5_tensors();
    e.validate = validate_t5;
    // Each of the L^2 offsets: a bucket (a log at about kExpWork) and the checks' passes; H gathers.
    e.work = [](const T5Params& p, const Plan&) { return dsize(p.len) * dsize(keys(p)) * (kExpWork + 8.0 + dsize(p.heads)); };
    e.work_what = [](const T5Params& p) { return fmt::format("bias [{}, {}, {}]", p.heads, p.len, keys(p)); };
    e.mistakes = t5_mistakes();
    e.sample = sample_t5;
    e.set_typed([](auto t) { return t5_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

const Experiment<T5Params>& t5_experiment()
{
    static const Experiment<T5Params> e = make_t5_experiment();
    return e;
}

Report run_t5(const T5Params& p, const RunContext& ctx) { return run_experiment(t5_experiment(), p, ctx); }

std::vector<std::string> t5_command(const T5Params& p) { return command_of(t5_experiment(), p); }

}  // namespace attnlab
