// The tiny decoder `attnlab train` trains, forward and backward, in T = float or double.
// Sizes: B sequences, T positions, N = B T rows, C = d_model, H heads, d = C / H, F = 4 C,
// V vocabulary, P the learned table's rows (max_len).
//
//   x0  = wte[token] (+ wpe[t] learned, + PE(t) sinusoidal)                 [N, C]
//   per layer (pre-norm, as GPT-2):
//     h   = LN1(x);  q, k, v = h W_q, h W_k, h W_v  (W stored [in, out])    [N, C]
//     RoPE rotates q and k (interleaved pairs, base 10000); ALiBi adds -m (i - j); T5 adds
//     rel_bias[bucket(i - j), head], one learned table [32, H] that every layer reads; Shaw
//     adds q_i . rel_k[clip(j - i)] to the score and rel_v[clip(j - i)] to v_j
//     a   = softmax(q k^T / sqrt(d) + bias, causal) v, heads merged         [N, C]
//     x  += a W_o;   x += GELU(LN2(x) W_1 + b_1) W_2 + b_2
//   logits = LN_f(x) W_u                                                     [N, V]
//   loss   = mean cross-entropy over the scored positions
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab::train {

// How position enters: the five schemes of the articles' comparison and T5's bias (the ALiBi
// paper's Fig. 1 compares it too), in the comparison table's order; then Shaw et al.'s
// relative representations, trained on their own (--pe shaw), outside that table.
enum class Scheme { none, sinusoidal, learned, rope, t5, alibi, shaw };
constexpr auto enum_names(Scheme)
{
    return std::array{std::pair{Scheme::none, std::string_view("none")}, std::pair{Scheme::sinusoidal, std::string_view("sinusoidal")},
                      std::pair{Scheme::learned, std::string_view("learned")}, std::pair{Scheme::rope, std::string_view("rope")},
                      std::pair{Scheme::t5, std::string_view("t5")}, std::pair{Scheme::alibi, std::string_view("alibi")},
                      std::pair{Scheme::shaw, std::string_view("shaw")}};
}

// T5's relative bias in a decoder (Raffel et al. 2020 §2.1; Hugging Face's T5Attention with
// is_decoder: bidirectional=False, relative_attention_num_buckets 32, max_distance 128): the
// bucket of key minus query in the causal direction. T5 computes the bias in its first layer
// and hands it to the others, so one table serves every layer. T5 also leaves out the
// 1/sqrt(d) of the scores (its initialisation absorbs it); here q k^T is scaled as in every
// scheme and the bias added after, as ALiBi's is.
constexpr long kT5Buckets = 32, kT5MaxDistance = 128;

// Shaw et al. 2018's relative representations (§3): per layer, tables rel_k and rel_v
// [2K + 1, d] shared by the heads; pair (i, j) reads row clip(j - i, -K, K) + K, adds
// q_i . rel_k to the score before the 1/sqrt(d) and rel_v to v_j in the output. Causal, only
// rows 0..K are read. K = 16: each distance of the default training length has its own row.
constexpr long kShawClip = 16;

struct ModelConfig {
    long vocab = 16;    // V
    long d_model = 64;  // C
    long layers = 2;
    long heads = 4;     // H
    long max_len = 64;  // P: the learned table's rows (the training length)
    Scheme pe = Scheme::alibi;
};

// Where each named parameter sits in one flat buffer, in a fixed order (the checkpoint's and the
// PyTorch fixture's names).
struct Layout {
    struct Entry {
        std::string name;
        std::vector<std::size_t> shape;
        std::size_t offset = 0, size = 0;
    };
    std::vector<Entry> entries;
    std::map<std::string, std::size_t> index;
    std::size_t total = 0;
    const Entry& at(const std::string& name) const { return entries.at(index.at(name)); }
};
Layout model_layout(const ModelConfig& cfg);

// A batch: tokens [B, T], targets [B, T] (-1 where no prediction is scored).
struct Batch {
    long sequences = 0, positions = 0;  // B, T
    std::vector<long> tokens, targets;
};

template <class T>
struct Model {
    ModelConfig cfg;
    Layout layout;
    std::vector<T> params;
    T* p(const std::string& name) { return params.data() + layout.at(name).offset; }
    const T* p(const std::string& name) const { return params.data() + layout.at(name).offset; }
};

// Weights drawn from the seed: matrices and embeddings N(0, 0.02) (GPT-2's), LayerNorm weights 1,
// biases 0.
template <class T>
Model<T> init_model(const ModelConfig& cfg, std::uint64_t seed);

// The forward pass's caches, kept for the backward.
template <class T>
struct Activations {
    long B = 0, T_len = 0;
    std::vector<T> x0;
    struct LayerCache {
        std::vector<T> x_in, ln1, mean1, rstd1, q, k, v, q_rot, k_rot, probs, att, x_mid, ln2, mean2, rstd2, h1, g, tanh_u;
    };
    std::vector<LayerCache> layers;
    std::vector<T> x_final, lnf, meanf, rstdf, logits, d_logits;
};

// The loss of the batch (forward only, caches filled). Throws InputError when a learned table
// has fewer rows than the batch has positions.
template <class T>
double model_forward(const Model<T>& m, const Batch& batch, Activations<T>& act, unsigned threads);
// The gradient of that loss with respect to every parameter (grads sized like m.params).
template <class T>
void model_backward(const Model<T>& m, const Batch& batch, Activations<T>& act, std::vector<T>& grads, unsigned threads);
// Per position [B, T]: 1 where the most likely next token is the target, 0 where it is not,
// -1 where nothing is scored (after a forward); score_hits (train_tasks.hpp) turns them into
// accuracy, exact match and accuracy per position.
template <class T>
std::vector<int> hits(const Activations<T>& act, const Batch& batch, long vocab);

// The AdamW moments and the number of steps taken.
template <class T>
struct Optimizer {
    std::vector<T> m, v;
    long step = 0;
};

struct StepConfig {
    double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.01;  // torch.optim.AdamW's defaults
    double max_norm = 1.0;  // the gradients' global norm is clipped to it (clip_grad_norm_)
    unsigned threads = 0;
};

// One training step: forward, backward, the gradients clipped to max_norm as PyTorch's
// clip_grad_norm_ does (scaled by max_norm / (norm + 1e-6) when that is below 1), one AdamW step.
// Returns the loss before the step.
template <class T>
double train_step(Model<T>& m, Optimizer<T>& opt, const Batch& batch, const StepConfig& cfg);
// The same, reusing the caches and gradients of the step before (a loop of steps then asks the
// allocator for nothing new, and the heap is not shrunk and grown again at every step).
template <class T>
struct StepBuffers {
    Activations<T> act;
    std::vector<T> grads;
};
template <class T>
double train_step(Model<T>& m, Optimizer<T>& opt, const Batch& batch, const StepConfig& cfg, StepBuffers<T>& buffers);

}  // namespace attnlab::train
