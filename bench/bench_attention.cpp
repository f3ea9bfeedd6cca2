// Times the attention core (main implementation) on random q, k, v, after checking it against
// the plain-loop reference on a few rows, as every fast kernel here is validated before it is
// timed. Prints one JSON line per run.
//
//   attnlab_bench [--batch B] [--heads H] [--len L] [--head-dim d] [--mask none|causal] [--repeat N]
#include "attnlab/core/attention.hpp"
#include "attnlab/core/rng.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cmath>

int main(int argc, char** argv)
{
    using namespace attnlab;
    long B = 1, H = 8, L = 4096, d = 64, repeat = 3;
    std::string mask_name = "causal";
    CLI::App app{"Times attnlab's attention core"};
    app.add_option("--batch", B)->check(CLI::PositiveNumber);
    app.add_option("--heads", H)->check(CLI::PositiveNumber);
    app.add_option("--len", L)->check(CLI::PositiveNumber);
    app.add_option("--head-dim", d)->check(CLI::PositiveNumber);
    app.add_option("--mask", mask_name)->check(CLI::IsMember({"none", "causal"}));
    app.add_option("--repeat", repeat)->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);

    const auto sB = static_cast<std::size_t>(B), sH = static_cast<std::size_t>(H), sL = static_cast<std::size_t>(L),
               sd = static_cast<std::size_t>(d);
    Ten4<float> q = xt::zeros<float>({sB, sH, sL, sd}), k = q, v = q;
    Rng rng(0, stream::q);
    for (auto* t : {&q, &k, &v})
        for (auto& x : *t) x = static_cast<float>(rng.normal());
    MaskSpec mask;
    mask.kind = mask_name == "causal" ? MaskKind::causal : MaskKind::none;
    mask.queries = mask.keys = L;
    AttentionInputs<float> in;
    in.q = &q, in.k = &k, in.v = &v, in.mask = &mask, in.scale = 1.0 / std::sqrt(static_cast<double>(d));

    // validate before timing
    const RowRange rows{L - std::min(L, 8L), L};
    const auto ref = attention_reference(in, rows);
    const auto main_rows = attention(in, false, rows);
    double err = 0.0;
    for (std::size_t i = 0; i < ref.out.size(); ++i) err = std::max(err, std::abs(double(ref.out.data()[i]) - double(main_rows.out.data()[i])));
    if (err > 1e-4) {
        fmt::print(stderr, "attnlab_bench: main and reference disagree by {}\n", err);
        return 1;
    }
    double best = 1e300;
    for (long r = 0; r < repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        const auto out = attention(in, false);
        const auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
        if (!std::isfinite(out.out(0, 0, 0, 0))) return 1;
    }
    fmt::print("{{\"impl\": \"attnlab\", \"batch\": {}, \"heads\": {}, \"len\": {}, \"head_dim\": {}, \"mask\": \"{}\", "
               "\"seconds\": {:.6f}, \"max_err_vs_reference\": {:.3g}}}\n",
               B, H, L, d, mask_name, best, err);
    return 0;
}
