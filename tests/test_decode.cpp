#include "attnlab/core/measure.hpp"
#include "attnlab/experiments/attend.hpp"
#include "attnlab/experiments/decode.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace attnlab;

namespace {

Report decode(DecodeParams p, DType dtype = DType::float32)
{
    RunContext ctx;
    ctx.dtype = dtype;
    return run_decode(p, ctx);
}

}  // namespace

TEST_CASE("run_decode: the full pass is attend's causal (or windowed) attention on the same x and weights, in every position scheme")
{
    // attend is held to PyTorch by its own fixtures; decode's loops are another code path.
    for (PeKind pe : {PeKind::none, PeKind::sinusoidal, PeKind::rope, PeKind::alibi})
        for (long window : {0L, 3L}) {
            CAPTURE(name_of(pe));
            CAPTURE(window);
            DecodeParams p;
            p.pe = pe, p.window = window, p.heads = 4, p.kv_heads = 2, p.rope_style = RopeStyle::half;
            const Report d = decode(p, DType::float64);
            CHECK(d.passed());
            AttendParams a;
            a.len = 7, a.heads = 4, a.kv_heads = 2, a.dim = 8, a.pe = pe, a.rope_style = RopeStyle::half;
            a.mask = window > 0 ? MaskKind::window : MaskKind::causal;
            if (window > 0) a.window = window;
            RunContext ctx;
            ctx.dtype = DType::float64;
            for (const char* name : {"x", "w_q", "w_k", "w_v"}) ctx.inputs[name] = *d.find(name);
            const Report r = run_attend(a, ctx);
            CHECK(max_abs_diff(*r.find("out"), *d.find("out_full")) < 1e-14);
        }
}

TEST_CASE("run_decode: the cache's positions worked by hand: every token, a ring buffer of 3, and StreamingLLM's 1 sink + 3")
{
    DecodeParams p;  // P 4, T 3
    const Report all = decode(p);
    // step 0 holds tokens 0..4 of 7 slots, step 2 all 7
    CHECK(all.find("positions")->values.to_vector() == std::vector<double>{0, 1, 2, 3, 4, -1, -1, 0, 1, 2, 3, 4, 5, -1, 0, 1, 2, 3, 4, 5, 6});
    p.window = 3;
    const Report ring = decode(p);
    CHECK(ring.find("positions")->values.to_vector() == std::vector<double>{2, 3, 4, 3, 4, 5, 4, 5, 6});
    CHECK(ring.find("cache_k")->shape == std::vector<std::size_t>{1, 2, 3, 4});
    p.sinks = 1;
    const Report sink = decode(p);
    // tokens 0, 2, 3, 4 then 0, 3, 4, 5 then 0, 4, 5, 6: read at cache indices 0..3
    CHECK(sink.find("positions")->values.to_vector() == std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3});
    check_invariants_hold(sink, {"positions_follow_cache_rule", "sinks_read_cache_positions"});
    // the sinks bring key 0 close: the steps differ from the windowed full pass by far more than rounding
    double gap = 0.0;
    const Tensor &steps = *sink.find("out_steps"), &full = *sink.find("out_full");
    for (std::size_t h = 0; h < 2; ++h)
        for (std::size_t t = 0; t < 3; ++t)
            for (std::size_t c = 0; c < 4; ++c) gap = std::max(gap, std::abs(steps.values[(h * 3 + t) * 4 + c] - full.values[(h * 7 + 4 + t) * 4 + c]));
    CHECK(gap > 0.01);
}

TEST_CASE("run_decode: every check holds in every dtype and configuration, and names the one that applies")
{
    for (DType dtype : {DType::float64, DType::float32, DType::float16, DType::bfloat16}) {
        CAPTURE(name_of(dtype));
        DecodeParams p;
        check_invariants_hold(decode(p, dtype), {"positions_follow_cache_rule", "steps_match_full_pass"});
        p.window = 2;
        p.pe = PeKind::alibi;
        check_invariants_hold(decode(p, dtype), {"positions_follow_cache_rule", "ring_buffer_equals_window_mask"});
        p.sinks = 2;
        check_invariants_hold(decode(p, dtype), {"positions_follow_cache_rule", "sinks_read_cache_positions"});
    }
}

TEST_CASE("decode: the steps' tolerance is measured on the rows compared, not on the full pass")
{
    // Sinks read their keys at cache indices, so the steps round other angles than the full
    // pass: with the full pass's error as r, this float16 run failed (0.00181 against 0.00155).
    // A plain float16 reference of the same rows is the run's own computation: its error is r.
    DecodeParams p;
    p.prefill = 5, p.steps = 4, p.rope_style = RopeStyle::half, p.kv_heads = 1, p.window = 3, p.sinks = 1;
    RunContext ctx;
    ctx.dtype = DType::float16;
    ctx.seed = 290;
    const Report r = run_decode(p, ctx);
    const Check c = find_check(r, "sinks_read_cache_positions");
    CHECK(c.passed());
    CHECK(c.measured == doctest::Approx(0.00181).epsilon(0.01));
    CHECK(c.tolerance == doctest::Approx(2.0 * c.measured).epsilon(1e-9));  // 2 r, r the run's own error here
}

