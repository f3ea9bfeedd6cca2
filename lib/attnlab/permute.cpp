#include "attnlab/permute.hpp"

#include "attnlab/rng.hpp"

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

template <class T>
double equivariance_error(const Ten3<T>& y, const Ten3<T>& y_perm, const std::vector<long>& perm)
{
    double worst = 0.0;
    for (std::size_t b = 0; b < y.shape(0); ++b)
        for (std::size_t i = 0; i < perm.size(); ++i)
            for (std::size_t c = 0; c < y.shape(2); ++c) {
                const double diff = static_cast<double>(y_perm(b, i, c)) -
                                    static_cast<double>(y(b, static_cast<std::size_t>(perm[i]), c));
                worst = std::max(worst, std::abs(diff));
            }
    return worst;
}

namespace {

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

template <class T>
Report run_permute_typed(const PermuteParams& p_in, const RunContext& ctx)
{
    PermuteParams p = p_in;
    if (p.example) {
        p.len = 4;
        p.dim = 8;
        if (p.perm.empty()) p.perm = {2, 1, 0, 3};
    }
    const long L = p.len, E = p.dim;
    Recorder rec("permute-test", "out_perm", ctx);
    auto& par = rec.params();
    par["len"] = L;
    par["dim"] = E;
    par["heads"] = p.heads;
    par["example"] = p.example;
    par["trials"] = p.trials;
    par["no_proj"] = p.no_proj;
    par["pe"] = name_of(p.pe);
    par["mask"] = name_of(p.mask);
    require_memory(40.0 * static_cast<double>(L) * static_cast<double>(L + E) *
                       static_cast<double>(p.heads) * (sizeof(T) + 8.0),
                   ctx, fmt::format("x [{}, {}] and weights [{}, {}, {}]", L, E, p.heads, L, L));

    const Elem EL = elem_of<T>();
    const double eps = eps_of(ctx.dtype);
    const Ten3<T> x = random_tensor3<T>(1, static_cast<std::size_t>(L), static_cast<std::size_t>(E), ctx.seed, stream::x);
    BlockWeights<T> w = p.no_proj ? BlockWeights<T>{identity<T>(E), identity<T>(E), identity<T>(E)}
                                  : BlockWeights<T>{random_weight<T>(E, E, ctx.seed, stream::w_q),
                                                    random_weight<T>(E, E, ctx.seed, stream::w_k),
                                                    random_weight<T>(E, E, ctx.seed, stream::w_v)};
    BlockConfig cfg;
    cfg.heads = p.heads;
    cfg.kv_heads = p.heads;
    cfg.pe = p.pe;
    if (p.no_proj) cfg.scale = 1.0;  // Softmax(X X^T) X has no 1/sqrt(d)
    cfg.mask.kind = p.mask;
    cfg.mask.queries = cfg.mask.keys = L;

    const BlockResult<T> base = run_block(x, x, w, cfg, true);
    const Ten3<T> out = merge_heads(base.attn.out);

    // Trials: the given permutation, or random ones (never the identity, which proves nothing).
    Rng rng(ctx.seed, stream::perm);
    struct Trial {
        std::vector<long> perm;
        double equiv = 0.0, weights = 0.0, invariance = 0.0;
        Ten3<T> out_perm;
        Ten4<T> weights_perm;
    };
    Trial worst;
    worst.equiv = -1.0;
    const long trials = p.perm.empty() ? p.trials : 1;
    for (long t = 0; t < trials; ++t) {
        std::vector<long> perm = p.perm;
        if (perm.empty()) {
            do {
                const auto r = rng.permutation(static_cast<std::size_t>(L));
                perm.assign(r.begin(), r.end());
            } while (L > 1 && std::is_sorted(perm.begin(), perm.end()));
        }
        const Ten3<T> xp = permute_rows(x, perm);
        const BlockResult<T> pr = run_block(xp, xp, w, cfg, true);
        Trial tr;
        tr.perm = perm;
        tr.out_perm = merge_heads(pr.attn.out);
        tr.weights_perm = pr.attn.weights;
        tr.equiv = equivariance_error(out, tr.out_perm, perm);
        for (std::size_t i = 0; i < static_cast<std::size_t>(L); ++i)
            for (std::size_t c = 0; c < static_cast<std::size_t>(E); ++c)
                tr.invariance = std::max(tr.invariance, std::abs(static_cast<double>(tr.out_perm(0, i, c)) - static_cast<double>(out(0, i, c))));
        // A(PX) = P A(X) P^T: weights_perm[i][j] = weights[perm[i]][perm[j]].
        for (std::size_t h = 0; h < static_cast<std::size_t>(p.heads); ++h)
            for (std::size_t i = 0; i < static_cast<std::size_t>(L); ++i)
                for (std::size_t j = 0; j < static_cast<std::size_t>(L); ++j)
                    tr.weights = std::max(tr.weights, std::abs(static_cast<double>(tr.weights_perm(0, h, i, j)) -
                                                               static_cast<double>(base.attn.weights(0, h, perm[i], perm[j]))));
        if (tr.equiv > worst.equiv) worst = std::move(tr);
    }

    rec.tensor("x", {"pos", "dim"}, xt::view(x, 0, xt::all(), xt::all()), EL);
    Vec<long> perm_t = xt::zeros<long>({static_cast<std::size_t>(L)});
    for (long i = 0; i < L; ++i) perm_t(i) = worst.perm[static_cast<std::size_t>(i)];
    rec.tensor("perm", {"pos"}, perm_t, Elem::index);
    rec.tensor("w_q", {"in", "out"}, w.w_q, EL);
    rec.tensor("w_k", {"in", "out"}, w.w_k, EL);
    rec.tensor("w_v", {"in", "out"}, w.w_v, EL);
    rec.tensor("out", {"pos", "dim"}, xt::view(out, 0, xt::all(), xt::all()), EL);
    rec.tensor("out_perm", {"pos", "dim"}, xt::view(worst.out_perm, 0, xt::all(), xt::all()), EL);
    rec.tensor("weights", {"head", "query", "key"}, xt::view(base.attn.weights, 0, xt::all(), xt::all(), xt::all()), EL);
    rec.tensor("weights_perm", {"head", "query", "key"}, xt::view(worst.weights_perm, 0, xt::all(), xt::all(), xt::all()), EL);

    double max_out = 0.0;
    for (T v : out) max_out = std::max(max_out, std::abs(static_cast<double>(v)));
    // Permuting the rows reorders every sum of the computation: the figures differ by rounding.
    const double tol = eps * (static_cast<double>(L + E) + 8.0) * (max_out + 1.0) * 4.0;
    const bool positional = p.pe != PeKind::none || p.mask != MaskKind::none;
    const std::string where = trials > 1 ? fmt::format(", worst of {} permutations", trials) : "";
    if (!positional) {
        rec.check({"equivariant", "without position information, Attn(PX) = P Attn(X)",
                   "max |Attn(PX) - P Attn(X)|" + where, worst.equiv, tol});
        rec.check({"weights_permute", "the weights permute as P A P^T", "max |A(PX) - P A(X) P^T|" + where,
                   worst.weights, tol});
    } else {
        // With position information the order matters: the difference must be far above rounding.
        const double threshold = 100.0 * tol;
        const std::string what = p.pe != PeKind::none ? fmt::format("{} position information", name_of(p.pe)) : "a causal mask";
        rec.check({"equivariance_breaks", fmt::format("with {}, Attn(PX) != P Attn(X): order now matters", what),
                   "max |Attn(PX) - P Attn(X)|" + where, worst.equiv, threshold, Compare::gt, Role::invariant,
                   TolKind::fixed});
    }
    rec.check({"output_unchanged", "permuting the input leaves the output strictly unchanged",
               "max |Attn(PX) - Attn(X)|" + where, worst.invariance, tol, Compare::le, Role::article});
    rec.note(fmt::format("permutation {}: row i of PX is row perm[i] of X", fmt::join(worst.perm, ",")));
    if (!positional) {
        rec.note("the output rows are the same rows in the permuted order (equivariance), not the same output "
                 "(invariance): the articles' FAQ corrects 'strictly unchanged' to this");
    }
    return rec.finish();
}

}  // namespace

