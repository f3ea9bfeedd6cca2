// The tour's claim sources in Chinese: the articles' titles in 《》, and every English phrase
// of a source said in Chinese; names, numbers and code stay as they are.
#include "attnlab/experiments/tour_sources.hpp"

#include <utility>

namespace attnlab {

namespace {

// English source, Chinese source.
const std::pair<const char*, const char*> kSourcesZh[] = {
    {"\"Attention 的两个补丁\" 学习重点 and §1 opening (its §1.1 experiment un-permutes; FAQ Q2 corrects it)",
     "《Attention 的两个补丁》学习重点与 §1 开头（它 §1.1 的实验先还原顺序；FAQ Q2 作了更正）"},
    {"\"Attention 的两个补丁\" §1.2 (the names invariant and equivariant swapped)",
     "《Attention 的两个补丁》§1.2（“不变”与“等变”两个名称弄反了）"},
    {"\"Attention 的两个补丁\" §1.1 (its experiment: out_shuffled[perm.argsort()] against out_original, with W_q, W_k, W_v)",
     "《Attention 的两个补丁》§1.1（它的实验：out_shuffled[perm.argsort()] 对比 out_original，带 W_q、W_k、W_v）"},
    {"\"Attention 的两个补丁\" §1 (后果 1: bag-of-tokens) and FAQ Q5",
     "《Attention 的两个补丁》§1（后果 1：bag-of-tokens）与 FAQ Q5"},
    {"Vaswani et al. 2017, §3.5 (any fixed offset k is a linear function)",
     "Vaswani et al. 2017，§3.5（任一固定偏移 k 都是线性函数）"},
    {"a seq-first module fed batch-first input (pe[:x.size(0)])",
     "序列维在前的模块收到批维在前的输入（pe[:x.size(0)]）"},
    {"\"Transformer（四）\" §6.2 (the notebook that forgot to slice: x + self.pe)",
     "《Transformer（四）》§6.2（忘了切片的写法：x + self.pe）"},
    {"\"Attention 的两个补丁\" §2.1 (10000 is the maximum wavelength)",
     "《Attention 的两个补丁》§2.1（10000 是最大波长）"},
    {"\"Attention 的两个补丁\" §2.3, at d_model = 4096",
     "《Attention 的两个补丁》§2.3，d_model = 4096 时"},
    {"\"Attention 的两个补丁\" §2.2 (learned PE 完全没有这个性质) and FAQ Q4",
     "《Attention 的两个补丁》§2.2（learned PE 完全没有这个性质）与 FAQ Q4"},
    {"\"Attention 的两个补丁\" §2.2 and FAQ Q4, at 8 rows of 8 (BERT-base: 512 rows of 768)",
     "《Attention 的两个补丁》§2.2 与 FAQ Q4，8 行、每行 8 维（BERT-base：512 行、每行 768 维）"},
    {"\"Attention 的两个补丁\" §2.2 and FAQ Q4 (sinusoidal PE, side by side)",
     "《Attention 的两个补丁》§2.2 与 FAQ Q4（并列对照正弦位置编码）"},
    {"\"Attention 的两个补丁\" §2.2 and FAQ Q4, at 32 rows of 8 (GPT-2: 1024 rows of 768)",
     "《Attention 的两个补丁》§2.2 与 FAQ Q4，32 行、每行 8 维（GPT-2：1024 行、每行 768 维）"},
    {"Shaw et al. 2018, §3.2 (the maximum relative position clipped to k)",
     "Shaw et al. 2018，§3.2（最大相对位置截断为 k）"},
    {"\"Transformer（四）\" §9.2 (the distance enters the scores or the value aggregation)",
     "《Transformer（四）》§9.2（距离进入得分或值的聚合）"},
    {"\"Attention 的两个补丁\" §1 and \"Transformer（四）\" §9.2",
     "《Attention 的两个补丁》§1 与《Transformer（四）》§9.2"},
    {"\"Transformer（四）\" §9.2 (the distance of query and key enters the scores)",
     "《Transformer（四）》§9.2（查询与键的距离进入得分）"},
    {"\"Attention 的两个补丁\" §1 (问题二: distance 5 and distance 10 told apart)",
     "《Attention 的两个补丁》§1（问题二：区分距离 5 与距离 10）"},
    {"\"Attention 的两个补丁\" §3.4 (position 0 is not rotated)",
     "《Attention 的两个补丁》§3.4（位置 0 不旋转）"},
    {"\"Attention 的两个补丁\" 学习重点 (R((m-n)θ); its §3.1 derives R((n-m)θ))",
     "《Attention 的两个补丁》学习重点（R((m-n)θ)；它的 §3.1 推出的是 R((n-m)θ)）"},
    {"\"Attention 的两个补丁\" FAQ Q17 (例如: example figures, judged to one significant figure)",
     "《Attention 的两个补丁》FAQ Q17（“例如”：示例数字，按一位有效数字评判）"},
    {"\"Attention 的两个补丁\" §4.2 code comment (论文公式) and FAQ Q10; Press et al. 2022, §3",
     "《Attention 的两个补丁》§4.2 代码注释（论文公式）与 FAQ Q10；Press et al. 2022，§3"},
    {"the program's demonstration (not an article's claim): Press et al. 2022, §3, against get_slopes (ofirpress/attention_with_linear_biases) and BLOOM",
     "程序自己的演示（不是文章的论断）：Press et al. 2022 §3 对照 get_slopes（ofirpress/attention_with_linear_biases）与 BLOOM"},
    {"\"Attention 的两个补丁\" FAQ Q12 (multiplying leaks \"a small\" probability)",
     "《Attention 的两个补丁》FAQ Q12（乘法只泄漏“很小”的概率）"},
    {"\"Attention 的两个补丁\" §5.3 and FAQ Q12 (-1e9 \"to avoid fp16 overflow\")",
     "《Attention 的两个补丁》§5.3 与 FAQ Q12（用 -1e9“防止 fp16 溢出”）"},
    {"\"Attention 的两个补丁\" §3.4 (apply_rope; the cache's offset is the \"KV Cache 切片\" it leaves out)",
     "《Attention 的两个补丁》§3.4（apply_rope；缓存的偏移就是它略去的“KV Cache 切片”）"},
    {"\"Attention 的两个补丁\" §5.1 and §5.3 (后果 1: what the mask trains is what generation runs)",
     "《Attention 的两个补丁》§5.1 与 §5.3（后果 1：掩码下训练的就是生成时运行的）"},
    {"Xiao et al. 2024 (StreamingLLM), §3.2 (positions within the cache)",
     "Xiao et al. 2024（StreamingLLM），§3.2（位置取缓存内的位置）"},
    {"\"Attention 的两个补丁\" §5.3 后果 3 (IMPRECISE: the unmasked pass runs and gives every row, but leaks the future, its 后果 1)",
     "《Attention 的两个补丁》§5.3 后果 3（不严谨：不加掩码的一次前向能算出每一行，但会泄露未来，即它的后果 1）"},
    {"the program's reference implementation",
     "程序的参考实现"},
    {"\"Attention 的两个补丁\" §6 小结 (三套位置编码都能用于三种 Attention); the §6.1 table is right for an added PE",
     "《Attention 的两个补丁》§6 小结（三套位置编码都能用于三种 Attention）；§6.1 的表对加在输入上的位置编码是对的"},
    {"\"Attention 的两个补丁\" §4.3 and FAQ Q18; Press et al. 2022, Fig. 1",
     "《Attention 的两个补丁》§4.3 与 FAQ Q18；Press et al. 2022，图 1"},
    {"\"Attention 的两个补丁\" §4.3 table (contradicted by its own FAQ Q16)",
     "《Attention 的两个补丁》§4.3 表（与它自己的 FAQ Q16 矛盾）"},
    {"\"Attention 的两个补丁\" FAQ Q18 (the bias depends on i - j alone)",
     "《Attention 的两个补丁》FAQ Q18（偏置只取决于 i - j）"},
    {"\"Attention 的两个补丁\", API list (torch.nn.Transformer)",
     "《Attention 的两个补丁》API 列表（torch.nn.Transformer）"},
    {"\"Attention 的两个补丁\" §2.3 (tip: compute div_term in log space)",
     "《Attention 的两个补丁》§2.3（小贴士：在对数空间计算 div_term）"},
    {"RoFormer §3.2 (rotations are orthogonal)",
     "RoFormer §3.2（旋转是正交变换）"},
    {"Hugging Face rotate_half vs RoFormer pairs",
     "Hugging Face 的 rotate_half 与 RoFormer 的配对"},
    {"\"Attention 的两个补丁\" §4.2, get_alibi_slopes comment",
     "《Attention 的两个补丁》§4.2，get_alibi_slopes 的注释"},
    {"PyTorch docs: nn.Transformer.generate_square_subsequent_mask",
     "PyTorch 文档：nn.Transformer.generate_square_subsequent_mask"},
    {"\"Attention 的两个补丁\" §7 tips (不能直接乘 attn，相加才能严格屏蔽)",
     "《Attention 的两个补丁》§7 小贴士（不能直接乘 attn，相加才能严格屏蔽）"},
    {"\"Attention 的两个补丁\" API list (nn.Transformer: src_mask=causal mask); PyTorch docs: nn.Transformer.forward",
     "《Attention 的两个补丁》API 列表（nn.Transformer：src_mask=causal mask）；PyTorch 文档：nn.Transformer.forward"},
    {"PyTorch docs: MultiheadAttention vs scaled_dot_product_attention",
     "PyTorch 文档：MultiheadAttention 与 scaled_dot_product_attention 对照"},
    {"PyTorch docs: scaled_dot_product_attention",
     "PyTorch 文档：scaled_dot_product_attention"},
    {"\"Attention 的两个补丁\" §5.3 (bool mask: True = masked)",
     "《Attention 的两个补丁》§5.3（bool mask：True = 屏蔽）"},
    {"PyTorch docs: scaled_dot_product_attention (safe softmax since 2.5)",
     "PyTorch 文档：scaled_dot_product_attention（2.5 起为 safe softmax）"},
    {"Jiang et al. 2023 (Mistral 7B), §2 (rolling buffer cache)",
     "Jiang et al. 2023（Mistral 7B），§2（滚动缓冲缓存）"},
    {"Hugging Face transformers, prepare_inputs_for_generation (position_ids = attention_mask.cumsum(-1) - 1)",
     "Hugging Face transformers 的 prepare_inputs_for_generation（position_ids = attention_mask.cumsum(-1) - 1）"},
    {"\"Transformer（四）\" §10, misconception 2",
     "《Transformer（四）》§10，误区二"},
};

}  // namespace

std::string source_in(Lang lang, const std::string& source)
{
    if (lang != Lang::zh) return source;
    for (const auto& [en, zh] : kSourcesZh)
        if (source == en) return zh;
    // A source of titles and sections alone reads the same in Chinese, with the titles in 《》.
    std::string out;
    for (std::size_t i = 0; i < source.size(); ++i) {
        const bool title_start = source[i] == '"' && (i == 0 || source[i - 1] == ' ');
        if (title_start) {
            const std::size_t end = source.find('"', i + 1);
            if (end != std::string::npos) {
                out += "《" + source.substr(i + 1, end - i - 1) + "》";
                i = end;
                if (i + 1 < source.size() && source[i + 1] == ' ') ++i;
                continue;
            }
        }
        out += source[i];
    }
    return out;
}

}  // namespace attnlab
