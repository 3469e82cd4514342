// The plugin loader in process: nonsense declarations refused naming the field, later ABI revisions read,
// declarations made capabilities and error models, exact conversions, run and dlopen errors named, serving features
// given only to variants that declare them, and the example plugin bit for bit cpu_streaming within its models.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "oracle/oracle.h"
#include "oracle/stock_error_models.h"
#include "plugin/plugin_loader.h"
#include "properties/agreement.h"
#include "properties/generators.h"
#include "tests/fixtures/problem_builders.h"
#include "tests/fixtures/test_files.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

int return_zero(void*, const pacheck_run_args*, char*, std::size_t) { return 0; }

// A variant that declares everything well, named `name`.
pacheck_variant good_variant(const char* name) {
  pacheck_variant v{};
  v.struct_size = sizeof v;
  v.name = name;
  v.description = "a test variant";
  v.dtypes = PACHECK_DTYPE_F32;
  v.modes = PACHECK_MODE_DECODE;
  v.max_head_dim = 64;
  v.deterministic = 1;
  v.batch_invariant = 1;
  v.memory = PACHECK_MEMORY_HOST;
  v.error_model = PACHECK_ERROR_MODEL_FP32_ONLINE_SOFTMAX;
  v.run = return_zero;
  return v;
}

// A plugin of the given variants; keeps the pointers it hands out alive.
struct FakePlugin {
  std::vector<pacheck_variant> variants;
  std::vector<const pacheck_variant*> pointers;
  pacheck_plugin plugin{};

  explicit FakePlugin(std::vector<pacheck_variant> vs) : variants(std::move(vs)) {
    for (const pacheck_variant& v : variants) pointers.push_back(&v);
    plugin = {PACHECK_PLUGIN_ABI_VERSION, sizeof(pacheck_plugin), static_cast<std::uint32_t>(pointers.size()),
              pointers.data()};
  }
};

// A FakePlugin that lives as long as the process, as a registered plugin must.
const pacheck_plugin* kept_plugin(std::vector<pacheck_variant> variants) {
  static std::vector<std::unique_ptr<FakePlugin>> plugins;
  plugins.push_back(std::make_unique<FakePlugin>(std::move(variants)));
  return &plugins.back()->plugin;
}

// The message of the Error `run` throws, or "" when it returns (a registration that succeeded).
template <class Error = PluginError, class Run>
std::string thrown(const Run& run) {
  return testing::thrown_message<Error>(run, "");
}

// Why registering `plugin` as `path` is refused, or "" when it registered.
std::string refusal(const pacheck_plugin* plugin, const std::string& path) {
  return thrown([&] { register_plugin(plugin, path); });
}

using Spoil = std::function<void(pacheck_variant&)>;

struct Nonsense {
  const char* what;
  Spoil spoil;
  const char* message;  // expected after "plugin /fake/<what>.so: variant '<name>' (variants[0]): "
};

const std::int32_t kZeroAndEight[] = {0, 8};
const std::int32_t kSixtyFive[] = {65};
const std::int32_t kMinusOne[] = {-1};
// The header's sound starting point for explicit coefficients.
const pacheck_error_coefficients kCoefficients = {2, 1, 4, 4, 0, 2, 1, 1, 0, 0, 0x1p-24, 0x1p-150};

// Declares kCoefficients, then spoils them.
Spoil with_coefficients(Spoil spoil) {
  return [spoil](pacheck_variant& v) {
    v.error_model = PACHECK_ERROR_MODEL_COEFFICIENTS;
    v.coefficients = kCoefficients;
    spoil(v);
  };
}

