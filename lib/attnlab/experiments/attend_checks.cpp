// `attend`'s checks and notes: each claim beside the measurement that judges it.
#include "attnlab/experiments/attend_internal.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/parallel.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/experiments/averages.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attnlab::attend_detail {

namespace {

// --- checks ---

// The weights' lead index of [B, H, L, S] is b * H + h; the mask reads b.
CellPredicate hidden_in(const MaskSpec& m, long heads)
{
    return [m, heads](std::size_t lead, std::size_t i, std::size_t j) {
        return m.kind != MaskKind::none && m.masked(static_cast<long>(lead) / heads, static_cast<long>(i), static_cast<long>(j));
    };
}

std::optional<Check> check_rows_sum(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    const Resolved& r = resolved_as<Resolved>(run);
    const MaskSpec m = r.cfg.mask;
    const double figure = run.has("weights") ? max_row_sum_error(run.at("weights"), [&](std::size_t lead, std::size_t i) {
        return m.kind != MaskKind::none && m.row_fully_masked(static_cast<long>(lead) / p.heads, static_cast<long>(i));
    })
                                             : run.measured.at("max_row_sum_error");
    const std::string rows = run.has("weights") ? "" : ", " + rows_description(sampled_rows(r.len, work_per_row(p)), r.len, env.lang);
    // S exps and sums and the division (S + 4 operations); in 16 bits each weight is then
    // rounded once when stored, and those S roundings add up to at most u(T) sum_j w = u(T).
    return at_most(tr(env, "every weights row that is not fully masked sums to 1", "每一行未被完全屏蔽的权重之和为 1"), "max |sum_j w - 1|" + rows,
                   figure, accumulate_then_store(env.dtype, dsize(r.kv_len) + 4.0, 1.0), 1.0);
}

std::optional<Check> check_masked_zero(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    if (p.mask == MaskKind::none) return std::nullopt;
    const double figure = run.has("weights") ? max_masked_weight(run.at("weights"), hidden_in(resolved_as<Resolved>(run).cfg.mask, p.heads))
                                             : run.measured.at("max_masked_weight");
    return exact_zero(tr(env, "every masked weight is exactly 0", "每个被屏蔽的权重恰好为 0"), tr(env, "max |w| at masked keys", "被屏蔽键上的 max |w|"), figure);
}

std::optional<Check> check_no_nan(const AttendParams&, const Run& run, const CheckEnv& env)
{
    const double figure = run.has("weights") ? static_cast<double>(count_nan(run.at("weights"))) : run.measured.at("nan_weights");
    return exact_zero(tr(env, "no attention weight is NaN", "没有任何注意力权重是 NaN"), tr(env, "NaN weights", "NaN 权重个数"), figure);
}

// Attention's inputs as the run holds them (copies only where its storage is not T): q, k,
// v (rotated with RoPE), ALiBi's bias tensor, the mask, the scale and the softmax.
template <class T>
struct RunInputs {
    Resolved r;
    Ten4<T> q, k, v;
    Ten3<T> bias;
    AttentionInputs<T> in;

