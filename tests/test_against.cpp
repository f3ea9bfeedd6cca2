// --against through the library: for every experiment, the run's own tensor matches, and the
// tensor of every catalogued mistake (written to a file) differs and is named.
#include "attnlab/experiments/alibi.hpp"
#include "attnlab/experiments/attend.hpp"
#include "attnlab/experiments/grad.hpp"
#include "attnlab/experiments/mask.hpp"
#include "attnlab/experiments/pe.hpp"
#include "attnlab/experiments/rope.hpp"
#include "attnlab/io/npy.hpp"
#include "attnlab/learner/against.hpp"
#include "attnlab/learner/compare.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

using namespace attnlab;

namespace {

std::string write_temp(const Tensor& t, const std::string& tag)
{
    const std::string path = scratch("against-" + tag + ".npy");
    const auto bytes = write_npy(t);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path;
}

// The same tensor as attnlab's long-form CSV (one column per axis, then value).
std::string write_csv(const Tensor& t, const std::string& tag)
{
    const std::string path = scratch("against-" + tag + ".csv");
    std::ofstream out(path);
    for (std::size_t a = 0; a < t.rank(); ++a) out << "a" << a << ",";
    out << "value\n";
    std::vector<std::size_t> idx(t.rank(), 0);
    for (std::size_t k = 0; k < t.size(); ++k) {
        for (std::size_t i : idx) out << i << ",";
        const double v = t.values[k];
        out << (std::isnan(v) ? std::string("nan") : std::isinf(v) ? std::string(v > 0 ? "inf" : "-inf") : std::to_string(v)) << "\n";
        for (std::size_t a = t.rank(); a-- > 0;) {
            if (++idx[a] < t.shape[a]) break;
            idx[a] = 0;
        }
    }
    return path;
}

// Runs e with --against the given tensor file (held against `name`).
template <class P>
Comparison against(const Experiment<P>& e, const P& p, const std::string& file, const std::string& name)
{
    RunContext ctx;
    ctx.against = AgainstRequest{file, name, {}, {}};
    const Report r = run_judged(e, p, ctx);
    REQUIRE(r.against.has_value());
    return *r.against;
}

template <class P>
void every_mistake_is_named(const Experiment<P>& e, const P& p)
{
    RunContext ctx;
    const Run run = compute_all(e, p, ctx);
    std::vector<std::string> tensors;
    for (const auto& m : e.mistakes) {
        if (!run.has(m.tensor)) continue;  // a tensor this configuration does not make
        CAPTURE(m.id);
        CAPTURE(m.tensor);
        if (std::find(tensors.begin(), tensors.end(), m.tensor) == tensors.end()) {
            tensors.push_back(m.tensor);  // the run's own tensor is a right answer
            CHECK(against(e, p, write_temp(run.at(m.tensor), "right"), m.tensor).passed);
        }
        const Tensor wrong = m.build(p, run);
        if (wrong.size() == 0) continue;  // a mistake that does not show in this tensor
        double diff = 0.0;
        if (tensors_match(run.at(m.tensor), wrong, Tolerance{1e-5, 1e-5, 1e-5}, &diff)) continue;  // here the mistake changes nothing
        for (const std::string& file : {write_temp(wrong, m.id), write_csv(wrong, m.id)}) {
            CAPTURE(file);
            const Comparison c = against(e, p, file, m.tensor);
            CHECK_FALSE(c.passed);
            bool named = false;
            for (const auto& d : c.diagnosis) named = named || d.id == m.id;
            CHECK(named);
        }
    }
}

}  // namespace

TEST_CASE("--against: every catalogued mistake of every subcommand differs from the answer and is named")
{
    PeParams pe;
    every_mistake_is_named(pe_experiment(), pe);
    MaskParams mask;
    mask.len = 5;
    every_mistake_is_named(mask_experiment(), mask);
    MaskParams padding;
    padding.kind = MaskKind::padding;
    padding.lengths = {2, 4};
    every_mistake_is_named(mask_experiment(), padding);
    RopeParams rope;
    rope.heads = 8;  // = len, so [batch, pos, head, dim] has the shape of [batch, head, pos, dim]
    every_mistake_is_named(rope_experiment(), rope);
    rope.style = RopeStyle::half;
    every_mistake_is_named(rope_experiment(), rope);
    AlibiParams alibi;
    alibi.heads = 6;
    every_mistake_is_named(alibi_experiment(), alibi);
    AttendParams attend;
    attend.heads = 2;
    attend.mask = MaskKind::causal;
    every_mistake_is_named(attend_experiment(), attend);
    AttendParams grad;  // every one of grad's mistakes shows here: a mask, RoPE, L = S
    grad.mask = MaskKind::causal, grad.pe = PeKind::rope;
    every_mistake_is_named(grad_experiment(), grad);
}