const Nonsense kNonsense[] = {
    {"no_dtype", [](pacheck_variant& v) { v.dtypes = 0; }, "it declares no dtype"},
    {"unknown_dtype", [](pacheck_variant& v) { v.dtypes |= 1u << 3; }, "dtypes holds unknown bits 0x8"},
    {"no_mode", [](pacheck_variant& v) { v.modes = 0; }, "it declares no mode"},
    {"unknown_mode", [](pacheck_variant& v) { v.modes = 1u << 7; }, "modes holds unknown bits 0x80"},
    {"head_dim_0", [](pacheck_variant& v) { v.max_head_dim = 0; }, "max_head_dim must lie in 1..256, got 0"},
    {"head_dim_257", [](pacheck_variant& v) { v.max_head_dim = 257; }, "max_head_dim must lie in 1..256, got 257"},
    {"listed_head_dim_0",
     [](pacheck_variant& v) {
       v.num_head_dims = 2;
       v.head_dims = kZeroAndEight;
     },
     "head_dims[0] is 0, outside 1..max_head_dim (64)"},
    {"listed_head_dim_too_big",
     [](pacheck_variant& v) {
       v.num_head_dims = 1;
       v.head_dims = kSixtyFive;
     },
     "head_dims[0] is 65, outside 1..max_head_dim (64)"},
    {"negative_count", [](pacheck_variant& v) { v.num_head_dims = -1; }, "num_head_dims is negative (-1)"},
    {"null_list", [](pacheck_variant& v) { v.num_block_sizes = 2; },
     "block_sizes is a null pointer, but num_block_sizes is 2"},
    {"huge_count",
     [](pacheck_variant& v) {
       v.num_gqa_ratios = 1 << 20;
       v.gqa_ratios = kMinusOne;
     },
     "num_gqa_ratios is 1048576, more than the 1024 entries a list may hold"},
    {"block_size_0",
     [](pacheck_variant& v) {
       v.num_block_sizes = 2;
       v.block_sizes = kZeroAndEight;
     },
     "block sizes must be positive, got 0"},
    {"gqa_negative",
     [](pacheck_variant& v) {
       v.num_gqa_ratios = 1;
       v.gqa_ratios = kMinusOne;
     },
     "GQA ratios must be positive, got -1"},
    {"flag_2", [](pacheck_variant& v) { v.deterministic = 2; }, "deterministic must be 0 or 1, got 2"},
    {"memory_0", [](pacheck_variant& v) { v.memory = 0; }, "memory must be PACHECK_MEMORY_HOST (1) or"},
    {"error_model_9", [](pacheck_variant& v) { v.error_model = 9; }, "error_model must be one of"},
    {"coefficient_nan", with_coefficients([](pacheck_variant& v) { v.coefficients.chain_per_key = std::nan(""); }),
     "its error model: chain_per_key must be finite and non-negative"},
    {"unit_roundoff_0", with_coefficients([](pacheck_variant& v) { v.coefficients.accumulator_unit_roundoff = 0; }),
     "its error model: accumulator_unit_roundoff must lie in (0, 1)"},
    {"per_v_scale_negative", with_coefficients([](pacheck_variant& v) { v.absolute_error_per_v_scale = -1; }),
     "its error model: absolute_error_per_v_scale must be finite and non-negative"},
    {"soft_cap_logit_nan", with_coefficients([](pacheck_variant& v) { v.soft_cap_logit_constant = std::nan(""); }),
     "its error model: soft_cap_logit_constant must be finite and non-negative"},
    {"no_run", [](pacheck_variant& v) { v.run = nullptr; }, "run is a null pointer"},
    {"no_description", [](pacheck_variant& v) { v.description = nullptr; }, "description is a null pointer"},
    {"two_line_description", [](pacheck_variant& v) { v.description = "one\ntwo"; },
     "the description must be one line"},
    {"unknown_logit_option", [](pacheck_variant& v) { v.logit_options = PACHECK_LOGIT_SINKS | 1u << 4; },
     "logit_options holds unknown bits 0x10 (it may combine PACHECK_LOGIT_SOFT_CAP, _WINDOW, _ALIBI, _SINKS)"},
    {"unknown_fp8_format", [](pacheck_variant& v) { v.fp8_caches = PACHECK_FP8_E5M2 | 1u << 2; },
     "fp8_caches holds unknown bits 0x4 (it may combine PACHECK_FP8_E4M3, _E5M2)"},
    {"unknown_fp8_query_dtype", [](pacheck_variant& v) { v.fp8_query_dtypes = PACHECK_DTYPE_BF16 | 1u << 5; },
     "fp8_query_dtypes holds unknown bits 0x20 (it may combine PACHECK_DTYPE_F32, _F16, _BF16)"},
    {"fp8_head_dim_multiple_300", [](pacheck_variant& v) { v.fp8_head_dim_multiple = 300; },
     "fp8_head_dim_multiple must be 0 to 256, got 300"},
    {"small_struct", [](pacheck_variant& v) { v.struct_size = 16; },
     "its pacheck_variant struct_size is 16, smaller than ABI 1's"},
};

TEST(PluginLoader, RefusesEveryNonsenseDeclarationNamingTheField) {
  for (const Nonsense& n : kNonsense) {
    const std::string name = std::string("nonsense_") + n.what;
    pacheck_variant v = good_variant(name.c_str());
    n.spoil(v);
    const std::string path = std::string("/fake/") + n.what + ".so";
    const std::string expected = "plugin " + path + ": " +
                                 (v.struct_size < sizeof v ? "variants[0]" : "variant '" + name + "' (variants[0])") +
                                 ": " + n.message;
    const std::string message = refusal(kept_plugin({v}), path);
    EXPECT_EQ(message.substr(0, expected.size()), expected) << n.what;
    EXPECT_EQ(Registry::instance().find(name), nullptr) << n.what << ": a refused variant must not be registered";
  }
}

TEST(PluginLoader, RefusesMalformedNames) {
  for (const std::string& name : {std::string(), std::string("has space"), std::string(65, 'x')}) {
    const std::string message = refusal(kept_plugin({good_variant(name.c_str())}),
                                        "/fake/names-" + std::to_string(name.size()) + ".so");
    EXPECT_NE(message.find("the name"), std::string::npos) << "'" << name << "': " << message;
  }
  pacheck_variant unnamed = good_variant("x");
  unnamed.name = nullptr;
  EXPECT_EQ(refusal(kept_plugin({unnamed}), "/fake/unnamed.so"),
            "plugin /fake/unnamed.so: variants[0]: name is a null pointer");
}

TEST(PluginLoader, RefusesMalformedPluginStructs) {
  EXPECT_EQ(refusal(nullptr, "/fake/null.so"), "plugin /fake/null.so: pacheck_plugin_entry returned a null pointer");
  const struct {
    const char* what;
    std::vector<pacheck_variant> variants;
    std::function<void(FakePlugin&)> spoil;
    const char* message;  // expected after "plugin /fake/<what>.so: "
  } cases[] = {
      {"abi2", {good_variant("abi_two")}, [](FakePlugin& f) { f.plugin.abi_version = 2; },
       "built against plugin ABI 2, this pacheck reads 1 (rebuild it against this pacheck's include/pacheck/plugin.h)"},
      {"small", {good_variant("small_plugin")}, [](FakePlugin& f) { f.plugin.struct_size = 8; },
       "its pacheck_plugin struct_size is 8, smaller than ABI 1's 24 bytes (was it built against this "
       "include/pacheck/plugin.h?)"},
      {"empty", {}, [](FakePlugin&) {}, "it lists no variant (num_variants is 0)"},
      {"null_list", {good_variant("null_list")}, [](FakePlugin& f) { f.plugin.variants = nullptr; },
       "variants is a null pointer"},
      {"null_entry", {good_variant("null_entry_0"), good_variant("null_entry_1")},
       [](FakePlugin& f) { f.pointers[1] = nullptr; }, "variants[1] is a null pointer"},
  };
  for (const auto& c : cases) {
    FakePlugin fake(c.variants);
    c.spoil(fake);
    const std::string path = std::string("/fake/") + c.what + ".so";
    EXPECT_EQ(refusal(&fake.plugin, path), "plugin " + path + ": " + c.message);
  }
  EXPECT_EQ(Registry::instance().find("null_entry_0"), nullptr) << "all or none";
}