    // Without with_kv, k and v are left for the caller to set.
    RunInputs(const AttendParams& p, const Run& run, bool with_kv = true) : r(resolved_as<Resolved>(run))
    {
        const bool rope = p.pe == PeKind::rope;
        in.q = view_of(run.at(rope ? "q_rot" : "q"), q);
        if (with_kv) in.k = view_of(run.at(rope ? "k_rot" : "k"), k), in.v = view_of(run.at("v"), v);
        if (p.pe == PeKind::alibi) in.head_bias = view_of(run.at("bias"), bias);
        in.mask = &r.cfg.mask;
        in.scale = param_number(run.derived, "scale"), in.softmax = p.softmax, in.threads = p.threads;
    }
    RunInputs(const RunInputs&) = delete;
    RunInputs& operator=(const RunInputs&) = delete;
};

// Main against the plain-loop reference, on the rows a reference pass can afford.
template <class T>
std::optional<Check> check_reference(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    const RunInputs<T> from(p, run);
    const auto rows = sampled_rows(from.r.len, work_per_row(p));
    // Row by row on every core (the reference is single-threaded), combined in order.
    std::vector<RowRange> each;
    for (const auto& rr : rows)
        for (long i = rr.begin; i < rr.end; ++i) each.push_back({i, i + 1});
    std::vector<double> diffs(each.size());
    parallel_for(each.size(), thread_count(p.threads), [&](std::size_t n) {
        diffs[n] = max_abs_diff_rows(attention_reference(from.in, each[n]).out, run.at("out"), each[n]);
    });
    double worst = 0.0;
    for (double diff : diffs) worst = worse(worst, diff);
    return at_most(tr(env, "the main implementation matches the plain-loop reference", "主实现与逐循环的参考实现一致"),
                   fmt::format("max |out - out_ref|, {}", rows_description(rows, from.r.len, env.lang)), worst,
                   // S + d operations per element; in 16 bits the two implementations may each
                   // round a weight and the output once to a neighbouring T: 4 u(T)
                   accumulate_then_store(env.dtype, dsize(from.r.kv_len) + dsize(head_dim(p)), 4.0) * (max_abs(run.at("v")) + 1.0),
                   max_abs(run.at("v")) + 1.0);
}

bool causal_mask(MaskKind m) { return m == MaskKind::causal || m == MaskKind::both || m == MaskKind::window; }

// The schemes whose scores depend on the distance between a query and a key.
bool relative_scheme(PeKind pe) { return pe == PeKind::rope || pe == PeKind::alibi; }

// Attention again on each sampled range (each range's rows are bit-identical to a full
// run's): the largest change of those rows from the run's out, before row_end[b] where given.
template <class T>
double largest_change(const AttentionInputs<T>& in, const Run& run, const std::vector<RowRange>& rows, const std::vector<long>* row_end = nullptr)
{
    double worst = 0.0;
    for (const auto& rr : rows) worst = worse(worst, max_abs_diff_rows(attention(in, Matrices::drop, rr).out, run.at("out"), rr, row_end));
    return worst;
}

// The block run again on another X (released once projected), and attention on each sampled
// range: the largest change of those output rows.
template <class T>
double rows_change(const Run& run, Ten3<T> changed, const BlockConfig& cfg, const std::vector<RowRange>& rows,
                   const Ten3<T>* changed_kv = nullptr)
{
    const BlockResult<T> res = prepare_block(changed, changed_kv ? *changed_kv : changed, weights_of<T>(run), cfg);
    changed = Ten3<T>();
    return largest_change(attention_inputs(res, cfg), run, rows);
}

// [B, H, L, d] with sequence b's rows from first[b] on taken from its own [1, H, L - first[b],
// d] tensor in `rows` (in b order, sequences with nothing changed left out) and the others
// from the run's tensor.
template <class T>
Ten4<T> spliced(const Tensor& run_t, const std::vector<Ten4<T>>& rows, const std::vector<long>& first, unsigned threads)
{
    const std::size_t B = run_t.shape[0], H = run_t.shape[1], L = run_t.shape[2], d = run_t.shape[3];
    Ten4<T> out = Ten4<T>::from_shape({B, H, L, d});
    std::vector<std::size_t> changed(B);  // sequence b's tensor in `rows`
    for (std::size_t b = 0, n = 0; b < B; ++b) changed[b] = static_cast<std::size_t>(first[b]) < L ? n++ : 0;
    run_t.values.visit([&](const auto* in) {
        parallel_for(B * H, thread_count(threads), [&](std::size_t bh) {
            const std::size_t b = bh / H, h = bh % H, at = bh * L * d, f = std::min(static_cast<std::size_t>(first[b]), L);
            std::transform(in + at, in + at + f * d, out.data() + at, [](auto value) { return static_cast<T>(value); });
            if (f < L) std::copy_n(&rows[changed[b]](0, h, 0, 0), (L - f) * d, out.data() + at + f * d);
        });
    });
    return out;
}

// X changed from position first[b] on in each sequence b (its rows there replaced by the
// perturb stream's normals, drawn in (b, i, c) order as one sequential stream), in
// self-attention: the largest change of the output's sampled rows, those before row_end[b]
// where given. Before first[b], X and so the run's q, k and v are unchanged (PE, the
// projections and RoPE each act on one position at a time), so the attention runs on the run's
// own q, with k and v recomputed from the new rows on: what a KV cache holds.
template <class T>
double future_rows_change(const AttendParams& p, const Run& run, const std::vector<long>& first, std::uint64_t seed,
                          const std::vector<RowRange>& rows, const std::vector<long>* row_end = nullptr)
{
    RunInputs<T> from(p, run, false);
    const auto L = static_cast<std::size_t>(from.r.len), E = static_cast<std::size_t>(from.r.dim);
    const BlockWeights<T> w{Mat<T>(), from_tensor<T, 2>(run.at("w_k")), from_tensor<T, 2>(run.at("w_v"))};
    std::vector<Ten4<T>> k_rows, v_rows;
    std::size_t drawn = 0;
    for (long f : first) {
        if (static_cast<std::size_t>(f) >= L) continue;
        Ten3<T> x_rows = Ten3<T>::from_shape({1, L - static_cast<std::size_t>(f), E});
        fill_normal(x_rows.data(), x_rows.size(), seed, stream::perturb, drawn);
        drawn += x_rows.size();
        auto kv = self_kv_rows(x_rows, f, from.r.len, w, from.r.cfg);
        k_rows.push_back(std::move(kv.first)), v_rows.push_back(std::move(kv.second));
    }
    const Ten4<T> k = spliced(run.at(p.pe == PeKind::rope ? "k_rot" : "k"), k_rows, first, p.threads),
                  v = spliced(run.at("v"), v_rows, first, p.threads);
    from.in.k = &k, from.in.v = &v;
    return largest_change(from.in, run, rows, row_end);
}

// Causality: change X after position i_last and run the block again on rows 0..i_last.
// Returns the largest change of those rows, or nullopt where the check does not apply.
template <class T>
std::optional<double> future_change(const AttendParams& p, const Run& run, const CheckEnv& env, long i_last)
{
    const Resolved& r = resolved_as<Resolved>(run);
    if (r.cross || r.len < 2) return std::nullopt;
    return future_rows_change<T>(p, run, std::vector<long>(static_cast<std::size_t>(r.batch), i_last + 1), env.seed,
                                 sampled_rows(i_last + 1, work_per_row(p)));
}

long early_rows_end(const AttendParams& p) { return p.len / 2 - 1; }

std::string future_metric(const AttendParams& p, const CheckEnv& env)
{
    const long i_last = early_rows_end(p);
    return fmt::format("max |out' - out|, {}", rows_description(sampled_rows(i_last + 1, work_per_row(p)), i_last + 1, env.lang));
}

template <class T>
std::optional<Check> check_causal_rows(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    if (!causal_mask(p.mask)) return std::nullopt;
    const long i_last = early_rows_end(p);
    const auto worst = future_change<T>(p, run, env, i_last);
    if (!worst) return std::nullopt;
    return bit_identical(tr(env, "with the causal mask, changing X after position {0} leaves output rows 0..{0} bit-identical",
                            "加因果掩码时，改变位置 {0} 之后的 X，输出的第 0..{0} 行逐位不变", i_last),
                         future_metric(p, env), *worst);
}

template <class T>
std::optional<Check> check_unmasked_rows(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    if (p.mask != MaskKind::none) return std::nullopt;
    const long i_last = early_rows_end(p);
    const auto worst = future_change<T>(p, run, env, i_last);
    if (!worst) return std::nullopt;
    return greater_than(tr(env, "without a mask, changing X after position {0} changes rows 0..{0} (the encoder sees the future)",
                           "不加掩码时，改变位置 {0} 之后的 X 会改变第 0..{0} 行（编码器看得到未来）", i_last),
                        future_metric(p, env), *worst, 0.0);
}

// "Attention 的两个补丁" §5.3 (没有 Causal Mask 会发生什么？后果 3): without the mask "there is no
// teacher forcing and no parallel training". Literally false: one unmasked pass gives every
// position's output at once (the figure counts the positions whose every output came out
// finite). What the article means holds: training every position in one pass without
// letting row i read X after i needs the mask; unmasked, row i moves when X after i does (its
// 后果 1), the intended figure.
template <class T>
std::optional<Check> check_teacher_forcing(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    if (p.mask != MaskKind::none || p.kv_len.has_value()) return std::nullopt;
    const Tensor& out = run.at("out");
    const std::size_t BH = out.dim(0) * out.dim(1), L = out.dim(2), d = out.dim(3);
    std::vector<bool> finite(L, true);
    for (std::size_t bh = 0; bh < BH; ++bh)
        for (std::size_t i = 0; i < L; ++i)
            for (std::size_t j = 0; j < d; ++j)
                if (!std::isfinite(out.values[(bh * L + i) * d + j])) finite[i] = false;
    const auto produced = static_cast<double>(std::count(finite.begin(), finite.end(), true));
    const Check words = quoting(article_claim(tr(env, "without a mask there is no teacher forcing and no parallel training (§5.3)",
                                                 "没有掩码就无法做 teacher forcing，也无法并行训练（§5.3）"),
                                              tr(env, "positions whose output one unmasked pass gave, all finite, of L = {}",
                                                 "一次不加掩码的前向给出、全部有限的输出位置数，共 L = {} 个", L),
                                              produced, static_cast<double>(L), Compare::lt),
                                "无法做 teacher forcing —— 也就是无法并行训练",
                                tr(env, "training every position in one pass without leaking the future needs the mask: unmasked, row i reads X after i",
                                   "要在一次前向中训练所有位置而不泄露未来，就需要掩码：不加掩码时第 i 行会读到 i 之后的 X"));
    const long i_last = early_rows_end(p);
    const auto leak = future_change<T>(p, run, env, i_last);
    if (!leak) return words;
    return meaning(words, future_metric(p, env), *leak, 0.0, Compare::gt);
}

// Padding: change X at padded positions; no non-padded output may move.
template <class T>
std::optional<Check> check_padding(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    const Resolved& r = resolved_as<Resolved>(run);
    if (r.cross || !(p.mask == MaskKind::padding || p.mask == MaskKind::both)) return std::nullopt;
    const auto rows = sampled_rows(r.len, work_per_row(p));
    const double worst = future_rows_change<T>(p, run, p.lengths, env.seed, rows, &p.lengths);
    return bit_identical(tr(env, "changing X at padded positions leaves every non-padded output unchanged", "改变填充位置上的 X，所有非填充输出都不变"),
                         fmt::format(env.lang == Lang::zh ? "未填充行上的 max |out' - out|，{}" : "max |out' - out| at non-padded rows, {}", rows_description(rows, r.len, env.lang)), worst);
}

long max_abs_position(const std::vector<long>& positions)
{
    long m = 1;
    for (long p : positions) m = std::max(m, std::abs(p));
    return m;
}

// RoPE: the same token at every position gives scores that depend on i - j alone.
template <class T>
std::optional<Check> check_rope_relative(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    if (p.pe != PeKind::rope) return std::nullopt;
    const Resolved& r = resolved_as<Resolved>(run);
    const long n = std::min<long>(r.len, 256);
    const Tensor& x = run.at("x");
    const auto E = static_cast<std::size_t>(r.dim);
    Ten3<T> same = xt::zeros<T>({std::size_t{1}, static_cast<std::size_t>(n), E});
    for (long i = 0; i < n; ++i)
        for (std::size_t c = 0; c < E; ++c) same(0, i, c) = static_cast<T>(x.values[c]);
    BlockConfig cfg = r.cfg;
    cfg.mask = MaskSpec{MaskKind::none, n, n, {}, 0, 1, Align::upper_left, -std::numeric_limits<double>::infinity()};
    const BlockResult<T> tok = run_block(same, same, weights_of<T>(run), cfg, Matrices::keep);
    const Ten4<T> head0 = xt::view(tok.attn.scores, xt::range(0, 1), xt::range(0, 1), xt::all(), xt::all());
    double nq = 0.0, nk = 0.0;
    for (long c = 0; c < head_dim(p); ++c) {
        nq += static_cast<double>(tok.q(0, 0, 0, c)) * tok.q(0, 0, 0, c);
        nk += static_cast<double>(tok.k(0, 0, 0, c)) * tok.k(0, 0, 0, c);
    }
    const double qk = std::sqrt(nq * nk) * tok.scale;
    const Tensor scores = to_tensor("scores", {"batch", "head", "query", "key"}, head0, Elem::float64);
    // The rounding bound grows with the angles (largest position m: u m per angle); the
    // scores' own size is |q||k| scale, the yardstick the bound must stay well below.
    const double reach = r.cfg.positions.empty() ? dsize(n) : static_cast<double>(max_abs_position(r.cfg.positions));
    const double tol = qk * env.eps * (4.0 * reach + 16.0);
    if (!r.cfg.positions.empty()) {  // tokens at given positions: cells that share m - n
        return at_most(tr(env, "with RoPE and the same token at every position, the scores depend on the positions' difference m - n alone",
                          "使用 RoPE 且每个位置是同一个词时，得分只取决于位置之差 m - n"),
                       fmt::format("max spread of head 0's scores over pairs with the same m - n, first {} tokens", n),
                       max_spread_by_offset(scores, std::vector<long>(r.cfg.positions.begin(), r.cfg.positions.begin() + n)), tol, qk);
    }
    return at_most(tr(env, "with RoPE and the same token at every position, the scores depend on i - j alone", "使用 RoPE 且每个位置是同一个词时，得分只取决于 i - j"),
                   fmt::format("max spread along a diagonal of head 0's scores, first {} positions", n), max_diagonal_spread(scores), tol, qk);
}

// "Attention 的两个补丁" §6.1's table: in cross-attention "Q uses the decoder's PE, K the
// encoder's", as if a position scheme worked there as in self-attention. A distance between
// positions of two different sequences has no meaning (T5 and BART put no position bias in
// cross-attention): with RoPE or ALiBi the output depends on where the two sequences'
// positions are taken to start. Measured by moving the queries' origin from 0 to S - L
// (what --align lower-right does) and running the block again from the run's own inputs.
template <class T>
std::optional<Check> check_cross_positions(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    const Resolved& r = resolved_as<Resolved>(run);
    if (!cross_positions_checked(p, r)) return std::nullopt;
    BlockConfig from_zero = r.cfg, shifted = r.cfg;
    from_zero.mask.align = Align::upper_left;
    shifted.mask.align = Align::lower_right;
    const Ten3<T> x = x_of<T>(run, "x"), x_kv = x_of<T>(run, "x_kv");
    const BlockWeights<T> w = weights_of<T>(run);
    const double diff = max_abs_diff(run_block(x, x_kv, w, from_zero, Matrices::drop).attn.out,
                                     run_block(x, x_kv, w, shifted, Matrices::drop).attn.out);
    const double scale = max_abs(run.at("v"));
    const Check words = article_claim_numeric(
        tr(env, "in cross-attention {} works as in self-attention, each side counting its own positions (§6 小结): "
                "the output does not depend on where the two sequences' positions start",
           "交叉注意力中 {} 与自注意力中一样有效，两边各自计位置（§6 小结）：输出不取决于两条序列的位置从哪里开始", name_of(p.pe)),
        tr(env, "max |out, queries from position 0 - out, queries from position {}|", "max |out（查询从位置 0 开始）- out（查询从位置 {} 开始）|", r.kv_len - r.len),
        diff, 64.0 * env.eps * scale, scale);
    return quoting(words, "三套位置编码方案…都能用于三种 Attention",
                   tr(env,
                      "each scheme carries over to cross-attention with nothing to choose but where positions enter; an added PE does (each "
                      "sequence adds its own table), a relative scheme needs a query-to-key distance, which two sequences do not define",
                      "每种方案都能照搬到交叉注意力，要选的只是位置从哪里注入；加在输入上的位置编码确实如此（两条序列各加各的表），"
                      "相对方案却要用查询到键的距离，而两条不同的序列并没有这个距离"));
}

// The largest |position| a run's queries and keys sit at.
long largest_position(const Resolved& r)
{
    if (!r.cfg.positions.empty()) return max_abs_position(r.cfg.positions);
    return std::max(query_position_offset(r.cfg.mask.align, r.len, r.kv_len) + r.len, r.kv_len) - 1;
}

// The Frobenius norm of a tensor: a bound on a matrix's 2-norm.
double frobenius(const Tensor& t)
{
    double sq = 0.0;
    for (double v : t.values) sq += v * v;
    return std::sqrt(sq);
}

// The largest Euclidean norm of a row along the last axis.
double max_row_norm(const Tensor& t)
{
    const std::size_t n = t.shape.back();
    double worst = 0.0;
    for (std::size_t at = 0; at < t.size(); at += n) {
        double sq = 0.0;
        for (std::size_t c = 0; c < n; ++c) sq += t.values[at + c] * t.values[at + c];
        worst = worse(worst, std::sqrt(sq));
    }
    return worst;
}

// float16 and bfloat16: the output against the same block computed in float64 from the run's
// own x and weights (already rounded to the dtype), to first order. Each stored value carries
// half an eps of itself: q and k move q.k by eps |q| |k| and the stored score adds half an eps
// of it (rotated q and k carry three roundings more each: 4 eps in all), a bias an eps of
// itself; that moves a row of weights by at most twice the largest score error in sum, and v,
// the weights and out add 3 eps of max |v|. Sinusoidal PE in the dtype carries the angle
// errors of `pe`, which this bound does not cover: a long sequence fails it honestly.
template <class T>
std::optional<Check> check_vs_float64(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    if (!is_narrow<T>) return std::nullopt;
    const Resolved& r = resolved_as<Resolved>(run);
    const auto rows = sampled_rows(r.len, work_per_row(p));
    const Ten3<double> x_kv = r.cross ? x_of<double>(run, "x_kv") : Ten3<double>();
    const double worst = rows_change(run, x_of<double>(run, "x"), r.cfg, rows, r.cross ? &x_kv : nullptr);
    const bool rope = p.pe == PeKind::rope;
    const double scale = param_number(run.derived, "scale");
    const double qk = scale * max_row_norm(run.at(rope ? "q_rot" : "q")) * max_row_norm(run.at(rope ? "k_rot" : "k"));
    const double bias = p.pe == PeKind::alibi ? max_abs(run.at("bias")) : 0.0;
    double score_error = env.eps * ((rope ? 4.0 : 1.5) * qk + bias);
    // An angle m w (w <= 1) is rounded in 16 bits, and so is a position past the format's
    // exact integers: off by up to eps |m|. RoPE then turns q and k by that much more; the
    // sinusoidal table is off by it in every element, which the projections carry into q and k.
    const double angle_error = env.eps * static_cast<double>(largest_position(r));
    if (rope) score_error += 2.0 * angle_error * qk;
    if (p.pe == PeKind::sinusoidal) {
        const double pe_error = angle_error * std::sqrt(dsize(r.dim));
        score_error += scale * pe_error * (frobenius(run.at("w_q")) * max_row_norm(run.at("k")) + frobenius(run.at("w_k")) * max_row_norm(run.at("q")));
    }
    const double value_scale = max_abs(run.at("v"));
    const double tol = value_scale * (2.0 * score_error + 3.0 * env.eps);
    return at_most(tr(env, "the {} output stays within its rounding bound of float64's", "{} 的输出与 float64 的差在舍入误差界之内", name_of(env.dtype)),
                   fmt::format("max |out - out_float64|, {}", rows_description(rows, r.len, env.lang)), worst, tol, value_scale);
}

// Error model: an output element is sum_j w_j v_j / sum_j w_j over the n keys its query sees,
// n products and n - 1 sums and the division: within (n + 2) u max |v| of a true average
// (Higham §3.1), and every true average lies within [min v, max v]. In 16 bits the sum runs in
// float32 and the weights and the output are each rounded once when stored: 2 u(T) max |v|
// more. A mask that does nothing, or weights that are not a softmax (a row sum subtracted),
// land outside by far more.
std::optional<Check> averages_check(const AttendParams& p, const Run& run, const CheckEnv& env, const std::string& tensor)
{
    if (!run.has(tensor)) return std::nullopt;
    const AverageFigures f = measure_averages(run.at(tensor), tensor == "out_merged", run.at("v"), resolved_as<Resolved>(run).cfg.mask, p.heads);
    return at_most(tr(env, "every row of {} is a weighted average of the value rows its query sees: inside their range",
                      "{} 的每一行都是其查询可见的值行的加权平均：在它们的范围之内", tensor),
                   tr(env, "max distance of an element outside [min v, max v] of its visible keys", "元素超出其可见键的 [min v, max v] 的最大距离"),
                   f.excess, 0.5 * accumulate_then_store(env.dtype, dsize(f.widest) + 2.0, 4.0) * f.value_scale, f.value_scale);
}
std::optional<Check> check_out_averages(const AttendParams& p, const Run& run, const CheckEnv& env) { return averages_check(p, run, env, "out"); }
std::optional<Check> check_merged_averages(const AttendParams& p, const Run& run, const CheckEnv& env) { return averages_check(p, run, env, "out_merged"); }

// Query 0 under a causal mask sees key 0 alone: its weight is exp(0) / exp(0) = 1 exactly,
// so its output row is v[0] (one rounding of 1 * v at most: u |v|). Held on out_merged and on
// out alike, each its own check, so that a learner's tensor of either form is held to it.
std::optional<Check> first_row_check(const AttendParams& p, const Run& run, const CheckEnv& env, const std::string& tensor)
{
    if (!run.has(tensor)) return std::nullopt;
    const AverageFigures f = measure_averages(run.at(tensor), tensor == "out_merged", run.at("v"), resolved_as<Resolved>(run).cfg.mask, p.heads);
    if (!f.first_row_alone) return std::nullopt;
    return at_most(tr(env, "query 0 sees only key 0, so row 0 of {} is v[0]", "查询 0 只看得见键 0，所以 {} 的第 0 行就是 v[0]", tensor),
                   "max |out[0] - v[0]|", f.first_row, 0.5 * env.eps * f.value_scale, f.value_scale);
}

std::optional<Check> check_first_row(const AttendParams& p, const Run& run, const CheckEnv& env) { return first_row_check(p, run, env, "out_merged"); }
std::optional<Check> check_out_first_row(const AttendParams& p, const Run& run, const CheckEnv& env) { return first_row_check(p, run, env, "out"); }

}  // namespace

