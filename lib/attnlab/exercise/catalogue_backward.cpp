// The exercises on the backward pass (`attnlab grad`): the softmax's Jacobian, then the whole
// attention block. The loss is sum(d_out * out_merged), so d_out is the gradient that reaches
// the block's output.
#include "attnlab/exercise/build_with.hpp"
#include "attnlab/experiments/grad.hpp"

namespace attnlab::exercise_detail {

ExerciseDef softmax_backward_exercise()
{
    ExerciseText t;
    t.task_en =
        "The backward pass of the softmax over the keys. The forward pass gave weights = softmax(scores) along the last axis; "
        "the gradient of the loss with respect to the weights, d_weights, is given. Compute d_scores, the gradient with "
        "respect to the softmax's input: the Jacobian of row i is diag(P_i) - P_i P_i^T, so\n\n"
        "    d_scores[..., i, j] = P[..., i, j] * (d_weights[..., i, j] - sum_k P[..., i, k] * d_weights[..., i, k])\n\n"
        "weights and d_weights have shape [B, H, L, L] = [{batch}, {heads}, {len}, {len}] (batch, head, query, key); so has "
        "the answer d_scores. Each of its rows sums to 0.";
    t.task_zh =
        "沿键轴的 softmax 的反向传播。前向得到 weights = softmax(scores)（沿最后一个轴）；已知损失对权重的梯度 d_weights。"
        "计算对 softmax 输入的梯度 d_scores：第 i 行的雅可比为 diag(P_i) - P_i P_i^T，所以\n\n"
        "    d_scores[..., i, j] = P[..., i, j] * (d_weights[..., i, j] - sum_k P[..., i, k] * d_weights[..., i, k])\n\n"
        "weights 与 d_weights 的形状为 [B, H, L, L] = [{batch}, {heads}, {len}, {len}]（batch, head, query, key）；"
        "答案 d_scores 形状相同，每一行之和为 0。";
    t.signature = "def softmax_backward(weights, d_weights):";
    t.doc_en = "weights, d_weights: [B, H, L, L] (batch, head, query, key). Returns d_scores: [B, H, L, L].";
    t.doc_zh = "weights、d_weights: [B, H, L, L]（batch, head, query, key）。返回 d_scores: [B, H, L, L]。";
    t.stub = "return np.zeros_like(weights)";
    t.call = "softmax_backward(weights, d_weights)";
    return {{"softmax-backward", "grad", "the softmax's backward pass: d_scores from the weights and d_weights",
             "softmax 的反向传播：由 weights 与 d_weights 求 d_scores", {"batch", "len", "dim", "heads"},
             {{"batch", 1}, {"len", 5}, {"dim", 8}, {"heads", 2}},
             {{"batch", {1, 3}}, {"len", {1, 10}}, {"dim", {2, 16}}, {"heads", {1, 4}}}},
            t,
            [](MadeExercise& m, const Given& given) {
                AttendParams p;
                p.batch = size(m, "batch"), p.len = size(m, "len"), p.dim = size(m, "dim"), p.heads = size(m, "heads");
                m.command = command_of(grad_experiment(), p);
                build_with(m, grad_experiment(), p, "d_scores", {"weights", "d_weights"}, given);
            }};
}

ExerciseDef attention_backward_exercise()
{
    ExerciseText t;
    t.task_en =
        "The backward pass of multi-head self-attention without a mask, H = {heads} heads of d = E/H = {head_dim}: the forward "
        "pass of the `attention` exercise (Q = x W_q, K = x W_k, V = x W_v with W stored [in, out]; per head weights = "
        "softmax(Q_h K_h^T / sqrt(d)), out_h = weights V_h; the heads merged back into out_merged [B, L, E]). The loss is "
        "sum(d_out * out_merged), so d_out, shape [B, L, E] = [{batch}, {len}, {dim}], is the gradient reaching the output. "
        "Compute d_x, the gradient with respect to x. Pass by pass, per head: d_weights = d_out_h V_h^T; d_scores = P * "
        "(d_weights - rowsum(d_weights * P)); d_Q_h = d_scores K_h / sqrt(d); d_K_h = d_scores^T Q_h / sqrt(d); d_V_h = P^T "
        "d_out_h; then, heads merged, d_x = d_Q W_q^T + d_K W_k^T + d_V W_v^T (x feeds all three projections). The answer d_x "
        "has x's shape, axes (batch, pos, dim).";
    t.task_zh =
        "无掩码多头自注意力的反向传播，H = {heads} 个头，每头 d = E/H = {head_dim}：前向即 `attention` 练习（Q = x W_q，K = x W_k，"
        "V = x W_v，W 按 [in, out] 存放；每个头 weights = softmax(Q_h K_h^T / sqrt(d))，out_h = weights V_h；各头合并为 "
        "out_merged [B, L, E]）。损失为 sum(d_out * out_merged)，所以 d_out（形状 [B, L, E] = [{batch}, {len}, {dim}]）是到达输出的"
        "梯度。计算 d_x，即对 x 的梯度。逐步、每个头：d_weights = d_out_h V_h^T；d_scores = P * (d_weights - rowsum(d_weights * P))；"
        "d_Q_h = d_scores K_h / sqrt(d)；d_K_h = d_scores^T Q_h / sqrt(d)；d_V_h = P^T d_out_h；合并各头后 d_x = d_Q W_q^T + "
        "d_K W_k^T + d_V W_v^T（x 进入三个投影）。答案 d_x 与 x 形状相同，轴为 (batch, pos, dim)。";
    t.constants = {{"H", "heads"}};
    t.signature = "def attention_backward(x, w_q, w_k, w_v, d_out, H):";
    t.doc_en = "x, d_out: [B, L, E] (batch, pos, dim); w_q, w_k, w_v: [E, E] (in, out); H heads.\n    Returns d_x: [B, L, E].";
    t.doc_zh = "x、d_out: [B, L, E]（batch, pos, dim）；w_q、w_k、w_v: [E, E]（in, out）；H 个头。\n    返回 d_x: [B, L, E]。";
    t.stub = "return np.zeros_like(x)";
    t.call = "attention_backward(x, w_q, w_k, w_v, d_out, H)";
    return {{"attention-backward", "grad", "the attention block's backward pass: d_x from x, the weights and d_out",
             "注意力块的反向传播：由 x、权重与 d_out 求 d_x", {"batch", "len", "dim", "heads"},
             {{"batch", 1}, {"len", 5}, {"dim", 8}, {"heads", 2}},
             {{"batch", {1, 3}}, {"len", {1, 10}}, {"dim", {2, 16}}, {"heads", {1, 4}}}},
            t,
            [](MadeExercise& m, const Given& given) {
                AttendParams p;
                p.batch = size(m, "batch"), p.len = size(m, "len"), p.dim = size(m, "dim"), p.heads = size(m, "heads");
                m.command = command_of(grad_experiment(), p);
                build_with(m, grad_experiment(), p, "d_x", {"x", "w_q", "w_k", "w_v", "d_out"}, given);
            }};
}

}  // namespace attnlab::exercise_detail
