#include "attnlab/exercise/catalogue.hpp"
#include "attnlab/exercise/build_with.hpp"

#include "attnlab/core/rng.hpp"
#include "attnlab/experiments/alibi.hpp"
#include "attnlab/experiments/attend.hpp"
#include "attnlab/experiments/mask.hpp"
#include "attnlab/experiments/pe.hpp"
#include "attnlab/experiments/permute.hpp"
#include "attnlab/experiments/rope.hpp"
#include "attnlab/learner/against.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab::exercise_detail {

namespace {

// --- the texts the exercises share ---

const char* const kAttentionEn =
    "Compute multi-head self-attention (Vaswani et al. 2017, \"Attention Is All You Need\", §3.2.1-3.2.2; "
    "\"Attention 的两个补丁\" §1.1 and §6) with H = {heads} heads of d = E/H = {head_dim} dimensions:\n\n"
    "1. Q = x W_q, K = x W_k, V = x W_v. The weights are stored **[in, out]** ([E, E]), so it is `x @ W` as "
    "given: not nn.Linear's [out, in] layout, which would need the transpose.\n"
    "2. Split the last axis into heads: columns h*d ... (h+1)*d - 1 belong to head h (reshape to "
    "[..., L, H, d], then move the head axis before the positions).\n"
    "3. Per head: weights = softmax(Q_h K_h^T / sqrt(d)), the softmax over the keys (the last axis); "
    "out_h = weights V_h.\n"
    "4. Merge the heads back: column h*d + c of the result is column c of out_h.\n\n"
    "There is no output projection W_o.";
const char* const kAttentionZh =
    "计算多头自注意力（Vaswani et al. 2017，\"Attention Is All You Need\" §3.2.1-3.2.2；《Attention 的两个补丁》"
    "§1.1 与 §6），H = {heads} 个头，每个头 d = E/H = {head_dim} 维：\n\n"
    "1. Q = x W_q，K = x W_k，V = x W_v。权重按 **[in, out]**（[E, E]）存放，所以直接 `x @ W`；"
    "不是 nn.Linear 的 [out, in] 布局（那样需要转置）。\n"
    "2. 把最后一个轴拆成多个头：第 h*d ... (h+1)*d - 1 列属于头 h（reshape 成 [..., L, H, d]，再把头轴移到位置轴之前）。\n"
    "3. 每个头：weights = softmax(Q_h K_h^T / sqrt(d))，softmax 沿键（最后一个轴）计算；out_h = weights V_h。\n"
    "4. 把各头合并回去：结果的第 h*d + c 列是 out_h 的第 c 列。\n\n"
    "没有输出投影 W_o。";
const char* const kAttentionDocEn =
    "x: [B, L, E] (batch, pos, dim); w_q, w_k, w_v: [E, E] (in, out); H heads.\n"
    "    Returns out_merged: [B, L, E] (batch, pos, dim).";
const char* const kAttentionDocZh =
    "x: [B, L, E]（batch, pos, dim）；w_q、w_k、w_v: [E, E]（in, out）；H 个头。\n"
    "    返回 out_merged: [B, L, E]（batch, pos, dim）。";

const char* const kRopeDocEn = "q: [batch, head, pos, dim]; position m is the index along pos, from 0.\n    Returns q rotated: the same shape.";
const char* const kRopeDocZh = "q: [batch, head, pos, dim]；位置 m 是沿 pos 轴的下标，从 0 开始。\n    返回旋转后的 q，形状不变。";

const char* const kRopeCommonEn =
    "Rotate q with RoPE (Su et al. 2021, RoFormer §3.2-3.4; \"Attention 的两个补丁\" §3.1-3.4). Position m "
    "turns each pair of dimensions by the angle m theta_i, theta_i = 10000^(-2i/d), i = 0 ... d/2 - 1, "
    "d = {dim}. q is given, shape [batch, head, pos, dim] = [1, {heads}, {len}, {dim}]; position m is "
    "the index along pos, counted from 0. The answer q_rot has q's shape.\n\n";
const char* const kRopeCommonZh =
    "用 RoPE 旋转 q（Su et al. 2021，RoFormer §3.2-3.4；《Attention 的两个补丁》§3.1-3.4）。位置 m 把每一对维度"
    "旋转角度 m theta_i，theta_i = 10000^(-2i/d)，i = 0 ... d/2 - 1，d = {dim}。q 已给出，形状 [batch, head, pos, dim] "
    "= [1, {heads}, {len}, {dim}]；位置 m 是沿 pos 轴的下标，从 0 开始。答案 q_rot 与 q 形状相同。\n\n";

// --- the exercises ---

ExerciseDef pe_exercise()
{
    ExerciseText t;
    t.task_en =
        "Build the sinusoidal positional-encoding table of Vaswani et al. 2017 (\"Attention Is All You Need\", "
        "§3.5), as \"Attention 的两个补丁\" §2.1 and \"Transformer（四）\" §3 write it:\n\n"
        "    PE(pos, 2i)   = sin(pos / 10000^(2i/D))\n    PE(pos, 2i+1) = cos(pos / 10000^(2i/D))\n\n"
        "for positions pos = 0 ... L - 1 and pairs i = 0 ... D/2 - 1, with L = {len} and D = {dim}. "
        "The answer is the table pe, shape [L, D] = [{len}, {dim}], axes (pos, dim): row pos encodes position pos.";
    t.task_zh =
        "构造 Vaswani et al. 2017（\"Attention Is All You Need\" §3.5）的正弦位置编码表，即《Attention 的两个补丁》§2.1 "
        "和《Transformer（四）》§3 给出的公式：\n\n"
        "    PE(pos, 2i)   = sin(pos / 10000^(2i/D))\n    PE(pos, 2i+1) = cos(pos / 10000^(2i/D))\n\n"
        "位置 pos = 0 ... L - 1，频率对 i = 0 ... D/2 - 1，L = {len}，D = {dim}。答案是表 pe，形状 [L, D] = [{len}, {dim}]，"
        "轴为 (pos, dim)：第 pos 行是位置 pos 的编码。";
    t.constants = {{"L", "len"}, {"D", "dim"}};
    t.signature = "def sinusoidal_table(L, D):";
    t.doc_en = "Returns pe: [L, D] (pos, dim), PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(...).";
    t.doc_zh = "返回 pe: [L, D]（pos, dim），PE(pos, 2i) = sin(pos / 10000^(2i/D))，PE(pos, 2i+1) = cos(...)。";
    t.stub = "return np.zeros((L, D))";
    t.call = "sinusoidal_table(L, D)";
    return {{"pe", "pe", "the sinusoidal table [L, D]", "正弦位置编码表 [L, D]", {"len", "dim"}, {{"len", 16}, {"dim", 16}},
             {{"len", {1, 32}}, {"dim", {2, 32}}}},
            t,
            [](MadeExercise& m, const Given& given) {
                PeParams p;
                p.len = size(m, "len");
                p.dim = size(m, "dim");
                m.command = pe_command(p);
                build_with(m, pe_experiment(), p, "pe", {}, given);
            }};
}

ExerciseDef pe_module_exercise()
{
    ExerciseText t;
    t.task_en =
        "Write the forward of the articles' PositionalEncoding module (\"Transformer（四）\" §6, and §6.2 on why "
        "it must slice). The module builds the sinusoidal table of §3 once, for max_len = {max_len} positions "
        "(PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(pos / 10000^(2i/D)), as a buffer), and its "
        "forward adds the first L rows to the batch-first input: h = x + pe[:L], broadcast over the batch. "
        "x is given, shape [B, L, D] = [{batch}, {len}, {dim}] (batch, pos, dim). x is not scaled. The answer h "
        "has x's shape.";
    t.task_zh =
        "写出文中 PositionalEncoding 模块的 forward（《Transformer（四）》§6，以及 §6.2 为什么必须切片）。模块一次性构造 "
        "§3 的正弦表，共 max_len = {max_len} 个位置（PE(pos, 2i) = sin(pos / 10000^(2i/D))，PE(pos, 2i+1) = "
        "cos(pos / 10000^(2i/D))，作为 buffer），forward 把前 L 行加到 batch 在前的输入上：h = x + pe[:L]，沿 batch 广播。"
        "x 已给出，形状 [B, L, D] = [{batch}, {len}, {dim}]（batch, pos, dim）。x 不缩放。答案 h 与 x 形状相同。";
    t.constants = {{"MAX_LEN", "max_len"}};
    t.signature = "def positional_encoding_forward(x, max_len):";
    t.doc_en = "x: [B, L, D] (batch, pos, dim). Builds the table [max_len, D] and returns h = x + table[:L]: [B, L, D].";
    t.doc_zh = "x: [B, L, D]（batch, pos, dim）。构造 [max_len, D] 的表，返回 h = x + table[:L]：[B, L, D]。";
    t.stub = "return np.zeros_like(x)";
    t.call = "positional_encoding_forward(x, MAX_LEN)";
    return {{"pe-module", "pe", "the module's forward, x + PE sliced to L, on given x [batch, L, D]",
             "模块的 forward：在给定的 x [batch, L, D] 上加切片到 L 的 PE", {"batch", "len", "dim"}, {{"batch", 2}, {"len", 6}, {"dim", 8}},
             {{"batch", {1, 3}}, {"len", {1, 16}}, {"dim", {2, 16}}}},
            t,
            [](MadeExercise& m, const Given& given) {
                m.sizes["max_len"] = std::max(64L, size(m, "len"));
                PeParams p;
                p.len = size(m, "len");
                p.dim = size(m, "dim");
                p.max_len = size(m, "max_len");
                p.embed = true;
                p.batch = size(m, "batch");
                m.command = pe_command(p);
                build_with(m, pe_experiment(), p, "h", {"x"}, given);
            }};
}

ExerciseDef rope_exercise(RopeStyle style)
{
    const bool half = style == RopeStyle::half;
    ExerciseText t;
    t.task_en = kRopeCommonEn;
    t.task_zh = kRopeCommonZh;
    if (half) {
        t.task_en +=
            "Here the pairs are (i, i + d/2), as Hugging Face's `rotate_half` builds them (GPT-NeoX, Llama in "
            "transformers, ggml's NeoX mode): with c = cos(m theta_i) and s = sin(m theta_i),\n\n"
            "    q'[i]       = q[i] c - q[i + d/2] s\n    q'[i + d/2] = q[i] s + q[i + d/2] c\n\n"
            "that is, q_rot = q * cos + rotate_half(q) * sin with rotate_half(q) = concat(-q[d/2:], q[:d/2]) and "
            "the d/2 angles repeated twice: [theta_0 ... theta_(d/2-1), theta_0 ... theta_(d/2-1)].";
        t.task_zh +=
            "这里的配对是 (i, i + d/2)，即 Hugging Face 的 `rotate_half`（GPT-NeoX、transformers 中的 Llama、ggml 的 NeoX "
            "模式）：记 c = cos(m theta_i)，s = sin(m theta_i)，\n\n"
            "    q'[i]       = q[i] c - q[i + d/2] s\n    q'[i + d/2] = q[i] s + q[i + d/2] c\n\n"
            "也就是 q_rot = q * cos + rotate_half(q) * sin，其中 rotate_half(q) = concat(-q[d/2:], q[:d/2])，d/2 个角度重复两次："
            "[theta_0 ... theta_(d/2-1), theta_0 ... theta_(d/2-1)]。";
    } else {
        t.task_en +=
            "Here the pairs are interleaved, dimensions (2i, 2i+1), as RoFormer, the articles, GPT-J and Meta's "
            "LLaMA code (as complex numbers) pair them: with c = cos(m theta_i) and s = sin(m theta_i),\n\n"
            "    q'[2i]   = q[2i] c - q[2i+1] s\n    q'[2i+1] = q[2i] s + q[2i+1] c";
        t.task_zh +=
            "这里的配对是交错的 (2i, 2i+1) 维，与 RoFormer、本文、GPT-J 以及 Meta 的 LLaMA 代码（以复数形式）相同："
            "记 c = cos(m theta_i)，s = sin(m theta_i)，\n\n"
            "    q'[2i]   = q[2i] c - q[2i+1] s\n    q'[2i+1] = q[2i] s + q[2i+1] c";
    }
    t.signature = "def rope(q, base=10000.0):";
    t.doc_en = kRopeDocEn;
    t.doc_zh = kRopeDocZh;
    t.stub = "return np.zeros_like(q)";
    t.call = "rope(q)";
    ExerciseInfo info{half ? "rope-half" : "rope-interleaved", "rope",
                      half ? "q rotated with rotate_half pairs (i, i+d/2)" : "q rotated with pairs (2i, 2i+1)",
                      half ? "用 rotate_half 配对 (i, i+d/2) 旋转 q" : "用配对 (2i, 2i+1) 旋转 q",
                      {"len", "dim", "heads"},
                      {{"len", 8}, {"dim", 8}, {"heads", 2}},
             {{"len", {1, 16}}, {"dim", {2, 16}}, {"heads", {1, 4}}}};
    return {info, t, [style](MadeExercise& m, const Given& given) {
                RopeParams p;
                p.len = size(m, "len");
                p.dim = size(m, "dim");
                p.heads = size(m, "heads");
                p.style = style;
                m.command = rope_command(p);
                build_with(m, rope_experiment(), p, "q_rot", {"q"}, given);
            }};
}

const char* const kSlopesEn =
    "ALiBi (Press et al. 2022, \"Train Short, Test Long\", §3) gives head h a fixed slope m_h. When the head "
    "count H is a power of two, the slopes are the geometric sequence 2^(-8/H), 2^(-16/H), ..., 2^(-8), that "
    "is m_h = 2^(-8(h+1)/H). The paper's text states that sequence for every H, and \"Attention 的两个补丁\" §4.2 "
    "uses it for every H, but the paper's reference code "
    "(get_slopes in ofirpress/attention_with_linear_biases; BLOOM's build_alibi_tensor computes the same) does "
    "something else when H is not a power of two: it takes the slopes of the largest power of two c below H, "
    "then appends every other slope of 2c (the slopes of 2c at indices 0, 2, 4, ...) until there are H.";
const char* const kSlopesZh =
    "ALiBi（Press et al. 2022，\"Train Short, Test Long\" §3）给每个头 h 一个固定的斜率 m_h。头数 H 是 2 的幂时，"
    "斜率是等比数列 2^(-8/H), 2^(-16/H), ..., 2^(-8)，即 m_h = 2^(-8(h+1)/H)。《Attention 的两个补丁》§4.2 对任何 H "
    "都用这个公式（论文正文也这样写），但论文的参考代码（ofirpress/attention_with_linear_biases 中的 get_slopes；BLOOM 的 build_alibi_tensor "
    "算法相同）在 H 不是 2 的幂时另有做法：先取小于 H 的最大 2 的幂 c 的斜率，再依次补上 2c 的斜率中下标为 0, 2, 4, ... "
    "的那些，直到共有 H 个。";

ExerciseDef alibi_slopes_exercise()
{
    ExerciseText t;
    t.task_en = std::string(kSlopesEn) + "\n\nCompute the reference code's slopes (attnlab's --slopes reference-code) for H = {heads}. The answer slopes has shape [H] = [{heads}], axis (head).";
    t.task_zh = std::string(kSlopesZh) + "\n\n计算 H = {heads} 时参考代码的斜率（attnlab 的 --slopes reference-code）。答案 slopes 的形状为 [H] = [{heads}]，轴为 (head)。";
    t.constants = {{"H", "heads"}};
    t.signature = "def alibi_slopes(H):";
    t.doc_en = "Returns the reference code's slopes m_h for H heads: [H] (head).";
    t.doc_zh = "返回 H 个头时参考代码的斜率 m_h：[H]（head）。";
    t.stub = "return np.zeros(H)";
    t.call = "alibi_slopes(H)";
    return {{"alibi-slopes", "alibi", "the reference code's slopes for a head count that is not a power of two",
             "头数不是 2 的幂时参考代码的斜率", {"heads"}, {{"heads", 6}},
             {{"heads", {3, 24}}}},
            t,
            [](MadeExercise& m, const Given& given) {
                const long H = size(m, "heads");
                if (H >= 1 && (H & (H - 1)) == 0) {
                    throw InputError(fmt::format("exercise alibi-slopes is about a head count that is not a power of two; "
                                                 "--heads {} is one (try 6 or 12)", H));
                }
                AlibiParams p;
                p.heads = H;
                m.command = alibi_command(p);
                build_with(m, alibi_experiment(), p, "slopes", {}, given);
            }};
}

ExerciseDef alibi_bias_exercise()
{
    ExerciseText t;
    t.task_en =
        "ALiBi adds to head h's score between query i and key j the bias -m_h |i - j|: \"Attention 的两个补丁\" §4.1 "
        "writes this symmetric form (for an encoder; the paper's causal form is -m_h (i - j) for j <= i). Use the "
        "reference code's slopes m_h (Press et al. 2022, its get_slopes: for a power of two H, m_h = 2^(-8(h+1)/H); "
        "for other H, see the alibi-slopes exercise). H = {heads}, L = {len}. The answer bias has shape "
        "[H, L, L] = [{heads}, {len}, {len}], axes (head, query, key).";
    t.task_zh =
        "ALiBi 给头 h 中查询 i 与键 j 的得分加上偏置 -m_h |i - j|：《Attention 的两个补丁》§4.1 写的是这种对称形式（用于编码器；"
        "论文的因果形式是 j <= i 时的 -m_h (i - j)）。斜率 m_h 用参考代码的（Press et al. 2022 的 get_slopes：H 为 2 的幂时 "
        "m_h = 2^(-8(h+1)/H)；其他 H 见练习 alibi-slopes）。H = {heads}，L = {len}。答案 bias 的形状为 [H, L, L] = "
        "[{heads}, {len}, {len}]，轴为 (head, query, key)。";
    t.constants = {{"H", "heads"}, {"L", "len"}};
    t.signature = "def alibi_bias(H, L):";
    t.doc_en = "Returns bias: [H, L, L] (head, query, key), bias[h, i, j] = -m_h |i - j| with the reference code's slopes.";
    t.doc_zh = "返回 bias: [H, L, L]（head, query, key），bias[h, i, j] = -m_h |i - j|，斜率用参考代码的。";
    t.stub = "return np.zeros((H, L, L))";
    t.call = "alibi_bias(H, L)";
    return {{"alibi-bias", "alibi", "the symmetric bias -m|i-j| [H, L, L] with the reference code's slopes",
             "对称偏置 -m|i-j| [H, L, L]，用参考代码的斜率", {"heads", "len"}, {{"heads", 6}, {"len", 8}},
             {{"heads", {1, 12}}, {"len", {1, 16}}}},
            t,
            [](MadeExercise& m, const Given& given) {
                AlibiParams p;
                p.heads = size(m, "heads");
                p.len = size(m, "len");
                m.command = alibi_command(p);
                build_with(m, alibi_experiment(), p, "bias", {}, given);
            }};
}

ExerciseDef causal_mask_exercise()
{
    ExerciseText t;
    t.task_en =
        "In a decoder, query i may attend to keys j <= i only (\"Attention 的两个补丁\" §5.1-5.3). Build the additive "
        "causal mask PyTorch's nn.Transformer.generate_square_subsequent_mask returns: 0 where key j <= query i, "
        "-inf where j > i (torch.triu of a matrix of -inf with diagonal=1). It is added to the scores before the "
        "softmax. L = {len}. The answer mask has shape [L, L] = [{len}, {len}], axes (query, key).";
    t.task_zh =
        "在解码器中，查询 i 只能关注 j <= i 的键（《Attention 的两个补丁》§5.1-5.3）。构造 PyTorch 的 "
        "nn.Transformer.generate_square_subsequent_mask 返回的加性因果掩码：键 j <= 查询 i 处为 0，j > i 处为 -inf"
        "（对全 -inf 矩阵取 torch.triu，diagonal=1）。它在 softmax 之前加到得分上。L = {len}。答案 mask 的形状为 "
        "[L, L] = [{len}, {len}]，轴为 (query, key)。";
    t.constants = {{"L", "len"}};
    t.signature = "def causal_mask(L):";
    t.doc_en = "Returns the additive mask: [L, L] (query, key), 0 where the key may be seen, -inf where not.";
    t.doc_zh = "返回加性掩码：[L, L]（query, key），可见处为 0，不可见处为 -inf。";
    t.stub = "return np.zeros((L, L))";
    t.call = "causal_mask(L)";
    return {{"causal-mask", "mask", "the additive causal mask [L, L]", "加性因果掩码 [L, L]", {"len"}, {{"len", 6}},
             {{"len", {1, 16}}}},
            t,
            [](MadeExercise& m, const Given& given) {
                MaskParams p;
                p.kind = MaskKind::causal;
                p.len = size(m, "len");
                m.command = mask_command(p);
                build_with(m, mask_experiment(), p, "mask", {}, given);
            }};
}

// Lengths 1..L drawn from the seed, the longest always L (so that L is the padded length) and
// the shortest at most L - 2: then the untouched starter (nothing padded) is wrong, and so is
// every catalogued mistake in its own way (padding one late still pads a key somewhere).
std::vector<long> drawn_lengths(long batch, long len, std::uint64_t seed)
{
    if (batch < 2 || len < 3) {
        throw InputError(fmt::format("padding-mask needs --batch 2 or more and --len 3 or more (got {} and {}): with fewer, "
                                     "nothing or only the last key is padded, and a mask that pads nothing would pass",
                                     batch, len));
    }
    Rng rng(seed, stream::lengths);
    std::vector<long> lengths;
    for (long b = 0; b < batch; ++b) lengths.push_back(1 + static_cast<long>(rng.below(static_cast<std::uint32_t>(len))));
    const auto longest = rng.below(static_cast<std::uint32_t>(batch));
    lengths[longest] = len;
    const std::size_t short_one = (longest + 1 + rng.below(static_cast<std::uint32_t>(batch - 1))) % static_cast<std::size_t>(batch);
    lengths[short_one] = std::min(lengths[short_one], len - 2);
    return lengths;
}

ExerciseDef padding_mask_exercise()
{
    ExerciseText t;
    t.task_en =
        "A batch of B = {batch} sequences is padded to L = {len} positions; lengths (shape [B], given) holds each "
        "sequence's true length. Build key_padding_mask as nn.MultiheadAttention and nn.Transformer take it "
        "(\"Attention 的两个补丁\" §5.4; PyTorch's documentation of key_padding_mask): a boolean [B, L], **True at "
        "the padded keys, which attention ignores** (key j of sequence b is padding when j >= lengths[b]), False "
        "elsewhere. The answer key_padding_mask has shape [B, L] = [{batch}, {len}], axes (batch, key), dtype bool.";
    t.task_zh =
        "一批 B = {batch} 个序列被填充到 L = {len} 个位置；lengths（形状 [B]，已给出）是每个序列的真实长度。按 "
        "nn.MultiheadAttention 和 nn.Transformer 接受的方式构造 key_padding_mask（《Attention 的两个补丁》§5.4；PyTorch "
        "文档中的 key_padding_mask）：布尔 [B, L]，**在填充的键处为 True，注意力忽略这些键**（j >= lengths[b] 时序列 b 的键 j "
        "是填充），其余为 False。答案 key_padding_mask 的形状为 [B, L] = [{batch}, {len}]，轴为 (batch, key)，类型 bool。";
    t.constants = {{"L", "len"}};
    t.signature = "def key_padding_mask(lengths, L):";
    t.doc_en = "lengths: [B] (batch). Returns key_padding_mask: [B, L] (batch, key), bool, True at padding.";
    t.doc_zh = "lengths: [B]（batch）。返回 key_padding_mask: [B, L]（batch, key），bool，填充处为 True。";
    t.stub = "return np.zeros((len(lengths), L), dtype=bool)";
    t.call = "key_padding_mask(lengths, L)";
    return {{"padding-mask", "mask", "key_padding_mask from given lengths", "由给定的长度构造 key_padding_mask",
             {"batch", "len"}, {{"batch", 3}, {"len", 6}},
             {{"batch", {2, 6}}, {"len", {3, 16}}}},
            t,
            [](MadeExercise& m, const Given& given) {
                MaskParams p;
                p.kind = MaskKind::padding;
                p.len = size(m, "len");
                p.lengths = drawn_lengths(size(m, "batch"), size(m, "len"), m.seed);
                m.command = mask_command(p);
                const Tensor lengths{"lengths", {"batch"}, Elem::index, {p.lengths.size()}, std::vector<double>(p.lengths.begin(), p.lengths.end())};
                build_with(m, mask_experiment(), p, "key_padding_mask", {}, given, {lengths});
            }};
}

ExerciseDef attention_exercise(bool causal)
{
    ExerciseText t;
    t.task_en = std::string(kAttentionEn) +
                (causal ? " Add a causal mask: query i sees keys j <= i only, by adding -inf to the scores where j > i "
                          "before the softmax (\"Attention 的两个补丁\" §5.3)."
                        : " There is no mask.") +
                "\n\nx is given, shape [B, L, E] = [{batch}, {len}, {dim}] (batch, pos, dim), with w_q, w_k and w_v, "
                "each [E, E] = [{dim}, {dim}]. The answer out_merged has x's shape, axes (batch, pos, dim).";
    t.task_zh = std::string(kAttentionZh) +
                (causal ? "加上因果掩码：查询 i 只看 j <= i 的键，做法是在 softmax 之前给 j > i 处的得分加上 -inf（《Attention 的两个补丁》§5.3）。"
                        : "没有掩码。") +
                "\n\nx 已给出，形状 [B, L, E] = [{batch}, {len}, {dim}]（batch, pos, dim），另有 w_q、w_k、w_v，"
                "各为 [E, E] = [{dim}, {dim}]。答案 out_merged 与 x 形状相同，轴为 (batch, pos, dim)。";
    t.constants = {{"H", "heads"}};
    t.signature = causal ? "def masked_attention(x, w_q, w_k, w_v, H):" : "def attention(x, w_q, w_k, w_v, H):";
    t.doc_en = kAttentionDocEn;
    t.doc_zh = kAttentionDocZh;
    t.stub = "return np.zeros_like(x)";
    t.call = causal ? "masked_attention(x, w_q, w_k, w_v, H)" : "attention(x, w_q, w_k, w_v, H)";
    ExerciseInfo info{causal ? "masked-attention" : "attention", "attend",
                      causal ? "the attention block with a causal mask" : "the attention block from given x and weights",
                      causal ? "带因果掩码的注意力块" : "由给定的 x 和权重计算注意力块",
                      {"batch", "len", "dim", "heads"},
                      {{"batch", 1}, {"len", 5}, {"dim", 8}, {"heads", 2}},
             {{"batch", {1, 3}}, {"len", {1, 10}}, {"dim", {2, 16}}, {"heads", {1, 4}}}};
    return {info, t, [causal](MadeExercise& m, const Given& given) {
                AttendParams p;
                p.batch = size(m, "batch");
                p.len = size(m, "len");
                p.dim = size(m, "dim");
                p.heads = size(m, "heads");
                if (causal) p.mask = MaskKind::causal;
                m.command = attend_command(p);
                build_with(m, attend_experiment(), p, "out_merged", {"x", "w_q", "w_k", "w_v"}, given);
            }};
}

ExerciseDef permutation_exercise()
{
    ExerciseText t;
    t.task_en =
        "Self-attention without positions cannot tell word order apart (\"Attention 的两个补丁\" §1.1-1.2 and FAQ Q2; "
        "\"Transformer（四）\" §1.1). x [L, E] = [{len}, {dim}] (pos, dim), the weights w_q, w_k, w_v ([E, E], stored "
        "[in, out]: `x @ W`) and a permutation perm of the L positions are given. Row i of the permuted input PX "
        "is row perm[i] of x: PX = x[perm].\n\n"
        "Compute the attention output for the permuted input, out_perm = f(PX), where f is the attention of the "
        "`attention` exercise without its batch axis: H = {heads} heads of d = {head_dim}, softmax(Q K^T / sqrt(d)) "
        "over the keys, no mask, no W_o. The answer out_perm has shape [L, E] = [{len}, {dim}], axes (pos, dim).\n\n"
        "Then compare it yourself with P f(X) = f(x)[perm]: they agree to rounding (f(PX) = P f(X), equivariance), "
        "which is why attention alone cannot see order. check.sh checks out_perm.";
    t.task_zh =
        "没有位置信息的自注意力分不出词序（《Attention 的两个补丁》§1.1-1.2 与 FAQ Q2；《Transformer（四）》§1.1）。已给出 "
        "x [L, E] = [{len}, {dim}]（pos, dim）、权重 w_q、w_k、w_v（[E, E]，按 [in, out] 存放：`x @ W`）以及 L 个位置的一个置换 "
        "perm。置换后的输入 PX 的第 i 行是 x 的第 perm[i] 行：PX = x[perm]。\n\n"
        "计算置换后输入的注意力输出 out_perm = f(PX)，f 是练习 `attention` 中的注意力（去掉 batch 轴）：H = {heads} 个头，"
        "每头 d = {head_dim}，softmax(Q K^T / sqrt(d)) 沿键计算，无掩码，无 W_o。答案 out_perm 的形状为 [L, E] = "
        "[{len}, {dim}]，轴为 (pos, dim)。\n\n"
        "然后自己把它与 P f(X) = f(x)[perm] 比较：两者只差舍入（f(PX) = P f(X)，等变），这正是注意力本身看不出顺序的原因。"
        "check.sh 检查 out_perm。";
    t.constants = {{"H", "heads"}};
    t.signature = "def attention_of_permuted(x, perm, w_q, w_k, w_v, H):";
    t.doc_en = "x: [L, E] (pos, dim); perm: [L]; w_q, w_k, w_v: [E, E] (in, out); H heads.\n    Returns out_perm = f(x[perm]): [L, E] (pos, dim).";
    t.doc_zh = "x: [L, E]（pos, dim）；perm: [L]；w_q、w_k、w_v: [E, E]（in, out）；H 个头。\n    返回 out_perm = f(x[perm])：[L, E]（pos, dim）。";
    t.stub = "return np.zeros_like(x)";
    t.call = "attention_of_permuted(x, perm, w_q, w_k, w_v, H)";
    return {{"permutation", "permute-test", "the attention output for the permuted input, out_perm", "置换后输入的注意力输出 out_perm",
             {"len", "dim", "heads"}, {{"len", 6}, {"dim", 8}, {"heads", 2}},
             {{"len", {1, 10}}, {"dim", {2, 16}}, {"heads", {1, 4}}}},
            t,
            [](MadeExercise& m, const Given& given) {
                PermuteParams p;
                p.len = size(m, "len");
                p.dim = size(m, "dim");
                p.heads = size(m, "heads");
                p.perm = random_permutations(p.len, 1, m.seed).front();
                m.command = permute_command(p);
                build_with(m, permute_experiment(), p, "out_perm", {"x", "perm", "w_q", "w_k", "w_v"}, given);
            }};
}

}  // namespace

const std::vector<ExerciseDef>& exercise_defs()
{
    static const std::vector<ExerciseDef> defs = {pe_exercise(),
                                                  pe_module_exercise(),
                                                  learned_exercise(),
                                                  shaw_exercise(),
                                                  t5_exercise(),
                                                  rope_exercise(RopeStyle::interleaved),
                                                  rope_exercise(RopeStyle::half),
                                                  alibi_slopes_exercise(),
                                                  alibi_bias_exercise(),
                                                  causal_mask_exercise(),
                                                  padding_mask_exercise(),
                                                  attention_exercise(false),
                                                  attention_exercise(true),
                                                  softmax_backward_exercise(),
                                                  attention_backward_exercise(),
                                                  permutation_exercise(),
                                                  nope_exercise(),
                                                  decode_exercise()};
    return defs;
}

const ExerciseDef& exercise_def(const std::string& name)
{
    for (const auto& d : exercise_defs())
        if (d.info.name == name) return d;
    std::vector<std::string> names;
    for (const auto& d : exercise_defs()) names.push_back(d.info.name);
    throw InputError(fmt::format("no exercise '{}'; exercises: {}", name, fmt::join(names, ", ")));
}

}  // namespace attnlab::exercise_detail
