#include "attnlab/experiments/permute.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/io/embedded.hpp"
#include "attnlab/experiments/inputs.hpp"
#include "attnlab/io/npy.hpp"
#include "attnlab/core/rng.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace attnlab {

void validate_permutation(const std::vector<long>& perm, long n)
{
    if (static_cast<long>(perm.size()) != n) {
        throw InputError(fmt::format("--perm has {} entries but there are {} positions", perm.size(), n));
    }
    std::vector<char> seen(static_cast<std::size_t>(n), 0);
    for (long v : perm) {
        if (v < 0 || v >= n) throw InputError(fmt::format("--perm entry {} is outside 0..{}", v, n - 1));
        if (seen[static_cast<std::size_t>(v)]) throw InputError(fmt::format("--perm repeats {}: not a permutation", v));
        seen[static_cast<std::size_t>(v)] = 1;
    }
}

double equivariance_error(const Tensor& y, const Tensor& y_perm, const std::vector<long>& perm)
{
    const std::size_t E = y.shape.back();
    double worst = 0.0;
    for (std::size_t i = 0; i < perm.size(); ++i)
        worst = worse(worst, max_abs_diff(y_perm.values.slice(i * E, (i + 1) * E),
                                          y.values.slice(static_cast<std::size_t>(perm[i]) * E, static_cast<std::size_t>(perm[i] + 1) * E)));
    return worst;
}

double weights_permutation_error(const Tensor& w, const Tensor& w_perm, const std::vector<long>& perm)
{
    // A(PX) = P A(X) P^T: weights_perm[i][j] = weights[perm[i]][perm[j]].
    const std::size_t L = perm.size();
    double worst = 0.0;
    for (std::size_t h = 0; h < w.dim(0); ++h)
        for (std::size_t i = 0; i < L; ++i)
            for (std::size_t j = 0; j < L; ++j)
                worst = worse(worst, diff_nan_rule(w_perm.values[(h * L + i) * L + j],
                                                   w.values[(h * L + static_cast<std::size_t>(perm[i])) * L + static_cast<std::size_t>(perm[j])]));
    return worst;
}

namespace {

PermuteParams resolve(const PermuteParams& given)
{
    PermuteParams p = given;
    if (p.example) {
        p.len = 4;
        p.dim = 8;
        if (p.perm.empty()) p.perm = {2, 1, 0, 3};
    }
    return p;
}

void validate(const PermuteParams& p)
{
    if (p.len < 1 || p.dim < 1 || p.heads < 1) throw InputError("--len, --dim and --heads must be at least 1");
    if (p.trials < 1) throw InputError(fmt::format("--trials must be at least 1 (got {})", p.trials));
    if (!p.perm.empty() && p.trials != 1 && !p.example) {
        throw InputError("--trials draws random permutations; it does not combine with --perm");
    }
    if (!p.perm.empty()) validate_permutation(p.perm, p.len);
    if (p.dim % p.heads != 0) throw InputError(fmt::format("--dim {} is not divisible by --heads {}", p.dim, p.heads));
    if (p.pe == PeKind::rope && (p.dim / p.heads) % 2 != 0) {
        throw InputError(fmt::format("--pe rope needs an even head dimension; E/H = {}", p.dim / p.heads));
    }
    if (p.pe == PeKind::sinusoidal && p.dim % 2 != 0) throw InputError("--pe sinusoidal needs an even --dim");
    if (p.mask != MaskKind::none && p.mask != MaskKind::causal) throw InputError("--mask takes none or causal here");
    const bool positional = p.pe != PeKind::none || p.mask != MaskKind::none;
    if (positional && p.len < 2) {
        throw InputError("with --pe or --mask, order can only matter between at least 2 positions (--len 2 or more)");
    }
    if (positional && !p.perm.empty() && std::is_sorted(p.perm.begin(), p.perm.end())) {
        throw InputError("--perm is the identity: it reorders nothing, so it cannot show that order matters");
    }
}

template <class T>
Ten3<T> permute_rows(const Ten3<T>& x, const std::vector<long>& perm)
{
    Ten3<T> out = x;
    for (std::size_t i = 0; i < perm.size(); ++i)
        for (std::size_t c = 0; c < x.shape(2); ++c) out(0, i, c) = x(0, static_cast<std::size_t>(perm[i]), c);
    return out;
}

template <class T>
Mat<T> identity(long n)
{
    Mat<T> m = xt::zeros<T>({static_cast<std::size_t>(n), static_cast<std::size_t>(n)});
    for (long i = 0; i < n; ++i) m(i, i) = T(1);
    return m;
}

BlockConfig block_config(const PermuteParams& p)
{
    BlockConfig cfg;
    cfg.heads = p.heads;
    cfg.kv_heads = p.heads;
    cfg.pe = p.pe;
    if (p.no_proj) cfg.scale = 1.0;  // Softmax(X X^T) X has no 1/sqrt(d)
    cfg.mask.kind = p.mask;
    cfg.mask.queries = cfg.mask.keys = p.len;
    return cfg;
}

long trial_count(const PermuteParams& p) { return p.perm.empty() ? p.trials : 1; }

// The given permutation, or random ones (never the identity, which proves nothing).
std::vector<std::vector<long>> trial_perms(const PermuteParams& p, std::uint64_t seed)
{
    if (!p.perm.empty()) return {p.perm};
    return random_permutations(p.len, p.trials, seed);
}

}  // namespace