TEST(PluginLoader, RefusesNamesTakenRegisteringNone) {
  EXPECT_EQ(refusal(kept_plugin({good_variant("twice"), good_variant("twice")}), "/fake/twice.so"),
            "plugin /fake/twice.so: variant 'twice' (variants[1]): the plugin lists two variants named 'twice'");
  EXPECT_EQ(Registry::instance().find("twice"), nullptr);
  EXPECT_EQ(refusal(kept_plugin({good_variant("fresh_before_builtin"), good_variant("cpu_streaming")}),
                    "/fake/builtin.so"),
            "plugin /fake/builtin.so: variant 'cpu_streaming' (variants[1]): pacheck already has a variant named "
            "'cpu_streaming'");
  EXPECT_EQ(Registry::instance().find("fresh_before_builtin"), nullptr) << "all or none";
  ASSERT_EQ(refusal(kept_plugin({good_variant("taken_by_first")}), "/fake/first.so"), "");
  EXPECT_EQ(refusal(kept_plugin({good_variant("taken_by_first")}), "/fake/second.so"),
            "plugin /fake/second.so: variant 'taken_by_first' (variants[0]): pacheck already has a variant named "
            "'taken_by_first' (from plugin /fake/first.so)");
}

TEST(PluginLoader, DeviceMemoryNeedsACudaBuild) {
  pacheck_variant v = good_variant("wants_the_device");
  v.memory = PACHECK_MEMORY_DEVICE;
  const std::string message = refusal(kept_plugin({v}), "/fake/device.so");
  if (plugins_can_use_device_memory()) {
    EXPECT_EQ(message, "");
    EXPECT_TRUE(Registry::instance().get("wants_the_device").capabilities().needs_gpu);
  } else {
    EXPECT_EQ(message,
              "plugin /fake/device.so: variant 'wants_the_device' (variants[0]): it wants CUDA device memory "
              "(PACHECK_MEMORY_DEVICE), but this pacheck was built without CUDA");
  }
}

// A variant of a later ABI revision: fields appended past this pacheck's struct, which it must ignore.
struct LaterVariant {
  pacheck_variant v;
  std::uint32_t appended[8];
};

TEST(PluginLoader, ReadsAStructFromALaterRevision) {
  static LaterVariant later{good_variant("later_revision"), {1, 2, 3, 4, 5, 6, 7, 8}};
  later.v.struct_size = sizeof later;
  static const pacheck_variant* const variants[] = {&later.v};
  static const pacheck_plugin plugin{PACHECK_PLUGIN_ABI_VERSION, sizeof(pacheck_plugin) + 16, 1, variants};
  EXPECT_EQ(refusal(&plugin, "/fake/later.so"), "");
  EXPECT_NE(Registry::instance().find("later_revision"), nullptr);
}

TEST(PluginLoader, DeclarationsBecomeCapabilities) {
  static const std::int32_t head_dims[] = {8, 32};
  static const std::int32_t block_sizes[] = {16};
  static const std::int32_t gqa_ratios[] = {1, 4};
  pacheck_variant v = good_variant("declared_caps");
  v.dtypes = PACHECK_DTYPE_F16 | PACHECK_DTYPE_BF16;
  v.modes = PACHECK_MODE_PREFILL | PACHECK_MODE_CONTINUATION;
  v.num_head_dims = 2;
  v.head_dims = head_dims;
  v.num_block_sizes = 1;
  v.block_sizes = block_sizes;
  v.num_gqa_ratios = 2;
  v.gqa_ratios = gqa_ratios;
  v.deterministic = 0;
  v.uses_splits = 1;
  v.error_model = PACHECK_ERROR_MODEL_FP32_SPLIT_K;
  const LoadedPlugin& loaded = register_plugin(kept_plugin({v}), "/fake/caps.so");
  EXPECT_EQ(loaded.variants, std::vector<std::string>{"declared_caps"});
  ASSERT_EQ(plugin_of("declared_caps"), &loaded);
  EXPECT_EQ(plugin_of("cpu_streaming"), nullptr);
  const Capabilities c = Registry::instance().get("declared_caps").capabilities();
  EXPECT_EQ(c.dtypes, (std::vector<DType>{DType::f16, DType::bf16}));
  EXPECT_EQ(c.modes, (std::vector<Mode>{Mode::prefill, Mode::continuation}));
  EXPECT_EQ(c.max_head_dim, 64);
  EXPECT_TRUE(c.supports_head_dim(8));
  EXPECT_TRUE(c.supports_head_dim(32));
  EXPECT_FALSE(c.supports_head_dim(16));
  EXPECT_EQ(c.block_sizes, std::vector<int>{16});
  EXPECT_EQ(c.gqa_ratios, (std::vector<int>{1, 4}));
  EXPECT_FALSE(c.deterministic);
  EXPECT_TRUE(c.batch_invariant);
  EXPECT_TRUE(c.uses_splits);
  EXPECT_FALSE(c.is_mutant);
  EXPECT_FALSE(c.needs_gpu);
}

