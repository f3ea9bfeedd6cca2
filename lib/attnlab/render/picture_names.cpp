// What a picture of each tensor says: its heading in both languages, its palette and its
// colour scale. One row per tensor name; a name has one meaning in every subcommand.
#include "attnlab/render/plot.hpp"

#include <algorithm>

namespace attnlab {

namespace {

struct TensorWords {
    const char* name;
    const char* en;
    const char* zh;
    Palette palette = Palette::by_data;
    ScaleMode scale = ScaleMode::shared;
};

constexpr Palette seq = Palette::sequential, div = Palette::diverging;

// Weights, masks and probabilities are one-sided; scores, encodings, biases, projections and
// outputs are signed and centred on 0 whatever one run's values happen to be.
const TensorWords kWords[] = {
    {"weights", "Attention weights", "注意力权重", seq},
    {"weights_perm", "Attention weights, input permuted", "输入置换后的注意力权重", seq},
    {"weights_bool_inverted", "Attention weights, boolean mask inverted", "布尔掩码取反后的注意力权重", seq},
    {"multiplied_weights", "Attention weights, mask multiplied in", "乘以掩码后的注意力权重", seq},
    {"renormalised_weights", "Attention weights, renormalised after masking", "掩码后重新归一化的注意力权重", seq},
    {"scores", "Attention scores before softmax", "softmax 之前的注意力得分", div},
    {"masked_scores", "Attention scores with the mask added", "加上掩码后的注意力得分", div},
    {"multiplied_scores", "Attention scores, mask multiplied in", "乘以掩码后的注意力得分", div},
    {"mask", "Additive attention mask: 0 keeps, -inf blocks", "加性注意力掩码：0 保留，-inf 屏蔽", seq},
    {"mask_upper_left", "Causal mask aligned upper left", "左上对齐的因果掩码", seq},
    {"mask_lower_right", "Causal mask aligned lower right", "右下对齐的因果掩码", seq},
    {"attn_mask_bool", "Boolean attention mask: 1 attends", "布尔注意力掩码：1 表示参与", seq},
    {"key_padding_mask", "Key padding mask: 1 is padding, ignored", "键填充掩码：1 表示填充，被忽略", seq},
    {"leak", "Weight leaking onto padding", "泄漏到填充位置的权重", seq},
    {"pe", "Sinusoidal positional encoding", "正弦位置编码", div},
    {"pos_emb", "Learned position embedding", "可学习的位置嵌入", div},
    {"freq", "Frequency of each dimension pair", "每个维度对的频率", seq},
    {"wavelength", "Wavelength of each dimension pair", "每个维度对的波长", seq},
    {"theta", "RoPE rotation frequency of each pair", "RoPE 每个维度对的旋转频率", seq},
    {"dots", "q . k after RoPE, by query and key position", "RoPE 之后的 q . k（按查询与键的位置）", div},
    {"decay", "Long-range decay bound of RoPE", "RoPE 的远程衰减上界", Palette::by_data},
    {"angle_error", "Angle error against the exact rotation", "与精确旋转相比的角度误差", seq},
    {"bias", "ALiBi bias, per head", "ALiBi 偏置（每个头）", div, ScaleMode::per_panel},
    {"slopes", "ALiBi slope of each head", "每个头的 ALiBi 斜率", seq},
    {"distance_profile", "ALiBi weight against distance", "ALiBi 权重随距离的变化", seq},
    {"w_q", "Query projection W_q", "查询投影 W_q", div},
    {"w_k", "Key projection W_k", "键投影 W_k", div},
    {"w_v", "Value projection W_v", "值投影 W_v", div},
    {"bucket", "T5 relative position bucket of each query and key", "每对查询与键的 T5 相对位置桶", Palette::sequential},
    {"rel_index", "Clipped relative position j - i, as a table index", "截断后的相对位置 j - i（表的下标）", Palette::sequential},
    {"positions", "Position of each token", "每个 token 的位置", Palette::sequential},
    {"q", "Queries q", "查询 q", div},
    {"k", "Keys k", "键 k", div},
    {"v", "Values v", "值 v", div},
    {"q_rot", "Queries after RoPE", "RoPE 之后的查询", div},
    {"k_rot", "Keys after RoPE", "RoPE 之后的键", div},
    {"x", "Input x", "输入 x", div},
    {"x_pe", "Input with position added", "加上位置之后的输入", div},
    {"out", "Attention output", "注意力输出", div},
    {"out_perm", "Attention output, input permuted", "输入置换后的注意力输出", div},
    {"out_merged", "Attention output, heads merged", "合并各头之后的注意力输出", div},
    {"loss", "Training loss per step", "每一步的训练损失", seq},
    {"accuracy", "Accuracy at each evaluation length", "各评估长度上的准确率", seq},
    {"extrapolation", "Accuracy at each length (median over seeds, bars from lowest to highest)", "各长度上的准确率（各种子的中位数，竖线为最低到最高）", seq},
    {"exact_match", "Share of sequences right at every scored position", "每个被评分位置都对的序列比例", seq},
    {"position_accuracy", "Accuracy at each position of the longest length", "最长长度上每个位置的准确率", seq},
    {"yours", "Your tensor", "你的张量"},
    {"difference", "Difference", "差值", div},
};

const TensorWords* words_of(const std::string& name)
{
    const auto* it = std::find_if(std::begin(kWords), std::end(kWords), [&](const TensorWords& w) { return name == w.name; });
    return it == std::end(kWords) ? nullptr : it;
}

}  // namespace

std::string tensor_heading(const std::string& name, Lang lang)
{
    const TensorWords* w = words_of(name);
    if (w == nullptr) return name;
    return lang == Lang::zh ? w->zh : w->en;
}

Palette tensor_palette(const std::string& name)
{
    const TensorWords* w = words_of(name);
    return w ? w->palette : Palette::by_data;
}

ScaleMode tensor_scale(const std::string& name)
{
    const TensorWords* w = words_of(name);
    return w ? w->scale : ScaleMode::shared;
}

}  // namespace attnlab