// The sanitizer build checks the same path on a quarter of the rows (its -O0 judge takes
// minutes at full size); the release build judges the full table.
constexpr long kPowTableLen = draws(2048, 512);

TEST_CASE("--against: a right answer computed another way passes: a float32 PE table at L = 2048 (512 under ASan), D = 512 built with pow")
{
    PeParams p;
    p.len = kPowTableLen;
    p.dim = 512;
    Tensor t{"pe", {"pos", "dim"}, Elem::float32, {static_cast<std::size_t>(kPowTableLen), 512}, {}};
    for (long pos = 0; pos < kPowTableLen; ++pos)
        for (long i = 0; i < 256; ++i) {
            const float w = 1.0f / std::pow(10000.0f, static_cast<float>(2 * i) / 512.0f);
            const float angle = static_cast<float>(pos) * w;
            t.values.push_back(std::sin(angle));
            t.values.push_back(std::cos(angle));
        }
    const Comparison c = against(pe_experiment(), p, write_temp(t, "pow"), "pe");
    CHECK(c.passed);
    CHECK(c.max_abs_diff > 1e-5);  // not bit-identical: the angles round differently
}

TEST_CASE("--against: an attention output one ulp from ours passes, and no check of our own second run judges it")
{
    AttendParams p;
    p.heads = 2;
    p.mask = MaskKind::causal;
    RunContext ctx;
    Tensor out = compute_all(attend_experiment(), p, ctx).at("out");
    for (std::size_t i = 0; i < out.size(); ++i) {
        const auto v = static_cast<float>(out.values[i]);
        out.values[i] = std::nextafter(v, v >= 0.0f ? 2.0f * v + 1.0f : 2.0f * v - 1.0f);
    }
    const Comparison c = against(attend_experiment(), p, write_temp(out, "ulp"), "out");
    CHECK(c.passed);
    CHECK(c.max_abs_diff > 0.0);
    REQUIRE(!c.properties.empty());
    for (const Check& check : c.properties) {
        CAPTURE(check.name);
        CHECK(check.passed());
        // Changing X and running again judges attnlab's implementation, not a given tensor.
        CHECK(check.name != "causal_rows_unchanged");
    }
}

TEST_CASE("--against: a mistake computed in float64 another way is named as matching, at the precision an answer is accepted at")
{
    // A float64 run accepts a right answer at float32 precision; a catalogued mistake made in
    // numpy's float64 differs from ours by a few ulps the same way, and is named "matches".
    RopeParams p;
    p.len = 8;
    p.dim = 8;
    p.heads = 2;
    RunContext ctx;
    ctx.dtype = DType::float64;
    const Run run = compute_all(rope_experiment(), p, ctx);
    const auto& mistakes = rope_experiment().mistakes;
    const auto reversed = std::find_if(mistakes.begin(), mistakes.end(), [](const auto& m) { return m.id == "rotation_reversed"; });
    REQUIRE(reversed != mistakes.end());
    Tensor wrong = reversed->build(p, run);
    for (std::size_t i = 0; i < wrong.size(); ++i) wrong.values[i] *= 1.0 + 8e-16;  // a few ulps: the same float64 operations in another order
    ctx.against = AgainstRequest{write_temp(wrong, "ulps-off-mistake"), "q_rot", {}, {}};
    const Report r = run_judged(rope_experiment(), p, ctx);
    REQUIRE(r.against.has_value());
    CHECK_FALSE(r.against->passed);
    REQUIRE_FALSE(r.against->diagnosis.empty());
    CHECK(r.against->diagnosis.front().id == "rotation_reversed");
    CHECK(r.against->diagnosis.front().certainty == Certainty::matches);
    // the right answer, the same few ulps off, passes (at float32 precision)
    Tensor right = run.at("q_rot");
    for (std::size_t i = 0; i < right.size(); ++i) right.values[i] *= 1.0 + 8e-16;
    ctx.against = AgainstRequest{write_temp(right, "ulps-off-right"), "q_rot", {}, {}};
    CHECK(run_judged(rope_experiment(), p, ctx).against->passed);
}
