// What both kernels of this project declare to pacheck: fp32 storage, every mode, head dims up to 256, and the
// stock fp32_online_softmax error model (fp32 sums, expf, one online softmax over a row's keys).
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "variants/external_variant.h"

using KernelRun = std::function<pacheck::Output(const pacheck::Problem&, const pacheck::Knobs&)>;

inline pacheck::ExternalVariantSpec fp32_online_softmax_variant(std::string name, std::string description,
                                                                KernelRun run) {
  pacheck::ExternalVariantSpec spec;
  spec.name = std::move(name);
  spec.description = std::move(description);
  spec.capabilities.dtypes = {pacheck::DType::f32};
  spec.capabilities.modes = {pacheck::Mode::decode, pacheck::Mode::prefill, pacheck::Mode::continuation};
  spec.capabilities.max_head_dim = 256;
  spec.error_model.stock = pacheck::StockErrorModel::fp32_online_softmax;
  spec.run = std::move(run);
  return spec;
}
