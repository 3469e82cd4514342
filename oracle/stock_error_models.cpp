// The stock error models and explicit coefficients (stock_error_models.h); ERROR_MODEL.md derives each term.
#include "oracle/stock_error_models.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace pacheck {
namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// An mma's error in units of u, relative to |C| + sum |A_k B_k| (ERROR_MODEL.md, "Tensor cores").
constexpr double kMmaError = 72;
// hi + lo is an fp32 weight within 2^-18 = 64 u in bf16, 2^-22 = 4 u in fp16 (lo normal; else weight_underflow).
constexpr double kBf16WeightSplitError = 64;
constexpr double kFp16WeightSplitError = 4;
constexpr int kTensorCoreTileKeys = 64;
constexpr int kTensorCoreWarps = 4;

constexpr std::array<std::pair<const char*, StockErrorModel>, 4> kStockModels{
    {{"fp32_online_softmax", StockErrorModel::fp32_online_softmax},
     {"fp32_split_k", StockErrorModel::fp32_split_k},
     {"bf16_tensor_cores", StockErrorModel::bf16_tensor_cores},
     {"fp16_tensor_cores", StockErrorModel::fp16_tensor_cores}}};

}  // namespace

ErrorModel tiled_kernel_error_model(const Problem& p, const OracleResult& oracle, std::size_t row,
                                    const TiledKernelShape& shape, int split_size) {
  const RowCondition& c = oracle.rows[row];
  const bool split_k = split_size > 0;
  // The keys one block walks for the row's item: the whole context (fused) or one split.
  const int item_keys = split_k ? std::min(split_size, c.context_len) : c.context_len;
  const int records_in_item = split_k ? oracle.records_in_splits(row, split_size) : c.records;
  const int splits = split_k ? c.chunks(split_size) : 1;

  ErrorModel m;
  // expf within 2 ulp (4u): a weight's own, one per later raise of its item's max; split-K adds its merge factor and
  // each later merge that raises the max (at most the row's records).
  m.weight_error = split_k ? 4.0 * (2 + records_in_item + c.records) : 4.0 * (1 + records_in_item);
  // Each merge adds a multiply and an add to every term already merged.
  const double merge_chain = split_k ? 2.0 * splits : 0.0;
  const int sink = c.has_sink ? 1 : 0;
  // An fp8 cache's dequantisation rounds each term of the logit and of P V once ("fp8 caches").
  const int dequantisation = p.fp8_cache ? 1 : 0;
  if (!shape.tensor_cores) {
    m.logit_coefficient = fp32_logit_coefficient(p);
    // A term's roundings: the adds of its key group's sum (the sink's one more), each rescale, the groups' adds.
    m.accumulation_chain = c.num_keys + sink + records_in_item + shape.key_groups + 2 + merge_chain + dequantisation;
    return m;
  }
  // bf16 hi and lo lose at most 2^-126 each, even if subnormals are flushed; fp16's half its subnormal spacing,
  // 2^-25 (the mma honours fp16 subnormals: a flush would fail the catalogue at once).
  m.weight_underflow = shape.fp16_operands ? 0x1p-25 : 0x1p-126;
  const double weight_split = shape.fp16_operands ? kFp16WeightSplitError : kBf16WeightSplitError;
  // A logit is ceil(head_dim / 16) chained mma steps, then the scale multiply, then the options in fp32.
  m.logit_coefficient = kMmaError * ceil_div(p.head_dim, 16) + 2 + fp32_logit_option_cost(p) + dequantisation;
  // A P V term passes the two mmas (hi, lo) of every tile of its item, the weight split, the rescales, the warp
  // sums, the merges, and 4 for the end's adds (the denominator's chain is far shorter).
  const int tile = std::max(1, shape.tile_keys);
  m.accumulation_chain = kMmaError * 2 * ceil_div(item_keys, tile) + weight_split + records_in_item +
                         shape.key_groups + 2 + 2 + sink + merge_chain + dequantisation;
  return m;
}

const char* stock_error_model_name(StockErrorModel model) {
  for (const auto& [name, value] : kStockModels)
    if (value == model) return name;
  return "fp32_online_softmax";
}

std::optional<StockErrorModel> parse_stock_error_model(const std::string& name) {
  for (const auto& [text, value] : kStockModels)
    if (name == text) return value;
  return std::nullopt;
}

std::string stock_error_model_names() {
  std::string names;
  for (const auto& entry : kStockModels) names += (names.empty() ? "" : ", ") + std::string(entry.first);
  return names;
}