std::vector<std::vector<long>> random_permutations(long len, long trials, std::uint64_t seed)
{
    Rng rng(seed, stream::perm);
    std::vector<std::vector<long>> perms;
    for (long t = 0; t < trials; ++t) {
        std::vector<long> perm;
        do {
            const auto r = rng.permutation(static_cast<std::size_t>(len));
            perm.assign(r.begin(), r.end());
        } while (len > 1 && std::is_sorted(perm.begin(), perm.end()));
        perms.push_back(std::move(perm));
    }
    return perms;
}

namespace {

Tensor perm_tensor(const std::vector<long>& perm)
{
    return Tensor{"perm", {"pos"}, Elem::index, {perm.size()}, std::vector<double>(perm.begin(), perm.end())};
}

std::vector<long> perm_of(const Run& run)
{
    const auto& v = run.at("perm").values;
    return std::vector<long>(v.begin(), v.end());
}

// The rounding the run's four compared tensors carry, measured: each against the same block
// computed in float64 from the run's own x and weights (as the --against error model measures
// a plain reference). run.measured gets "<name>_error" for out, out_perm, weights and
// weights_perm, and "u_run", the unit roundoff they were computed at.
template <class T>
void measure_rounding(const Ten3<T>& x, const BlockWeights<T>& w, const BlockConfig& cfg, const std::vector<long>& perm, Run& run)
{
    run.measured["u_run"] = unit_roundoff(precision_of(elem_of<T>()).value_or(DType::float64));
    auto error = [&](const char* name, const auto& wide) {
        run.measured[std::string(name) + "_error"] = run.at(name).values.visit([&](const auto* v) { return max_abs_diff(v, wide.data(), wide.size()); });
    };
    if constexpr (std::is_same_v<T, double>) {
        for (const char* name : {"out", "out_perm", "weights", "weights_perm"}) run.measured[std::string(name) + "_error"] = 0.0;
    } else {
        const BlockWeights<double> wd{xt::cast<double>(w.w_q), xt::cast<double>(w.w_k), xt::cast<double>(w.w_v)};
        const Ten3<double> xd = xt::cast<double>(x), xp = permute_rows(xd, perm);
        const BlockResult<double> base = run_block(xd, xd, wd, cfg, Matrices::keep), moved = run_block(xp, xp, wd, cfg, Matrices::keep);
        error("out", Mat<double>(xt::view(merge_heads(base.attn.out), 0, xt::all(), xt::all())));
        error("out_perm", Mat<double>(xt::view(merge_heads(moved.attn.out), 0, xt::all(), xt::all())));
        error("weights", Ten3<double>(xt::view(base.attn.weights, 0, xt::all(), xt::all(), xt::all())));
        error("weights_perm", Ten3<double>(xt::view(moved.attn.weights, 0, xt::all(), xt::all(), xt::all())));
    }
}

template <class T>
Run compute_permute(const PermuteParams& p, const Plan& plan)
{
    const auto elem = elem_of<T>();
    const Ten3<T> x = input_or<T, 3>(plan, "x", [&] {
        return random_tensor3<T>(1, static_cast<std::size_t>(p.len), static_cast<std::size_t>(p.dim), plan.seed, stream::x);
    });
    auto weight = [&](const char* name, std::uint64_t stream) {
        return input_or<T, 2>(plan, name, [&] { return p.no_proj ? identity<T>(p.dim) : random_weight<T>(p.dim, p.dim, plan.seed, stream); });
    };
    const BlockWeights<T> w{weight("w_q", stream::w_q), weight("w_k", stream::w_k), weight("w_v", stream::w_v)};
    const BlockConfig cfg = block_config(p);
    const BlockResult<T> base = run_block(x, x, w, cfg, Matrices::keep);
    const Tensor out = to_tensor("out", {"pos", "dim"}, xt::view(merge_heads(base.attn.out), 0, xt::all(), xt::all()), elem);
    Run run;
    Tensor out_perm, weights_perm;
    std::vector<long> worst_perm;
    double worst = -1.0;
    for (const auto& perm : trial_perms(p, plan.seed)) {  // the worst trial is kept
        const BlockResult<T> pr = run_block(permute_rows(x, perm), permute_rows(x, perm), w, cfg, Matrices::keep);
        Tensor op = to_tensor("out_perm", {"pos", "dim"}, xt::view(merge_heads(pr.attn.out), 0, xt::all(), xt::all()), elem);
        const double equiv = equivariance_error(out, op, perm);
        if (equiv > worst || std::isnan(equiv)) {
            worst = std::isnan(equiv) ? INFINITY : equiv;
            out_perm = std::move(op);
            weights_perm = to_tensor("weights_perm", {"head", "query", "key"}, xt::view(pr.attn.weights, 0, xt::all(), xt::all(), xt::all()), elem);
            worst_perm = perm;
        }
    }
    run.add(to_tensor("x", {"pos", "dim"}, xt::view(x, 0, xt::all(), xt::all()), elem));
    run.add(perm_tensor(worst_perm));
    run.add(to_tensor("w_q", {"in", "out"}, w.w_q, elem));
    run.add(to_tensor("w_k", {"in", "out"}, w.w_k, elem));
    run.add(to_tensor("w_v", {"in", "out"}, w.w_v, elem));
    run.add(out);
    run.add(std::move(out_perm));
    run.add(to_tensor("weights", {"head", "query", "key"}, xt::view(base.attn.weights, 0, xt::all(), xt::all(), xt::all()), elem));
    run.add(std::move(weights_perm));
    measure_rounding(x, w, cfg, worst_perm, run);
    return run;
}

// --- checks ---

bool positional(const PermuteParams& p) { return p.pe != PeKind::none || p.mask != MaskKind::none; }

std::string where(const PermuteParams& p)
{
    return trial_count(p) > 1 ? fmt::format(", worst of {} permutations", trial_count(p)) : "";
}

// A tolerance for |A - P B| where A and B are two of the run's tensors (or a learner's in
// their place) whose exact values satisfy A = P B. Triangle inequality: |A - P B| <= r_A +
// r_B + the float64 block's own error, where r is a tensor's rounding measured against the
// float64 block (measure_rounding). As --against's error model: twice the measured rounding
// (a learner's computation at the run's precision is within r of exact, and so is ours),
// plus one rounding of the largest value (u(S) M) for each of the two stored tensors, plus
// the float64 block's first-order bound, (L + D + 8) steps of u(float64) (M + 1) each, 4
// times over. Judged at a coarser precision than the run's (a float16 file against a
// float32 run), the measured rounding does not apply: the same first-order bound at the
// coarser unit roundoff does.
double rounding_tol(const PermuteParams& p, const Run& run, const CheckEnv& env, const char* a, const char* b)
{
    const double M = std::max(max_abs(run.at(a)), max_abs(run.at(b))) + 1.0, steps = 4.0 * (dsize(p.len + p.dim) + 8.0);
    const double u = unit_roundoff(env.dtype);
    const double float64_bound = 2.0 * unit_roundoff(DType::float64) * steps * M;
    if (u > run.measured.at("u_run")) return 2.0 * u * steps * M;
    const double measured = run.measured.at(std::string(a) + "_error") + run.measured.at(std::string(b) + "_error");
    return kReferenceFactor * measured + 2.0 * u * M + float64_bound;
}

double out_tol(const PermuteParams& p, const Run& run, const CheckEnv& env) { return rounding_tol(p, run, env, "out", "out_perm"); }

std::optional<Check> check_equivariant(const PermuteParams& p, const Run& run, const CheckEnv& env)
{
    if (positional(p)) return std::nullopt;
    return at_most(tr(env, "without position information, Attn(PX) = P Attn(X)", "没有位置信息时 Attn(PX) = P Attn(X)"), "max |Attn(PX) - P Attn(X)|" + where(p),
                   equivariance_error(run.at("out"), run.at("out_perm"), perm_of(run)), out_tol(p, run, env),
                   max_abs(run.at("out")));
}

std::optional<Check> check_weights_permute(const PermuteParams& p, const Run& run, const CheckEnv& env)
{
    if (positional(p)) return std::nullopt;
    return at_most(tr(env, "the weights permute as P A P^T", "权重按 P A P^T 置换"), "max |A(PX) - P A(X) P^T|" + where(p),
                   weights_permutation_error(run.at("weights"), run.at("weights_perm"), perm_of(run)),
                   rounding_tol(p, run, env, "weights", "weights_perm"), 1.0);
}

// With position information the order matters: the difference is far above rounding for
// the usual inputs. How far depends on the input and the permutation (a causal mask on a
// permutation that moves only the last rows, small ALiBi slopes against large scores), so
// this shows the effect and never decides the exit status.
std::optional<Check> check_breaks(const PermuteParams& p, const Run& run, const CheckEnv& env)
{
    if (!positional(p)) return std::nullopt;
    const auto zh_name = [](PeKind pe) {
        return pe == PeKind::sinusoidal ? "正弦位置编码" : pe == PeKind::rope ? "RoPE 旋转位置编码" : "ALiBi 线性偏置";
    };
    const std::string what = p.pe != PeKind::none ? (env.lang == Lang::zh ? std::string(zh_name(p.pe)) : fmt::format("{} position information", name_of(p.pe)))
                                                  : tr(env, "a causal mask", "因果掩码");
    return demonstration(tr(env, "with {}, Attn(PX) != P Attn(X): order now matters (more than 100x rounding)",
                            "加入{}后 Attn(PX) != P Attn(X)：顺序有了意义（超过舍入误差的 100 倍）", what),
                         "max |Attn(PX) - P Attn(X)|" + where(p), equivariance_error(run.at("out"), run.at("out_perm"), perm_of(run)),
                         100.0 * out_tol(p, run, env), Compare::gt);
}

std::optional<Check> check_unchanged(const PermuteParams& p, const Run& run, const CheckEnv& env)
{
    // The article's own §1.1 un-permutes the output (out_shuffled[perm.argsort()]) before it
    // compares: what it means is equivariance, measured beside the words. With positions added,
    // that meaning does not hold either, and the verdict stays WRONG.
    const Check words = article_claim_numeric(tr(env, "permuting the input leaves the output strictly unchanged", "打乱输入后输出“完全不变”"),
                                              "max |Attn(PX) - Attn(X)|" + where(p), max_abs_diff(run.at("out_perm"), run.at("out")),
                                              out_tol(p, run, env), max_abs(run.at("out")));
    return meaning(quoting(words, "交换输入 token 的顺序，输出严格不变",
                           tr(env, "without positions the output rows follow the input rows, Attn(PX) = P Attn(X), as its §1.1 experiment un-permutes and checks",
                              "没有位置信息时输出行跟着输入行走，Attn(PX) = P Attn(X)，正如它 §1.1 的实验先还原顺序再比较")),
                   "max |Attn(PX) - P Attn(X)|", equivariance_error(run.at("out"), run.at("out_perm"), perm_of(run)), out_tol(p, run, env));
}

// "Attention 的两个补丁" §1.2 defines "invariant" as f(PX) = P f(X) and "equivariant" as
// f(PX) = f(X), the usual names swapped, then says self-attention is equivariant. By its own
// definition that means the output does not move at all, which the measurement refutes;
// what attention satisfies, f(PX) = P f(X), is what the field calls equivariance.
std::optional<Check> check_definitions(const PermuteParams& p, const Run& run, const CheckEnv& env)
{
    if (positional(p)) return std::nullopt;
    return quoting(article_claim_numeric(tr(env, "self-attention is 'equivariant' as §1.2 defines the word, f(PX) = f(X)", "按 §1.2 的定义，自注意力是“置换等变”的：f(PX) = f(X)"),
                                         "max |Attn(PX) - Attn(X)|" + where(p), max_abs_diff(run.at("out_perm"), run.at("out")),
                                         out_tol(p, run, env), max_abs(run.at("out"))),
                   "满足 f(PX) = f(X)…则称 f 对输入是置换等变的",
                   tr(env, "§1.2 defines the two words and then applies them; by its own definition, equivariant means the output does not move",
                      "§1.2 先给出两个词的定义再使用；按它自己的定义，“等变”就是输出完全不动"));
}

// "Attention 的两个补丁"'s API list says torch.nn.Transformer adds sinusoidal PE by default. It
// adds no position at all: PyTorch's own TransformerEncoder, run on X and on PX (the
// embedded fixture), gives the permuted output to rounding. Were a PE added, rows would
// differ by O(1).
std::optional<Check> check_nn_transformer(const PermuteParams& p, const Run&, const CheckEnv& env)
{
    if (positional(p)) return std::nullopt;
    const Tensor f = parse_npy(nn_transformer_encoder_npy(), "the embedded nn.Transformer fixture");
    const std::vector<long> perm = {2, 0, 4, 1, 3};
    const std::size_t LE = f.dim(1) * f.dim(2);
    Tensor out{"out", {"pos", "dim"}, Elem::float64, {f.dim(1), f.dim(2)}, f.values.slice(LE, 2 * LE)};
    Tensor out_perm = out;
    out_perm.values = f.values.slice(2 * LE, 3 * LE);
    return quoting(article_claim(tr(env, "torch.nn.Transformer adds sinusoidal PE by default (the API list), so its output is not P Enc(X)", "torch.nn.Transformer 默认加正弦位置编码（API 列表），所以它的输出不是 P Enc(X)"),
                                 tr(env, "max |Enc(PX) - P Enc(X)| of PyTorch's TransformerEncoder (embedded fixture, float64)",
                                    "PyTorch 的 TransformerEncoder 的 max |Enc(PX) - P Enc(X)|（内嵌 fixture，float64）"),
                                 equivariance_error(out, out_perm, perm), 1e-12, Compare::gt),
                   "torch.nn.Transformer … 默认用 sinusoidal PE",
                   tr(env, "the module adds a sinusoidal position encoding to its inputs without being asked", "这个模块不用另外设置，就会给输入加上正弦位置编码"));
}

Check bag_of_words(const PermuteParams& p, const Run& run, const CheckEnv& env, MaskKind mask)
{
    return bag_of_words_claim(env, mask, "max |Attn(PX) - P Attn(X)|" + where(p),
                              equivariance_error(run.at("out"), run.at("out_perm"), perm_of(run)), out_tol(p, run, env),
                              max_abs(run.at("out")));
}

std::optional<Check> check_bag_bidirectional(const PermuteParams& p, const Run& run, const CheckEnv& env)
{
    if (p.pe != PeKind::none || p.mask != MaskKind::none) return std::nullopt;
    return bag_of_words(p, run, env, MaskKind::none);
}

std::optional<Check> check_bag_causal(const PermuteParams& p, const Run& run, const CheckEnv& env)
{
    if (p.pe != PeKind::none || p.mask != MaskKind::causal) return std::nullopt;
    return bag_of_words(p, run, env, MaskKind::causal);
}

std::vector<CheckDef<PermuteParams>> permute_checks()
{
    return {{"equivariant", {"out", "out_perm"}, check_equivariant},
            {"weights_permute", {"weights", "weights_perm"}, check_weights_permute},
            {"equivariance_breaks", {"out", "out_perm"}, check_breaks},
            {"output_unchanged", {"out", "out_perm"}, check_unchanged},
            {"equivariant_as_section_1_2_defines", {"out", "out_perm"}, check_definitions},
            {"nn_transformer_adds_sinusoidal_pe", {}, check_nn_transformer},
            {"no_pe_is_bag_of_words_bidirectional", {"out", "out_perm"}, check_bag_bidirectional},
            {"no_pe_is_bag_of_words_causal", {"out", "out_perm"}, check_bag_causal}};
}

std::optional<std::string> note_perm(const PermuteParams&, const Run& run, const CheckEnv& env)
{
    return tr(env, "permutation {}: row i of PX is row perm[i] of X", "置换 {}：PX 的第 i 行是 X 的第 perm[i] 行", fmt::join(perm_of(run), ","));
}

std::optional<std::string> note_equivariance(const PermuteParams& p, const Run&, const CheckEnv& env)
{
    if (positional(p)) return std::nullopt;
    return tr(env,
              "the output rows are the same rows in the permuted order (equivariance), not the same output "
              "(invariance): FAQ Q2 of \"Attention 的两个补丁\" corrects 'strictly unchanged' to this, while its §1.2 "
              "swaps the two names (it calls f(PX) = P f(X) invariant)",
              "输出行是按置换顺序排列的同样的行（等变），而不是同样的输出（不变）：《Attention 的两个补丁》FAQ Q2 "
              "把“完全不变”更正为这一点，而它的 §1.2 把两个名称弄反了（把 f(PX) = P f(X) 叫作不变）");
}

template <class T>
Typed<PermuteParams> permute_typed()
{
    return {compute_permute<T>, permute_checks(), {note_perm, note_equivariance}};
}

// --- the catalogue of usual mistakes ---

// out rows reordered: row i of the result is row order[i] of the run's out.
Tensor out_rows(const Run& run, const std::vector<long>& order)
{
    const Tensor& out = run.at("out");
    Tensor t = out;
    t.name = "out_perm";
    const std::size_t E = out.shape.back();
    for (std::size_t i = 0; i < order.size(); ++i)
        for (std::size_t c = 0; c < E; ++c) t.values[i * E + c] = out.values[static_cast<std::size_t>(order[i]) * E + c];
    return t;
}

// The block on PX recomputed in float64 from the run's own x and weights, with one thing changed.
Tensor permuted_block_variant(const PermuteParams& p, const Run& run, bool transposed, std::optional<double> scale)
{
    Ten3<double> x = from_tensor<double, 3>(Tensor{"x", {"batch", "pos", "dim"}, Elem::float64,
                                                   {1, run.at("x").shape[0], run.at("x").shape[1]}, run.at("x").values});
    BlockWeights<double> w{from_tensor<double, 2>(run.at("w_q")), from_tensor<double, 2>(run.at("w_k")), from_tensor<double, 2>(run.at("w_v"))};
    if (transposed) w = {xt::transpose(w.w_q), xt::transpose(w.w_k), xt::transpose(w.w_v)};
    BlockConfig cfg = block_config(p);
    if (scale) cfg.scale = *scale;
    x = permute_rows(x, perm_of(run));
    const BlockResult<double> r = run_block(x, x, w, cfg, Matrices::drop);
    return to_tensor("out_perm", {"pos", "dim"}, xt::view(merge_heads(r.attn.out), 0, xt::all(), xt::all()), Elem::float64);
}

std::vector<Mistake<PermuteParams>> permute_mistakes()
{
    return {{"inverse_permutation", "out_perm", "the rows were reordered by the inverse permutation: X[argsort(perm)] instead of X[perm]",
             "行按逆置换重排了：用了 X[argsort(perm)]，应为 X[perm]",
             [](const PermuteParams&, const Run& run) {
                 const std::vector<long> perm = perm_of(run);
                 std::vector<long> inverse(perm.size());
                 for (std::size_t i = 0; i < perm.size(); ++i) inverse[static_cast<std::size_t>(perm[i])] = static_cast<long>(i);
                 return out_rows(run, inverse);
             }},
            {"input_not_permuted", "out_perm", "the output of the unpermuted input: f(X) where f(PX) was asked for",
             "给出的是未置换输入的输出 f(X)，要求的是 f(PX)",
             [](const PermuteParams&, const Run& run) {
                 std::vector<long> identity_order(run.at("perm").size());
                 for (std::size_t i = 0; i < identity_order.size(); ++i) identity_order[i] = static_cast<long>(i);
                 return out_rows(run, identity_order);
             }},
            {"linear_weight_transposed", "out_perm", "the weights are used transposed: nn.Linear's [out, in] taken as [in, out] (x W^T)",
             "权重被转置使用了：把 nn.Linear 的 [out, in] 当成了 [in, out]（x W^T）",
             [](const PermuteParams& p, const Run& run) { return permuted_block_variant(p, run, true, std::nullopt); }},
            {"no_scale", "out_perm", "scores not scaled at all (no 1/sqrt(d))", "得分完全没有缩放（缺少 1/sqrt(d)）",
             [](const PermuteParams& p, const Run& run) { return permuted_block_variant(p, run, false, 1.0); }}};
}

std::vector<TensorDecl<PermuteParams>> permute_tensors()
{
    auto le = [](const PermuteParams& p) { return std::vector<double>{dsize(p.len), dsize(p.dim)}; };
    auto ee = [](const PermuteParams& p) { return std::vector<double>{dsize(p.dim), dsize(p.dim)}; };
    auto hll = [](const PermuteParams& p) { return std::vector<double>{dsize(p.heads), dsize(p.len), dsize(p.len)}; };
    return {{"x", {"pos", "dim"}, Need::always, le, {}, {}},
            {"perm", {"pos"}, Need::always, [](const PermuteParams& p) { return std::vector<double>{dsize(p.len)}; }, {}, {}},
            {"w_q", {"in", "out"}, Need::always, ee, {}, {}},
            {"w_k", {"in", "out"}, Need::always, ee, {}, {}},
            {"w_v", {"in", "out"}, Need::always, ee, {}, {}},
            {"out", {"pos", "dim"}, Need::always, le, {}, {}},
            {"out_perm", {"pos", "dim"}, Need::always, le, {}, {}},
            {"weights", {"head", "query", "key"}, Need::always, hll, {}, {}},
            {"weights_perm", {"head", "query", "key"}, Need::always, hll, {}, {}}};
}

std::vector<OptionRow<PermuteParams>> permute_options()
{
    using P = PermuteParams;
    std::vector<OptionRow<P>> rows{
        option<P>("--example", "The articles' example: n = 4, d = 8, permutation 2,1,0,3 (fixes --len and --dim)", &P::example),
        option<P>("--len", "Positions L", &P::len, whole_range(1, 4096)),
        option<P>("--dim", "Model dimension E", &P::dim, whole_range(1, 4096)),
        option<P>("--heads", "Heads H (E must be a multiple)", &P::heads, whole_range(1, 64)),
        option<P>("--perm", "The permutation, e.g. 2,1,0,3 (row i of PX is row perm[i] of X; it sets --len); default random", &P::perm),
        option<P>("--trials", "Random permutations to try; the worst is reported", &P::trials, whole_range(1, 10000)),
        option<P>("--no-proj", "No W_q, W_k, W_v: Softmax(X X^T) X, the articles' projection-free form", &P::no_proj),
        option<P>("--pe", "Position information: with any, the order matters", &P::pe),
        option<P>("--mask", "none or causal (a causal mask also breaks equivariance)", &P::mask)};
    row_of(rows, "--example").excludes = {"--len", "--dim"};
    row_of(rows, "--perm").sets_length_of = "--len";
    row_of(rows, "--mask").only = {"none", "causal"};
    return rows;
}

// Random valid parameters for the random tests.
PermuteParams sample_permute(Rng& rng)
{
    PermuteParams p;
    p.len = between(rng, 2, 8), p.dim = 2 * between(rng, 2, 6), p.no_proj = rng.below(2) == 1;
    p.mask = rng.below(2) ? MaskKind::causal : MaskKind::none;
    p.pe = rng.below(2) ? PeKind::sinusoidal : PeKind::none, p.trials = between(rng, 1, 4);
    return p;
}

Experiment<PermuteParams> make_permute_experiment()
{
    Experiment<PermuteParams> e;
    e.command = "permute-test";
    e.summary = "Order blindness: without positions, permuting the input only permutes the output";
    e.example = "attnlab permute-test --example --no-proj";
    e.options = permute_options();
    e.main_tensor = "out_perm";
    e.tensors = permute_tensors();
    e.inputs = {"x", "w_q", "w_k", "w_v"};
    // The worst of several permutations is picked by rounding-sized differences when
    // equivariance holds: each precision would pick its own. The run's pick is kept.
    e.settle = [](const Run& run, PermuteParams& p) {
        if (trial_count(p) > 1) p.perm = perm_of(run), p.trials = 1;
    };
    e.resolve = resolve;
    e.validate = validate;
    // Two block runs alive at once (the base and a trial), each with x, q, k, v, the scores
    // and weights [H, L, L], and the weights [E, E]; then the same in float64 for the measured
    // rounding (measure_rounding).
    e.scratch_bytes = [](const PermuteParams& p, DType dtype) {
        const double elem = detail::elem_bytes(dtype);
        const double block = 2.0 * (8.0 * dsize(p.len) * dsize(p.dim) + 2.0 * dsize(p.heads) * dsize(p.len) * dsize(p.len)) +
                             3.0 * dsize(p.dim) * dsize(p.dim);
        return block * (elem + 8.0);
    };
    // One block run per trial and one for the base: projections, scores, softmax, w.v; two
    // more in float64 when the run is not.
    e.work = [](const PermuteParams& p, const Plan& plan) {
        const double L = dsize(p.len), E = dsize(p.dim), d = E / dsize(p.heads);
        const long runs = trial_count(p) + 1 + (plan.dtype == DType::float64 ? 0 : 2);
        return dsize(runs) * 2.0 * (3.0 * L * E * E + dsize(p.heads) * L * L * (2.0 * d + kExpWork));
    };
    e.work_what = [](const PermuteParams& p) {
        return fmt::format("{} block runs over [{}, {}]", trial_count(p) + 1, p.len, p.dim);
    };
    e.mistakes = permute_mistakes();
    e.sample = sample_permute;
    e.set_typed([](auto t) { return permute_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

const Experiment<PermuteParams>& permute_experiment()
{
    static const Experiment<PermuteParams> e = make_permute_experiment();
    return e;
}

Report run_permute(const PermuteParams& p, const RunContext& ctx) { return run_experiment(permute_experiment(), p, ctx); }

std::vector<TensorInfo> permute_tensor_infos() { return tensor_infos(permute_experiment()); }

std::vector<std::string> permute_command(const PermuteParams& p) { return command_of(permute_experiment(), p); }

// "Attention 的两个补丁" §1 (后果 1) and FAQ Q5: without position encoding the model degenerates
// to a bag of words, so permuting the input only permutes the output. True for bidirectional
// attention; under a causal mask the order still shows, with no position encoding at all.
Check bag_of_words_claim(const CheckEnv& env, MaskKind mask, std::string metric, double figure, double tol, double scale)
{
    const std::string attention = mask == MaskKind::causal ? tr(env, "causal", "因果") : tr(env, "bidirectional", "双向");
    return quoting(article_claim_numeric(tr(env, "without position encoding, {} attention is a bag of words (§1, FAQ Q5): permuting the input only permutes the output",
                                            "没有位置编码时，{}注意力退化成词袋（§1、FAQ Q5）：打乱输入只会同样打乱输出", attention),
                                         std::move(metric), figure, tol, scale),
                   "相当于把语言退化成\"词袋\"",
                   tr(env, "with no position encoding a model cannot tell one order of its tokens from another, whatever its mask",
                      "没有位置编码，模型无论用什么掩码都分不出同一组 token 的不同顺序"));
}

}  // namespace attnlab
