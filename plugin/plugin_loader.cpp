// The plugin loader (plugin_loader.h): dlopen, the ABI check, validation of every declaration, registration, and
// the run that converts a Problem into the ABI's views and back.
#include "plugin/plugin_loader.h"

#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "plugin/plugin_views.h"
#include "variants/external_variant.h"

#ifdef PACHECK_HAVE_CUDA
#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#endif

namespace pacheck {
namespace {

// The end of ABI 1's first fields: a plugin's struct_size may be larger (fields appended since), never smaller.
constexpr std::size_t kPluginMinimumSize = offsetof(pacheck_plugin, variants) + sizeof(pacheck_plugin::variants);
constexpr std::size_t kVariantMinimumSize = offsetof(pacheck_variant, context) + sizeof(pacheck_variant::context);
// Longer lists are taken for a wrong count: reading them would read past the plugin's data.
constexpr std::int32_t kMaxListEntries = 1024;
constexpr std::uint32_t kMaxVariants = 1024;
constexpr std::size_t kMessageSize = 1024;

// One plugin variant's kernel, as its run and the crash report need it.
struct PluginKernel {
  std::string path;
  std::string variant;
  pacheck_run_fn run = nullptr;
  void* context = nullptr;
  bool device = false;
  // The crash report around the signal number, built here because a signal handler cannot allocate.
  std::string crash_before_signal;
  std::string crash_after_signal;
};

// --- a crash inside a plugin's run names the plugin and the variant before the process dies ---

std::atomic<const PluginKernel*> g_running{nullptr};

extern "C" void report_plugin_crash(int signal_number) {
  if (const PluginKernel* k = g_running.load()) {
    char digits[12];
    int n = 0;
    for (int s = signal_number; n == 0 || s > 0; s /= 10) digits[n++] = static_cast<char>('0' + s % 10);
    std::reverse(digits, digits + n);
    (void)!::write(STDERR_FILENO, k->crash_before_signal.data(), k->crash_before_signal.size());
    (void)!::write(STDERR_FILENO, digits, static_cast<std::size_t>(n));
    (void)!::write(STDERR_FILENO, k->crash_after_signal.data(), k->crash_after_signal.size());
  }
  ::signal(signal_number, SIG_DFL);  // then die of the same signal, so the exit status says what happened
  ::raise(signal_number);
}

// Installed once, and only over the default action: a sanitizer's or a debugger's handler stays in charge.
void install_crash_report() {
  static const bool installed = [] {
    for (int signal_number : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
      struct sigaction current {};
      if (::sigaction(signal_number, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
      struct sigaction action {};
      action.sa_handler = report_plugin_crash;
      action.sa_flags = SA_RESETHAND | SA_NODEFER;
      sigemptyset(&action.sa_mask);
      ::sigaction(signal_number, &action, nullptr);
    }
    return true;
  }();
  (void)installed;
}

class RunningPlugin {
 public:
  explicit RunningPlugin(const PluginKernel& k) { g_running.store(&k); }
  ~RunningPlugin() { g_running.store(nullptr); }
  RunningPlugin(const RunningPlugin&) = delete;
  RunningPlugin& operator=(const RunningPlugin&) = delete;
};

// --- running a plugin variant ---

std::string where(const PluginKernel& k) { return "plugin " + k.path + ": " + k.variant; }

void call_plugin(const PluginKernel& k, const pacheck_run_args& args) {
  char message[kMessageSize] = {};
  int status = 0;
  try {
    const RunningPlugin running(k);
    status = k.run(k.context, &args, message, sizeof message);
  } catch (const std::exception& e) {
    throw std::runtime_error(where(k) + "'s run let a C++ exception escape the C interface: " + e.what());
  } catch (...) {
    throw std::runtime_error(where(k) + "'s run let an exception escape the C interface");
  }
  message[sizeof message - 1] = '\0';
  if (status != 0)
    throw std::runtime_error(where(k) + "'s run returned " + std::to_string(status) + ": " +
                             (message[0] != '\0' ? message : "(it wrote no message)"));
}

#ifdef PACHECK_HAVE_CUDA
cuda::DeviceBuffer<unsigned char> device_copy(const void* host, std::size_t bytes, const std::string& what) {
  cuda::DeviceBuffer<unsigned char> buffer(bytes);
  if (bytes > 0) cuda::cuda_check(cudaMemcpy(buffer.get(), host, bytes, cudaMemcpyHostToDevice), what);
  return buffer;
}

// The same views in device memory: inputs, tables and the NaN-filled output copied over, the output back.
void call_plugin_on_device(const PluginKernel& k, const plugin::HostInputs& in, const Problem& problem,
                           plugin::HostOutput& out, pacheck_run_args args) {
  const std::string what = "copying the problem to the device for " + where(k);
  const auto q = device_copy(in.queries, in.query_elements * in.element_bytes, what);
  const auto kp = device_copy(in.k_pool, in.pool_elements * in.pool_element_bytes, what);
  const auto vp = device_copy(in.v_pool, in.pool_elements * in.pool_element_bytes, what);
  const cuda::DeviceBuffer<std::int32_t> tables(in.block_tables), context_lens(in.context_lens),
      query_lens(in.query_lens), query_starts(in.query_starts);
  // Absent options and scales stay null: an empty buffer holds no pointer.
  const LogitOptions& options = problem.options;
  const cuda::DeviceBuffer<float> alibi_slopes(options.alibi_slopes), sinks(options.sinks);
  const std::vector<float> none;
  const cuda::DeviceBuffer<float> k_scales(problem.fp8_cache ? problem.fp8_cache->k_scales : none),
      v_scales(problem.fp8_cache ? problem.fp8_cache->v_scales : none);
  auto o = device_copy(out.data(), out.bytes(), what);
  args.memory = PACHECK_MEMORY_DEVICE;
  args.queries = q.get();
  args.k_pool = kp.get();
  args.v_pool = vp.get();
  args.block_tables = tables.get();
  args.context_lens = context_lens.get();
  args.query_lens = query_lens.get();
  args.query_starts = query_starts.get();
  args.alibi_slopes = alibi_slopes.get();
  args.sinks = sinks.get();
  args.k_scales = k_scales.get();
  args.v_scales = v_scales.get();
  args.output = o.get();
  call_plugin(k, args);
  cuda::cuda_check(cudaDeviceSynchronize(), "after " + where(k) + "'s run");
  if (out.bytes() > 0)
    cuda::cuda_check(cudaMemcpy(out.data(), o.get(), out.bytes(), cudaMemcpyDeviceToHost),
                     "copying the output of " + where(k) + " from the device");
}
#endif

Output run_plugin_variant(const PluginKernel& k, const Problem& problem, const Knobs& knobs) {
  const plugin::HostInputs inputs(problem);
  plugin::HostOutput output(problem);
  const pacheck_run_args args = plugin::host_run_args(problem, knobs, inputs, output);
#ifdef PACHECK_HAVE_CUDA
  if (k.device) {
    call_plugin_on_device(k, inputs, problem, output, args);
    return output.to_floats();
  }
#endif
  call_plugin(k, args);
  return output.to_floats();
}

// --- reading and checking what a plugin declares ---

std::string hex(std::uint32_t bits) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", bits);
  return text;
}

// A declaration that makes no sense: the caller names the plugin and the variant.
struct BadDeclaration {
  std::string what;
};

template <typename T>
std::vector<T> flags(std::uint32_t bits, std::uint32_t known, const char* field, const char* names,
                     const std::vector<std::pair<std::uint32_t, T>>& meanings) {
  if ((bits & ~known) != 0)
    throw BadDeclaration{std::string(field) + " holds unknown bits " + hex(bits & ~known) + " (it may combine " +
                         names + ")"};
  std::vector<T> out;
  for (const auto& [bit, value] : meanings)
    if (bits & bit) out.push_back(value);
  return out;
}

// The `count` entries of the list `field`.
std::vector<int> declared_list(std::int32_t count, const std::int32_t* entries, const std::string& field) {
  const std::string count_field = "num_" + field;
  if (count < 0) throw BadDeclaration{count_field + " is negative (" + std::to_string(count) + ")"};
  if (count > kMaxListEntries)
    throw BadDeclaration{count_field + " is " + std::to_string(count) + ", more than the " +
                         std::to_string(kMaxListEntries) + " entries a list may hold"};
  if (count > 0 && entries == nullptr)
    throw BadDeclaration{field + " is a null pointer, but " + count_field + " is " + std::to_string(count)};
  return std::vector<int>(entries, entries + count);
}

std::vector<DType> dtypes_of(std::uint32_t bits, const char* field) {
  return flags<DType>(bits, PACHECK_DTYPE_F32 | PACHECK_DTYPE_F16 | PACHECK_DTYPE_BF16, field,
                      "PACHECK_DTYPE_F32, _F16, _BF16",
                      {{PACHECK_DTYPE_F32, DType::f32},
                       {PACHECK_DTYPE_F16, DType::f16},
                       {PACHECK_DTYPE_BF16, DType::bf16}});
}

// 0 (and a plugin built before the field) declares no logit option.
LogitOptionSupport logit_options_of(std::uint32_t bits) {
  flags<std::uint32_t>(bits, PACHECK_LOGIT_SOFT_CAP | PACHECK_LOGIT_WINDOW | PACHECK_LOGIT_ALIBI | PACHECK_LOGIT_SINKS,
                       "logit_options", "PACHECK_LOGIT_SOFT_CAP, _WINDOW, _ALIBI, _SINKS", {});
  LogitOptionSupport takes;
  takes.soft_cap = (bits & PACHECK_LOGIT_SOFT_CAP) != 0;
  takes.window = (bits & PACHECK_LOGIT_WINDOW) != 0;
  takes.alibi = (bits & PACHECK_LOGIT_ALIBI) != 0;
  takes.sinks = (bits & PACHECK_LOGIT_SINKS) != 0;
  return takes;
}

bool flag(std::uint32_t value, const char* field) {
  if (value > 1) throw BadDeclaration{std::string(field) + " must be 0 or 1, got " + std::to_string(value)};
  return value == 1;
}

DeclaredErrorModel error_model_of(const pacheck_variant& v) {
  DeclaredErrorModel model;
  switch (v.error_model) {
    case PACHECK_ERROR_MODEL_FP32_ONLINE_SOFTMAX: model.stock = StockErrorModel::fp32_online_softmax; break;
    case PACHECK_ERROR_MODEL_FP32_SPLIT_K: model.stock = StockErrorModel::fp32_split_k; break;
    case PACHECK_ERROR_MODEL_BF16_TENSOR_CORES: model.stock = StockErrorModel::bf16_tensor_cores; break;
    case PACHECK_ERROR_MODEL_FP16_TENSOR_CORES: model.stock = StockErrorModel::fp16_tensor_cores; break;
    case PACHECK_ERROR_MODEL_COEFFICIENTS: {
      const pacheck_error_coefficients& c = v.coefficients;
      model.stock.reset();
      model.coefficients = ErrorCoefficients{c.logit_constant,   c.logit_per_head_dim, c.weight_constant,
                                             c.weight_per_record, c.weight_per_split,  c.chain_constant,
                                             c.chain_per_key,     c.chain_per_record,  c.chain_per_split,
                                             c.chain_per_tile,    c.accumulator_unit_roundoff,
                                             c.weight_underflow,  v.absolute_error,
                                             v.absolute_error_per_v_scale, v.soft_cap_logit_constant};
      break;
    }
    default:
      throw BadDeclaration{"error_model must be one of PACHECK_ERROR_MODEL_FP32_ONLINE_SOFTMAX (1), _FP32_SPLIT_K (2), "
                           "_BF16_TENSOR_CORES (3), _COEFFICIENTS (4), _FP16_TENSOR_CORES (5), got " +
                           std::to_string(v.error_model)};
  }
  return model;
}

// The spec of one declared variant; throws BadDeclaration.
ExternalVariantSpec spec_of(const pacheck_variant& v, const std::string& path) {
  if (v.description == nullptr) throw BadDeclaration{"description is a null pointer"};
  ExternalVariantSpec spec;
  spec.name = v.name;
  spec.description = v.description;
  if (spec.description.find_first_of("\r\n") != std::string::npos)
    throw BadDeclaration{"the description must be one line"};
  Capabilities& c = spec.capabilities;
  c.dtypes = dtypes_of(v.dtypes, "dtypes");
  c.modes = flags<Mode>(v.modes, PACHECK_MODE_DECODE | PACHECK_MODE_PREFILL | PACHECK_MODE_CONTINUATION, "modes",
                        "PACHECK_MODE_DECODE, _PREFILL, _CONTINUATION",
                        {{PACHECK_MODE_DECODE, Mode::decode},
                         {PACHECK_MODE_PREFILL, Mode::prefill},
                         {PACHECK_MODE_CONTINUATION, Mode::continuation}});
  c.max_head_dim = v.max_head_dim;
  const std::vector<int> head_dims = declared_list(v.num_head_dims, v.head_dims, "head_dims");
  for (std::size_t i = 0; i < head_dims.size(); ++i)
    if (head_dims[i] < 1 || head_dims[i] > v.max_head_dim)
      throw BadDeclaration{"head_dims[" + std::to_string(i) + "] is " + std::to_string(head_dims[i]) +
                           ", outside 1..max_head_dim (" + std::to_string(v.max_head_dim) + ")"};
  if (!head_dims.empty())
    c.supports_head_dim = [head_dims](int d) {
      return std::find(head_dims.begin(), head_dims.end(), d) != head_dims.end();
    };
  c.block_sizes = declared_list(v.num_block_sizes, v.block_sizes, "block_sizes");
  c.gqa_ratios = declared_list(v.num_gqa_ratios, v.gqa_ratios, "gqa_ratios");
  c.deterministic = flag(v.deterministic, "deterministic");
  c.batch_invariant = flag(v.batch_invariant, "batch_invariant");
  c.uses_splits = flag(v.uses_splits, "uses_splits");
  c.logit_options = logit_options_of(v.logit_options);
  // 0 (and a plugin built before the field) declares no fp8 format.
  c.fp8_caches = flags<Fp8Format>(v.fp8_caches, PACHECK_FP8_E4M3 | PACHECK_FP8_E5M2, "fp8_caches",
                                  "PACHECK_FP8_E4M3, _E5M2",
                                  {{PACHECK_FP8_E4M3, Fp8Format::e4m3}, {PACHECK_FP8_E5M2, Fp8Format::e5m2}});
  c.fp8_query_dtypes = dtypes_of(v.fp8_query_dtypes, "fp8_query_dtypes");
  if (v.fp8_head_dim_multiple > 256)
    throw BadDeclaration{"fp8_head_dim_multiple must be 0 to 256, got " + std::to_string(v.fp8_head_dim_multiple)};
  c.fp8_head_dim_multiple = std::max<int>(1, static_cast<int>(v.fp8_head_dim_multiple));
  if (v.memory != PACHECK_MEMORY_HOST && v.memory != PACHECK_MEMORY_DEVICE)
    throw BadDeclaration{"memory must be PACHECK_MEMORY_HOST (1) or PACHECK_MEMORY_DEVICE (2), got " +
                         std::to_string(v.memory)};
  c.needs_gpu = v.memory == PACHECK_MEMORY_DEVICE;
  if (c.needs_gpu && !plugins_can_use_device_memory())
    throw BadDeclaration{
        "it wants CUDA device memory (PACHECK_MEMORY_DEVICE), but this pacheck was built without CUDA"};
  spec.error_model = error_model_of(v);
  if (v.run == nullptr) throw BadDeclaration{"run is a null pointer"};

  const auto kernel = std::make_shared<PluginKernel>(PluginKernel{
      .path = path, .variant = spec.name, .run = v.run, .context = v.context, .device = c.needs_gpu,
      .crash_before_signal = "pacheck: plugin " + path + " crashed (signal ",
      .crash_after_signal = ") in " + spec.name + "\n"});
  spec.run = [kernel](const Problem& problem, const Knobs& knobs) {
    return run_plugin_variant(*kernel, problem, knobs);
  };
  const std::string why = external_variant_problem(spec);
  if (!why.empty()) throw BadDeclaration{why};
  return spec;
}

// A copy of a plugin's struct as this pacheck knows it: fields past the plugin's struct_size stay zero (absent).
template <typename Struct>
Struct read_struct(const Struct* declared, std::size_t minimum_size, const char* type) {
  const std::uint32_t size = declared->struct_size;
  if (size < minimum_size)
    throw BadDeclaration{std::string("its ") + type + " struct_size is " + std::to_string(size) +
                         ", smaller than ABI " + std::to_string(PACHECK_PLUGIN_ABI_VERSION) + "'s " +
                         std::to_string(minimum_size) + " bytes (was it built against this include/pacheck/plugin.h?)"};
  Struct copy{};
  std::memcpy(&copy, declared, std::min<std::size_t>(size, sizeof copy));
  return copy;
}

std::map<std::string, LoadedPlugin>& loaded_plugins() {
  static std::map<std::string, LoadedPlugin> plugins;
  return plugins;
}

std::map<std::string, const LoadedPlugin*>& plugin_of_variant() {
  static std::map<std::string, const LoadedPlugin*> origins;
  return origins;
}

std::string absolute_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.lexically_normal().string();
}

}  // namespace

bool plugins_can_use_device_memory() {
#ifdef PACHECK_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

const LoadedPlugin* plugin_of(const std::string& variant) {
  const auto it = plugin_of_variant().find(variant);
  return it == plugin_of_variant().end() ? nullptr : it->second;
}

const LoadedPlugin& register_plugin(const pacheck_plugin* plugin, const std::string& path) {
  const std::string prefix = "plugin " + path + ": ";
  if (loaded_plugins().count(path) != 0) throw PluginError(prefix + "it is already loaded");
  if (plugin == nullptr) throw PluginError(prefix + PACHECK_PLUGIN_ENTRY_SYMBOL + " returned a null pointer");
  if (plugin->abi_version != PACHECK_PLUGIN_ABI_VERSION)
    throw PluginError(prefix + "built against plugin ABI " + std::to_string(plugin->abi_version) +
                      ", this pacheck reads " + std::to_string(PACHECK_PLUGIN_ABI_VERSION) +
                      " (rebuild it against this pacheck's include/pacheck/plugin.h)");
  std::vector<ExternalVariantSpec> specs;
  std::set<std::string> names;
  try {
    const pacheck_plugin header = read_struct(plugin, kPluginMinimumSize, "pacheck_plugin");
    if (header.num_variants == 0) throw BadDeclaration{"it lists no variant (num_variants is 0)"};
    if (header.num_variants > kMaxVariants)
      throw BadDeclaration{"num_variants is " + std::to_string(header.num_variants) + ", more than the " +
                           std::to_string(kMaxVariants) + " a plugin may list"};
    if (header.variants == nullptr) throw BadDeclaration{"variants is a null pointer"};
    for (std::uint32_t i = 0; i < header.num_variants; ++i) {
      const std::string index = "variants[" + std::to_string(i) + "]";
      const pacheck_variant* declared = header.variants[i];
      if (declared == nullptr) throw BadDeclaration{index + " is a null pointer"};
      const std::string name = declared->struct_size >= kVariantMinimumSize && declared->name != nullptr
                                   ? "variant '" + std::string(declared->name) + "' (" + index + ")"
                                   : index;
      try {
        const pacheck_variant v = read_struct(declared, kVariantMinimumSize, "pacheck_variant");
        if (v.name == nullptr) throw BadDeclaration{"name is a null pointer"};
        specs.push_back(spec_of(v, path));
      } catch (const BadDeclaration& bad) {
        throw BadDeclaration{name + ": " + bad.what};
      }
      const std::string& variant = specs.back().name;
      if (!names.insert(variant).second)
        throw BadDeclaration{name + ": the plugin lists two variants named '" + variant + "'"};
      if (Registry::instance().find(variant) != nullptr) {
        const LoadedPlugin* other = plugin_of(variant);
        throw BadDeclaration{name + ": pacheck already has a variant named '" + variant + "'" +
                             (other ? " (from plugin " + other->path + ")" : "")};
      }
    }
  } catch (const BadDeclaration& bad) {
    throw PluginError(prefix + bad.what);
  }
  install_crash_report();
  LoadedPlugin& loaded = loaded_plugins()[path];
  loaded.path = path;
  for (ExternalVariantSpec& spec : specs) {
    loaded.variants.push_back(spec.name);
    plugin_of_variant()[spec.name] = &loaded;
    register_external_variant(std::move(spec));
  }
  return loaded;
}

const LoadedPlugin& load_plugin(const std::string& given) {
  if (given.empty()) throw PluginError("plugin '': the path is empty");
  const std::string path = absolute_path(given);
  if (const auto it = loaded_plugins().find(path); it != loaded_plugins().end()) return it->second;
  const std::string prefix = "plugin " + path + ": ";
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw PluginError(prefix + "no such file");
  if (std::filesystem::is_directory(status)) throw PluginError(prefix + "a folder, not a shared library");
  ::dlerror();
  void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    throw PluginError(prefix + "not a loadable shared library: " + (why ? why : "dlopen failed"));
  }
  ::dlerror();
  void* entry = ::dlsym(library, PACHECK_PLUGIN_ENTRY_SYMBOL);
  if (entry == nullptr) {
    ::dlclose(library);
    throw PluginError(prefix + "no entry point: it does not export " + PACHECK_PLUGIN_ENTRY_SYMBOL +
                      " (define it with PACHECK_PLUGIN_EXPORT, include/pacheck/plugin.h)");
  }
  try {
    return register_plugin(reinterpret_cast<pacheck_plugin_entry_fn>(entry)(), path);
  } catch (...) {
    ::dlclose(library);  // nothing of it was registered
    throw;
  }
}

}  // namespace pacheck
