// Reading what a Python caller declares and what its kernel returns (from_python.h).
#include "python/src/from_python.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include "python/src/problem_object.h"

namespace nb = nanobind;

namespace pacheck::python {

// The declarations: capabilities, error models, dtypes and knobs.
namespace {

std::string python_type_name(nb::handle value) { return Py_TYPE(value.ptr())->tp_name; }

nb::builtin_exception declaration_error(const std::string& message) { return nb::type_error(message.c_str()); }

bool is_bool(nb::handle value) { return PyBool_Check(value.ptr()); }
bool is_int(nb::handle value) { return PyLong_Check(value.ptr()) && !is_bool(value); }

bool is_list(nb::handle value) { return nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value); }
bool is_empty_list(nb::handle value) { return is_list(value) && nb::len(value) == 0; }

// A single item (`single`: a str, an int) or a list or tuple of items, each read by `read`.
template <typename Read>
auto list_of(nb::handle value, const std::string& what, bool single, const std::string& kinds, Read read) {
  if (!single && !is_list(value))
    throw declaration_error(what + " must be " + kinds + ", got " + python_type_name(value));
  std::vector<decltype(read(value))> out;
  if (single) {
    out.push_back(read(value));
  } else {
    for (nb::handle item : value) out.push_back(read(item));
  }
  return out;
}

std::vector<std::string> strings(nb::handle value, const std::string& what) {
  const auto string = [&](nb::handle item) {
    if (!nb::isinstance<nb::str>(item))
      throw declaration_error(what + " must hold strings, got " + python_type_name(item));
    return nb::cast<std::string>(item);
  };
  std::vector<std::string> out =
      list_of(value, what, nb::isinstance<nb::str>(value), "a string or a list of strings", string);
  if (out.empty()) throw std::invalid_argument(what + " is empty");
  return out;
}

int integer(nb::handle value, const std::string& what) {
  if (!is_int(value)) throw declaration_error(what + " must be an int, got " + python_type_name(value));
  long long v = 0;
  if (!nb::try_cast(value, v) || v < -(1ll << 31) || v >= (1ll << 31))
    throw std::invalid_argument(what + " does not fit in 32 bits");
  return static_cast<int>(v);
}

std::vector<int> integers(nb::handle value, const std::string& what) {
  return list_of(value, what, is_int(value), "an int or a list of ints",
                 [&](nb::handle item) { return integer(item, what); });
}

std::vector<DType> dtypes(nb::handle value, const std::string& what) {
  std::vector<DType> out;
  for (const std::string& name : strings(value, what)) out.push_back(parse_dtype_name(name, what));
  return out;
}

bool boolean(nb::handle value, const std::string& what) {
  if (!is_bool(value)) throw declaration_error(what + " must be True or False, got " + python_type_name(value));
  return value.ptr() == Py_True;
}

double number(nb::handle value, const std::string& what) {
  if (is_bool(value) || (!PyLong_Check(value.ptr()) && !PyFloat_Check(value.ptr())))
    throw declaration_error(what + " must be a number, got " + python_type_name(value));
  return nb::cast<double>(value);
}

// The keys of a dict argument, each a string among `known`.
std::vector<std::pair<std::string, nb::handle>> entries(nb::handle declared, const std::string& what,
                                                        const std::vector<std::string>& known) {
  if (!nb::isinstance<nb::dict>(declared)) throw declaration_error(what + " must be a dict, got " + python_type_name(declared));
  std::vector<std::pair<std::string, nb::handle>> out;
  for (auto [key, value] : nb::borrow<nb::dict>(declared)) {
    if (!nb::isinstance<nb::str>(key)) throw declaration_error(what + " keys must be strings, got " + python_type_name(key));
    std::string name = nb::cast<std::string>(key);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw std::invalid_argument(what + ": unknown key '" + name + "'; keys: " + list);
    }
    out.emplace_back(std::move(name), value);
  }
  return out;
}