Report run_permute(const PermuteParams& p, const RunContext& ctx)
{
    if (p.example_conflict) throw InputError("--example fixes n = 4 and d = 8; drop --len and --dim");
    if (p.len < 1 || p.dim < 1 || p.heads < 1) throw InputError("--len, --dim and --heads must be at least 1");
    if (p.trials < 1) throw InputError(fmt::format("--trials must be at least 1 (got {})", p.trials));
    if (!p.perm.empty() && p.trials != 1) throw InputError("--trials draws random permutations; it does not combine with --perm");
    const long L = p.example ? 4 : p.len, E = p.example ? 8 : p.dim;
    if (!p.perm.empty()) validate_permutation(p.perm, L);
    if (E % p.heads != 0) throw InputError(fmt::format("--dim {} is not divisible by --heads {}", E, p.heads));
    if (p.pe == PeKind::rope && (E / p.heads) % 2 != 0) {
        throw InputError(fmt::format("--pe rope needs an even head dimension; E/H = {}", E / p.heads));
    }
    if (p.pe == PeKind::sinusoidal && E % 2 != 0) throw InputError("--pe sinusoidal needs an even --dim");
    if (p.mask != MaskKind::none && p.mask != MaskKind::causal) throw InputError("--mask takes none or causal here");
    return ctx.dtype == DType::float32 ? run_permute_typed<float>(p, ctx) : run_permute_typed<double>(p, ctx);
}

template double equivariance_error<float>(const Ten3<float>&, const Ten3<float>&, const std::vector<long>&);
template double equivariance_error<double>(const Ten3<double>&, const Ten3<double>&, const std::vector<long>&);

}  // namespace attnlab
