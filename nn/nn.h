// The nn/ umbrella: modules, layers and initialisation.
//
//   #include <anatomy/nn/nn.h>
//   auto model = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::ReLU>(),
//                                                 std::make_shared<nn::Linear>(8, 1));
#pragma once

#include "anatomy/nn/activation.h"
#include "anatomy/nn/attention.h"
#include "anatomy/nn/channel_norm.h"
#include "anatomy/nn/container.h"
#include "anatomy/nn/conv.h"
#include "anatomy/nn/flatten.h"
#include "anatomy/nn/init.h"
#include "anatomy/nn/linear.h"
#include "anatomy/nn/module.h"
#include "anatomy/nn/normalization.h"
#include "anatomy/nn/pooling.h"
#include "anatomy/nn/safetensors.h"
#include "anatomy/nn/transformer.h"
#include "anatomy/nn/upsampling.h"