// Each stock model's ABI number gives the variant that model, row by row (the fp16 one was appended within ABI 1).
TEST(PluginLoader, EachStockModelNumberDeclaresThatModel) {
  const Problem p = testing::single_sequence(40, 3, 2, 8, 4, testing::wobble);
  const OracleResult oracle = run_oracle(p);
  const Knobs knobs;
  struct Declaration {
    const char* name;
    std::uint32_t number;
    StockErrorModel stock;
  };
  static const Declaration declarations[] = {
      {"declares_fp32_online_softmax", PACHECK_ERROR_MODEL_FP32_ONLINE_SOFTMAX, StockErrorModel::fp32_online_softmax},
      {"declares_bf16_tensor_cores", PACHECK_ERROR_MODEL_BF16_TENSOR_CORES, StockErrorModel::bf16_tensor_cores},
      {"declares_fp16_tensor_cores", PACHECK_ERROR_MODEL_FP16_TENSOR_CORES, StockErrorModel::fp16_tensor_cores}};
  for (const Declaration& d : declarations) {
    pacheck_variant v = good_variant(d.name);
    v.error_model = d.number;
    ASSERT_EQ(refusal(kept_plugin({v}), std::string("/fake/") + d.name + ".so"), "");
    DeclaredErrorModel declared;
    declared.stock = d.stock;
    for (std::size_t row = 0; row < oracle.rows.size(); ++row) {
      const ErrorModel got = Registry::instance().get(d.name).error_model(p, oracle, row, knobs);
      const ErrorModel want = declared_error_model(declared, p, oracle, row, knobs, false);
      EXPECT_EQ(got.weight_underflow, want.weight_underflow) << d.name;
      EXPECT_EQ(got.accumulation_chain, want.accumulation_chain) << d.name;
      EXPECT_EQ(got.logit_coefficient, want.logit_coefficient) << d.name;
    }
  }
  EXPECT_EQ(Registry::instance().get("declares_fp16_tensor_cores").error_model(p, oracle, 0, knobs).weight_underflow,
            0x1p-25);
}

// Explicit coefficients' feature terms reach the model: absolute_error_per_v_scale times the row's KV head's V scale
// with an fp8 cache, soft_cap_logit_constant with a soft cap; absolute_error always. A plugin built before those
// fields declares neither.
TEST(PluginLoader, FeatureTermsOfCoefficientsReachTheModelOnlyWithTheirFeature) {
  // GQA 2: query heads 0 and 1 read KV head 0, heads 2 and 3 KV head 1.
  Problem plain = testing::single_sequence(12, 2, 4, 8, 4, testing::wobble);
  plain.num_kv_heads = 2;
  plain.k_pool.resize(plain.pool_size());
  plain.v_pool.resize(plain.pool_size());
  const Problem fp8 = testing::with_fp8_cache(plain, Fp8Format::e4m3, {1.0f}, {0.25f, 4.0f});
  pacheck_variant v = good_variant("declares_absolute_errors");
  v.error_model = PACHECK_ERROR_MODEL_COEFFICIENTS;
  v.coefficients = kCoefficients;
  v.absolute_error = 0x1p-30;
  v.absolute_error_per_v_scale = 0x1p-25;
  v.soft_cap_logit_constant = 0x1p13;
  pacheck_variant older = v;
  older.name = "declares_before_absolute_error_per_v_scale";
  older.struct_size = offsetof(pacheck_variant, absolute_error_per_v_scale);
  ASSERT_EQ(refusal(kept_plugin({v, older}), "/fake/absolute_errors.so"), "");
  const Variant& declared = Registry::instance().get("declares_absolute_errors");
  const Variant& before = Registry::instance().get("declares_before_absolute_error_per_v_scale");
  const OracleResult with = run_oracle(fp8), without = run_oracle(plain);
  for (std::size_t row = 0; row < with.rows.size(); ++row) {
    const float v_scale = row % 4 < 2 ? 0.25f : 4.0f;  // rows are [query][head]
    EXPECT_EQ(declared.error_model(fp8, with, row, Knobs{}).absolute_error, 0x1p-30 + 0x1p-25 * v_scale) << row;
    EXPECT_EQ(declared.error_model(plain, without, row, Knobs{}).absolute_error, 0x1p-30) << row;
    EXPECT_EQ(before.error_model(fp8, with, row, Knobs{}).absolute_error, 0x1p-30) << row;
  }
  Problem capped = plain;
  capped.options.soft_cap = 2.0f;
  const OracleResult capped_oracle = run_oracle(capped);
  for (std::size_t row = 0; row < capped_oracle.rows.size(); ++row) {
    const double logit = before.error_model(capped, capped_oracle, row, Knobs{}).logit_coefficient;
    EXPECT_EQ(declared.error_model(capped, capped_oracle, row, Knobs{}).logit_coefficient, logit + 0x1p13) << row;
    EXPECT_EQ(declared.error_model(plain, without, row, Knobs{}).logit_coefficient,
              before.error_model(plain, without, row, Knobs{}).logit_coefficient) << row;
  }
}

TEST(PluginLoader, LogitOptionFlagsBecomeCapabilities) {
  pacheck_variant some = good_variant("declares_window_and_sinks");
  some.logit_options = PACHECK_LOGIT_WINDOW | PACHECK_LOGIT_SINKS;
  // A plugin built before the field: its struct ends before logit_options, whatever lies past it.
  pacheck_variant older = good_variant("declares_before_logit_options");
  older.logit_options = PACHECK_LOGIT_SOFT_CAP | PACHECK_LOGIT_WINDOW | PACHECK_LOGIT_ALIBI | PACHECK_LOGIT_SINKS;
  older.struct_size = offsetof(pacheck_variant, logit_options);
  ASSERT_EQ(refusal(kept_plugin({some, older}), "/fake/logit_flags.so"), "");
  const LogitOptionSupport a = Registry::instance().get("declares_window_and_sinks").capabilities().logit_options;
  EXPECT_FALSE(a.soft_cap);
  EXPECT_TRUE(a.window);
  EXPECT_FALSE(a.alibi);
  EXPECT_TRUE(a.sinks);
  const LogitOptionSupport b = Registry::instance().get("declares_before_logit_options").capabilities().logit_options;
  EXPECT_FALSE(b.soft_cap || b.window || b.alibi || b.sinks) << "a field past struct_size is absent: no option";
}

