// cpu_streaming: the fused kernel on the CPU. Each program starts from its sink (if any), then folds its window of
// the history a tile at a time, read through the block table with masked loads (masked scores -inf).
#include "variants/cpu_grid.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

class CpuStreaming final : public Variant {
 public:
  std::string name() const override { return "cpu_streaming"; }
  std::string description() const override { return "tiled online softmax through the block table, fp32"; }
  Capabilities capabilities() const override { return cpu_capabilities(); }
  Output run(const Problem& p, const Knobs& knobs) const override {
    Output out(p.output_size());
    for_each_row(p, [&](const RowProgram& row) {
      CpuSoftmaxState state;
      state.init(p.head_dim);
      fold_sink(p, row, state);
      fold_key_range(p, row, row.first_key, row.position + 1, knobs.tile_size, state);
      store_output(p, row, state, out.data());
    });
    return out;
  }
  ErrorModel error_model(const Problem& p, const OracleResult& oracle, std::size_t row, const Knobs&) const override {
    const RowCondition& c = oracle.rows[row];
    ErrorModel m;
    m.logit_coefficient = fp32_logit_coefficient(p);
    // expf is within 1 ulp (2u); each rescale multiplies the key's weight by one more expf result.
    m.weight_error = 2.0 * (1 + c.records);
    // An fp8 cache's V dequantised, the product, the sequential adds (the sink's one more), one multiply a rescale.
    m.accumulation_chain = c.num_keys + c.has_sink + c.records + 2 + (p.fp8_cache ? 1 : 0);
    return m;
  }
};

PACHECK_REGISTER_VARIANT(CpuStreaming);

}  // namespace
}  // namespace pacheck
