// cpu_splitk: the CPU twin of cuda_splitk (flash-decoding). The sequence's context is cut into splits of a fixed
// number of keys (so a row's answer never depends on its batch); each split is folded from an empty state, tile
// by tile, and the partial states are then merged in split order. Splits that start after the query's position
// are empty and never read.
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
    Capabilities c;
    c.dtypes = {DType::f32, DType::f16, DType::bf16};
    c.modes = {Mode::decode, Mode::prefill, Mode::continuation};
    c.max_head_dim = kCpuMaxHeadDim;
    c.uses_splits = true;
    return c;
  }
  Output run(const Problem& p, const Knobs& knobs) const override {
    Output out(p.output_size());
    std::vector<CpuSoftmaxState> partials;
    for_each_row(p, [&](const RowProgram& row) {
      const int split = effective_split_size(knobs, row.context_len);
      const int used_splits = row.position / split + 1;  // splits holding a key at or before the query
      partials.resize(used_splits);
      for (int i = 0; i < used_splits; ++i) {
        partials[i].init(p.head_dim);
        fold_key_range(p, row, i * split, std::min((i + 1) * split, row.position + 1), knobs.tile_size, partials[i]);
      }
      CpuSoftmaxState merged;
      merged.init(p.head_dim);
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
    const int splits = (c.num_keys + split - 1) / split;
    ErrorModel m;
    m.logit_coefficient = p.head_dim + 2;
    // Own expf, one per rescale inside the split, the split's merge factor, and one per later merge that raises
    // the merged max (a split whose max tops every earlier split holds a record of the whole row, so those merges
    // number at most the row's records).
    m.weight_error = 2.0 * (2 + records + c.records);
    // Within a split as cpu_streaming; each merge adds a multiply and an add.
    m.accumulation_chain = c.num_keys + records + 2 + 2.0 * splits;
    return m;
  }
};

PACHECK_REGISTER_VARIANT(CpuSplitK);

}  // namespace
}  // namespace pacheck