// Each coefficient by its Python key, which is its field's name.
#define PACHECK_COEFFICIENT(field) {#field, &ErrorCoefficients::field}
const std::pair<const char*, double ErrorCoefficients::*> kCoefficients[] = {
    PACHECK_COEFFICIENT(logit_constant), PACHECK_COEFFICIENT(logit_per_head_dim),
    PACHECK_COEFFICIENT(weight_constant), PACHECK_COEFFICIENT(weight_per_record), PACHECK_COEFFICIENT(weight_per_split),
    PACHECK_COEFFICIENT(chain_constant), PACHECK_COEFFICIENT(chain_per_key), PACHECK_COEFFICIENT(chain_per_record),
    PACHECK_COEFFICIENT(chain_per_split), PACHECK_COEFFICIENT(chain_per_tile),
    PACHECK_COEFFICIENT(accumulator_unit_roundoff), PACHECK_COEFFICIENT(weight_underflow),
    PACHECK_COEFFICIENT(absolute_error), PACHECK_COEFFICIENT(absolute_error_per_v_scale),
    PACHECK_COEFFICIENT(soft_cap_logit_constant),
};
#undef PACHECK_COEFFICIENT

}  // namespace

DType parse_dtype_name(const std::string& name, const std::string& what) {
  static const std::pair<const char*, DType> aliases[] = {
      {"fp32", DType::f32}, {"float32", DType::f32}, {"fp16", DType::f16},
      {"float16", DType::f16}, {"bf16", DType::bf16}, {"bfloat16", DType::bf16}};
  for (const auto& [alias, dtype] : aliases)
    if (name == alias) return dtype;
  throw std::invalid_argument(what + ": unknown dtype '" + name +
                              "'; dtypes: fp32 (float32), fp16 (float16), bf16 (bfloat16)");
}

Knobs parse_knobs(int tile_size, int split_size, int num_splits, const std::string& what) {
  if (tile_size < 1) throw std::invalid_argument(what + ": tile_size must be positive, got " + std::to_string(tile_size));
  if (split_size < 1)
    throw std::invalid_argument(what + ": split_size must be positive, got " + std::to_string(split_size));
  if (num_splits < 0)
    throw std::invalid_argument(what + ": num_splits must not be negative, got " + std::to_string(num_splits));
  Knobs knobs;
  knobs.tile_size = tile_size;
  knobs.split_size = split_size;
  knobs.num_splits = num_splits;
  return knobs;
}

namespace {

// Each logit option: its name, whether a problem sets it, and the capability that takes it.
struct LogitOptionName {
  const char* name;
  bool (*set)(const LogitOptions&);
  bool LogitOptionSupport::*takes;
};
const LogitOptionName kLogitOptions[] = {
    {"soft_cap", [](const LogitOptions& o) { return o.soft_cap.has_value(); }, &LogitOptionSupport::soft_cap},
    {"window", [](const LogitOptions& o) { return o.window.has_value(); }, &LogitOptionSupport::window},
    {"alibi_slopes", [](const LogitOptions& o) { return !o.alibi_slopes.empty(); }, &LogitOptionSupport::alibi},
    {"sinks", [](const LogitOptions& o) { return !o.sinks.empty(); }, &LogitOptionSupport::sinks},
};

// A list of option names (empty: none), each known and given once.
LogitOptionSupport parse_logit_options(nb::handle value, const std::string& what) {
  LogitOptionSupport takes;
  if (is_empty_list(value)) return takes;
  for (const std::string& name : strings(value, what)) {
    const auto* option = std::find_if(std::begin(kLogitOptions), std::end(kLogitOptions),
                                      [&](const LogitOptionName& o) { return name == o.name; });
    if (option == std::end(kLogitOptions))
      throw std::invalid_argument(what + ": unknown logit option '" + name +
                                  "'; known: soft_cap, window, alibi_slopes, sinks");
    if (takes.*option->takes) throw std::invalid_argument(what + " names '" + name + "' twice");
    takes.*option->takes = true;
  }
  return takes;
}

// A list of fp8 cache formats (empty: none), by vLLM's names or torch's, each given once.
std::vector<Fp8Format> parse_fp8_caches(nb::handle value, const std::string& what) {
  std::vector<Fp8Format> formats;
  if (is_empty_list(value)) return formats;
  for (const std::string& name : strings(value, what)) {
    const Fp8Format format = name == "float8_e4m3fn" ? Fp8Format::e4m3
                             : name == "float8_e5m2"  ? Fp8Format::e5m2
                                                      : parse_named(name, what, {Fp8Format::e4m3, Fp8Format::e5m2}, fp8_name);
    if (std::find(formats.begin(), formats.end(), format) != formats.end())
      throw std::invalid_argument(what + " names " + std::string(fp8_name(format)) + " twice");
    formats.push_back(format);
  }
  return formats;
}

}  // namespace

