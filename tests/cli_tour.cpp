#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <map>

TEST_CASE("tour: exit 0, every section in order, and the claims table")
{
    const auto r = run_cli({"tour"}, {"LANG=C"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    std::size_t at = 0;
    for (const char* title : {"1. Order blindness", "2. Sinusoidal positional encoding", "3. Learned absolute positions",
                              "4. Relative positions: Shaw's tables and T5's buckets", "5. Rotary position embedding", "6. ALiBi", "7. Causal and padding masks",
                              "8. The decoder at inference", "9. Encoder and decoder attention",
                              "10. Length: what each scheme does past its training length", "Claims:"}) {
        CAPTURE(title);
        const auto pos = r.out.find(title, at);
        CHECK(pos != std::string::npos);
        at = pos == std::string::npos ? at : pos;
    }
    CHECK(r.out.find("the program's own invariants all hold") != std::string::npos);
}

namespace {

// The whole tour in JSON, run once by this test program: the subcases of the case below read
// the same run (doctest runs the case once for each, and the tour trains six models).
const nlohmann::json& whole_tour()
{
    static const nlohmann::json j = run_json({"tour"});
    return j;
}

// The checks of the JSON document of tour in section and claims order; defined below.
void every_section_claim_picture_and_fact(const nlohmann::json& j);
void every_article_row(const nlohmann::json& j);
void every_figure_replays(const nlohmann::json& j, const std::vector<std::string>& extra);

}  // namespace

TEST_CASE("tour: one JSON run: every section, claim, picture and fact, every article row's verdict, every figure replayed")
{
    SUBCASE("every section with tensors and checks, every claim with its source, one picture a section, and the facts table")
    {
        every_section_claim_picture_and_fact(whole_tour());
    }
    SUBCASE("every article row has its verdict, quote and reading, IMPRECISE is counted apart, and the README's count is the tour's")
    {
        every_article_row(whole_tour());
    }
    SUBCASE("every figure carries the command that reproduces it, and replaying it gives the same figure") { every_figure_replays(whole_tour(), {}); }
}

// The release build also replays a tour at another seed and dtype (each replay retrains the
// length section's models); under the sanitizers the default tour's replay above is enough
// for memory safety.
TEST_CASE("tour: at --seed 3 --dtype float64 every figure carries its command, and replaying it gives the same figure")
{
    if (program_sanitized()) return;
    const std::vector<std::string> extra = {"--seed", "3", "--dtype", "float64"};
    std::vector<std::string> args = {"tour"};
    args.insert(args.end(), extra.begin(), extra.end());
    every_figure_replays(run_json(args), extra);
}

namespace {

void every_section_claim_picture_and_fact(const nlohmann::json& j)
{
    CHECK(j["command"] == "tour");
    CHECK(j["passed"] == true);
    std::vector<std::string> names;
    for (const auto& s : j["sections"]) {
        names.push_back(s["name"]);
        CHECK(!s["checks"].empty());
        CHECK(s["passed"] == true);
    }
    CHECK(names == std::vector<std::string>{"order", "pe", "learned", "relative", "rope", "alibi", "mask", "decode", "encoder_decoder", "length"});
    // --help names every section, from the tour's own list
    CHECK(run_cli({"tour", "--help"}).out.find("Run one section: order, pe, learned, relative, rope, alibi, mask, decode, encoder_decoder, length (default: all)") !=
          std::string::npos);
    // The exact list of claims, by check name: a claim that disappears fails here.
    std::vector<std::string> claims;
    for (const auto& c : j["claims"]) claims.push_back(c["name"]);
    CHECK(claims == std::vector<std::string>{
                        "equivariant", "output_unchanged", "equivariant_as_section_1_2_defines",
                        "nn_transformer_adds_sinusoidal_pe", "equivariant", "no_pe_is_bag_of_words_bidirectional",
                        "no_pe_is_bag_of_words_causal", "out_closed_form", "no_pe_is_bag_of_words_causal",
                        "equivariance_breaks",                                                          // order
                        "row0_exact", "freq_falling", "relative_shift_linear", "slice_matches_direct",
                        "slicing_bug_loses_position", "unsliced_table_shape_error", "log_space_more_accurate",
                        "max_wavelength_is_base", "base_sets_highest_frequency_period", "log_space_more_accurate", // pe
                        "learned_table_stops_at_max_len", "learned_dots_depend_on_position", "learned_has_no_linear_shift",
                        "sinusoidal_dots_depend_on_offset_only", "learned_has_no_linear_shift",                 // learned
                        "rel_index_is_clipped_offset", "beyond_clip_share_a_row", "out_matches_definition", "equivariance_breaks",
                        "bucket_depends_on_offset_only", "exact_buckets_near", "log_buckets_far", "beyond_max_distance_last_bucket",
                        "sign_told_apart_bidirectional_only", "far_distances_share_a_bucket",                    // relative
                        "pos0_unchanged", "norm_preserved", "dot_equals_relative_rotation",
                        "relative_position_only", "rope_relative_sign", "styles_are_permutations", "rope_absorbs_into_kv_compression",
                        "faq_q17_dynamic_ntk_bases", // rope
                        "slopes_geometric", "bias_toeplitz", "bloom_shortcut_equivalent",
                        "simple_formula_matches_paper_text", "paper_text_and_reference_code_differ", "paper_slopes_monotone",                        // alibi
                        "causal_equals_tril", "rows_sum_to_one", "masked_weights_exactly_zero",
                        "hidden_scores_ignored", "multiply_leak_very_small", "multiply_cannot_mask", "transformer_src_mask_default",
                        "minus_1e9_avoids_fp16_overflow",
                        "bool_conventions_complement",
                        "bool_conventions_same_weights", "sdpa_bool_true_masks", "no_nan_weights",
                        "nan_from_exp_overflow",                                                        // mask
                        "positions_follow_cache_rule", "steps_match_full_pass", "ring_buffer_equals_window_mask",
                        "sinks_read_cache_positions", "left_pad_matches_unpadded", "uniform_shift_changes_no_score", // decode
                        "unmasked_rows_change", "teacher_forcing_needs_mask", "main_matches_reference", "causal_rows_unchanged",
                        "rows_sum_to_one", "cross_attention_positions",                                // encoder_decoder
                        "alibi_extrapolates_best", "learned_stops_at_max_len", "sinusoidal_does_not_extrapolate",
                        "nope_learns_k_back", "sinusoidal_extrapolates_easily", "rope_weaker_on_short_sequences",
                        "alibi_extrapolates_because_relative"});                                        // length
    CHECK(j["claims"].size() == 81);
    for (const auto& c : j["claims"]) CHECK(!c["source"].get<std::string>().empty());
    // Each section draws one picture, the tensor or pair its author chose, listed in the JSON.
    std::vector<std::string> drawn;
    for (const auto& s : j["sections"]) {
        int pictures = 0;
        for (const auto& run : s["runs"]) {
            if (run["picture"].empty()) continue;
            ++pictures;
            std::string pair;
            for (const auto& n : run["picture"]) pair += (pair.empty() ? "" : ",") + n.get<std::string>();
            drawn.push_back(s["name"].get<std::string>() + ":" + pair);
        }
        CHECK(pictures == 1);
    }
    CHECK(drawn == std::vector<std::string>{"order:weights,weights_perm", "pe:pe", "learned:pos_emb", "relative:bucket", "rope:dots",
                                            "alibi:bias", "mask:weights,multiplied_weights", "decode:positions", "encoder_decoder:weights",
                                            "length:extrapolation"});
    // The facts table: statements about models and papers, each with its source, in both languages.
    std::vector<std::pair<std::string, std::string>> facts;
    for (const auto& f : j["facts"]) {
        CHECK(f["role"] == "fact");
        for (const char* key : {"section", "where", "statement", "source", "source_value"}) CHECK(!f[key].get<std::string>().empty());
        facts.emplace_back(f["name"], f["verdict"]);
    }
    using V = std::vector<std::pair<std::string, std::string>>;
    CHECK(facts == V{{"llama2_base_doubled", "CONTRADICTED"},
                     {"gpt_neox_base_quadrupled", "CONTRADICTED"},
                     {"baichuan_7b_uses_rope", "CONFIRMED"},
                     {"baichuan_13b_uses_rope", "CONTRADICTED"},
                     {"roformer_llama7b_perplexities", "CONTRADICTED"},
                     {"llama2_extends_context_with_dynamic_ntk", "AMBIGUOUS"},
                     {"roformer_calls_rope_vectorised_sinusoidal", "NOT IN SOURCE"},
                     {"press_bias_is_symmetric", "NOT IN SOURCE"},
                     {"mistral_uses_alibi", "CONTRADICTED"},
                     {"alibi_train_1024_infer_8192", "CONFIRMED"}});
    CHECK(j["passed"] == true);  // a contradicted fact is not a failed check
    CHECK(j["facts"][8]["source_value"].get<std::string>().find("\"rope_theta\": 10000.0 (v0.1), 1000000.0 (v0.2)") == 0);
    const auto en = run_cli({"tour", "--section", "rope"}, {"LANG=C"});
    CHECK(en.status == 0);
    CHECK(en.out.find("Facts: statements about models and papers") != std::string::npos);
    CHECK(en.out.find("  CONTRADICTED  Baichuan uses RoPE: Baichuan-13B\n") != std::string::npos);
    CHECK(en.out.find("  CONFIRMED     Baichuan uses RoPE: Baichuan-7B\n") != std::string::npos);
    CHECK(en.out.find("  AMBIGUOUS     Llama-2's context extension uses Dynamic NTK\n") != std::string::npos);
    CHECK(en.out.find("mistral") == std::string::npos);  // --section keeps the section's facts only
    const auto zh = run_cli({"tour", "--section", "alibi", "--lang", "zh"});
    CHECK(zh.out.find("事实：关于模型与论文的说法") != std::string::npos);
    CHECK(zh.out.find("  来源否定      部分 Mistral 版本使用 ALiBi\n") != std::string::npos);
    CHECK(zh.out.find("  来源中没有    Press et al. 定义的 ALiBi 偏置是 -m |i - j|") != std::string::npos);
    CHECK(run_json({"tour", "--section", "mask"})["facts"].empty());
}

// The article's rows: every one quotes its sentence (at most 40 characters) and says what it
// means; the re-judged rows carry the verdict a careful reading gives, and the counts add up.
void every_article_row(const nlohmann::json& j)
{
    std::map<std::string, std::string> verdict;
    for (const auto& c : j["claims"]) {
        if (c["role"] != "article") {
            CHECK_FALSE(c.contains("verdict"));
            continue;
        }
        const std::string name = c["name"], quote = c["quote"];
        CAPTURE(name);
        CHECK(!quote.empty());
        std::size_t chars = 0;  // code points: bytes that do not continue a UTF-8 sequence
        for (unsigned char ch : quote) chars += (ch & 0xC0) != 0x80;
        CHECK(chars <= 40);
        CHECK(!c["reading"].get<std::string>().empty());
        CHECK(c["passed"] == (c["verdict"] == "holds"));
        if (c["verdict"] == "imprecise") CHECK(c["intended"]["measured"].is_number());
        const std::string v = c["verdict"];
        auto [it, added] = verdict.emplace(name, v);
        if (!added && v == "wrong") it->second = v;
    }
    CHECK(verdict.at("output_unchanged") == "imprecise");
    CHECK(verdict.at("teacher_forcing_needs_mask") == "imprecise");
    CHECK(verdict.at("rope_relative_sign") == "imprecise");
    CHECK(verdict.at("multiply_cannot_mask") == "holds");
    CHECK(verdict.at("faq_q17_dynamic_ntk_bases") == "holds");
    CHECK(verdict.at("cross_attention_positions") == "wrong");
    CHECK(verdict.at("sinusoidal_extrapolates_easily") == "wrong");
    CHECK(verdict.at("rope_weaker_on_short_sequences") == "wrong");
    CHECK(verdict.count("paper_text_and_reference_code_differ") == 0);  // the program's demonstration, not the articles'
    long holds = 0, wrong = 0, imprecise = 0;
    for (const auto& [name, v] : verdict) (v == "holds" ? holds : v == "wrong" ? wrong : imprecise) += 1;
    const auto& n = j["article_claims"];
    CHECK(n["distinct"] == static_cast<long>(verdict.size()));
    CHECK(n["holds"] == holds);
    CHECK(n["wrong"] == wrong);
    CHECK(n["imprecise"] == imprecise);
    // the README states the same counts
    const std::string readme = slurp(std::string(ATTNLAB_SOURCE_DIR) + "/README.md");
    const std::string said = "The tour judges " + std::to_string(verdict.size()) + " of their claims against the measurement:\n" + std::to_string(wrong) +
                             " are wrong, " + std::to_string(imprecise) + " imprecise";
    CHECK(readme.find(said) != std::string::npos);
    CHECK(readme.find("and " + std::to_string(holds) + " hold.") != std::string::npos);
    // text: the quote under the claim, in the claims table; the summary counts both
    const auto text = run_cli({"tour", "--section", "order"}, {"LANG=C"});
    CHECK(text.out.find("  IMPRECISE permuting the input leaves the output strictly unchanged\n"
                        "            the article: “交换输入 token 的顺序，输出严格不变”; meant:") != std::string::npos);
    CHECK(text.out.find("3 of the articles' claims disagree with the measurement and 1 is imprecise") != std::string::npos);
    // HTML: the quote in the claims list
    const std::string page = scratch("tour_order.html");
    REQUIRE(run_cli({"tour", "--section", "order", "--quiet", "--report", page}).status == 0);
    const std::string html = slurp(page);
    CHECK(html.find("<li class=\"check imprecise\" data-claim=\"output_unchanged\"><span class=\"verdict\">IMPRECISE</span>") != std::string::npos);
    CHECK(html.find("<span class=\"quote\">the article: “交换输入 token 的顺序，输出严格不变”") != std::string::npos);
}

}  // namespace

TEST_CASE("tour: --section runs one section")
{
    const auto j = run_json({"tour", "--section", "rope"});
    REQUIRE(j["sections"].size() == 1);
    CHECK(j["sections"][0]["name"] == "rope");
    CHECK(j["sections"][0]["runs"][0]["tensors"][0]["name"] == "q_rot");
}

TEST_CASE("tour: Chinese narration with --lang zh, or from LANG")
{
    auto r = run_cli({"tour", "--section", "order", "--lang", "zh"});
    CHECK(r.status == 0);
    CHECK(r.out.find("顺序盲区") != std::string::npos);
    CHECK(r.out.find("论断汇总") != std::string::npos);
    r = run_cli({"tour", "--section", "order"}, {"LANG=zh_CN.UTF-8"});
    CHECK(r.out.find("顺序盲区") != std::string::npos);
    r = run_cli({"tour", "--section", "order", "--lang", "en"}, {"LANG=zh_CN.UTF-8"});
    CHECK(r.out.find("Order blindness") != std::string::npos);
    const auto j = run_json({"tour", "--section", "mask", "--lang", "zh"});
    CHECK(j["sections"][0]["checks"][0].contains("name"));  // keys stay English
    // Every claim's source in Chinese: titles in 《》, no English connecting words left; names,
    // numbers and code stay as they are. The sources are text, the same in every build: under
    // the sanitizers, where the whole tour takes 13 s, the report test writes it in Chinese
    // for memory safety, and this part is the release build's.
    if (program_sanitized()) return;
    const auto all = run_json({"tour", "--lang", "zh"});
    for (const auto& c : all["claims"]) {
        const std::string source = c["source"];
        CAPTURE(source);
        CHECK(source.find("\"Attention") == std::string::npos);
        CHECK(source.find("\"Transformer") == std::string::npos);
        for (const char* english : {" and ", "docs:", " list", " tips", "(the ", "(its ", " of ", " at ", "misconception", "comment"})
            CHECK(source.find(english) == std::string::npos);
    }
    CHECK(all["claims"][1]["source"] == "《Attention 的两个补丁》学习重点与 §1 开头（它 §1.1 的实验先还原顺序；FAQ Q2 作了更正）");
}

TEST_CASE("tour: errors")
{
    expect_usage_error({"tour", "--section", "nope"}, "unknown --section 'nope'; sections: order, pe, learned, relative, rope");
    // an empty name is no section (it once ran the whole tour)
    expect_usage_error({"tour", "--section", ""}, "--section: an empty name is no section; sections: order, pe, learned, relative, rope");
    expect_usage_error({"tour", "--lang", "fr"}, "--lang");
    expect_usage_error({"tour", "--format", "csv"}, "--format");
    expect_usage_error({"tour", "--seed", "-1"}, "--seed");
    expect_usage_error({"tour", "--max-memory", "0"}, "--max-memory");
}

TEST_CASE("tour: the shared run options: --quiet drops tensors, --tol reaches every section's checks")
{
    const auto r = run_cli({"tour", "--section", "pe", "--quiet"});
    CHECK(r.status == 0);
    CHECK(r.out.find("shape [") == std::string::npos);
    CHECK(r.out.find("PASS  row 0 is exactly") != std::string::npos);
    const auto j = run_json({"tour", "--section", "pe", "--tol", "0"});
    CHECK(j["params"]["tol"] == 0.0);
    CHECK(j["passed"] == false);  // the float32 shift is not exact: --tol 0 fails it
    const auto q = run_json({"tour", "--section", "rope", "--quiet"});
    for (const auto& run : q["sections"][0]["runs"]) CHECK(run["tensors"].empty());
}

namespace {

// "attnlab pe --len 8" -> {"pe", "--len", "8"} (the tour quotes nothing it does not need to).
std::vector<std::string> command_args(const std::string& command)
{
    std::vector<std::string> out;
    std::string word;
    for (char c : command.substr(std::string("attnlab ").size())) {
        if (c == ' ') {
            out.push_back(word);
            word.clear();
        } else if (c != '\'') {
            word += c;
        }
    }
    out.push_back(word);
    return out;
}

// Every check of the tour j (run with the options `extra`) names a command; each distinct
// command, replayed, gives the same figure.
void every_figure_replays(const nlohmann::json& j, const std::vector<std::string>& extra)
{
    std::size_t replayed = 0;
    std::map<std::string, nlohmann::json> replays;  // each distinct command runs once, for all its checks
    for (const auto& section : j["sections"]) {
        CHECK(!section["runs"].empty());
        for (const auto& run : section["runs"]) CHECK(run["params"].is_object());  // every run has its params
        for (const auto& check : section["checks"]) {
            const std::string command = check["command"];
            CAPTURE(command);
            CAPTURE(check["name"]);
            for (const auto& option : extra) CHECK(command.find(option) != std::string::npos);
            if (replays.count(command) == 0) {
                auto replay = command_args(command);
                replay.push_back("--quiet");
                replays[command] = run_json(replay);
            }
            const auto& r = replays[command];
            bool found = false;
            for (const auto& c : r["checks"])
                if (c["name"] == check["name"]) {
                    found = true;
                    CHECK(c["measured"] == check["measured"]);
                }
            CHECK(found);
            ++replayed;
        }
    }
    CHECK(replayed >= 31);
    MESSAGE(replayed << " figures from " << replays.size() << " distinct commands");
    for (const auto& claim : j["claims"]) CHECK(claim["command"].get<std::string>().rfind("attnlab ", 0) == 0);
}

}  // namespace
