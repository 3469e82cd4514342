// The GPU suite (ctest label `gpu`): one gtest per (property, variant), e.g.
// GpuCatalogue/GpuPropertyTest.Holds/UlpBoundedAgreement__cuda_fused, on the general draw and on serving-engine shapes
// (GpuEngineShapes: where the tensor copies run), each with production's kernel choices, pinned deep with the
// warp-per-row merge (...Deep), and pinned wide (...Wide); the pins travel in each case file. RC_PARAMS sets the case
// counts; without a device every test skips with the reason. At the end it prints each variant and dtype's worst
// error against its bound (as JSON to $PACHECK_GPU_SUMMARY when set; bench/RESULTS.md quotes them). Each process first
// selects the GPU ctest assigned it (RESOURCE_GROUPS "gpus:1") and prints it.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/device_probe.h"
#include "cuda/device_problem.h"
#include "cuda/paged_attention.h"
#include "cuda/plan_on_device.h"
#include "tests/fixtures/problem_builders.h"
#include "properties/agreement.h"
#include "properties/catalogue.h"
#include "tests/fixtures/property_in_gtest.h"

namespace pacheck {
namespace {

// Before any test touches CUDA: selects the GPU ctest assigned this process and prints it.
class GpuSelection : public ::testing::Environment {
 public:
  void SetUp() override {
    try {
      std::printf("gpu_catalogue_test: %s\n", use_ctest_assigned_gpu().c_str());
    } catch (const std::exception& e) {
      // Not a gtest failure, which gtest would report as skipped tests.
      std::fprintf(stderr, "error: %s\n", e.what());
      std::exit(2);
    }
  }
};
const auto* const g_gpu_selection = ::testing::AddGlobalTestEnvironment(new GpuSelection);

// The worst element of every case each (variant, dtype) pair saw, over all properties.
struct WorstError {
  long cases = 0;
  double normalized = 0;  // error / bound of the worst element
  double error = 0;
  double bound = 0;
  double ulps = 0;        // the largest ulp distance seen (not necessarily the same element)
};
std::map<std::pair<std::string, DType>, WorstError> g_worst;
std::mutex g_worst_mutex;

void record(const std::string& variant, const CaseObservation& c) {
  if (!c.agreement) return;
  const std::lock_guard<std::mutex> lock(g_worst_mutex);
  WorstError& w = g_worst[{variant, c.problem.dtype}];
  ++w.cases;
  const ElementError& e = c.agreement->worst;
  if (e.normalized() >= w.normalized) {
    w.normalized = e.normalized();
    w.error = e.error;
    w.bound = e.bound;
  }
  w.ulps = std::max(w.ulps, c.agreement->worst_ulps);
}

class WorstErrorReport : public ::testing::Environment {
 public:
  void TearDown() override {
    if (g_worst.empty()) return;
    std::printf("\nworst element per variant and dtype (error / bound over every checked case):\n");
    std::printf("%-14s %-5s %8s %12s %12s %10s %8s\n", "variant", "dtype", "cases", "error", "bound", "err/bound",
                "ulps");
    nlohmann::json json = nlohmann::json::array();
    for (const auto& [key, w] : g_worst) {
      const std::string dtype(dtype_name(key.second));
      std::printf("%-14s %-5s %8ld %12.4g %12.4g %10.4f %8.3g\n", key.first.c_str(), dtype.c_str(), w.cases, w.error,
                  w.bound, w.normalized, w.ulps);
      json.push_back({{"variant", key.first}, {"dtype", dtype}, {"cases", w.cases}, {"worst_error", w.error},
                      {"bound_at_worst", w.bound}, {"worst_error_over_bound", w.normalized}, {"worst_ulps", w.ulps}});
    }
    if (const char* path = std::getenv("PACHECK_GPU_SUMMARY")) std::ofstream(path) << json.dump(2) << "\n";
  }
};
const auto* const g_report = ::testing::AddGlobalTestEnvironment(new WorstErrorReport);

struct PropertyOnVariant {
  const Property* property;
  const Variant* variant;
  bool engine_shapes;  // gen::Limits::engine_shapes: the shapes where the tensor-core kernel's tensor copies run
  // The catalogue's grids mostly get wide-evict-first and the lanes merge automatically: hence the pinned suites.
  KernelPins pins;
};

std::vector<PropertyOnVariant> gpu_pairs(bool engine_shapes, KernelPins pins) {
  std::vector<PropertyOnVariant> pairs;
  for (const Property& p : catalogue())
    for (const Variant* v : Registry::instance().variants())
      if (v->capabilities().needs_gpu && p.applies(v->capabilities()))
        pairs.push_back({&p, v, engine_shapes, pins});
  return pairs;
}

void PrintTo(const PropertyOnVariant& p, std::ostream* os) { *os << p.property->name << " on " << p.variant->name(); }

class GpuPropertyTest : public ::testing::TestWithParam<PropertyOnVariant> {};

TEST_P(GpuPropertyTest, Holds) {
  PACHECK_SKIP_WITHOUT_GPU();
  PropertyContext ctx;
  ctx.variant = GetParam().variant;
  ctx.limits = limits_for(ctx.variant->capabilities());
  ctx.limits.engine_shapes = GetParam().engine_shapes;
  ctx.limits.pins = GetParam().pins;  // every drawn case carries them, so its case file replays these kernels
  ctx.replay_program = PACHECK_BINARY;
  const std::string variant = ctx.variant->name();
  ctx.observer = [variant](const CaseObservation& c) { record(variant, c); };
  const Property& property = *GetParam().property;
  test_support::check_property(property, ctx);
}

std::string test_name(const ::testing::TestParamInfo<PropertyOnVariant>& info) {
  return info.param.property->name + "__" + info.param.variant->name();
}
constexpr KernelPins kAutomatic{};
constexpr KernelPins kDeep{KernelLayout::deep, MergeShape::warps};
constexpr KernelPins kWide{KernelLayout::wide, MergeShape::automatic};
INSTANTIATE_TEST_SUITE_P(GpuCatalogue, GpuPropertyTest, ::testing::ValuesIn(gpu_pairs(false, kAutomatic)), test_name);
INSTANTIATE_TEST_SUITE_P(GpuCatalogueDeep, GpuPropertyTest, ::testing::ValuesIn(gpu_pairs(false, kDeep)), test_name);
INSTANTIATE_TEST_SUITE_P(GpuCatalogueWide, GpuPropertyTest, ::testing::ValuesIn(gpu_pairs(false, kWide)), test_name);
INSTANTIATE_TEST_SUITE_P(GpuEngineShapes, GpuPropertyTest, ::testing::ValuesIn(gpu_pairs(true, kAutomatic)),
                         test_name);
INSTANTIATE_TEST_SUITE_P(GpuEngineShapesDeep, GpuPropertyTest, ::testing::ValuesIn(gpu_pairs(true, kDeep)),
                         test_name);
INSTANTIATE_TEST_SUITE_P(GpuEngineShapesWide, GpuPropertyTest, ::testing::ValuesIn(gpu_pairs(true, kWide)),
                         test_name);

// "" when every element of got equals expected's (NaN equals nothing), else how many differ and the first of them.
std::string differing_elements(const Output& got, const Output& expected) {
  if (got.size() != expected.size())
    return "sizes " + std::to_string(got.size()) + " and " + std::to_string(expected.size());
  std::size_t differing = 0, first = 0;
  for (std::size_t i = got.size(); i-- > 0;)
    if (!(got[i] == expected[i])) ++differing, first = i;
  if (differing == 0) return "";
  return std::to_string(differing) + " of " + std::to_string(got.size()) + " elements differ, the first at " +
         std::to_string(first) + ": " + std::to_string(got[first]) + " instead of " + std::to_string(expected[first]);
}

// One valid sequence of `context` keys and `queries` tokens in GQA groups of `gqa`: identity block table, values by
// testing::wobble rounded to the dtype.
Problem gqa_sequence(int context, int queries, int kv_heads, int gqa, int head_dim, int block_size, DType dtype) {
  Problem p = testing::single_sequence(context, queries, kv_heads, head_dim, block_size, testing::wobble, dtype);
  p.num_query_heads = kv_heads * gqa;
  p.queries.resize(static_cast<std::size_t>(queries) * p.num_query_heads * head_dim);
  for (std::size_t i = 0; i < p.queries.size(); ++i)
    p.queries[i] = round_to_dtype_f(testing::wobble(static_cast<int>(i) + 7), dtype);
  validate(p);
  return p;
}

// The split-K merge starts while the attention kernel runs; only griddepcontrol.wait keeps it from reading partial
// states before they are stored. One plan launched back to back on two problems of one shape (the second's V
// negated) must give each the answer of a plan launched once; a merge that read too early would take the other's
// partial states. Batch 1, 32 splits of 512 keys: the merge starts long before the attention kernel ends.
TEST(GpuSplitK, APlanLaunchedAgainMergesOnlyThatLaunchsPartialStates) {
  PACHECK_SKIP_WITHOUT_GPU();
  using namespace cuda;
  constexpr int kContext = 16384, kKvHeads = 8, kGqa = 4, kHeadDim = 128, kBlockSize = 16, kSplit = 512;
  for (const DType dtype : {DType::bf16, DType::f16, DType::f32}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Problem a = gqa_sequence(kContext, 1, kKvHeads, kGqa, kHeadDim, kBlockSize, dtype);
    Problem b = a;
    for (float& v : b.v_pool) v = -v;
    validate(b);
    const DeviceProblem device_a(a), device_b(b);
    const AttentionPlan host_plan =
        plan_attention(device_a.sequences(), a.num_query_heads, kKvHeads, kBlockSize, {kSplit});
    const auto answer_of_a_plan_launched_once = [&](const DeviceProblem& device) {
      const PlanOnDevice once(host_plan, kKvHeads, kHeadDim);
      launch_attention(device.batch(), once.view(), {}, nullptr);
      check_completion(nullptr, "cuda_splitk");
      return device.download_output();
    };
    const Output expected_a = answer_of_a_plan_launched_once(device_a);
    // Negating V negates every output exactly where the arithmetic is sign-symmetric (round to nearest); the tensor
    // cores' accumulation is not, and this checks its symmetry on the device.
    Output expected_b = expected_a;
    for (float& x : expected_b) x = -x;
    ASSERT_EQ(differing_elements(answer_of_a_plan_launched_once(device_b), expected_b), "")
        << "problem b, a plan launched once";

    const PlanOnDevice shared(host_plan, kKvHeads, kHeadDim);
    for (int round = 0; round < 20; ++round) {
      // Poisoned, so that a launch that writes nothing cannot pass on an earlier round's answer.
      for (const DeviceProblem* device : {&device_a, &device_b})
        cuda_check(cudaMemsetAsync(device->batch().output, 0xff,
                                   a.output_size() * storage_bytes(device->batch().storage), nullptr),
                   "poisoning the output");
      for (int launch = 0; launch < 8; ++launch)
        launch_attention((launch % 2 == 0 ? device_a : device_b).batch(), shared.view(), {}, nullptr);
      check_completion(nullptr, "cuda_splitk");
      ASSERT_EQ(differing_elements(device_a.download_output(), expected_a), "") << "problem a, round " << round;
      ASSERT_EQ(differing_elements(device_b.download_output(), expected_b), "") << "problem b, round " << round;
    }
  }
}

// The kernels store several lanes at a time where the output is aligned for it, one elsewhere (write_item_result,
// merge_splits_kernel); the catalogue's outputs come from cudaMalloc, so only these tests run the lane-a-thread
// stores at head dims a multiple of 4. One plan (split_sizes empty: fused) launched into the cudaMalloc'd output and
// into one an element past it must write the same bytes, in bf16, fp16 and fp32.
void expect_a_shifted_output_gets_the_same_bits(const std::vector<int>& split_sizes, const KernelPins& pins,
                                                const char* variant) {
  using namespace cuda;
  constexpr int kContext = 300, kQueries = 3, kKvHeads = 2, kGqa = 4, kHeadDim = 128, kBlockSize = 16;
  for (const DType dtype : {DType::bf16, DType::f16, DType::f32}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Problem p = gqa_sequence(kContext, kQueries, kKvHeads, kGqa, kHeadDim, kBlockSize, dtype);
    const DeviceProblem device(p);
    const PlanOnDevice plan(plan_attention(device.sequences(), p.num_query_heads, kKvHeads, 64, split_sizes),
                            kKvHeads, kHeadDim);
    launch_attention(device.batch(), plan.view(), pins, nullptr);
    check_completion(nullptr, variant);
    const std::size_t element = storage_bytes(device.batch().storage);
    const std::size_t bytes = p.output_size() * element;
    DeviceBuffer<unsigned char> aligned(bytes);
    cuda_check(cudaMemcpy(aligned.get(), device.batch().output, bytes, cudaMemcpyDeviceToDevice),
               "copying the output");

    DeviceBuffer<unsigned char> shifted_buffer(bytes + element);
    cuda_check(cudaMemset(shifted_buffer.get(), 0xff, bytes + element), "poisoning the output");
    DeviceBatch shifted = device.batch();
    shifted.output = shifted_buffer.get() + element;
    launch_attention(shifted, plan.view(), pins, nullptr);
    check_completion(nullptr, variant);
    const std::vector<unsigned char> want = aligned.download(), all = shifted_buffer.download();
    std::size_t differing = 0;
    for (std::size_t i = 0; i < bytes; ++i) differing += all[i + element] != want[i];
    EXPECT_EQ(differing, 0u) << "bytes of the output that differ between an aligned and a shifted output";
  }
}

TEST(GpuFused, AnOutputAlignedOnlyToItsElementGetsTheSameBits) {
  PACHECK_SKIP_WITHOUT_GPU();
  expect_a_shifted_output_gets_the_same_bits({}, {}, "cuda_fused");
}

// Split-K with the merge's warp shape pinned (four lanes a thread; production picks it from batch 8 up).
TEST(GpuSplitK, AnOutputAlignedOnlyToItsElementGetsTheSameBits) {
  PACHECK_SKIP_WITHOUT_GPU();
  expect_a_shifted_output_gets_the_same_bits({64}, KernelPins{KernelLayout::automatic, MergeShape::warps},
                                             "cuda_splitk");
}

// Validates p, runs `variant` on it at tile and split size 64 into `got`, and expects every element within the
// variant's bound against the oracle; `what` names the case.
void expect_within_bound(const Problem& p, const Variant& variant, const std::string& what, Output& got) {
  validate(p);
  ASSERT_TRUE(covers(variant.capabilities(), p)) << coverage_gap(variant.capabilities(), p);
  Knobs knobs;
  knobs.tile_size = 64;
  knobs.split_size = 64;
  const OracleResult oracle = run_oracle(p, oracle_split_sizes(p, knobs));
  got = variant.run(p, knobs);
  const Agreement agreement = compare_with_oracle(p, oracle, variant, knobs, got);
  EXPECT_TRUE(agreement.ok) << what << ": " << describe_failure(p, variant, knobs, agreement);
}

// Every fp8 byte must be read as its value (subnormals, largest values, infinities, NaN): each byte stands in K and
// V of one sequence at every dim position (key k, dim d: byte (k + 37 d) % 256, V another permutation); a second
// sequence holds only finite values, so its rows stay finite. Every element within the bound (NaN where the oracle's
// is), with per-KV-head scales not powers of two; head dims 16 (padded rows) and 128 (swizzled); the softmax scale
// keeps the largest logits finite.
std::vector<std::uint8_t> fp8_bytes_in_every_position(int keys, int head_dim, int multiplier, bool finite_only,
                                                      Fp8Format format) {
  std::vector<std::uint8_t> bytes;
  for (int key = 0; key < keys; ++key)
    for (int d = 0; d < head_dim; ++d) {
      std::uint8_t b = static_cast<std::uint8_t>(((key + 37 * d) * multiplier + 3) % 256);
      if (finite_only && !std::isfinite(from_fp8_bits(b, format))) b = 0x3c;  // 1.5 (e4m3) or 1.0 (e5m2)
      bytes.push_back(b);
    }
  return bytes;
}

void expect_every_fp8_value_read_exactly(Fp8Format format, int head_dim, const std::string& variant_name) {
  const int keys = 256, block = 16, kv_heads = 2;
  Problem p = testing::single_sequence(keys, 1, kv_heads, head_dim, block, testing::wobble, DType::bf16);
  p.sequences.push_back(p.sequences[0]);  // the second sequence's keys in the blocks after the first's
  p.num_blocks = 2 * keys / block;
  for (int b = 0; b < keys / block; ++b) p.sequences[1].block_table[b] = keys / block + b;
  p.k_pool.clear();
  p.v_pool.clear();
  p.fp8_cache = Fp8Cache{format, {0.75f, 1.25f}, {1.5f, 0.625f}};
  for (bool finite_only : {false, true}) {
    const std::vector<std::uint8_t> k = fp8_bytes_in_every_position(keys, head_dim, 1, finite_only, format);
    const std::vector<std::uint8_t> v = fp8_bytes_in_every_position(keys, head_dim, 7, finite_only, format);
    for (int key = 0; key < keys; ++key)
      for (int h = 0; h < kv_heads; ++h)  // head 1 reads the same bytes a dim later
        for (int d = 0; d < head_dim; ++d) {
          const std::size_t i = static_cast<std::size_t>(key) * head_dim + (d + h) % head_dim;
          p.k_pool.push_back(from_fp8_bits(k[i], format));
          p.v_pool.push_back(from_fp8_bits(v[i], format));
        }
  }
  p.queries.resize(2 * static_cast<std::size_t>(kv_heads) * head_dim);
  for (std::size_t i = 0; i < p.queries.size(); ++i)
    p.queries[i] = round_to_dtype_f(testing::wobble(static_cast<int>(i) + 3), DType::bf16);
  p.explicit_scale = format == Fp8Format::e4m3 ? 0x1p-12f : 0x1p-20f;
  Output got;
  expect_within_bound(p, Registry::instance().get(variant_name),
                      std::string(fp8_name(format)) + " head dim " + std::to_string(head_dim), got);
  std::size_t finite = 0;
  for (float x : got) finite += std::isfinite(x) ? 1 : 0;
  EXPECT_GE(finite, static_cast<std::size_t>(kv_heads) * head_dim) << "the finite sequence's rows are finite";
}

TEST(GpuFused, EveryFp8ValueIsReadExactly) {
  PACHECK_SKIP_WITHOUT_GPU();
  for (Fp8Format format : kAllFp8Formats)
    for (int head_dim : {16, 128}) expect_every_fp8_value_read_exactly(format, head_dim, "cuda_fused");
}

TEST(GpuSplitK, EveryFp8ValueIsReadExactly) {
  PACHECK_SKIP_WITHOUT_GPU();
  for (Fp8Format format : kAllFp8Formats)
    for (int head_dim : {16, 128}) expect_every_fp8_value_read_exactly(format, head_dim, "cuda_splitk");
}

// From an fp8 cache the scores take fp16 queries, each row times its own power of two, where the warp's rows fit
// fp16 so, else bf16. Rows 16x apart (GQA 8, flat to one-hot softmax) fail if a power is undone on the wrong row; a
// row spanning 2^80 and a K scale the undoing would take below fp32's normals send their warps to bf16; K of the
// format's smallest values (e5m2's are fp16 subnormals) meets the fp16 mma at its low end. Every element within
// the bound. (The mutant fp16_scores_row_of_fragment, dying in the kill matrix, shows the fp16 path runs.)
void expect_fp8_queries_of_any_range_within_bound(Fp8Format format, const std::string& variant_name) {
  const int keys = 256, block = 16, head_dim = 128, gqa = 8;
  const Variant& variant = Registry::instance().get(variant_name);
  for (const char* draw :
       {"rows 16x apart", "a row spanning 2^80", "a K scale of 2^-120", "K of the smallest values"}) {
    Problem p = testing::single_sequence(keys, 1, gqa, head_dim, block, testing::wobble, DType::bf16);
    p.num_kv_heads = 1;
    p.k_pool.resize(p.pool_size());
    p.v_pool.resize(p.pool_size());
    if (std::string(draw) == "K of the smallest values") {
      // Multiples 1..3 of the smallest subnormal, of either sign: e4m3's are fp16 normals, e5m2's fp16 subnormals.
      const float smallest = format == Fp8Format::e5m2 ? 0x1p-16f : 0x1p-9f;
      for (std::size_t e = 0; e < p.k_pool.size(); ++e)
        p.k_pool[e] = (e % 2 ? -1.0f : 1.0f) * smallest * static_cast<float>(1 + e % 3);
    }
    p = testing::with_fp8_cache(std::move(p), format, {1.0f}, {0.75f});
    for (int r = 0; r < gqa; ++r)
      for (int d = 0; d < head_dim; ++d) {
        float& q = p.queries[static_cast<std::size_t>(r) * head_dim + d];
        q = round_to_dtype_f(std::ldexp(testing::wobble(r * head_dim + d + 5), 4 * r - 14), DType::bf16);
      }
    p.explicit_scale = 0x1p-2f;
    if (std::string(draw) == "a row spanning 2^80") {
      p.queries[0] = 0x1p40f;
      p.queries[1] = 0x1p-40f;
    } else if (std::string(draw) == "a K scale of 2^-120") {
      p.fp8_cache->k_scales = {0x1p-120f};
      p.explicit_scale = 0x1p118f;
    }
    Output got;
    expect_within_bound(p, variant, std::string(fp8_name(format)) + ", " + draw, got);
  }
}

TEST(GpuFused, Fp8QueriesOfAnyRangeStayWithinBound) {
  PACHECK_SKIP_WITHOUT_GPU();
  for (Fp8Format format : kAllFp8Formats) expect_fp8_queries_of_any_range_within_bound(format, "cuda_fused");
}

TEST(GpuSplitK, Fp8QueriesOfAnyRangeStayWithinBound) {
  PACHECK_SKIP_WITHOUT_GPU();
  for (Fp8Format format : kAllFp8Formats) expect_fp8_queries_of_any_range_within_bound(format, "cuda_splitk");
}

// A kernel's access outside its memory must surface as an exception with CUDA's own text, not a hang or zeros; it
// poisons the CUDA context, so it runs in a fresh process (death-test style).
void launch_with_a_block_id_far_outside_the_pool() {
  using namespace cuda;
  try {
    DeviceBuffer<float> pool(16), queries(4), output(4);
    // Block 2^28 starts 16 GiB past the 64-byte pool (vector 2^30 of 16 bytes; the index does not wrap 32 bits).
    const DeviceBuffer<std::int32_t> table(std::vector<std::int32_t>{1 << 28});
    const DeviceBuffer<SequenceMeta> sequences(std::vector<SequenceMeta>{{1, 1, 0, 0}});
    const DeviceBuffer<int> sequence_of_row(std::vector<int>{0});
    DeviceBatch batch;
    batch.storage = Storage::f32;
    batch.num_query_heads = batch.num_kv_heads = 1;
    batch.head_dim = 4;
    batch.block_size = 4;
    batch.num_blocks = 1;
    batch.num_sequences = batch.total_queries = 1;
    batch.k_pool = batch.v_pool = pool.get();
    batch.queries = queries.get();
    batch.output = output.get();
    batch.block_tables = table.get();
    batch.sequences = sequences.get();
    batch.sequence_of_query_row = sequence_of_row.get();
    const PlanOnDevice plan(plan_attention({{1, 1}}, 1, 1, 16, {}), 1, 4);
    launch_attention(batch, plan.view(), {}, nullptr);
    check_completion(nullptr, "cuda_fused");
    std::fprintf(stderr, "no error surfaced\n");
    std::exit(0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(3);
  }
}

TEST(GpuKernelErrors, IllegalAddressSurfacesWithTheCudaErrorText) {
  PACHECK_SKIP_WITHOUT_GPU();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(launch_with_a_block_id_far_outside_the_pool(), ::testing::ExitedWithCode(3),
              "cuda_fused \\(kernel execution\\): cudaError(IllegalAddress|LaunchFailure)");
}

// A batch that passes launch_attention's checks, its arrays in a host arena no kernel follows: for the refusals
// that come before anything is enqueued.
alignas(16) unsigned char host_arena[64];
cuda::DeviceBatch batch_refused_before_launch(int num_kv_heads) {
  cuda::DeviceBatch batch;
  batch.storage = cuda::Storage::bf16;
  batch.num_query_heads = batch.num_kv_heads = num_kv_heads;
  batch.head_dim = 8;
  batch.block_size = 16;
  batch.num_blocks = 1;
  batch.k_pool = batch.v_pool = batch.queries = host_arena;
  return batch;
}

// Arrays the kernels copy 16 bytes at a time are refused, by name, unless 16-byte aligned: no device needed.
TEST(GpuKernelErrors, MisalignedArraysAreRefusedBeforeAnyLaunch) {
  using namespace cuda;
  const DeviceBatch batch = batch_refused_before_launch(1);
  const std::pair<const char*, const void* DeviceBatch::*> arrays[] = {
      {"K pool", &DeviceBatch::k_pool}, {"V pool", &DeviceBatch::v_pool}, {"queries", &DeviceBatch::queries}};
  for (const auto& [name, member] : arrays) {
    DeviceBatch misaligned = batch;
    misaligned.*member = host_arena + 2;
    try {
      launch_attention(misaligned, DevicePlan{}, {}, nullptr);
      ADD_FAILURE() << "no error for the " << name << " 2 bytes past a 16-byte boundary";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("the ") + name + " 16-byte aligned"), std::string::npos)
          << e.what();
    }
  }
}

// A grid (a block per item and KV head) past CUDA's 2^31 - 1 is refused, naming both counts, before any device call.
TEST(GpuKernelErrors, GridsPastCudasLimitAreRefusedBeforeAnyLaunch) {
  using namespace cuda;
  const DeviceBatch batch = batch_refused_before_launch(2);
  DevicePlan plan;
  plan.row_capacity = 4;
  plan.num_items = 1 << 30;
  try {
    launch_attention(batch, plan, {}, nullptr);
    ADD_FAILURE() << "no error for 2^30 items x 2 KV heads";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("1073741824 items x 2 KV heads"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pacheck