TEST(PluginLoader, Fp8FormatFlagsBecomeCapabilities) {
  pacheck_variant e5m2 = good_variant("declares_e5m2");
  e5m2.fp8_caches = PACHECK_FP8_E5M2;
  e5m2.fp8_query_dtypes = PACHECK_DTYPE_BF16;  // and only with bf16 queries and head dims a multiple of 16
  e5m2.fp8_head_dim_multiple = 16;
  pacheck_variant both = good_variant("declares_both_fp8");
  both.fp8_caches = PACHECK_FP8_E4M3 | PACHECK_FP8_E5M2;
  // Built before the field, as above.
  pacheck_variant older = good_variant("declares_before_fp8_caches");
  older.fp8_caches = PACHECK_FP8_E4M3 | PACHECK_FP8_E5M2;
  older.struct_size = offsetof(pacheck_variant, fp8_caches);
  ASSERT_EQ(refusal(kept_plugin({e5m2, both, older}), "/fake/fp8_flags.so"), "");
  const auto formats = [](const char* name) { return Registry::instance().get(name).capabilities().fp8_caches; };
  EXPECT_EQ(formats("declares_e5m2"), std::vector<Fp8Format>{Fp8Format::e5m2});
  EXPECT_EQ(formats("declares_both_fp8"), (std::vector<Fp8Format>{Fp8Format::e4m3, Fp8Format::e5m2}));
  EXPECT_TRUE(formats("declares_before_fp8_caches").empty()) << "a field past struct_size is absent: no format";
  const Capabilities limited = Registry::instance().get("declares_e5m2").capabilities();
  EXPECT_EQ(limited.fp8_query_dtypes, std::vector<DType>{DType::bf16});
  EXPECT_EQ(limited.fp8_head_dim_multiple, 16);
  const Capabilities any = Registry::instance().get("declares_both_fp8").capabilities();
  EXPECT_TRUE(any.fp8_query_dtypes.empty()) << "0: every dtype";
  EXPECT_EQ(any.fp8_head_dim_multiple, 1) << "0: any head dim";
}

// --- runs: conversions and errors ---

// Copies the queries to the output element by element in the storage dtype, through the strides.
int copy_queries(void*, const pacheck_run_args* a, char*, std::size_t) {
  const std::size_t bytes = a->dtype == PACHECK_DTYPE_F32 ? 4 : 2;
  for (int i = 0; i < a->total_queries; ++i)
    for (int h = 0; h < a->num_query_heads; ++h)
      for (int d = 0; d < a->head_dim; ++d) {
        const std::int64_t from = i * a->query_strides[0] + h * a->query_strides[1] + d * a->query_strides[2];
        const std::int64_t to = i * a->output_strides[0] + h * a->output_strides[1] + d * a->output_strides[2];
        std::memcpy(static_cast<char*>(a->output) + to * bytes, static_cast<const char*>(a->queries) + from * bytes,
                    bytes);
      }
  return 0;
}

int fail_with_message(void* context, const pacheck_run_args*, char* message, std::size_t size) {
  std::snprintf(message, size, "%s", static_cast<const char*>(context));
  return 7;
}
int fail_silently(void*, const pacheck_run_args*, char*, std::size_t) { return -1; }
int throw_through_c(void*, const pacheck_run_args*, char*, std::size_t) { throw std::logic_error("not caught"); }

// A registered variant of every dtype and mode that runs `run` on `context`, declaring these serving features.
const Variant& registered(const char* name, pacheck_run_fn run, void* context = nullptr,
                          std::uint32_t logit_options = 0, std::uint32_t fp8_caches = 0) {
  pacheck_variant v = good_variant(name);
  v.dtypes = PACHECK_DTYPE_F32 | PACHECK_DTYPE_F16 | PACHECK_DTYPE_BF16;
  v.modes = PACHECK_MODE_DECODE | PACHECK_MODE_PREFILL | PACHECK_MODE_CONTINUATION;
  v.run = run;
  v.context = context;
  v.logit_options = logit_options;
  v.fp8_caches = fp8_caches;
  register_plugin(kept_plugin({v}), std::string("/fake/") + name + ".so");
  return Registry::instance().get(name);
}

// One sequence of `count` queries of one head of dim 1, holding `values` rounded to the dtype.
Problem queries_problem(const std::vector<float>& values, DType dtype) {
  Problem p;
  p.dtype = dtype;
  p.num_query_heads = p.num_kv_heads = 1;
  p.head_dim = 1;
  p.block_size = static_cast<int>(values.size());
  p.num_blocks = 1;
  p.sequences.push_back(Sequence{{0}, static_cast<int>(values.size()), static_cast<int>(values.size())});
  p.k_pool.assign(p.pool_size(), 0.0f);
  p.v_pool.assign(p.pool_size(), 0.0f);
  for (float x : values) p.queries.push_back(round_to_dtype_f(x, dtype));
  return p;
}

