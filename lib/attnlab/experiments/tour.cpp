#include "attnlab/experiments/tour.hpp"

#include "attnlab/experiments/command_line.hpp"
#include "attnlab/experiments/decode.hpp"
#include "attnlab/experiments/facts.hpp"
#include "attnlab/experiments/alibi_params.hpp"
#include "attnlab/experiments/attend_params.hpp"
#include "attnlab/experiments/learned.hpp"
#include "attnlab/experiments/mask_params.hpp"
#include "attnlab/experiments/nope.hpp"
#include "attnlab/experiments/pe_params.hpp"
#include "attnlab/experiments/permute_params.hpp"
#include "attnlab/experiments/rope_params.hpp"
#include "attnlab/experiments/shaw.hpp"
#include "attnlab/experiments/t5.hpp"
#include "attnlab/experiments/tour_sources.hpp"
#include "attnlab/experiments/train.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string_view>

namespace attnlab {

namespace {

struct Text {
    const char* en;
    const char* zh;
    std::string operator()(Lang l) const { return l == Lang::zh ? zh : en; }
};

// A claim the tour shows: the check's name, where the claim comes from, and the claim in
// Chinese (English uses the check's own sentence).
struct ClaimRef {
    const char* check;
    const char* source;
    const char* zh;
};

// Collects a section from the reports it runs: a check named here is shown and enters the
// claims table with its source; a failed invariant is shown whether named or not. Each run
// carries the command line that reproduces it.
class SectionBuilder {
public:
    SectionBuilder(TourReport& tour, const RunContext& ctx, std::string name, Text title, Text text)
        : tour_(tour), ctx_(ctx)
    {
        s_.name = std::move(name);
        s_.title = title(tour.lang);
        s_.text = text(tour.lang);
    }