std::string coefficients_problem(const ErrorCoefficients& k) {
  const std::pair<const char*, double> terms[] = {
      {"logit_constant", k.logit_constant},       {"logit_per_head_dim", k.logit_per_head_dim},
      {"weight_constant", k.weight_constant},     {"weight_per_record", k.weight_per_record},
      {"weight_per_split", k.weight_per_split},   {"chain_constant", k.chain_constant},
      {"chain_per_key", k.chain_per_key},         {"chain_per_record", k.chain_per_record},
      {"chain_per_split", k.chain_per_split},     {"chain_per_tile", k.chain_per_tile},
      {"weight_underflow", k.weight_underflow},   {"accumulator_unit_roundoff", k.accumulator_unit_roundoff},
      {"absolute_error", k.absolute_error},
      {"absolute_error_per_v_scale", k.absolute_error_per_v_scale},
      {"soft_cap_logit_constant", k.soft_cap_logit_constant}};
  for (const auto& [name, value] : terms)
    if (!std::isfinite(value) || value < 0)
      return std::string(name) + " must be finite and non-negative, got " + std::to_string(value);
  if (!(k.accumulator_unit_roundoff > 0 && k.accumulator_unit_roundoff < 1))
    return "accumulator_unit_roundoff must lie in (0, 1), got " + std::to_string(k.accumulator_unit_roundoff);
  if (!(k.weight_underflow < 1)) return "weight_underflow must lie in [0, 1), got " + std::to_string(k.weight_underflow);
  return "";
}

ErrorModel declared_error_model(const DeclaredErrorModel& declared, const Problem& p, const OracleResult& oracle,
                                std::size_t row, const Knobs& knobs, bool split_k) {
  const RowCondition& c = oracle.rows[row];
  const int split_size = split_k ? effective_split_size(knobs, c.context_len) : 0;
  if (declared.stock) {
    switch (*declared.stock) {
      case StockErrorModel::fp32_online_softmax:
        // One key group covers any tiling and order: a term passes at most num_keys - 1 adds.
        return tiled_kernel_error_model(p, oracle, row, TiledKernelShape{false, false, 1, 1}, 0);
      case StockErrorModel::fp32_split_k:
        return tiled_kernel_error_model(p, oracle, row, TiledKernelShape{false, false, 1, 1},
                                        effective_split_size(knobs, c.context_len));
      case StockErrorModel::bf16_tensor_cores:
      case StockErrorModel::fp16_tensor_cores: {
        TiledKernelShape shape;
        shape.tensor_cores = true;
        shape.fp16_operands = *declared.stock == StockErrorModel::fp16_tensor_cores;
        shape.tile_keys = std::min(std::max(1, knobs.tile_size), kTensorCoreTileKeys);
        shape.key_groups = kTensorCoreWarps;
        return tiled_kernel_error_model(p, oracle, row, shape, split_size);
      }
    }
  }
  const ErrorCoefficients& k = declared.coefficients;
  const int records = split_k ? oracle.records_in_splits(row, split_size) : c.records;
  // Splits and tiles count from position 0: a window starting inside one counts it whole.
  const int splits = split_k ? c.chunks(split_size) : 1;
  const int tiles = c.chunks(std::max(1, knobs.tile_size));
  ErrorModel m;
  // The coefficients describe the plain logit; the options add their fp32 cost (and a soft cap's declared extra), a
  // sink is one more key, an fp8 cache one rounding of each term of the logit and P V.
  const int dequantisation = p.fp8_cache ? 1 : 0;
  const double soft_cap = p.options.soft_cap ? k.soft_cap_logit_constant : 0;
  m.logit_coefficient =
      k.logit_constant + k.logit_per_head_dim * p.head_dim + fp32_logit_option_cost(p) + soft_cap + dequantisation;
  m.weight_error = k.weight_constant + k.weight_per_record * records + k.weight_per_split * splits;
  m.accumulation_chain = k.chain_constant + k.chain_per_key * (c.num_keys + (c.has_sink ? 1 : 0)) +
                         k.chain_per_record * records + k.chain_per_split * splits + k.chain_per_tile * tiles +
                         dequantisation;
  m.accumulator_unit_roundoff = k.accumulator_unit_roundoff;
  m.weight_underflow = k.weight_underflow;
  // A loss before the V scale is multiplied by the row's KV head's scale.
  const int head = static_cast<int>(row % static_cast<std::size_t>(p.num_query_heads));
  const double v_scale = p.fp8_cache ? p.fp8_cache->v_scale(p.kv_head_of(head)) : 0;
  m.absolute_error = k.absolute_error + k.absolute_error_per_v_scale * v_scale;
  return m;
}

}  // namespace pacheck