bool cross_positions_checked(const AttendParams& p, const Resolved& r)
{
    return r.cross && relative_scheme(p.pe) && r.kv_len > r.len && !causal_mask(p.mask);
}

template <class T>
std::vector<CheckDef<AttendParams>> attend_checks()
{
    return {{"rows_sum_to_one", {"weights"}, check_rows_sum},
            {"masked_weights_exactly_zero", {"weights"}, check_masked_zero},
            {"no_nan_weights", {"weights"}, check_no_nan},
            {"main_matches_reference", {"q", "k", "q_rot", "k_rot", "v", "out"}, check_reference<T>},
            // These three run attnlab's own block again on a changed X and compare with its
            // first run: a given tensor has no second run, so they judge none (a learner's out
            // one ulp away would otherwise "fail" bit-identity with attnlab's second run).
            {"causal_rows_unchanged", {}, from_x(check_causal_rows<T>)},
            {"unmasked_rows_change", {}, from_x(check_unmasked_rows<T>)},
            {"teacher_forcing_needs_mask", {"out"}, from_x(check_teacher_forcing<T>)},
            {"padding_ignored", {}, from_x(check_padding<T>)},
            {"rope_scores_relative", {"x"}, check_rope_relative<T>},
            {"cross_attention_positions", {}, from_x(check_cross_positions<T>)},
            {"close_to_float64", {"x", "out"}, from_x(check_vs_float64<T>)},
            {"out_rows_are_averages", {"out", "v"}, check_out_averages},
            {"out_merged_rows_are_averages", {"out_merged", "v"}, check_merged_averages},
            {"first_row_is_v0", {"out_merged", "v"}, check_first_row},
            {"out_first_row_is_v0", {"out", "v"}, check_out_first_row}};
}