    // A claim names a check the report must have, and the tensor shown must exist: a tour
    // that refers to something the experiment no longer produces fails loudly.
    void use(Report r, std::vector<std::string> args, const std::vector<ClaimRef>& shown, const std::string& tensor = "")
    {
        std::vector<std::string> names;
        for (const auto& ref : shown) names.emplace_back(ref.check);
        require_checks(r, names, s_.name);
        CommandLine context("");
        context.context(ctx_);
        args.insert(args.end(), context.args().begin() + 1, context.args().end());
        TourRun run{command_text(args), r.params, {}, {}, {}, {}};
        if (!tensor.empty()) {
            const Tensor* t = r.find(tensor);
            if (t == nullptr) throw std::logic_error(fmt::format("tour section {}: {} has no tensor {}", s_.name, r.command, tensor));
            run.tensors.push_back(*t);
        }
        for (const auto& c : r.checks) {
            const auto it = std::find_if(shown.begin(), shown.end(), [&](const ClaimRef& e) { return c.name == e.check; });
            if (it != shown.end()) {
                run.checks.push_back(c);
                tour_.claims.push_back({s_.name, source_in(tour_.lang, it->source), tour_.lang == Lang::zh ? it->zh : c.claim, c, run.command});
            } else if (c.role == Role::invariant && !c.passed()) {
                run.checks.push_back(c);
            }
        }
        for (const auto& c : r.untestable)  // a named claim this dtype cannot test: its note instead
            if (std::find(names.begin(), names.end(), c.name) != names.end()) run.notes.push_back(untestable_note(c, ctx_.dtype, tour_.lang));
        s_.passed = s_.passed && r.passed();
        s_.runs.push_back(std::move(run));
        last_tensors_ = std::move(r.tensors);  // for draw()
    }
    // A note of the run used last.
    void note(std::string n) { s_.runs.back().notes.push_back(std::move(n)); }
    // The section's picture: the tensor, or the pair, of the run used last that shows the point.
    void draw(const std::vector<std::string>& names)
    {
        for (const auto& name : names) {
            const auto it = std::find_if(last_tensors_.begin(), last_tensors_.end(), [&](const Tensor& t) { return t.name == name; });
            if (it == last_tensors_.end()) throw std::logic_error(fmt::format("tour section {}: no tensor {} to draw", s_.name, name));
            s_.runs.back().picture.push_back(*it);
        }
    }
    // The section's facts (statements about models and papers) join the facts table.
    void finish()
    {
        for (auto& f : article_facts(s_.name, tour_.lang)) tour_.facts.push_back(std::move(f));
        tour_.sections.push_back(std::move(s_));
    }

private:
    TourReport& tour_;
    RunContext ctx_;
    TourSection s_;
    std::vector<Tensor> last_tensors_;
};

// Each experiment runs with every tensor kept (they are all small) and the tour's seed/dtype.
RunContext all_tensors(const RunContext& ctx)
{
    RunContext c = ctx;
    c.show.clear();
    c.main_only = false;
    return c;
}

void section_order(TourReport& t, const RunContext& ctx)
{
    SectionBuilder s(t, ctx, "order",
                     {"Order blindness: attention alone does not see word order",
                      "顺序盲区：仅靠注意力无法区分词序"},
                     {"Permute the rows of X and self-attention permutes its output rows the same way:\n"
                      "Attn(PX) = P Attn(X). The output is equivariant, not \"strictly unchanged\";\n"
                      "once positions enter (here sinusoidal PE), or a causal mask alone, the order matters.",
                      "打乱 X 的行，自注意力的输出行也按同样方式被打乱：Attn(PX) = P Attn(X)。\n"
                      "输出是等变的，而不是“完全不变”；一旦加入位置信息（这里是正弦位置编码），或仅仅加上因果掩码，顺序就有了意义。"});
    PermuteParams p;
    p.example = true;
    p.no_proj = true;
    s.use(run_permute(p, all_tensors(ctx)), permute_command(p),
          {{"equivariant", "\"Transformer（四）\" §1.1 (Attention(PQ, PK, PV) = P Attention(Q, K, V))", "没有位置信息时 Attn(PX) = P Attn(X)（等变）"},
           {"output_unchanged", "\"Attention 的两个补丁\" 学习重点 and §1 opening (its §1.1 experiment un-permutes; FAQ Q2 corrects it)", "打乱输入后输出“严格不变”"},
           {"equivariant_as_section_1_2_defines", "\"Attention 的两个补丁\" §1.2 (the names invariant and equivariant swapped)",
            "按 §1.2 的定义，自注意力是“置换等变”的：f(PX) = f(X)"},
           {"nn_transformer_adds_sinusoidal_pe", "\"Attention 的两个补丁\", API list (torch.nn.Transformer)",
            "torch.nn.Transformer 默认使用正弦位置编码"}},
          "out_perm");
    s.draw({"weights", "weights_perm"});  // A(PX) = P A(X) P^T: the same pattern, rows and columns permuted
    // §1.1's own experiment is right: with its projections, it un-permutes with argsort first.
    PermuteParams written;
    written.example = true;
    s.use(run_permute(written, all_tensors(ctx)), permute_command(written),
          {{"equivariant", "\"Attention 的两个补丁\" §1.1 (its experiment: out_shuffled[perm.argsort()] against out_original, with W_q, W_k, W_v)",
            "§1.1 的实验：打乱后的输出按 argsort 排回，与原输出一致（带 W_q、W_k、W_v）"},
           {"no_pe_is_bag_of_words_bidirectional", "\"Attention 的两个补丁\" §1 (后果 1: bag-of-tokens) and FAQ Q5",
            "没有位置编码时双向注意力退化成词袋：打乱输入只会同样打乱输出"}});
    // The same claim under a causal mask, with no position encoding at all: the order shows.
    PermuteParams causal;
    causal.example = true;
    causal.mask = MaskKind::causal;
    s.use(run_permute(causal, all_tensors(ctx)), permute_command(causal),
          {{"no_pe_is_bag_of_words_causal", "\"Attention 的两个补丁\" §1 (后果 1: bag-of-tokens) and FAQ Q5",
            "没有位置编码时因果注意力也退化成词袋：打乱输入只会同样打乱输出"}});
    // Why: with equal scores the causal softmax averages i + 1 keys, so the output counts.
    NopeParams nope;
    s.use(run_nope(nope, all_tensors(ctx)), nope_command(nope),
          {{"out_closed_form", "Haviv et al. 2022 (arXiv 2203.16634); Kazemnejad et al. 2023 (arXiv 2305.19466)",
            "v 在第一个 token 上为 1 时 out_i = 1/(i+1)：没有位置编码，每个输出也能说出自己的位置"},
           {"no_pe_is_bag_of_words_causal", "\"Attention 的两个补丁\" §1 (后果 1: bag-of-tokens) and FAQ Q5",
            "没有位置编码时因果注意力也退化成词袋：打乱输入只会同样打乱输出"}},
          "out");
    PermuteParams q;
    q.example = true;
    q.pe = PeKind::sinusoidal;
    s.use(run_permute(q, all_tensors(ctx)), permute_command(q), {{"equivariance_breaks", "\"Attention 的两个补丁\" §1, \"Transformer（四）\" §1", "加入位置信息后 Attn(PX) ≠ P Attn(X)：顺序有了意义"}});
    s.finish();
}

void section_pe(TourReport& t, const RunContext& ctx)
{
    SectionBuilder s(t, ctx, "pe",
                     {"Sinusoidal positional encoding", "正弦位置编码"},
                     {"PE(pos, 2i) = sin(pos w_i), PE(pos, 2i+1) = cos(pos w_i), w_i = 10000^(-2i/D). Row 0 is\n"
                      "[0, 1, 0, 1, ...]; the frequencies fall geometrically; PE(p+k) is a rotation of PE(p) by an\n"
                      "angle that depends on k alone; slicing a precomputed table gives the same rows.",
                      "PE(pos, 2i) = sin(pos w_i)，PE(pos, 2i+1) = cos(pos w_i)，w_i = 10000^(-2i/D)。第 0 行是\n"
                      "[0, 1, 0, 1, ...]；频率按等比数列递减；PE(p+k) 是 PE(p) 旋转一个只取决于 k 的角度；\n"
                      "从预先计算的表中切片得到的行与直接计算的相同。"});
    PeParams p;
    p.len = 8;
    p.dim = 8;
    p.max_len = 64;
    p.embed = true;
    p.batch = 2;
    s.use(run_pe(p, all_tensors(ctx)), pe_command(p),
          {{"row0_exact", "Vaswani et al. 2017, §3.5", "第 0 行恰好是 [0, 1, 0, 1, ...]"},
           {"freq_falling", "Vaswani et al. 2017, §3.5", "频率从低维到高维严格递减"},
           {"relative_shift_linear", "Vaswani et al. 2017, §3.5 (any fixed offset k is a linear function)", "相对位移是线性的：PE(p+k) = M(k) PE(p)，M 只取决于 k"},
           {"slice_matches_direct", "\"Transformer（四）\" §6.2 (self.pe[:, :x.size(1)])", "从预先计算的表中切片与直接计算结果相同"},
           {"slicing_bug_loses_position", "a seq-first module fed batch-first input (pe[:x.size(0)])",
            "在批次轴上切片（对 batch-first 输入用 pe[:x.size(0)]）会让同一序列的所有位置得到相同的编码"},
           {"unsliced_table_shape_error", "\"Transformer（四）\" §6.2 (the notebook that forgot to slice: x + self.pe)",
            "不切片直接相加 x + self.pe，只要 L ≠ max_len 就会出错：形状不匹配，或 L = 1 时悄悄广播成 [B, max_len, D]"}},
          "freq");
    s.draw({"pe"});  // the articles' frequency figure: the first four dimensions against position
    // The longest wavelength and which frequency form is more accurate are measured at the
    // articles' own D = 512.
    PeParams big;
    big.len = 2;
    big.dim = 512;
    s.use(run_pe(big, all_tensors(ctx)), pe_command(big),
          {{"max_wavelength_is_base", "\"Attention 的两个补丁\" §2.1 (10000 is the maximum wavelength)", "10000 就是最长波长（在 2i = d_model - 1 时取到）"},
           {"base_sets_highest_frequency_period", "\"Attention 的两个补丁\" FAQ Q6 (10000 决定了最高频维度的周期)", "10000 决定了最高频维度的周期"},
           {"log_space_more_accurate", "\"Attention 的两个补丁\" §2.3 (tip: compute div_term in log space)", "在对数空间计算 w_i（exp-log）至少与 1 / base^(2i/D)（pow）一样精确"}});
    // The articles' d_model = 4096 (§2.3's own example size), where the gap is widest. In 16
    // bits 2048 frequencies no longer fall strictly (neighbours round to one value), so the
    // table itself is not what the section shows there.
    if (!is_16bit(ctx.dtype)) {
        PeParams wide;
        wide.len = 2;
        wide.dim = 4096;
        s.use(run_pe(wide, all_tensors(ctx)), pe_command(wide),
              {{"log_space_more_accurate", "\"Attention 的两个补丁\" §2.3, at d_model = 4096", "在对数空间计算 w_i（exp-log）至少与 1 / base^(2i/D)（pow）一样精确（d_model = 4096）"}});
    }
    s.finish();
}

void section_learned(TourReport& t, const RunContext& ctx)
{
    SectionBuilder s(t, ctx, "learned", {"Learned absolute positions (BERT, GPT-2)", "可学习的绝对位置（BERT、GPT-2）"},
                     {"A table of max_len rows, one vector per position, added to x: x_pe = x + pos_emb[:L].\n"
                      "Position max_len has no row, so the table stops there; and pos_emb(p).pos_emb(p+k) depends\n"
                      "on p, where the sinusoidal table's dot depends on k alone. A linear map from each row to the\n"
                      "next fits any table of at most D + 1 rows, so \"no M(k)\" holds for tall tables only.",
                      "一张 max_len 行的表，每个位置一个向量，加到 x 上：x_pe = x + pos_emb[:L]。\n"
                      "位置 max_len 没有对应的行，表到此为止；pos_emb(p).pos_emb(p+k) 取决于 p，\n"
                      "而正弦表的点积只取决于 k。至多 D + 1 行的表都有把每行变成下一行的线性映射，\n"
                      "所以“没有 M(k)”只对行数多的表成立。"});
    LearnedParams p;
    p.len = 12;
    p.max_len = 8;
    s.use(run_learned(p, all_tensors(ctx)), learned_command(p),
          {{"learned_table_stops_at_max_len", "\"Transformer（四）\" §9.1; \"Attention 的两个补丁\" FAQ Q4",
            "可学习位置表无法外推到 max_len 之外：位置 max_len 没有对应的行"},
           {"learned_dots_depend_on_position", "\"Attention 的两个补丁\" §2.2 (learned PE 完全没有这个性质) and FAQ Q4",
            "可学习位置表没有 PE(pos+k) = M(k) PE(pos) 的结构：pos_emb(p).pos_emb(p+k) 取决于 p"},
           {"sinusoidal_dots_depend_on_offset_only", "\"Attention 的两个补丁\" §2.2 and FAQ Q4 (sinusoidal PE, side by side)",
            "作为对照，正弦表的 PE(p).PE(p+k) 只取决于 k"},
           {"learned_has_no_linear_shift", "\"Attention 的两个补丁\" §2.2 and FAQ Q4, at 8 rows of 8 (BERT-base: 512 rows of 768)",
            "可学习位置表没有线性的 PE(pos+1) = M(1) PE(pos)：至多 D + 1 行时任何表都有"}},
          "pos_emb");
    s.draw({"pos_emb"});
    // A table with more rows than dimensions, as GPT-2's (1024 rows of 768).
    LearnedParams tall;
    tall.max_len = 32;
    s.use(run_learned(tall, all_tensors(ctx)), learned_command(tall),
          {{"learned_has_no_linear_shift", "\"Attention 的两个补丁\" §2.2 and FAQ Q4, at 32 rows of 8 (GPT-2: 1024 rows of 768)",
            "可学习位置表没有线性的 PE(pos+1) = M(1) PE(pos)：行数多于 D + 1 时成立"}});
    s.finish();
}

void section_relative(TourReport& t, const RunContext& ctx)
{
    SectionBuilder s(t, ctx, "relative", {"Relative positions: Shaw's tables and T5's buckets", "相对位置：Shaw 的表与 T5 的分桶"},
                     {"The distance j - i enters the scores, or the values too, instead of the input. Shaw et al.\n"
                      "add a vector per clipped distance to the keys and to the values (K = 2 here); T5 adds a\n"
                      "learned scalar per head, read from the bucket of j - i: one bucket per near distance,\n"
                      "log-spaced ones up to max_distance, one beyond, each sign its own (8 buckets, D = 16 here).",
                      "距离 j - i 进入得分，或者也进入 value，而不是加在输入上。Shaw 等人为每个截断后的距离\n"
                      "给键和值各加一个向量（这里 K = 2）；T5 给每个头加一个可学习标量，按 j - i 所在的桶取值：\n"
                      "近处一个距离一个桶，远到 max_distance 按对数间隔分桶，再远共用一个，正负各有自己的桶（这里 8 个桶，D = 16）。"});
    ShawParams shaw;
    s.use(run_shaw(shaw, all_tensors(ctx)), shaw_command(shaw),
          {{"rel_index_is_clipped_offset", "Shaw et al. 2018, §3.2 (clip(j - i, k))", "(i, j) 读表的第 clip(j - i, -K, K) + K 行"},
           {"beyond_clip_share_a_row", "Shaw et al. 2018, §3.2 (the maximum relative position clipped to k)", "超过 K 的距离每侧共用一个向量"},
           {"out_matches_definition", "\"Transformer（四）\" §9.2 (the distance enters the scores or the value aggregation)",
            "out_i = sum_j w_ij (v_j + rel_v[rel_index[i, j]])：距离也进入 value 的聚合"},
           {"equivariance_breaks", "\"Attention 的两个补丁\" §1 and \"Transformer（四）\" §9.2", "加入相对位置表示后 Attn(PX) != P Attn(X)：顺序有了意义"}},
          "rel_index");
    T5Params p;
    p.len = 24;
    p.buckets = 8;
    p.max_distance = 16;
    const char* hf = "Raffel et al. 2020 (T5), §2.1; Hugging Face T5Attention._relative_position_bucket";
    s.use(run_t5(p, all_tensors(ctx)), t5_command(p),
          {{"bucket_depends_on_offset_only", "\"Transformer（四）\" §9.2 (the distance of query and key enters the scores)", "桶只取决于 j - i"},
           {"exact_buckets_near", hf, "近处每个距离一个桶"},
           {"log_buckets_far", hf, "远处按对数间隔分桶"},
           {"beyond_max_distance_last_bucket", hf, "max_distance 以外的距离共用最后一个桶"},
           {"sign_told_apart_bidirectional_only", hf, "双向的桶能区分正负"},
           {"far_distances_share_a_bucket", "\"Attention 的两个补丁\" §1 (问题二: distance 5 and distance 10 told apart)",
            "远的距离共用一个桶：距离 5 和 10 分得开，远处的许多距离分不开"}},
          "bucket");
    s.draw({"bucket"});  // exact near the diagonal, logarithmic far from it, constant along diagonals
    s.finish();
}

void section_rope(TourReport& t, const RunContext& ctx)
{
    SectionBuilder s(t, ctx, "rope",
                     {"Rotary position embedding (RoPE)", "旋转位置编码（RoPE）"},
                     {"Each pair of q and k is rotated by m*theta_i at position m, so q_m . k_n = q^T R(n-m) k:\n"
                      "the score depends on the relative position alone. The articles pair (2i, 2i+1); Llama and\n"
                      "Hugging Face pair (i, i+d/2): the same rotation up to a permutation of the dimensions.",
                      "q 和 k 的每一对分量在位置 m 处旋转 m*theta_i，于是 q_m . k_n = q^T R(n-m) k：\n"
                      "得分只取决于相对位置。文章按 (2i, 2i+1) 配对；Llama 和 Hugging Face 按 (i, i+d/2) 配对：\n"
                      "两者是同一个旋转，只差一个维度置换。"});
    RopeParams p;
    p.example = true;
    s.use(run_rope(p, all_tensors(ctx)), rope_command(p), {{"pos0_unchanged", "\"Attention 的两个补丁\" §3.4 (position 0 is not rotated)", "位置 0 保持不变"}}, "q_rot");
    RopeParams r;
    r.len = 64;
    r.dim = 16;
    s.use(run_rope(r, all_tensors(ctx)), rope_command(r),
          {{"dot_equals_relative_rotation", "RoFormer (Su et al. 2021), §3.2", "q_m . k_n = q^T R(n - m) k"},
           {"relative_position_only", "\"Attention 的两个补丁\" §3.3; RoFormer §3.2", "q_m . k_n 只取决于 m - n"},
           {"rope_relative_sign", "\"Attention 的两个补丁\" 学习重点 (R((m-n)θ); its §3.1 derives R((n-m)θ))", "q_m . k_n = q^T R((m - n) theta) k（学习重点的写法）"},
           {"styles_are_permutations", "Hugging Face rotate_half vs RoFormer pairs", "交错配对与半分配对是同一个旋转，只差一个维度置换"},
           {"norm_preserved", "RoFormer §3.2 (rotations are orthogonal)", "旋转保持每个向量的范数"},
           {"rope_absorbs_into_kv_compression", "\"Attention 的两个补丁\" §3.3 后果 3 (KV Cache 压缩); DeepSeek-V2 (arXiv 2405.04434) §2.1.3",
            "RoPE 适合 KV Cache 压缩：键的投影可以并入查询的投影"}});
    s.draw({"dots"});  // q_m . k_n constant along every diagonal: it depends on m - n alone
    // FAQ Q17's figures against Hugging Face's Dynamic NTK formula for a Llama-2 head (d = 128,
    // trained on 4096 positions), fitted over every factor s >= 1 (the run's factor 2 is only
    // reported beside the fit).
    RopeParams ntk;
    ntk.len = 16;
    ntk.dim = 128;
    ntk.scaling.method = RopeScaling::dynamic;
    ntk.scaling.factor = 2.0;
    ntk.scaling.original_len = 4096;
    s.use(run_rope(ntk, all_tensors(ctx)), rope_command(ntk),
          {{"faq_q17_dynamic_ntk_bases", "\"Attention 的两个补丁\" FAQ Q17 (例如: example figures, judged to one significant figure)",
            "Dynamic NTK 在 L = 8192 时把 base 变成 200000，L = 32768 时变成 800000"}});
    s.finish();
}

void section_alibi(TourReport& t, const RunContext& ctx)
{
    SectionBuilder s(t, ctx, "alibi",
                     {"ALiBi: linear biases instead of embeddings", "ALiBi：用线性偏置代替位置编码"},
                     {"Head h adds -m_h * |i - j| to its scores. For 4 heads the slopes are 1/4, 1/16, 1/64,\n"
                      "1/256. The articles' m_h = 2^(-8(h+1)/H) is the paper's text for every H; for a head count\n"
                      "that is not a power of two the paper's reference code (get_slopes, as BLOOM) does otherwise.\n"
                      "BLOOM's key-only bias m*j gives the same softmax rows.",
                      "第 h 个头在得分上加 -m_h * |i - j|。4 个头时斜率为 1/4、1/16、1/64、1/256。\n"
                      "文章的 m_h = 2^(-8(h+1)/H) 对任何 H 都是论文正文的规则；头数不是 2 的幂时，论文的参考代码（get_slopes，与 BLOOM 相同）另有做法。\n"
                      "BLOOM 只依赖键位置的偏置 m*j 给出相同的 softmax 行。"});
    AlibiParams p;
    p.heads = 4;
    s.use(run_alibi(p, all_tensors(ctx)), alibi_command(p),
          {{"slopes_geometric", "Press et al. 2022 (ALiBi), §3", "斜率是等比数列 2^(-8/H), ..., 2^(-8)"},
           {"bias_toeplitz", "Press et al. 2022, §3", "偏置只取决于 i - j"},
           {"bloom_shortcut_equivalent", "BLOOM build_alibi_tensor", "BLOOM 只依赖键位置的偏置 m*j 给出相同的因果 softmax 行"}},
          "slopes");
    s.draw({"bias"});  // -m_h |i - j|, each head on its own scale: the slopes differ 64-fold
    AlibiParams six;
    six.heads = 6;
    s.use(run_alibi(six, all_tensors(ctx)), alibi_command(six),
          {{"simple_formula_matches_paper_text", "\"Attention 的两个补丁\" §4.2 code comment (论文公式) and FAQ Q10; Press et al. 2022, §3",
            "文章的公式 m_h = 2^(-8(h+1)/H) 就是论文正文的规则（H = 6）"},
           {"paper_text_and_reference_code_differ", "the program's demonstration (not an article's claim): Press et al. 2022, §3, against get_slopes (ofirpress/attention_with_linear_biases) and BLOOM",
            "论文正文的公式与其参考代码对 H = 6 给出不同的斜率"},
           {"paper_slopes_monotone", "\"Attention 的两个补丁\" §4.2, get_alibi_slopes comment", "参考代码按奇偶头处理的规则保证 H = 6 时斜率单调"}});
    s.finish();
}

void section_mask(TourReport& t, const RunContext& ctx)
{
    SectionBuilder s(t, ctx, "mask",
                     {"Causal and padding masks", "因果掩码与填充掩码"},
                     {"The decoder adds 0 below and on the diagonal and -inf above it, so every future weight is\n"
                      "exactly 0. key_padding_mask (true = ignore) and SDPA's boolean attn_mask (true = may attend)\n"
                      "mean opposite things. Multiplying scores by a 0/1 mask instead of adding it leaks.",
                      "解码器在对角线及其下方加 0，上方加 -inf，于是所有未来位置的权重恰好为 0。\n"
                      "key_padding_mask（true = 忽略）与 SDPA 的布尔 attn_mask（true = 可以关注）含义相反。\n"
                      "用 0/1 掩码去乘得分而不是相加，会泄漏注意力。"});
    MaskParams causal;
    causal.multiply = true;
    s.use(run_mask(causal, all_tensors(ctx)), mask_command(causal),
          {{"causal_equals_tril", "PyTorch docs: nn.Transformer.generate_square_subsequent_mask", "因果掩码 triu(fill, 1) 与下三角构造逐元素相同"},
           {"rows_sum_to_one", "\"Attention 的两个补丁\" §5.3", "每一行 softmax 权重之和为 1"},
           {"masked_weights_exactly_zero", "\"Attention 的两个补丁\" §5.3", "被掩码的权重恰好为 0，而不只是很小"},
           {"hidden_scores_ignored", "\"Attention 的两个补丁\" §5.1", "改变被掩码键的得分，权重逐位不变"},
           {"multiply_leak_very_small", "\"Attention 的两个补丁\" FAQ Q12 (multiplying leaks \"a small\" probability)", "用 0/1 掩码相乘只泄漏“很小”的概率（以低于 1% 计）"},
           {"transformer_src_mask_default", "\"Attention 的两个补丁\" API list (nn.Transformer: src_mask=causal mask); PyTorch docs: nn.Transformer.forward",
            "torch.nn.Transformer 的 src_mask 就是因果掩码"},
           {"multiply_cannot_mask", "\"Attention 的两个补丁\" §7 tips (不能直接乘 attn，相加才能严格屏蔽)", "掩码不能直接乘到 attn 上，只有相加才能严格屏蔽"}},
          "mask");
    s.draw({"weights", "multiplied_weights"});  // adding -inf zeroes the future; multiplying by 0 leaks onto it
    MaskParams fill;
    fill.fill = "-1e9";
    s.use(run_mask(fill, all_tensors(ctx)), mask_command(fill),
          {{"minus_1e9_avoids_fp16_overflow", "\"Attention 的两个补丁\" §5.3 and FAQ Q12 (-1e9 \"to avoid fp16 overflow\")",
            "用 -1e9 代替 -inf 可以避免 fp16 溢出"}},
          "mask");
    MaskParams pad;
    pad.kind = MaskKind::padding;
    pad.lengths = {3, 5, 2};
    s.use(run_mask(pad, all_tensors(ctx)), mask_command(pad),
          {{"bool_conventions_complement", "PyTorch docs: MultiheadAttention vs scaled_dot_product_attention", "key_padding_mask（true = 忽略）与 attn_mask（true = 可关注）互为补集"},
           {"bool_conventions_same_weights", "PyTorch docs: scaled_dot_product_attention", "两种布尔约定与加性掩码给出相同的权重"},
           {"sdpa_bool_true_masks", "\"Attention 的两个补丁\" §5.3 (bool mask: True = masked)", "scaled_dot_product_attention 的布尔掩码中 True 表示屏蔽"}});
    // -inf against -1e9 on a fully masked row (a sequence of length 0).
    MaskParams empty;
    empty.kind = MaskKind::both;
    empty.lengths = {3, 0};
    empty.softmax = SoftmaxKind::safe;
    const Report e = run_mask(empty, all_tensors(ctx));
    s.use(e, mask_command(empty),
          {{"no_nan_weights", "PyTorch docs: scaled_dot_product_attention (safe softmax since 2.5)", "没有任何注意力权重是 NaN"},
           {"nan_from_exp_overflow", "\"Attention 的两个补丁\" §5.3 (exp(-inf) 在 fp16 下可能溢出)", "-inf 会触发 NaN，因为 exp(-inf) 在 fp16 下可能溢出"}});
    for (const auto& n : e.notes)  // the note on fully masked rows, in the run's language
        if (n.rfind("fully masked", 0) == 0 || n.rfind("完全被屏蔽的行", 0) == 0) s.note(n);
    s.finish();
}

void section_decode(TourReport& t, const RunContext& ctx)
{
    SectionBuilder s(t, ctx, "decode", {"The decoder at inference: a prefill, then a KV cache", "推理时的解码器：先预填充，再用 KV 缓存"},
                     {"A prompt of P tokens fills the cache at once; then each step adds one token and attends to the\n"
                      "cache. With the causal mask every step equals that row of one full pass, provided the new token\n"
                      "is rotated with its own position. A ring buffer is the window mask; StreamingLLM's sinks read\n"
                      "each key at its index in the cache.",
                      "P 个 token 的提示一次性填满缓存；之后每一步加入一个 token，对缓存做注意力。有因果掩码时，\n"
                      "只要新 token 用它自己的位置旋转，每一步都等于一次完整前向的那一行。环形缓冲就是窗口掩码；\n"
                      "StreamingLLM 的 sink 让每个键按它在缓存中的下标读取。"});
    DecodeParams p;
    s.use(run_decode(p, all_tensors(ctx)), decode_command(p),
          {{"steps_match_full_pass", "\"Attention 的两个补丁\" §5.1 and §5.3 (后果 1: what the mask trains is what generation runs)",
            "经过 KV 缓存的每一步都等于完整因果前向的那一行"},
           {"positions_follow_cache_rule", "\"Attention 的两个补丁\" §3.4 (apply_rope; the cache's offset is the \"KV Cache 切片\" it leaves out)",
            "缓存里每个 token 用它自己的位置"}},
          "positions");
    s.draw({"positions"});  // the cache filling one slot a step, each token at its own position (-1: empty)
    DecodeParams ring;
    ring.window = 3;
    s.use(run_decode(ring, all_tensors(ctx)), decode_command(ring),
          {{"ring_buffer_equals_window_mask", "Jiang et al. 2023 (Mistral 7B), §2 (rolling buffer cache)", "W 个槽位的环形缓冲等于窗口掩码"}}, "positions");
    DecodeParams sinks;
    sinks.window = 3;
    sinks.sinks = 1;
    sinks.steps = 4;
    s.use(run_decode(sinks, all_tensors(ctx)), decode_command(sinks),
          {{"sinks_read_cache_positions", "Xiao et al. 2024 (StreamingLLM), §3.2 (positions within the cache)", "sink 与窗口里的键按缓存下标读取"}},
          "positions");
    DecodeParams padded;
    padded.left_pad = {2, 4};
    padded.batch = 2;
    const char* hf = "Hugging Face transformers, prepare_inputs_for_generation (position_ids = attention_mask.cumsum(-1) - 1)";
    s.use(run_decode(padded, all_tensors(ctx)), decode_command(padded),
          {{"left_pad_matches_unpadded", hf, "左填充的序列给出与不填充时相同的行"},
           {"uniform_shift_changes_no_score", hf, "RoPE 下从第一个填充开始计位置也得到相同输出：整体平移不改变得分"}},
          "positions");
    s.finish();
}

void section_encdec(TourReport& t, const RunContext& ctx)
{
    SectionBuilder s(t, ctx, "encoder_decoder",
                     {"Encoder and decoder attention", "编码器与解码器注意力"},
                     {"One formula, three uses: without a mask (encoder) every output row depends on every\n"
                      "position; with the causal mask (decoder) row i ignores the future; cross-attention takes\n"
                      "its keys and values from another sequence of another length.",
                      "同一个公式，三种用法：不加掩码（编码器）时每个输出行都依赖所有位置；\n"
                      "加因果掩码（解码器）时第 i 行忽略未来；交叉注意力的键和值来自另一条长度不同的序列。"});
    AttendParams enc;
    s.use(run_attend(enc, all_tensors(ctx)), attend_command(enc),
          {{"unmasked_rows_change", "\"Attention 的两个补丁\" §6.1", "不加掩码时，改变位置 i 之后的 X 会改变前面的输出行（编码器看得到未来）"},
           {"teacher_forcing_needs_mask", "\"Attention 的两个补丁\" §5.3 后果 3 (IMPRECISE: the unmasked pass runs and gives every row, but leaks the future, its 后果 1)", "没有掩码就无法做 teacher forcing，也无法并行训练"}});
    AttendParams dec;
    dec.mask = MaskKind::causal;
    s.use(run_attend(dec, all_tensors(ctx)), attend_command(dec),
          {{"causal_rows_unchanged", "\"Attention 的两个补丁\" §6.1", "加因果掩码时，改变位置 i 之后的 X，前面的输出行逐位不变"},
           {"main_matches_reference", "the program's reference implementation", "主实现与逐循环的参考实现一致"}},
          "weights");
    s.draw({"weights"});  // the decoder's weights: zero above the diagonal
    AttendParams cross;
    cross.kv_len = 9;
    s.use(run_attend(cross, all_tensors(ctx)), attend_command(cross), {{"rows_sum_to_one", "\"Attention 的两个补丁\" §6.2", "每一行 softmax 权重之和为 1"}});
    AttendParams cross_rope = cross;
    cross_rope.pe = PeKind::rope;
    s.use(run_attend(cross_rope, all_tensors(ctx)), attend_command(cross_rope),
          {{"cross_attention_positions", "\"Attention 的两个补丁\" §6 小结 (三套位置编码都能用于三种 Attention); the §6.1 table is right for an added PE",
            "三套位置编码方案都能用于三种 Attention：RoPE 在交叉注意力中与自注意力中一样有效"}});
    s.finish();
}

// A reduced `train --compare-schemes` (about 6 s on two cores): six decoders trained with the
// same seed and batches, evaluated at 1x, 2x and 4x their training length. Training runs in
// float32 or float64, so a 16-bit tour trains in float32 (and its command says so).
void section_length(TourReport& t, const RunContext& ctx)
{
    RunContext trained = all_tensors(ctx);
    if (ctx.dtype != DType::float64) trained.dtype = DType::float32;
    SectionBuilder s(t, trained, "length",
                     {"Length: what each scheme does past its training length", "长度：各方案在训练长度之外的表现"},
                     {"Six small decoders learn k-back (repeat the previous token) at length 8, one per position\n"
                      "scheme (T5's learned bias among them), from the same seed and data, then run at 8, 16 and 32.\n"
                      "A learned table has no row past its training length; the others run, and the table shows how\n"
                      "well. One seed at teaching scale: no claim here decides the exit status; the articles' are judged\n"
                      "from the table, and the papers' findings stand beside it with where the settings differ.",
                      "六个小解码器在长度 8 上学习 k-back（重复前一个词元），每种位置方案一个（包括 T5 的可学习偏置），\n"
                      "种子与数据相同，然后在 8、16、32 上运行。可学习位置表在训练长度之外没有对应的行；其他方案能运行，\n"
                      "表格显示效果。这是教学规模下的单个种子：这里的论断都不决定退出状态；文章的论断按表格判定，\n"
                      "论文的结论列在旁边，并说明设置的不同。"});
    TrainParams p;
    // 500 steps: every scheme learns the task at length 8 with the default seed (at 300,
    // sinusoidal scored 0.42 there, and a fall from it would say nothing)
    p.compare = true, p.steps = 500, p.d_model = 32, p.train_len = 8, p.seeds = 1;
    Report trained_run = run_train(p, trained);
    const std::vector<std::string> notes = trained_run.notes;
    s.use(std::move(trained_run), command_of(train_experiment(), p),
          {{"alibi_extrapolates_best", "\"Attention 的两个补丁\" §4.3 and FAQ Q18; Press et al. 2022, Fig. 1", "ALiBi 在训练长度之外比正弦与可学习位置编码保持得更好"},
           {"learned_stops_at_max_len", "\"Transformer（四）\" §9.1", "可学习位置表到 max_len 为止，之外无法运行"},
           {"sinusoidal_does_not_extrapolate", "\"Transformer（四）\" §10, misconception 2", "正弦位置编码能算出任何位置，但模型的准确率带不到训练长度之外"},
           {"nope_learns_k_back", "\"Attention 的两个补丁\" FAQ Q5", "没有位置编码，解码器在因果掩码下仍能学会 k-back"},
           {"sinusoidal_extrapolates_easily", "\"Attention 的两个补丁\" §2.2 (外推…更容易)", "使用正弦位置编码，模型在比训练更长的序列上保持准确率"},
           {"rope_weaker_on_short_sequences", "\"Attention 的两个补丁\" §4.3 table (contradicted by its own FAQ Q16)", "RoPE 在短序列上略弱于正弦位置编码"},
           {"alibi_extrapolates_because_relative", "\"Attention 的两个补丁\" FAQ Q18 (the bias depends on i - j alone)", "得分只取决于 i - j 的方案就能像 ALiBi 一样外推：RoPE 也应保持准确率"}},
          "extrapolation");
    for (const auto& n : notes)  // the papers' findings beside this table (train's findings note)
        if (n.rfind("published:", 0) == 0 || n.rfind("已发表：", 0) == 0) s.note(n);
    if (trained.dtype != ctx.dtype) {
        s.note(t.lang == Lang::zh ? "训练以 float32 运行：16 位训练是另一套混合精度方案" : "trained in float32: 16-bit training is a mixed-precision recipe of its own");
    }
    s.draw({"extrapolation"});
    s.finish();
}

using SectionFn = void (*)(TourReport&, const RunContext&);
const std::vector<std::pair<std::string, SectionFn>>& sections()
{
    static const std::vector<std::pair<std::string, SectionFn>> all = {
        {"order", section_order}, {"pe", section_pe},     {"learned", section_learned}, {"relative", section_relative}, {"rope", section_rope},
        {"alibi", section_alibi}, {"mask", section_mask}, {"decode", section_decode}, {"encoder_decoder", section_encdec},
        {"length", section_length}};
    return all;
}

}  // namespace

std::vector<std::string> tour_section_names()
{
    std::vector<std::string> names;
    for (const auto& [name, fn] : sections()) names.push_back(name);
    return names;
}

TourReport run_tour(const TourParams& p, const RunContext& ctx)
{
    const auto names = tour_section_names();
    if (!p.section.empty() && std::find(names.begin(), names.end(), p.section) == names.end()) {
        throw InputError(fmt::format("unknown --section '{}'; sections: {}", p.section, fmt::join(names, ", ")));
    }
    TourReport t;
    t.lang = p.lang;
    t.params = {{"seed", ctx.seed},
                {"dtype", std::string(name_of(ctx.dtype))},
                {"tol", ctx.tol ? ParamValue(*ctx.tol) : ParamValue()},
                {"lang", std::string(name_of(p.lang))},
                {"section", p.section.empty() ? ParamValue() : ParamValue(p.section)}};
    // Sections are numbered by their place in the tour, so a section added between two others
    // renumbers the rest and a single --section keeps its number.
    for (std::size_t i = 0; i < sections().size(); ++i) {
        const auto& [name, fn] = sections()[i];
        if (!p.section.empty() && p.section != name) continue;
        fn(t, ctx);
        t.sections.back().title = fmt::format("{}. {}", i + 1, t.sections.back().title);
    }
    return t;
}

void require_checks(const Report& r, const std::vector<std::string>& names, const std::string& section)
{
    for (const auto& name : names) {
        const bool untestable = std::any_of(r.untestable.begin(), r.untestable.end(), [&](const Check& c) { return c.name == name; });
        if (r.find_check(name) == nullptr && !untestable) {  // one this dtype cannot test shows its note
            throw std::logic_error(fmt::format("tour section {}: {} has no check {}", section, r.command, name));
        }
    }
}

}  // namespace attnlab