TEST(PluginLoader, ConversionsAreExactInEveryDType) {
  const Variant& copy = registered("copies_queries", copy_queries);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.5f, 3.140625f, 1e-3f, -65504.0f, 0x1p-24f, 0x1p-14f,
                                     0x1p-133f, 0x1p-149f, 3.0e38f, inf, -inf, std::nanf("")};
  for (DType dtype : kAllDTypes) {
    const Problem p = queries_problem(values, dtype);
    const Output out = copy.run(p, Knobs{});
    ASSERT_EQ(out.size(), p.queries.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (std::isnan(p.queries[i])) {
        EXPECT_TRUE(std::isnan(out[i])) << dtype_name(dtype) << " element " << i;
        continue;
      }
      std::uint32_t want, got;
      std::memcpy(&want, &p.queries[i], 4);
      std::memcpy(&got, &out[i], 4);
      EXPECT_EQ(got, want) << dtype_name(dtype) << " element " << i << ": " << p.queries[i] << " came back as "
                           << out[i];
    }
  }
}

TEST(PluginLoader, AnOutputLeftUnwrittenIsNaN) {
  const Variant& lazy = registered("writes_nothing", return_zero);
  for (DType dtype : kAllDTypes)
    for (float x : lazy.run(queries_problem({1.0f, 2.0f}, dtype), Knobs{}))
      EXPECT_TRUE(std::isnan(x)) << dtype_name(dtype);
}

std::string run_error(const Variant& v) {
  return thrown<std::runtime_error>([&] { v.run(queries_problem({1.0f}, DType::f32), Knobs{}); });
}

TEST(PluginLoader, ARunsErrorCarriesItsMessage) {
  static char text[] = "no kernel for this shape";
  EXPECT_EQ(run_error(registered("fails_loudly", fail_with_message, text)),
            "plugin /fake/fails_loudly.so: fails_loudly's run returned 7: no kernel for this shape");
  EXPECT_EQ(run_error(registered("fails_silently", fail_silently)),
            "plugin /fake/fails_silently.so: fails_silently's run returned -1: (it wrote no message)");
  EXPECT_EQ(run_error(registered("throws_through_c", throw_through_c)),
            "plugin /fake/throws_through_c.so: throws_through_c's run let a C++ exception escape the C interface: "
            "not caught");
}

// What a run saw of the logit options and the fp8 cache (format, scales, both pools' bytes), and how often it ran.
struct Seen {
  int calls = 0;
  std::uint32_t struct_size = 0;
  float soft_cap = -1;
  std::int32_t window = -1;
  std::vector<float> alibi_slopes, sinks;
  bool alibi_null = false, sinks_null = false;
  std::uint32_t format = 99;
  std::vector<float> k_scales, v_scales;
  std::vector<std::uint8_t> k_pool, v_pool;
};

int record(void* context, const pacheck_run_args* a, char* message, std::size_t size) {
  auto& seen = *static_cast<Seen*>(context);
  ++seen.calls;
  seen.struct_size = a->struct_size;
  if (!PACHECK_HAS_FIELD(a, pacheck_run_args, v_scales)) {
    std::snprintf(message, size, "the arguments end before the logit options and the fp8 cache");
    return 1;
  }
  seen.soft_cap = a->soft_cap;
  seen.window = a->window;
  seen.alibi_null = a->alibi_slopes == nullptr;
  seen.sinks_null = a->sinks == nullptr;
  seen.alibi_slopes.assign(a->alibi_slopes, a->alibi_slopes + (seen.alibi_null ? 0 : a->num_query_heads));
  seen.sinks.assign(a->sinks, a->sinks + (seen.sinks_null ? 0 : a->num_query_heads));
  seen.format = a->fp8_cache;
  seen.k_scales.assign(a->k_scales, a->k_scales + a->num_k_scales);
  seen.v_scales.assign(a->v_scales, a->v_scales + a->num_v_scales);
  const std::size_t elements = static_cast<std::size_t>(a->k_strides[0]) * a->num_blocks;
  const auto bytes = [&](const void* pool) {
    return a->fp8_cache == 0 ? std::vector<std::uint8_t>{}
                             : std::vector<std::uint8_t>(static_cast<const std::uint8_t*>(pool),
                                                         static_cast<const std::uint8_t*>(pool) + elements);
  };
  seen.k_pool = bytes(a->k_pool);
  seen.v_pool = bytes(a->v_pool);
  return 0;
}

// Three heads, so that each head's slope and sink has its own place.
Problem three_head_problem() { return testing::single_sequence(9, 2, 3, 4, 4, testing::wobble); }

// Why running `v` on `p` is refused (a caller that skipped the coverage check), or "" when it ran.
std::string refused_run(const Variant& v, const Problem& p) {
  return thrown<std::invalid_argument>([&] { v.run(p, Knobs{}); });
}

TEST(PluginLoader, TheLogitOptionsReachTheRunExactly) {
  static Seen seen;
  const std::uint32_t all = PACHECK_LOGIT_SOFT_CAP | PACHECK_LOGIT_WINDOW | PACHECK_LOGIT_ALIBI | PACHECK_LOGIT_SINKS;
  const Variant& v = registered("records_options", record, &seen, all);
  Problem p = three_head_problem();
  v.run(p, Knobs{});
  EXPECT_EQ(seen.struct_size, sizeof(pacheck_run_args));
  EXPECT_EQ(seen.soft_cap, 0.0f) << "absent: 0";
  EXPECT_EQ(seen.window, 0) << "absent: 0";
  EXPECT_TRUE(seen.alibi_null) << "absent: null";
  EXPECT_TRUE(seen.sinks_null) << "absent: null";
  p.options.soft_cap = 30.5f;
  p.options.window = 3;
  p.options.alibi_slopes = {0.5f, -0.125f, 0x1p-20f};
  p.options.sinks = {-INFINITY, 0.0f, -2.75f};
  validate(p);
  v.run(p, Knobs{});
  EXPECT_EQ(seen.soft_cap, 30.5f);
  EXPECT_EQ(seen.window, 3);
  EXPECT_EQ(seen.alibi_slopes, p.options.alibi_slopes);
  EXPECT_EQ(seen.sinks, p.options.sinks);
  EXPECT_EQ(seen.calls, 2);
}

