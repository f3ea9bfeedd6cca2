// Reference data the program carries inside itself, made by data/make_fixtures.py and
// embedded at build time, so that a claim about PyTorch can be measured without PyTorch.
#pragma once

#include <vector>

namespace attnlab {

// data/fixtures/nn_transformer_encoder.npy: [3, 5, 8] float64 holding X, Enc(X) and Enc(PX)
// for torch.nn.TransformerEncoder and the permutation 2, 0, 4, 1, 3.
const std::vector<unsigned char>& nn_transformer_encoder_npy();

// data/fixtures/nn_transformer_src_mask.npy: [6, 5, 8] float64 holding src, src' (its last
// token redrawn), torch.nn.Transformer's encoder output (memory) for each with the default
// masks, and for each with src_mask = generate_square_subsequent_mask(5).
const std::vector<unsigned char>& nn_transformer_src_mask_npy();

}  // namespace attnlab
