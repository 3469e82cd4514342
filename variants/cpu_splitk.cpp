// cpu_splitk: the CPU twin of cuda_splitk (flash-decoding). The context is cut into splits of a fixed number of keys
// (independent of the batch), each folded from an empty state, then merged in order into a state started from the
// row's sink. Splits wholly past the query or before its window are never read.
#include <vector>

#include "variants/cpu_grid.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

class CpuSplitK final : public Variant {
 public:
  std::string name() const override { return "cpu_splitk"; }
  std::string description() const override {
    return "split-K: per-split online-softmax states merged afterwards (the cuda_splitk arithmetic), fp32";
  }
  Capabilities capabilities() const override {
    Capabilities c = cpu_capabilities();
    c.uses_splits = true;
    return c;
  }
  Output run(const Problem& p, const Knobs& knobs) const override {
    Output out(p.output_size());
    std::vector<CpuSoftmaxState> partials;
    for_each_row(p, [&](const RowProgram& row) {
      const int split = effective_split_size(knobs, row.context_len);
      // The splits holding a key the row sees: from its window's start's to its own.
      const int first_split = row.first_key / split, used_splits = row.position / split + 1 - first_split;
      partials.resize(used_splits);
      for (int i = 0; i < used_splits; ++i) {
        const int begin = (first_split + i) * split;
        partials[i].init(p.head_dim);
        fold_key_range(p, row, std::max(begin, row.first_key), std::min(begin + split, row.position + 1),
                       knobs.tile_size, partials[i]);
      }
      // The reduce starts from the sink, so it joins the row once, not once per split.
      CpuSoftmaxState merged;
      merged.init(p.head_dim);
      fold_sink(p, row, merged);
      for (const CpuSoftmaxState& partial : partials) merged.merge(partial, p.head_dim);
      store_output(p, row, merged, out.data());
    });
    return out;
  }
  ErrorModel error_model(const Problem& p, const OracleResult& oracle, std::size_t row,
                         const Knobs& knobs) const override {
    const RowCondition& c = oracle.rows[row];
    const int split = effective_split_size(knobs, c.context_len);
    const int records = oracle.records_in_splits(row, split);
    const int splits = c.chunks(split);
    ErrorModel m;
    m.logit_coefficient = fp32_logit_coefficient(p);
    // Own expf, one per rescale in the split, its merge factor, one per later merge raising the max (a row record).
    m.weight_error = 2.0 * (2 + records + c.records);
    // Within a split as cpu_streaming; each merge adds a multiply and an add.
    m.accumulation_chain = c.num_keys + c.has_sink + records + 2 + 2.0 * splits + (p.fp8_cache ? 1 : 0);
    return m;
  }
};

PACHECK_REGISTER_VARIANT(CpuSplitK);

}  // namespace
}  // namespace pacheck