TEST(PluginLoader, AVariantIsNeverGivenAnOptionItDoesNotDeclare) {
  static Seen seen;
  const Variant& none = registered("declares_no_option", record, &seen);
  const Variant& window_only = registered("declares_window_only", record, &seen, PACHECK_LOGIT_WINDOW);
  const std::pair<const char*, std::function<void(Problem&)>> options[] = {
      {"soft_cap", [](Problem& p) { p.options.soft_cap = 5.0f; }},
      {"window", [](Problem& p) { p.options.window = 2; }},
      {"alibi_slopes", [](Problem& p) { p.options.alibi_slopes = {0.5f, 0.25f, 0.125f}; }},
      {"sinks", [](Problem& p) { p.options.sinks = {1.0f, -INFINITY, 0.0f}; }},
  };
  for (const auto& [name, set] : options) {
    Problem p = three_head_problem();
    set(p);
    validate(p);
    EXPECT_FALSE(covers(none.capabilities(), p)) << name;
    EXPECT_EQ(coverage_gap(none.capabilities(), p), std::string(name) + " not supported");
    EXPECT_EQ(covers(window_only.capabilities(), p), std::string(name) == "window") << name;
    EXPECT_EQ(refused_run(none, p), "declares_no_option is not given this problem: " + std::string(name) +
                                        " not supported (its declaration leaves that logit option out)");
  }
  EXPECT_EQ(seen.calls, 0);
}

// The pools arrive as the format's bytes, one per element (strides count them), with the scales as they are, per
// tensor or per head, in every dtype of the queries; without a cache the fields are 0 and null.
TEST(PluginLoader, TheFp8CacheReachesTheRunAsBytesAndScales) {
  static Seen seen;
  const Variant& v = registered("records_fp8", record, &seen, 0, PACHECK_FP8_E4M3 | PACHECK_FP8_E5M2);
  const Problem plain = three_head_problem();
  v.run(plain, Knobs{});
  EXPECT_EQ(seen.format, 0u);
  EXPECT_TRUE(seen.k_scales.empty() && seen.v_scales.empty()) << "absent: no scales";
  int runs = 1;
  for (DType dtype : {DType::f32, DType::f16, DType::bf16})
    for (Fp8Format format : kAllFp8Formats)
      for (const std::vector<float>& v_scales : {std::vector<float>{0.75f}, std::vector<float>{2.0f, 0x1p-4f, 3.5f}}) {
        Problem p = plain;
        p.dtype = dtype;
        for (float& x : p.queries) x = round_to_dtype_f(x, dtype);
        p = testing::with_fp8_cache(p, format, {0.125f}, v_scales);
        validate(p);
        v.run(p, Knobs{});
        ++runs;
        EXPECT_EQ(seen.format, format == Fp8Format::e4m3 ? PACHECK_FP8_E4M3 : PACHECK_FP8_E5M2);
        EXPECT_EQ(seen.k_scales, p.fp8_cache->k_scales);
        EXPECT_EQ(seen.v_scales, p.fp8_cache->v_scales);
        ASSERT_EQ(seen.k_pool.size(), p.k_pool.size());
        for (std::size_t i = 0; i < p.k_pool.size(); ++i) {
          ASSERT_EQ(seen.k_pool[i], to_fp8_bits(p.k_pool[i], format)) << fp8_name(format) << " k_pool[" << i << "]";
          ASSERT_EQ(seen.v_pool[i], to_fp8_bits(p.v_pool[i], format)) << fp8_name(format) << " v_pool[" << i << "]";
        }
      }
  EXPECT_EQ(seen.calls, runs);
}

TEST(PluginLoader, AVariantIsNeverGivenAnFp8FormatItDoesNotDeclare) {
  static Seen seen;
  const Variant& none = registered("declares_no_fp8", record, &seen);
  const Variant& e4m3 = registered("declares_e4m3_only", record, &seen, 0, PACHECK_FP8_E4M3);
  for (Fp8Format format : kAllFp8Formats) {
    const Problem p = testing::with_fp8_cache(three_head_problem(), format, {0.5f}, {0.25f});
    validate(p);
    const std::string gap = "kv_cache " + std::string(fp8_name(format)) + " not supported";
    EXPECT_EQ(coverage_gap(none.capabilities(), p), gap);
    EXPECT_EQ(covers(e4m3.capabilities(), p), format == Fp8Format::e4m3);
    for (const Variant* v : {&none, &e4m3}) {
      const std::string refusal =
          v->name() + " is not given this problem: " + gap + " (its declaration leaves that fp8 format out)";
      EXPECT_EQ(refused_run(*v, p), covers(v->capabilities(), p) ? "" : refusal);
    }
  }
  EXPECT_EQ(seen.calls, 1) << "only e4m3 reached the variant that declares it";
}

// --- dlopen ---

std::string load_error(const std::string& path) {
  return thrown([&] { load_plugin(path); });
}

