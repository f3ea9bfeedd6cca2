#include "attnlab/experiments/facts.hpp"

namespace attnlab {

namespace {

struct FactRow {
    const char* id;
    const char* section;
    const char* where;
    const char* statement_en;
    const char* statement_zh;
    FactVerdict verdict;
    const char* source;
    const char* source_value;
    const char* source_value_zh;  // null: the same (a quotation)
};

// One table. Config values are transcribed from the files named (Hugging Face model
// repositories), model-card sentences quoted, papers dated by their first arXiv version.
const FactRow kFacts[] = {
    {"llama2_base_doubled", "pe", "\"Attention 的两个补丁\" §2.1 and FAQ Q6",
     "LLaMA-2 raised the base to 10000 x 2", "LLaMA-2 把 base 改成了 10000×2", FactVerdict::contradicted,
     "meta-llama/Llama-2-7b-hf, config.json", "\"rope_theta\": 10000.0 (and a RoPE base, not a sinusoidal table's)",
     "\"rope_theta\": 10000.0（而且这是 RoPE 的 base，不是正弦表的）"},
    {"gpt_neox_base_quadrupled", "pe", "\"Attention 的两个补丁\" §2.1 and FAQ Q6",
     "GPT-NeoX raised the base to 10000 x 4", "GPT-NeoX 把 base 改成了 10000×4", FactVerdict::contradicted,
     "EleutherAI/gpt-neox-20b, config.json", "\"rotary_emb_base\": 10000 (a RoPE base)", "\"rotary_emb_base\": 10000（RoPE 的 base）"},
    {"baichuan_7b_uses_rope", "rope", "\"Attention 的两个补丁\" §3 (opening), §1.3 and §4.3 tables",
     "Baichuan uses RoPE: Baichuan-7B", "Baichuan 使用 RoPE：Baichuan-7B", FactVerdict::confirmed,
     "baichuan-inc/Baichuan-7B, model card", "\"Position Embedding: 采用 rotary-embedding\"", nullptr},
    {"baichuan_13b_uses_rope", "rope", "\"Attention 的两个补丁\" §3 (opening), §1.3 and §4.3 tables",
     "Baichuan uses RoPE: Baichuan-13B", "Baichuan 使用 RoPE：Baichuan-13B", FactVerdict::contradicted,
     "baichuan-inc/Baichuan-13B-Base, model card", "\"使用 ALiBi 位置编码，上下文窗口长度为 4096\" (uses ALiBi)", "\"使用 ALiBi 位置编码，上下文窗口长度为 4096\""},
    {"roformer_llama7b_perplexities", "rope", "\"Attention 的两个补丁\" FAQ Q16",
     "the RoPE paper compares RoPE and sinusoidal perplexity on LLaMA-7B at L = 512, 2048 and 4096",
     "RoPE 论文在 LLaMA-7B 上比较了 L = 512、2048、4096 时 RoPE 与 sinusoidal 的 perplexity", FactVerdict::contradicted,
     "RoFormer (Su et al., arXiv 2104.09864v1); LLaMA (Touvron et al., arXiv 2302.13971v1)",
     "RoFormer appeared on 20 April 2021, LLaMA on 27 February 2023; RoFormer's experiments are WMT 2014 En-De, "
     "BERT pre-training with GLUE, Performer on Enwik8, and CAIL2019-SCM",
     "RoFormer 发表于 2021 年 4 月 20 日，LLaMA 发表于 2023 年 2 月 27 日；RoFormer 的实验是 WMT 2014 英德翻译、BERT 预训练加 GLUE、"
     "Enwik8 上的 Performer 和 CAIL2019-SCM"},
    {"llama2_extends_context_with_dynamic_ntk", "rope", "\"Attention 的两个补丁\" FAQ Q17",
     "Llama-2's context extension uses Dynamic NTK", "Llama-2 的上下文长度扩展用的就是 Dynamic NTK", FactVerdict::ambiguous,
     "Effective Long-Context Scaling of Foundation Models (Xiong et al., arXiv 2309.16039), §2; Hugging Face transformers, "
     "rope_scaling {\"type\": \"dynamic\"} for Llama",
     "Meta's own extension, Llama 2 Long, is trained further with the RoPE base raised once from 10000 to 500000 (adjusted base "
     "frequency), not Dynamic NTK; but running Llama-2 past 4096 tokens with Hugging Face's dynamic scaling is common practice, "
     "so the sentence is true of the community's extension and not of Meta's",
     "Meta 自己的扩展 Llama 2 Long 是在继续训练时把 RoPE 的 base 从 10000 一次性调到 500000（adjusted base frequency），不是 Dynamic NTK；"
     "但用 Hugging Face 的 dynamic 缩放让 Llama-2 跑过 4096 个 token 是常见做法，所以这句话对社区的扩展成立，对 Meta 的不成立"},
    {"roformer_calls_rope_vectorised_sinusoidal", "rope", "\"Attention 的两个补丁\" §3.4 tip and FAQ Q9",
     "the RoPE paper says RoPE can be understood as a 'vectorised' form of sinusoidal PE",
     "RoPE 论文明确说 RoPE 可以被理解为 sinusoidal PE 的一种“向量化”形式", FactVerdict::not_in_source,
     "RoFormer (Su et al., arXiv 2104.09864v5), §3.2 and §3.4",
     "no such sentence; what RoFormer says of the relation is that, in contrast to the additive position embeddings before it, "
     "its approach is multiplicative, and it keeps the sinusoidal frequencies theta_i = 10000^(-2(i-1)/d)",
     "没有这句话；RoFormer 讲二者关系时说的是：与此前加性的位置编码不同，它的做法是乘性的，并沿用正弦编码的频率 theta_i = 10000^(-2(i-1)/d)"},
    {"press_bias_is_symmetric", "alibi", "\"Attention 的两个补丁\" §4.1 formula (ALiBi（Press et al., 2022）… − m · |i - j|)",
     "Press et al. define ALiBi's bias as -m |i - j|, for keys on both sides of the query",
     "Press et al. 定义的 ALiBi 偏置是 -m |i - j|，查询两侧的键都加", FactVerdict::not_in_source,
     "Train Short, Test Long (Press et al., arXiv 2108.12409v2), §3",
     "the paper defines the bias for causal language models only: query i adds m [-(i-1), ..., -2, -1, 0] to its scores on keys "
     "j <= i, which is -m |i - j| there; a bias for keys after the query (bidirectional attention) is not in the paper",
     "论文只为因果语言模型定义偏置：查询 i 在键 j <= i 的得分上加 m [-(i-1), ..., -2, -1, 0]，在这些键上等于 -m |i - j|；"
     "查询之后的键（双向注意力）的偏置，论文里没有"},
    {"alibi_train_1024_infer_8192", "length", "\"Attention 的两个补丁\" §4 小结 and FAQ Q18",
     "ALiBi trained at L = 1024 keeps its quality at L = 8192 in the original paper, where sinusoidal degrades from L = 2048",
     "原论文中 ALiBi 在 L = 1024 上训练、在 L = 8192 上推理仍保持质量，而 sinusoidal 从 L = 2048 起就变差", FactVerdict::confirmed,
     "Train Short, Test Long (Press et al., arXiv 2108.12409v2), Figure 1 (right) and Table 3",
     "WikiText-103 models trained on L = 1024: ALiBi's perplexity stays near its L = 1024 value out to 16000 tokens, while "
     "the sinusoidal model's rises steeply soon past L",
     "在 L = 1024 上训练的 WikiText-103 模型：ALiBi 的 perplexity 到 16000 个 token 仍接近 L = 1024 时的值，而 sinusoidal 模型过了 L 不久就急剧上升"},
    {"mistral_uses_alibi", "alibi", "\"Attention 的两个补丁\" API list, §1.3 and §4.3 tables",
     "some Mistral versions use ALiBi", "部分 Mistral 版本使用 ALiBi", FactVerdict::contradicted,
     "mistralai/Mistral-7B-v0.1 and Mistral-7B-Instruct-v0.2, config.json; Mistral 7B (Jiang et al., arXiv 2310.06825)",
     "\"rope_theta\": 10000.0 (v0.1), 1000000.0 (v0.2): RoPE, with a 4096-token sliding window in v0.1; no ALiBi",
     "\"rope_theta\": 10000.0（v0.1）、1000000.0（v0.2）：用的是 RoPE，v0.1 另有 4096 个 token 的滑动窗口；没有 ALiBi"},
};

}  // namespace

std::vector<TourFact> article_facts(const std::string& section, Lang lang)
{
    std::vector<TourFact> out;
    for (const FactRow& f : kFacts)
        if (section == f.section)
            out.push_back({f.id, f.section, f.where, lang == Lang::zh ? f.statement_zh : f.statement_en, f.verdict, f.source,
                           lang == Lang::zh && f.source_value_zh != nullptr ? f.source_value_zh : f.source_value});
    return out;
}

}  // namespace attnlab
