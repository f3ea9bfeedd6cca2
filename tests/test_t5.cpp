#include "attnlab/core/position/t5.hpp"
#include "attnlab/experiments/t5.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>
#include <xtensor/xnpy.hpp>

#include <array>
#include <tuple>

using namespace attnlab;

namespace {

Report t5(long len, long buckets, long max_distance, T5Direction direction, DType dtype = DType::float32)
{
    T5Params p;
    p.len = len, p.buckets = buckets, p.max_distance = max_distance, p.direction = direction;
    RunContext ctx;
    ctx.dtype = dtype;
    return run_t5(p, ctx);
}

// n values of row i of an [L, L] map, from key 0.
std::vector<double> row(const Tensor& t, std::size_t i, std::size_t n)
{
    std::vector<double> out;
    for (std::size_t j = 0; j < n; ++j) out.push_back(t.values[i * t.dim(1) + j]);
    return out;
}

}  // namespace

TEST_CASE("t5_bucket: bit-identical to Hugging Face's _relative_position_bucket at 601 offsets under seven configurations (PyTorch fixture)")
{
    // data/make_fixtures.py T5_CONFIGS, in order: (num_buckets, max_distance, bidirectional)
    const std::array<std::tuple<long, long, bool>, 7> configs{{{32, 128, true}, {32, 128, false}, {7, 20, true}, {33, 50, false},
                                                                {8, 16, true}, {5, 9, false}, {64, 1000, true}}};
    const auto hf = xt::load_npy<long>(std::string(ATTNLAB_DATA_DIR) + "/fixtures/t5_buckets.npy");
    REQUIRE(hf.shape(0) == configs.size());
    REQUIRE(hf.shape(1) == 601);
    for (std::size_t c = 0; c < configs.size(); ++c) {
        const auto [buckets, max_distance, bi] = configs[c];
        CAPTURE(buckets);
        CAPTURE(max_distance);
        long differ = 0;
        for (long d = -300; d <= 300; ++d)
            differ += t5_bucket(d, bi ? T5Direction::bidirectional : T5Direction::causal, buckets, max_distance) != hf(c, static_cast<std::size_t>(d + 300));
        CHECK(differ == 0);
    }
    // The float32 boundary: log(16/8) / log(128/8) * 8 is 2 exactly in real numbers; HF's float32 gives 2, bucket 10.
    CHECK(hf(0, 300 - 16) == 10);
    CHECK(t5_bucket(-16, T5Direction::bidirectional, 32, 128) == 10);
}

TEST_CASE("run_t5: the bucket map worked by hand (8 buckets, max distance 16), and every check holds in every dtype")
{
    // side 4, exact 2: d = 0 -> 0, -1 -> 1, +1 -> 4 + 1; -2..-5 -> 2 + floor(log(n/2)/log(8)*2) = 2
    // (x = 0, 0.39, 0.67, 0.88); -6 -> x = 1.06, 3; -16 -> x = 2, clipped to the side's last, 3
    for (DType dtype : {DType::float64, DType::float32, DType::float16, DType::bfloat16}) {
        CAPTURE(name_of(dtype));
        const Report r = t5(24, 8, 16, T5Direction::bidirectional, dtype);
        check_invariants_hold(r, {"bucket_depends_on_offset_only", "exact_buckets_near", "log_buckets_far", "beyond_max_distance_last_bucket",
                                  "buckets_monotone_in_distance", "sign_told_apart_bidirectional_only", "far_distances_share_a_bucket",
                                  "bias_reads_bucket_table"});
        const Tensor& b = *r.find("bucket");
        CHECK(row(b, 6, 13) == std::vector<double>{3, 2, 2, 2, 2, 1, 0, 5, 6, 6, 6, 6, 7});
        CHECK(b.values[23 * 24] == 3);  // d = -23, past D
        CHECK(r.find("relative_position")->values[6 * 24 + 0] == -6);
        // distances 6 .. 23 to earlier keys: 6 .. 15 in bucket 3 by the log rule, 16 .. 23 past D
        const Check shared = find_check(r, "far_distances_share_a_bucket");
        CHECK(shared.role == Role::demonstration);
        CHECK(shared.measured == 18.0);
    }
    const Report causal = t5(20, 6, 9, T5Direction::causal);
    CHECK(check_names(causal).back() == "bias_reads_bucket_table");
    // causal: 6 buckets, 3 exact; n = 4: 3 + floor(log(4/3)/log(3) * 3 = 0.79), n = 5: 3 + floor(1.40);
    // every later key in bucket 0
    const Tensor& b = *causal.find("bucket");
    CHECK(row(b, 5, 8) == std::vector<double>{4, 3, 3, 2, 1, 0, 0, 0});
    CHECK(causal.passed());
}

TEST_CASE("t5: each doctored map and each usual mistake fails the checks that read it")
{
    const auto& e = t5_experiment();
    T5Params p;
    p.len = 24, p.buckets = 8, p.max_distance = 16;
    RunContext ctx;
    Run run = compute_all(e, p, ctx);
    auto failed = [&] { return failed_checks(check_run(e, p, run, ctx)); };
    CHECK(failed().empty());
    Tensor bucket = tensor_of(run, "bucket");
    tensor_of(run, "bucket").values.wide()[3 * 24 + 10] = 6;  // one cell of d = 7 (bucket 7 there)
    CHECK(failed() == std::vector<std::string>{"bucket_depends_on_offset_only", "bias_reads_bucket_table"});
    std::map<std::string, std::vector<std::string>> expected{
        {"sign_ignored", {"exact_buckets_near", "log_buckets_far", "beyond_max_distance_last_bucket", "sign_told_apart_bidirectional_only"}},
        {"no_log_buckets", {"log_buckets_far"}}};  // clipped at the last bucket, so the far ones are right
    for (const auto& m : e.mistakes) {
        CAPTURE(m.id);
        replace_tensor(run, m.build(p, run));
        Tensor& t = tensor_of(run, "bucket");
        t.elem = Elem::index;
        const auto names = failed_checks(check_run(e, p, run, ctx));
        CHECK(std::vector<std::string>(names.begin(), names.end() - 1) == expected[m.id]);  // the bias no longer gathers from it
    }
    replace_tensor(run, bucket);
    tensor_of(run, "bias").values.wide()[5] += 0.5;
    CHECK(failed() == std::vector<std::string>{"bias_reads_bucket_table"});
    p.direction = T5Direction::causal;
    CHECK(e.mistakes[0].build(p, run).values.empty());  // a causal run has no sign to ignore
}

TEST_CASE("run_t5: input errors name both numbers, an odd bidirectional N leaves its last bucket unused, and the command reproduces a run")
{
    CHECK_THROWS_WITH_AS(t5(8, 32, 8, T5Direction::bidirectional), doctest::Contains("--max-distance 8 must exceed the exact range, 8 distances"), InputError);
    CHECK_THROWS_WITH_AS(t5(8, 3, 8, T5Direction::bidirectional), doctest::Contains("--buckets 3 leaves no exact bucket"), InputError);
    CHECK_NOTHROW(t5(8, 2, 8, T5Direction::causal));
    const Report odd = t5(40, 7, 20, T5Direction::bidirectional);
    REQUIRE(odd.notes.size() == 1);
    CHECK(odd.notes[0].find("bucket 6 is never used") != std::string::npos);
    T5Params p;
    p.buckets = 8;
    p.direction = T5Direction::causal;
    CHECK(t5_command(p) == std::vector<std::string>{"t5", "--buckets", "8", "--direction", "causal"});
}