TEST_CASE("decode: each usual mistake fails the step check, and a doctored position table fails its check")
{
    const auto& e = decode_experiment();
    for (PeKind pe : {PeKind::rope, PeKind::alibi})
        for (long sinks : {0L, 1L}) {
            CAPTURE(name_of(pe));
            CAPTURE(sinks);
            DecodeParams p;
            p.pe = pe, p.sinks = sinks, p.window = sinks > 0 ? 3 : 0;
            RunContext ctx;
            Run run = compute_all(e, p, ctx);
            const Run clean = run;
            auto failed = [&] { return failed_checks(check_run(e, p, run, ctx)); };
            CHECK(failed().empty());
            const std::string step_check = sinks > 0 ? "sinks_read_cache_positions" : "steps_match_full_pass";
            std::size_t built = 0;
            for (const auto& m : e.mistakes) {
                CAPTURE(m.id);
                run = clean;
                Tensor wrong = m.build(p, run);
                if (wrong.values.empty()) continue;
                ++built;
                wrong.elem = Elem::float32;
                replace_tensor(run, wrong);
                CHECK(failed() == std::vector<std::string>{step_check});
            }
            CHECK(built == (sinks > 0 ? 1U : 2U));
            run = clean;
            tensor_of(run, "positions").values.wide()[1] = 7;
            CHECK(failed() == std::vector<std::string>{"positions_follow_cache_rule"});
        }
    DecodeParams none;
    none.pe = PeKind::none;
    const Run plain = compute_all(e, none, RunContext{});
    for (const auto& m : e.mistakes) CHECK(m.build(none, plain).values.empty());  // no positions to get wrong
}

TEST_CASE("run_decode: input errors and the command that reproduces a run")
{
    DecodeParams p;
    p.sinks = 1;
    CHECK_THROWS_WITH_AS(decode(p), doctest::Contains("--sinks needs --window"), InputError);
    p.window = 2;
    p.pe = PeKind::sinusoidal;
    CHECK_THROWS_WITH_AS(decode(p), doctest::Contains("cannot be re-read at its cache index"), InputError);
    p.pe = PeKind::rope;
    p.dim = 6;
    p.heads = 2;
    CHECK_THROWS_WITH_AS(decode(p), doctest::Contains("--pe rope needs an even head dimension (got 3)"), InputError);
    p.dim = 8;
    p.kv_heads = 3;
    CHECK_THROWS_AS(decode(p), InputError);
    DecodeParams q;
    q.window = 3;
    q.sinks = 1;
    CHECK(decode_command(q) == std::vector<std::string>{"decode", "--window", "3", "--sinks", "1"});
}

TEST_CASE("run_decode: a left-padded sequence's steps are those of the same sequence unpadded, in every position scheme")
{
    for (PeKind pe : {PeKind::none, PeKind::sinusoidal, PeKind::rope, PeKind::alibi}) {
        CAPTURE(name_of(pe));
        DecodeParams p;
        p.pe = pe;
        p.left_pad = {2, 4};  // sequence 0 has 2 pads in front, sequence 1 none
        p.batch = 2;
        const Report padded = decode(p, DType::float64);
        check_invariants_hold(padded, pe == PeKind::rope || pe == PeKind::alibi
                                          ? std::vector<std::string>{"positions_follow_cache_rule", "steps_match_full_pass", "left_pad_matches_unpadded",
                                                                     "uniform_shift_changes_no_score"}
                                          : std::vector<std::string>{"positions_follow_cache_rule", "steps_match_full_pass", "left_pad_matches_unpadded"});
        // sequence 0 on its own: its 2 real prompt tokens and the 3 steps, the same weights
        DecodeParams alone;
        alone.pe = pe, alone.prefill = 2;
        RunContext ctx;
        ctx.dtype = DType::float64;
        const Tensor& x = *padded.find("x");
        std::vector<double> rows;
        for (std::size_t t = 2; t < 7; ++t)
            for (std::size_t e = 0; e < 8; ++e) rows.push_back(x.values[t * 8 + e]);
        ctx.inputs["x"] = Tensor{"x", {"batch", "pos", "dim"}, Elem::float64, {1, 5, 8}, rows};
        for (const char* name : {"w_q", "w_k", "w_v"}) ctx.inputs[name] = *padded.find(name);
        const Tensor& steps = *padded.find("out_steps");
        const Report single = run_decode(alone, ctx);
        const Tensor& own = *single.find("out_steps");
        double worst = 0.0;
        for (std::size_t n = 0; n < own.size(); ++n) worst = std::max(worst, std::abs(own.values[n] - steps.values[n]));  // batch 0 comes first
        CHECK(worst < 1e-14);
    }
}