std::vector<std::string> logit_option_names(const LogitOptions& options) {
  std::vector<std::string> names;
  for (const LogitOptionName& o : kLogitOptions)
    if (o.set(options)) names.push_back(o.name);
  return names;
}

Capabilities parse_capabilities(nb::handle declared) {
  Capabilities caps;
  bool has_dtypes = false, has_modes = false, has_max = false;
  std::vector<int> head_dims;
  for (const auto& [key, value] : entries(declared, "capabilities",
                                          {"dtypes", "modes", "max_head_dim", "head_dims", "block_sizes", "gqa_ratios",
                                           "deterministic", "batch_invariant", "uses_splits", "logit_options",
                                           "fp8_caches", "fp8_query_dtypes", "fp8_head_dim_multiple"})) {
    const std::string what = "capabilities['" + key + "']";
    if (key == "dtypes") {
      caps.dtypes = dtypes(value, what);
      has_dtypes = true;
    } else if (key == "modes") {
      for (const std::string& name : strings(value, what))
        caps.modes.push_back(parse_named(name, what, {Mode::decode, Mode::prefill, Mode::continuation}, mode_name));
      has_modes = true;
    } else if (key == "max_head_dim") {
      caps.max_head_dim = integer(value, what);
      has_max = true;
    } else if (key == "head_dims") {
      head_dims = integers(value, what);
      if (head_dims.empty()) throw std::invalid_argument(what + " is empty");
    } else if (key == "block_sizes") {
      caps.block_sizes = integers(value, what);
    } else if (key == "gqa_ratios") {
      caps.gqa_ratios = integers(value, what);
    } else if (key == "deterministic") {
      caps.deterministic = boolean(value, what);
    } else if (key == "batch_invariant") {
      caps.batch_invariant = boolean(value, what);
    } else if (key == "logit_options") {
      caps.logit_options = parse_logit_options(value, what);
    } else if (key == "fp8_caches") {
      caps.fp8_caches = parse_fp8_caches(value, what);
    } else if (key == "fp8_query_dtypes") {
      caps.fp8_query_dtypes = dtypes(value, what);
    } else if (key == "fp8_head_dim_multiple") {
      caps.fp8_head_dim_multiple = integer(value, what);
      if (caps.fp8_head_dim_multiple < 1)
        throw std::invalid_argument(what + " must be at least 1, got " + std::to_string(caps.fp8_head_dim_multiple));
    } else {
      caps.uses_splits = boolean(value, what);
    }
  }
  if (!has_dtypes) throw std::invalid_argument("capabilities: 'dtypes' is missing (fp32, fp16, bf16)");
  if (!has_modes) throw std::invalid_argument("capabilities: 'modes' is missing (decode, prefill, continuation)");
  if (!has_max && head_dims.empty())
    throw std::invalid_argument("capabilities: give 'max_head_dim' or 'head_dims' (the head dims the kernel takes)");
  if (!head_dims.empty()) {
    for (int d : head_dims)
      if (d < 1 || d > 256)
        throw std::invalid_argument("capabilities['head_dims']: head dims lie in 1..256, got " + std::to_string(d));
    const int widest = *std::max_element(head_dims.begin(), head_dims.end());
    if (!has_max) caps.max_head_dim = widest;
    if (widest > caps.max_head_dim)
      throw std::invalid_argument("capabilities: head_dims holds " + std::to_string(widest) + ", beyond max_head_dim " +
                                  std::to_string(caps.max_head_dim));
    auto allowed = std::make_shared<const std::set<int>>(head_dims.begin(), head_dims.end());
    caps.supports_head_dim = [allowed](int d) { return allowed->count(d) > 0; };
  }
  return caps;
}