namespace {

std::optional<std::string> note_alignment(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    const Resolved& r = resolved_as<Resolved>(run);
    if (!(p.mask == MaskKind::causal && r.cross && r.len != r.kv_len)) return std::nullopt;
    return tr(env, "causal mask with L = {} queries and S = {} keys: aligned {} (is_causal=True is upper-left)",
              "因果掩码，L = {} 个查询、S = {} 个键：{} 对齐（is_causal=True 是左上对齐）", r.len,
                       r.kv_len, name_of(p.align));
}

// Where the queries sit once position enters and L != S.
std::optional<std::string> note_positions(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    const Resolved& r = resolved_as<Resolved>(run);
    if (p.pe == PeKind::none || r.len == r.kv_len) return std::nullopt;
    const long q0 = query_position_offset(p.align, r.len, r.kv_len);
    if (q0 > 0) {
        return tr(env,
                  "positions: lower-right, so the {} queries are the last {} of {} positions (query i at {} + i, "
                  "as Hugging Face's position_ids = cache_len + arange(L)); {} positions them there",
                  "位置：右下对齐，所以 {} 个查询是 {} 个之中、共 {} 个位置的最后几个（查询 i 在 {} + i，"
                  "同 Hugging Face 的 position_ids = cache_len + arange(L)）；{} 按此定位",
                           r.len, r.len, r.kv_len, q0, name_of(p.pe));
    }
    return tr(env,
              "positions: queries and keys both counted from 0 ({}{}); --align lower-right puts the queries after "
              "the cached keys when S > L",
              "位置：查询和键都从 0 开始计（{}{}）；S > L 时 --align lower-right 把查询放在缓存的键之后",
                       name_of(p.align), r.kv_len < r.len ? tr(env, ", and S < L leaves no cache to count past", "，且 S < L 时没有缓存可以越过") : "");
}

// Cross-attention with a relative scheme: the two sequences' distance is a convention.
std::optional<std::string> note_cross_positions(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    const Resolved& r = resolved_as<Resolved>(run);
    if (!r.cross || !relative_scheme(p.pe) || p.align == Align::lower_right) return std::nullopt;
    return tr(env,
              "cross-attention with --pe {}: the queries and keys come from two sequences, so their distance i - j has no "
              "meaning of its own (T5 and BART put no position bias in cross-attention); the weights depend on where each "
              "sequence's positions are taken to start",
              "交叉注意力加 --pe {}：查询和键来自两条序列，它们之间的距离 i - j 本身没有意义（T5 和 BART 在交叉注意力中不加位置偏置）；"
              "权重取决于两条序列的位置各从哪里算起",
              name_of(p.pe));
}

}  // namespace

std::vector<NoteFn<AttendParams>> attend_notes() { return {note_alignment, note_positions, note_cross_positions}; }

template std::vector<CheckDef<AttendParams>> attend_checks<float>();
template std::vector<CheckDef<AttendParams>> attend_checks<double>();
template std::vector<CheckDef<AttendParams>> attend_checks<f16>();
template std::vector<CheckDef<AttendParams>> attend_checks<bf16>();

}  // namespace attnlab::attend_detail