TEST_CASE("decode: counting left-padded positions from the first pad shows under sinusoidal PE only, and under RoPE and ALiBi it changes nothing")
{
    const auto& e = decode_experiment();
    for (PeKind pe : {PeKind::sinusoidal, PeKind::rope, PeKind::alibi}) {
        CAPTURE(name_of(pe));
        DecodeParams p;
        p.pe = pe, p.left_pad = {2, 4}, p.batch = 2;
        RunContext ctx;
        ctx.dtype = DType::float64;
        Run run = compute_all(e, p, ctx);
        const auto found = std::find_if(e.mistakes.begin(), e.mistakes.end(), [](const auto& x) { return x.id == "left_pad_positions_from_0"; });
        REQUIRE(found != e.mistakes.end());
        const Mistake<DecodeParams>& m = *found;
        const Tensor wrong = m.build(p, run);
        const double gap = max_abs_diff(wrong, run.at("out_steps"));
        if (pe == PeKind::sinusoidal) {
            CHECK(gap > 0.01);
            replace_tensor(run, wrong);
            CHECK(failed_checks(check_run(e, p, run, ctx)) == std::vector<std::string>{"steps_match_full_pass", "left_pad_matches_unpadded"});
        } else {
            CHECK(gap < 1e-13);
            tensor_of(run, "out_steps").values.wide()[2] += 0.01;
            CHECK(failed_checks(check_run(e, p, run, ctx)) ==
                  std::vector<std::string>{"steps_match_full_pass", "left_pad_matches_unpadded", "uniform_shift_changes_no_score"});
        }
    }
    DecodeParams bad;
    bad.left_pad = {2, 5};
    bad.batch = 2;
    CHECK_THROWS_WITH_AS(decode(bad), doctest::Contains("--left-pad: each length must lie in 1..4 (--prefill), got 5"), InputError);
    bad.left_pad = {2};
    CHECK_THROWS_WITH_AS(decode(bad), doctest::Contains("--left-pad gives 1 lengths for --batch 2"), InputError);
}

TEST_CASE("decode --sink-logits: worked by hand with equal scores, a share per head, and both usual mistakes caught")
{
    // w_q = 0: every score is 0, so the step (token 1, seeing tokens 0 and 1) weighs each value
    // 1 / (2 + e^sink), and the sink's column takes e^sink / (2 + e^sink).
    DecodeParams p;
    p.prefill = 1, p.steps = 1, p.heads = 2, p.dim = 4, p.pe = PeKind::none, p.sink_logits = "0,1.5";
    RunContext ctx;
    ctx.dtype = DType::float64;
    ctx.inputs["w_q"] = Tensor{"w_q", {"in", "out"}, Elem::float64, {4, 4}, std::vector<double>(16, 0.0)};
    const Report r = run_decode(p, ctx);
    const auto v = r.find("v")->values.to_vector(), out = r.find("out_steps")->values.to_vector();  // v [1, 2, 2, 2], out [1, 2, 1, 2]
    for (std::size_t head = 0; head < 2; ++head)
        for (std::size_t c = 0; c < 2; ++c) {
            const double sink = head == 0 ? 0.0 : 1.5, want = (v[(head * 2 + 0) * 2 + c] + v[(head * 2 + 1) * 2 + c]) / (2.0 + std::exp(sink));
            CHECK(out[head * 2 + c] == doctest::Approx(want).epsilon(1e-14));
        }
    check_invariants_hold(r, {"positions_follow_cache_rule", "steps_match_full_pass", "sink_logits_take_a_share"});
    // One logit for every head is the same as that logit per head.
    DecodeParams one = p, each = p;
    one.sink_logits = "0.5", each.sink_logits = "0.5,0.5";
    CHECK(run_decode(one, ctx).find("out_steps")->values.to_vector() == run_decode(each, ctx).find("out_steps")->values.to_vector());
    // The mistakes: each fails the sink check and no other.
    const auto& e = decode_experiment();
    DecodeParams q;
    q.sink_logits = "1,-0.5";
    Run run = compute_all(e, q, RunContext{});
    const Run clean = run;
    for (const char* id : {"sink_logits_ignored", "sink_logit_scaled"}) {
        CAPTURE(id);
        run = clean;
        const auto m = std::find_if(e.mistakes.begin(), e.mistakes.end(), [&](const auto& x) { return x.id == id; });
        REQUIRE(m != e.mistakes.end());
        Tensor wrong = m->build(q, run);
        REQUIRE(!wrong.values.empty());
        wrong.elem = Elem::float32;
        replace_tensor(run, wrong);
        CHECK(failed_checks(check_run(e, q, run, RunContext{})) == std::vector<std::string>{"steps_match_full_pass", "sink_logits_take_a_share"});
    }
    p.sink_logits = "1,2,3";
    CHECK_THROWS_WITH_AS(run_decode(p, ctx), "--sink-logits gives 3 logits for --heads 2: one per head, or one for every head", InputError);
    p.sink_logits = "1,,2";
    CHECK_THROWS_WITH_AS(run_decode(p, ctx), "--sink-logits: '' is not a number within +-10000", InputError);
}