TEST(PluginLoader, NamesWhatIsWrongWithALibrary) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "pacheck-plugin-loader";
  std::filesystem::create_directories(dir);
  EXPECT_EQ(load_error((dir / "absent.so").string()), "plugin " + (dir / "absent.so").string() + ": no such file");
  EXPECT_EQ(load_error(dir.string()), "plugin " + dir.string() + ": a folder, not a shared library");
  const std::filesystem::path text = dir / "text.so";
  std::ofstream(text) << "not an ELF file, long enough to have a header to read past the first bytes\n";
  const std::string not_library = load_error(text.string());
  EXPECT_EQ(not_library.rfind("plugin " + text.string() + ": not a loadable shared library: ", 0), 0u) << not_library;
  EXPECT_NE(not_library.find("invalid ELF header"), std::string::npos) << "dlerror's text: " << not_library;
  EXPECT_EQ(load_error(PACHECK_PLUGIN_NO_ENTRY),
            std::string("plugin ") + PACHECK_PLUGIN_NO_ENTRY +
                ": no entry point: it does not export pacheck_plugin_entry (define it with PACHECK_PLUGIN_EXPORT, "
                "include/pacheck/plugin.h)");
  EXPECT_EQ(load_error(PACHECK_PLUGIN_ABI_2),
            std::string("plugin ") + PACHECK_PLUGIN_ABI_2 +
                ": built against plugin ABI 2, this pacheck reads 1 (rebuild it against this pacheck's "
                "include/pacheck/plugin.h)");
  EXPECT_EQ(load_error(PACHECK_PLUGIN_NONSENSE),
            std::string("plugin ") + PACHECK_PLUGIN_NONSENSE +
                ": variant 'example_streaming' (variants[0]): it declares no dtype");
  std::filesystem::remove_all(dir);
}

// --- the example plugin ---

TEST(PluginLoader, LoadsTheExampleOnce) {
  const LoadedPlugin& loaded = load_plugin(PACHECK_EXAMPLE_PLUGIN);
  EXPECT_EQ(loaded.path, PACHECK_EXAMPLE_PLUGIN);
  EXPECT_EQ(loaded.variants, (std::vector<std::string>{"example_streaming", "example_streaming_coefficients"}));
  EXPECT_EQ(&load_plugin(PACHECK_EXAMPLE_PLUGIN), &loaded) << "a second load of the same path is the first";
  const Capabilities c = Registry::instance().get("example_streaming_coefficients").capabilities();
  EXPECT_EQ(c.block_sizes, (std::vector<int>{1, 8, 16}));
  EXPECT_EQ(c.gqa_ratios, (std::vector<int>{1, 2, 4}));
  EXPECT_TRUE(c.supports_head_dim(128));
  EXPECT_FALSE(c.supports_head_dim(96));
}

// Generated knobs for `p`, their tile at most 512 keys (cpu_streaming walks longer tiles in chunks of 512).
Knobs knobs_for(const Problem& p, const gen::Limits& limits) {
  int longest = 1;
  for (const Sequence& s : p.sequences) longest = std::max(longest, s.context_len);
  Knobs knobs = *gen::knobs(longest, limits);
  knobs.tile_size = std::min(knobs.tile_size, 512);
  return knobs;
}

// Whether the example computes `p` as cpu_streaming does, to the bit.
bool example_matches_cpu_streaming(const Problem& p, const Knobs& knobs) {
  load_plugin(PACHECK_EXAMPLE_PLUGIN);
  const Output want = Registry::instance().get("cpu_streaming").run(p, knobs);
  const Output got = Registry::instance().get("example_streaming").run(p, knobs);
  return got.size() == want.size() && std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0;
}

// The example's arithmetic is cpu_streaming's, so through the ABI's views (every dtype, scattered and padded tables,
// GQA, mixed modes) its output must equal cpu_streaming's bit for bit: any conversion that is not exact shows.
RC_GTEST_PROP(PluginLoader, TheExampleMatchesCpuStreamingBitForBit, ()) {
  gen::Limits limits = gen::Limits{};
  limits.max_head_dim = 256;
  const Problem p = materialize(*gen::problem_spec(limits));
  RC_ASSERT(example_matches_cpu_streaming(p, knobs_for(p, limits)));
}

// A generated problem of the catalogue's shapes (an fp8 cache in a fifth, generated logit options), and its knobs.
std::pair<Problem, Knobs> problem_with_options() {
  gen::Limits limits = gen::Limits{};
  limits.fp8_caches = {Fp8Format::e4m3, Fp8Format::e5m2};
  Problem p = materialize(*gen::problem_spec(limits));
  testing::add_logit_options(p, *rc::gen::inRange<std::uint64_t>(1, 1u << 20));
  validate(p);
  const Knobs knobs = knobs_for(p, limits);
  return {std::move(p), knobs};
}

// The options and the fp8 cache pass through the ABI exactly: the example still matches cpu_streaming to the bit.
RC_GTEST_PROP(PluginLoader, TheExampleMatchesCpuStreamingBitForBitWithServingFeatures, ()) {
  const auto [p, knobs] = problem_with_options();
  RC_TAG(p.options.soft_cap.has_value(), p.options.window.has_value(), !p.options.alibi_slopes.empty(),
         !p.options.sinks.empty(), p.fp8_cache.has_value());
  RC_ASSERT(example_matches_cpu_streaming(p, knobs));
}

// Both example variants (stock model, explicit coefficients) hold their bounds with the options and dequantisation.
RC_GTEST_PROP(PluginLoader, TheExampleHoldsItsErrorModelsWithServingFeatures, ()) {
  load_plugin(PACHECK_EXAMPLE_PLUGIN);
  const auto [p, knobs] = problem_with_options();
  const OracleResult oracle = run_oracle(p, oracle_split_sizes(p, knobs));
  RC_PRE(oracle.fits_fp32);
  for (const char* name : {"example_streaming", "example_streaming_coefficients"}) {
    const Variant& v = Registry::instance().get(name);
    if (!covers(v.capabilities(), p)) continue;  // the coefficients variant takes fewer shapes
    const Agreement a = compare_with_oracle(p, oracle, v, knobs, v.run(p, knobs));
    if (!a.ok) RC_FAIL(describe_failure(p, v, knobs, a));
  }
}

}  // namespace
}  // namespace pacheck
