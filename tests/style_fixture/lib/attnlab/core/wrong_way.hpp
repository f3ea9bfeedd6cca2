// A core header that includes an experiment: the layering check must refuse it.
#pragma once

#include "attnlab/core/tensor.hpp"
#include "attnlab/experiments/experiment.hpp"
