// Reading a kernel's returned array into an Output (kernel_output.h).
#include "python/src/kernel_output.h"

#include <cstdint>
#include <optional>
#include <vector>

#include <nanobind/ndarray.h>

namespace nb = nanobind;

namespace pacheck::python {
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
  if (t.lanes != 1) return std::nullopt;
  if (t.code == static_cast<std::uint8_t>(dtype_code::Float) && t.bits == 32) return DType::f32;
  if (t.code == static_cast<std::uint8_t>(dtype_code::Float) && t.bits == 16) return DType::f16;
  if (t.code == static_cast<std::uint8_t>(dtype_code::Bfloat) && t.bits == 16) return DType::bf16;
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
  const std::size_t expected[3] = {static_cast<std::size_t>(p.total_queries()),
                                   static_cast<std::size_t>(p.num_query_heads), static_cast<std::size_t>(p.head_dim)};
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
