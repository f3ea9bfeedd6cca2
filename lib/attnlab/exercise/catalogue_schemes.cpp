// The exercises on learned positions, T5's buckets and a decoder without positions: the
// schemes "Transformer（四）" §9 and "Attention 的两个补丁" FAQ Q4-Q5 name.
#include "attnlab/exercise/build_with.hpp"
#include "attnlab/experiments/decode.hpp"
#include "attnlab/experiments/learned.hpp"
#include "attnlab/experiments/nope.hpp"
#include "attnlab/experiments/shaw.hpp"
#include "attnlab/experiments/t5.hpp"

namespace attnlab::exercise_detail {

ExerciseDef learned_exercise()
{
    ExerciseText t;
    t.task_en =
        "Learned absolute positions, as BERT and GPT-2 have them (\"Transformer（四）\" §9.1; \"Attention 的两个补丁\" "
        "FAQ Q4). The model keeps a table pos_emb of max_len = {max_len} rows, one learned vector per position "
        "(nn.Embedding(max_len, D)); here it is given, shape [{max_len}, {dim}] (pos, dim). Add row p of the table to "
        "position p of every sequence of x, given with shape [B, L, D] = [{batch}, {len}, {dim}] (batch, pos, dim): "
        "x_pe = x + pos_emb[:L], the first position being 0. The answer x_pe has x's shape.";
    t.task_zh =
        "可学习的绝对位置，BERT 与 GPT-2 用的就是它（《Transformer（四）》§9.1；《Attention 的两个补丁》FAQ Q4）。模型保存一张 "
        "max_len = {max_len} 行的表 pos_emb，每个位置一个可学习的向量（nn.Embedding(max_len, D)）；这里已给出，形状 "
        "[{max_len}, {dim}]（pos, dim）。把表的第 p 行加到 x 每个序列的位置 p 上，x 的形状为 [B, L, D] = [{batch}, {len}, {dim}]"
        "（batch, pos, dim）：x_pe = x + pos_emb[:L]，第一个位置是 0。答案 x_pe 与 x 形状相同。";
    t.signature = "def add_learned_positions(x, pos_emb):";
    t.doc_en = "x: [B, L, D] (batch, pos, dim), pos_emb: [max_len, D] (pos, dim). Returns x_pe = x + pos_emb[:L]: [B, L, D].";
    t.doc_zh = "x: [B, L, D]（batch, pos, dim），pos_emb: [max_len, D]（pos, dim）。返回 x_pe = x + pos_emb[:L]：[B, L, D]。";
    t.stub = "return np.zeros_like(x)";
    t.call = "add_learned_positions(x, pos_emb)";
    return {{"learned-pe", "learned", "learned absolute positions: x + pos_emb[:L] from a given table",
             "可学习的绝对位置：用给定的表计算 x + pos_emb[:L]", {"batch", "len", "dim"}, {{"batch", 2}, {"len", 6}, {"dim", 8}},
             {{"batch", {1, 3}}, {"len", {1, 16}}, {"dim", {2, 16}}}},
            t,
            [](MadeExercise& m, const Given& given) {
                m.sizes["max_len"] = size(m, "len") + 4;  // longer than L, so the table must be sliced
                LearnedParams p;
                p.len = size(m, "len");
                p.dim = size(m, "dim");
                p.max_len = size(m, "max_len");
                p.batch = size(m, "batch");
                m.command = learned_command(p);
                build_with(m, learned_experiment(), p, "x_pe", {"x", "pos_emb"}, given);
            }};
}


ExerciseDef shaw_exercise()
{
    ExerciseText t;
    t.task_en =
        "Relative position representations (Shaw et al. 2018, §3.1-3.2; \"Transformer（四）\" §9.2): the distance of key j "
        "from query i enters the scores through a table rel_k of 2K + 1 rows, K = {clip}, row r for the clipped distance "
        "r - K. Given q and k, shape [B, H, L, d] = [{batch}, {heads}, {len}, {head_dim}] (batch, head, pos, dim), and rel_k, "
        "shape [{rows}, {head_dim}] (rel, dim), shared by the heads, compute scores[b, h, i, j] = q[b, h, i] . (k[b, h, j] + "
        "rel_k[clip(j - i, -K, K) + K]) / sqrt(d). No mask. The answer scores has shape [B, H, L, L], axes (batch, head, "
        "query, key).";
    t.task_zh =
        "相对位置表示（Shaw et al. 2018 §3.1-3.2；《Transformer（四）》§9.2）：键 j 相对查询 i 的距离通过一张 2K + 1 行的表 rel_k "
        "进入得分，K = {clip}，第 r 行对应截断后的距离 r - K。已知 q 和 k，形状 [B, H, L, d] = [{batch}, {heads}, {len}, {head_dim}]"
        "（batch, head, pos, dim），以及各头共用的 rel_k，形状 [{rows}, {head_dim}]（rel, dim），计算 scores[b, h, i, j] = "
        "q[b, h, i] . (k[b, h, j] + rel_k[clip(j - i, -K, K) + K]) / sqrt(d)。不加掩码。答案 scores 的形状为 [B, H, L, L]，"
        "轴为 (batch, head, query, key)。";
    t.constants = {{"K", "clip"}};
    t.signature = "def shaw_scores(q, k, rel_k, K):";
    t.doc_en = "q, k: [B, H, L, d]; rel_k: [2K + 1, d]. Returns scores: [B, H, L, L] (batch, head, query, key).";
    t.doc_zh = "q, k: [B, H, L, d]；rel_k: [2K + 1, d]。返回 scores: [B, H, L, L]（batch, head, query, key）。";
    t.stub = "return np.zeros(q.shape[:3] + (q.shape[2],))";
    t.call = "shaw_scores(q, k, rel_k, K)";
    return {{"shaw-scores", "shaw", "relative position representations: the scores with rel_k from given q, k",
             "相对位置表示：用给定的 q、k 计算带 rel_k 的得分", {"batch", "len", "dim", "heads"}, {{"batch", 1}, {"len", 6}, {"dim", 8}, {"heads", 2}},
             {{"batch", {1, 2}}, {"len", {1, 10}}, {"dim", {2, 16}}, {"heads", {1, 4}}}},
            t,
            [](MadeExercise& m, const Given& given) {
                ShawParams p;
                p.batch = size(m, "batch"), p.len = size(m, "len"), p.dim = size(m, "dim"), p.heads = size(m, "heads");
                p.clip = m.sizes["clip"] = 2;
                m.sizes["rows"] = 2 * p.clip + 1;
                m.command = shaw_command(p);
                build_with(m, shaw_experiment(), p, "scores", {"q", "k", "rel_k"}, given);
            }};
}

ExerciseDef t5_exercise()
{
    ExerciseText t;
    t.task_en =
        "T5's relative position buckets (\"Transformer（四）\" §9.2; Raffel et al. 2020, §2.1), as T5's encoder uses them "
        "(bidirectional). For L = {len} queries i and keys j, the offset is n = j - i. The N = {buckets} buckets are split by "
        "sign: half of them ({half}) for earlier keys (n <= 0) and half for later ones (n > 0, whose bucket is {half} plus "
        "the rest). On each side, with distance a = |n| and max_exact = {exact}: a < max_exact has bucket a; otherwise "
        "max_exact + floor(log(a / max_exact) / log(max_distance / max_exact) * ({half} - max_exact)), with max_distance = "
        "{max_distance}, capped at the side's last bucket ({half} - 1). Compute the log in float32, as Hugging Face does "
        "(np.float32). The answer bucket has shape [L, L] = [{len}, {len}], axes (query, key), whole numbers.";
    t.task_zh =
        "T5 的相对位置分桶（《Transformer（四）》§9.2；Raffel et al. 2020 §2.1），按 T5 编码器的用法（双向）。对 L = {len} 个查询 i "
        "和键 j，偏移为 n = j - i。N = {buckets} 个桶按正负一分为二：一半（{half} 个）给前面的键（n <= 0），一半给后面的键（n > 0，"
        "桶号为 {half} 加上其余部分）。每一侧，设距离 a = |n|，max_exact = {exact}：a < max_exact 时桶号为 a；否则为 max_exact + "
        "floor(log(a / max_exact) / log(max_distance / max_exact) * ({half} - max_exact))，max_distance = {max_distance}，"
        "最多到该侧最后一个桶（{half} - 1）。对数用 float32 计算，与 Hugging Face 相同（np.float32）。答案 bucket 的形状为 "
        "[L, L] = [{len}, {len}]，轴为 (query, key)，取整数。";
    t.constants = {{"L", "len"}, {"NUM_BUCKETS", "buckets"}, {"MAX_DISTANCE", "max_distance"}};
    t.signature = "def t5_buckets(L, num_buckets, max_distance):";
    t.doc_en = "Returns bucket: [L, L] (query, key), the bidirectional T5 bucket of each offset j - i.";
    t.doc_zh = "返回 bucket: [L, L]（query, key），每个偏移 j - i 的双向 T5 桶号。";
    t.stub = "return np.zeros((L, L), dtype=np.int64)";
    t.call = "t5_buckets(L, NUM_BUCKETS, MAX_DISTANCE)";
    return {{"t5-buckets", "t5", "T5's bidirectional relative position buckets [L, L]", "T5 的双向相对位置分桶 [L, L]", {"len"}, {{"len", 40}},
             {{"len", {1, 64}}}},
            t,
            [](MadeExercise& m, const Given& given) {
                T5Params p;
                p.len = size(m, "len");
                p.buckets = m.sizes["buckets"] = 16;
                p.max_distance = m.sizes["max_distance"] = 32;
                const T5Side side = t5_side(p.direction, p.buckets);
                m.sizes["half"] = side.buckets;
                m.sizes["exact"] = side.max_exact;
                m.command = t5_command(p);
                build_with(m, t5_experiment(), p, "bucket", {}, given);
            }};
}


ExerciseDef nope_exercise()
{
    ExerciseText t;
    t.task_en =
        "A decoder with no position encoding at all (\"Attention 的两个补丁\" §1 and FAQ Q5 say it is then a bag of "
        "words). Take L = {len} tokens whose queries are all zero, so every score q_i . k_j is 0, and the causal mask "
        "of a decoder (query i may see keys j <= i only; \"Attention 的两个补丁\" §5.1-5.3). The value of the first "
        "token is 1 and every other value is 0. Compute the attention output out_i = sum_j softmax_j(scores_i + "
        "mask_i) v_j for each position i. The answer out has shape [L] = [{len}], axis (pos). Look at it: can you "
        "tell the positions apart from the output alone?";
    t.task_zh =
        "一个完全没有位置编码的解码器（《Attention 的两个补丁》§1 与 FAQ Q5 说它这时是词袋）。取 L = {len} 个 token，"
        "它们的查询全为零，于是每个得分 q_i . k_j 都是 0，再加上解码器的因果掩码（查询 i 只能看 j <= i 的键；"
        "《Attention 的两个补丁》§5.1-5.3）。第一个 token 的值为 1，其余 token 的值都是 0。计算每个位置 i 的注意力输出 "
        "out_i = sum_j softmax_j(scores_i + mask_i) v_j。答案 out 的形状为 [L] = [{len}]，轴为 (pos)。看看结果："
        "只凭输出能分辨出位置吗？";
    t.constants = {{"L", "len"}};
    t.signature = "def causal_output(L):";
    t.doc_en = "Returns out: [L] (pos), the causal attention output of equal scores and v = (1, 0, ..., 0).";
    t.doc_zh = "返回 out: [L]（pos），得分全相等、v = (1, 0, ..., 0) 时的因果注意力输出。";
    t.stub = "return np.zeros(L)";
    t.call = "causal_output(L)";
    return {{"position-without-pe", "nope", "the causal output of equal scores: position without any encoding",
             "得分全相等时的因果输出：没有位置编码也有位置", {"len"}, {{"len", 6}},
             {{"len", {1, 16}}}},
            t,
            [](MadeExercise& m, const Given& given) {
                NopeParams p;
                p.len = size(m, "len");
                m.command = nope_command(p);
                build_with(m, nope_experiment(), p, "out", {}, given);
            }};
}

ExerciseDef decode_exercise()
{
    ExerciseText t;
    t.task_en =
        "A decoder at inference (\"Attention 的两个补丁\" §5.1 and §3.4). q, k and v are given, shape [B, H, N, d] = "
        "[{batch}, {heads}, {tokens}, {head_dim}] (batch, head, pos, dim), before RoPE: the projections of N = P + T tokens. "
        "The first P = {prefill} tokens are the prompt (the prefill fills the cache with their keys and values); then "
        "each of T = {steps} steps adds one token n = P + t and computes its output against every cached token 0 .. n. "
        "Use RoPE with pairs (2i, 2i+1), theta_i = 10000^(-2i/d): a token at position m is rotated by m theta_i, and each "
        "token's position is its own index n (not its index in this step's input). Scores q.k / sqrt(d), softmax over the "
        "keys, then the weighted sum of v. The answer out_steps has shape [B, H, T, d], axes (batch, head, step, dim).";
    t.task_zh =
        "推理时的解码器（《Attention 的两个补丁》§5.1 与 §3.4）。已知 q、k、v，形状 [B, H, N, d] = [{batch}, {heads}, {tokens}, "
        "{head_dim}]（batch, head, pos, dim），是 N = P + T 个 token 在 RoPE 之前的投影。前 P = {prefill} 个 token 是提示"
        "（预填充把它们的键和值放进缓存）；之后 T = {steps} 步中的每一步加入一个 token n = P + t，对缓存中的 0 .. n 全部 token "
        "计算它的输出。RoPE 取 (2i, 2i+1) 成对，theta_i = 10000^(-2i/d)：位置 m 的 token 旋转 m theta_i，每个 token 的位置就是"
        "它自己的下标 n（不是它在这一步输入里的下标）。得分 q.k / sqrt(d)，对键做 softmax，再对 v 加权求和。答案 out_steps 的形状为 "
        "[B, H, T, d]，轴为 (batch, head, step, dim)。";
    t.constants = {{"P", "prefill"}};
    t.signature = "def decode_steps(q, k, v, P):";
    t.doc_en = "q, k, v: [B, H, N, d] before RoPE. Returns out_steps: [B, H, N - P, d], the output of tokens P .. N - 1 against the cache.";
    t.doc_zh = "q、k、v: [B, H, N, d]，RoPE 之前。返回 out_steps: [B, H, N - P, d]，即 token P .. N - 1 对缓存的输出。";
    t.stub = "return np.zeros(q.shape[:2] + (q.shape[2] - P, q.shape[3]))";
    t.call = "decode_steps(q, k, v, P)";
    return {{"decode-step", "decode", "a decoder's steps against its KV cache, RoPE at each token's own position",
             "解码器对 KV 缓存的逐步计算，RoPE 用每个 token 自己的位置", {"batch", "heads", "dim"}, {{"batch", 1}, {"heads", 2}, {"dim", 8}},
             {{"batch", {1, 2}}, {"heads", {1, 4}}, {"dim", {2, 16}}}},
            t,
            [](MadeExercise& m, const Given& given) {
                DecodeParams p;
                p.batch = size(m, "batch"), p.heads = size(m, "heads"), p.dim = size(m, "dim");
                p.prefill = m.sizes["prefill"] = 4;
                p.steps = m.sizes["steps"] = 3;
                m.sizes["tokens"] = p.prefill + p.steps;
                m.command = decode_command(p);
                build_with(m, decode_experiment(), p, "out_steps", {"q", "k", "v"}, given);
            }};
}

}  // namespace attnlab::exercise_detail