DeclaredErrorModel parse_error_model(nb::handle declared) {
  DeclaredErrorModel model;
  if (nb::isinstance<nb::str>(declared)) {
    const std::string name = nb::cast<std::string>(declared);
    model.stock = parse_stock_error_model(name);
    if (!model.stock)
      throw std::invalid_argument("error_model: unknown stock model '" + name + "'; stock models: " +
                                  stock_error_model_names() + ", or a dict of coefficients");
    return model;
  }
  if (!nb::isinstance<nb::dict>(declared))
    throw declaration_error("error_model must be a stock model's name or a dict of coefficients, got " + python_type_name(declared));
  std::vector<std::string> known;
  for (const auto& [name, member] : kCoefficients) known.push_back(name);
  model.stock.reset();
  for (const auto& [key, value] : entries(declared, "error_model", known))
    for (const auto& [name, member] : kCoefficients)
      if (key == name) model.coefficients.*member = number(value, "error_model['" + key + "']");
  const std::string why = coefficients_problem(model.coefficients);
  if (!why.empty()) throw std::invalid_argument("error_model: " + why);
  return model;
}

// The kernel's output: any DLPack-capable or array-like object, read exactly.
namespace {

constexpr int kDLCPU = 1;
constexpr int kDLCUDAHost = 3;  // pinned host memory: readable in place

using AnyArray = nb::ndarray<nb::ro>;

// pacheck._bridge.host_array: detaches, copies device arrays to the host, wraps array-likes with numpy.
nb::handle host_array() {
  // Leaked on purpose: a static nb::object would be released after the interpreter has finalized.
  static nb::object* helper = new nb::object(nb::module_::import_("pacheck._bridge").attr("host_array"));
  return *helper;
}

bool readable_on_host(nb::handle value, AnyArray& array) {
  return nb::try_cast(value, array) && (array.device_type() == kDLCPU || array.device_type() == kDLCUDAHost);
}

std::string dtype_text(nb::dlpack::dtype t) {
  using nb::dlpack::dtype_code;
  const char* kind = nullptr;
  switch (static_cast<dtype_code>(t.code)) {
    case dtype_code::Int: kind = "int"; break;
    case dtype_code::UInt: kind = "uint"; break;
    case dtype_code::Float: kind = "float"; break;
    case dtype_code::Bfloat: kind = "bfloat"; break;
    case dtype_code::Complex: kind = "complex"; break;
    case dtype_code::Bool: kind = "bool"; break;
    default: return "dtype code " + std::to_string(t.code) + " of " + std::to_string(t.bits) + " bits";
  }
  return kind + std::to_string(t.bits) + (t.lanes != 1 ? "x" + std::to_string(t.lanes) : "");
}

// Every 16-bit pattern's value in a 16-bit dtype, exactly, so that converting an element is one load.
const std::vector<float>& values_of_bits(DType dtype) {
  static const auto build = [](DType d) {
    std::vector<float> table(1u << 16);
    for (std::uint32_t bits = 0; bits < table.size(); ++bits) {
      const auto pattern = static_cast<std::uint16_t>(bits);
      table[bits] = d == DType::f16 ? from_f16_bits(pattern) : from_bf16_bits(pattern);
    }
    return table;
  };
  static const std::vector<float> f16 = build(DType::f16), bf16 = build(DType::bf16);
  return dtype == DType::f16 ? f16 : bf16;
}

// The storage dtype behind a DLPack dtype, when pacheck reads it.
std::optional<DType> readable_dtype(nb::dlpack::dtype t) {
  using nb::dlpack::dtype_code;
  const auto code = static_cast<dtype_code>(t.code);
  if (t.lanes != 1) return std::nullopt;
  if (code == dtype_code::Float && t.bits == 32) return DType::f32;
  if (code == dtype_code::Float && t.bits == 16) return DType::f16;
  if (code == dtype_code::Bfloat && t.bits == 16) return DType::bf16;
  return std::nullopt;
}

// Copies a [rows][heads][dim] array of `Element` with any strides (in elements) into `out`, converting each value.
template <typename Element, typename Convert>
void copy_converted(const AnyArray& array, Output& out, Convert convert) {
  const auto* base = static_cast<const Element*>(array.data());
  const std::size_t rows = array.shape(0), heads = array.shape(1), dim = array.shape(2);
  const std::int64_t s0 = array.stride(0), s1 = array.stride(1), s2 = array.stride(2);
  if (s2 == 1 && s1 == static_cast<std::int64_t>(dim) && s0 == static_cast<std::int64_t>(heads * dim)) {
    for (std::size_t e = 0; e < out.size(); ++e) out[e] = convert(base[e]);
    return;
  }
  float* to = out.data();
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < heads; ++j) {
      const Element* row = base + static_cast<std::int64_t>(i) * s0 + static_cast<std::int64_t>(j) * s1;
      for (std::size_t k = 0; k < dim; ++k) *to++ = convert(row[static_cast<std::int64_t>(k) * s2]);
    }
}

}  // namespace

Output output_from(nb::handle result, const Problem& p, const std::string& kernel) {
  AnyArray array;
  if (!readable_on_host(result, array)) {
    nb::object host;
    try {
      host = host_array()(result);
    } catch (nb::python_error& e) {
      throw KernelContractError("kernel '" + kernel + "' returned a " + Py_TYPE(result.ptr())->tp_name +
                                " that pacheck cannot read as an array: " + e.what());
    }
    if (!readable_on_host(host, array))
      throw KernelContractError("kernel '" + kernel + "' returned a " + Py_TYPE(result.ptr())->tp_name +
                                " that pacheck cannot read as an array (numpy, a torch tensor, any DLPack array of "
                                "float32, float16 or bfloat16)");
  }
  const Shape expected = query_shape(p);
  if (array.ndim() != 3 || array.shape(0) != expected[0] || array.shape(1) != expected[1] ||
      array.shape(2) != expected[2]) {
    std::string got;
    for (std::size_t i = 0; i < array.ndim(); ++i) got += (i ? ", " : "") + std::to_string(array.shape(i));
    throw KernelContractError("kernel '" + kernel + "' returned an array of shape (" + got +
                              "); the output must be [total_queries, num_query_heads, head_dim] = [" +
                              std::to_string(expected[0]) + ", " + std::to_string(expected[1]) + ", " +
                              std::to_string(expected[2]) + "]");
  }
  const std::optional<DType> dtype = readable_dtype(array.dtype());
  if (!dtype)
    throw KernelContractError("kernel '" + kernel + "' returned " + dtype_text(array.dtype()) +
                              " values; the output must be float32, float16 or bfloat16 (pacheck reads it exactly, "
                              "so it does not round wider types)");
  Output out(expected[0] * expected[1] * expected[2]);
  if (*dtype == DType::f32) {
    copy_converted<float>(array, out, [](float x) { return x; });
  } else {
    const float* values = values_of_bits(*dtype).data();
    copy_converted<std::uint16_t>(array, out, [values](std::uint16_t bits) { return values[bits]; });
  }
  return out;
}

}  // namespace pacheck::python
