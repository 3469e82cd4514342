#include "problem/case_file.h"

#include <bit>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

namespace pacheck {
namespace {

using json = nlohmann::json;

// Larger files are refused before parsing: a case file is a test case, not a data set.
constexpr std::uintmax_t kMaxCaseFileBytes = std::uintmax_t{1} << 30;

int hex_digits_per_value(DType dtype) { return dtype == DType::f32 ? 8 : 4; }

std::string encode_values(const std::vector<float>& values, DType dtype) {
  static const char* digits = "0123456789abcdef";
  const int width = hex_digits_per_value(dtype);
  std::string out(values.size() * width, '0');
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t bits = 0;
    switch (dtype) {
      case DType::f32: bits = std::bit_cast<std::uint32_t>(values[i]); break;
      case DType::f16: bits = to_f16_bits(values[i]); break;
      case DType::bf16: bits = to_bf16_bits(values[i]); break;
    }
    for (int k = width - 1; k >= 0; --k, bits >>= 4) out[i * width + k] = digits[bits & 0xf];
  }
  return out;
}

std::vector<float> decode_values(const std::string& text, DType dtype, const char* field) {
  const int width = hex_digits_per_value(dtype);
  if (text.size() % width != 0)
    throw CaseFileError(std::string(field) + ": length " + std::to_string(text.size()) + " is not a multiple of " +
                        std::to_string(width) + " hex digits per " + std::string(dtype_name(dtype)) + " value");
  std::vector<float> values(text.size() / width);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t bits = 0;
    for (int k = 0; k < width; ++k) {
      const char ch = text[i * width + k];
      int nibble = 0;
      if (ch >= '0' && ch <= '9') nibble = ch - '0';
      else if (ch >= 'a' && ch <= 'f') nibble = ch - 'a' + 10;
      else if (ch >= 'A' && ch <= 'F') nibble = ch - 'A' + 10;
      else throw CaseFileError(std::string(field) + ": character '" + std::string(1, ch) + "' at offset " +
                               std::to_string(i * width + k) + " is not a hex digit");
      bits = (bits << 4) | static_cast<std::uint32_t>(nibble);
    }
    switch (dtype) {
      case DType::f32: values[i] = std::bit_cast<float>(bits); break;
      case DType::f16: values[i] = from_f16_bits(static_cast<std::uint16_t>(bits)); break;
      case DType::bf16: values[i] = from_bf16_bits(static_cast<std::uint16_t>(bits)); break;
    }
  }
  return values;
}

const json& field(const json& object, const char* name, const char* where) {
  if (!object.is_object()) throw CaseFileError(std::string(where) + " must be a JSON object");
  const auto it = object.find(name);
  if (it == object.end()) throw CaseFileError(std::string(where) + ": missing field '" + name + "'");
  return *it;
}

int int_field(const json& object, const char* name, const char* where) {
  const json& v = field(object, name, where);
  if (!v.is_number_integer()) throw CaseFileError(std::string(where) + ": '" + name + "' must be an integer");
  const auto x = v.get<std::int64_t>();
  if (x < std::numeric_limits<std::int32_t>::min() || x > std::numeric_limits<std::int32_t>::max())
    throw CaseFileError(std::string(where) + ": '" + name + "' = " + std::to_string(x) + " does not fit in 32 bits");
  return static_cast<int>(x);
}

std::string string_field(const json& object, const char* name, const char* where) {
  const json& v = field(object, name, where);
  if (!v.is_string()) throw CaseFileError(std::string(where) + ": '" + name + "' must be a string");
  return v.get<std::string>();
}

}  // namespace

std::string case_to_json(const Case& c) {
  const Problem& p = c.problem;
  json j;
  j["format"] = "pacheck-case";
  j["version"] = kCaseFormatVersion;
  j["note"] = c.note;
  j["dtype"] = std::string(dtype_name(p.dtype));
  j["num_query_heads"] = p.num_query_heads;
  j["num_kv_heads"] = p.num_kv_heads;
  j["head_dim"] = p.head_dim;
  j["block_size"] = p.block_size;
  j["num_blocks"] = p.num_blocks;
  // The scale is stored as its fp32 bit pattern so it round-trips exactly; null means the default.
  j["scale_bits"] = p.explicit_scale ? json(encode_values({*p.explicit_scale}, DType::f32)) : json(nullptr);
  json seqs = json::array();
  for (const Sequence& s : p.sequences)
    seqs.push_back({{"context_len", s.context_len}, {"num_queries", s.num_queries}, {"block_table", s.block_table}});
  j["sequences"] = seqs;
  j["knobs"] = {{"tile_size", c.knobs.tile_size}, {"split_size", c.knobs.split_size}, {"num_splits", c.knobs.num_splits}};
  j["k_pool"] = encode_values(p.k_pool, p.dtype);
  j["v_pool"] = encode_values(p.v_pool, p.dtype);
  j["queries"] = encode_values(p.queries, p.dtype);
  return j.dump(1);
}

Case case_from_json(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw CaseFileError("not valid JSON");
  const char* top = "case file";
  if (!j.is_object() || !j.contains("format") || j["format"] != "pacheck-case")
    throw CaseFileError("not a pacheck case file (missing \"format\": \"pacheck-case\")");
  const int version = int_field(j, "version", top);
  if (version != kCaseFormatVersion)
    throw CaseFileError("unsupported case file version " + std::to_string(version) + " (this build reads version " +
                        std::to_string(kCaseFormatVersion) + ")");
  Case c;
  if (j.contains("note") && j["note"].is_string()) c.note = j["note"].get<std::string>();
  Problem& p = c.problem;
  const std::string dtype = string_field(j, "dtype", top);
  const auto parsed = parse_dtype(dtype);
  if (!parsed) throw CaseFileError("unknown dtype '" + dtype + "' (fp32, fp16 or bf16)");
  p.dtype = *parsed;
  p.num_query_heads = int_field(j, "num_query_heads", top);
  p.num_kv_heads = int_field(j, "num_kv_heads", top);
  p.head_dim = int_field(j, "head_dim", top);
  p.block_size = int_field(j, "block_size", top);
  p.num_blocks = int_field(j, "num_blocks", top);
  const json& scale = field(j, "scale_bits", top);
  if (!scale.is_null()) {
    if (!scale.is_string()) throw CaseFileError("case file: 'scale_bits' must be null or a string");
    const auto bits = decode_values(scale.get<std::string>(), DType::f32, "scale_bits");
    if (bits.size() != 1) throw CaseFileError("case file: 'scale_bits' must hold exactly one fp32 value");
    p.explicit_scale = bits[0];
  }
  const json& seqs = field(j, "sequences", top);
  if (!seqs.is_array()) throw CaseFileError("case file: 'sequences' must be an array");
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const std::string where = "sequences[" + std::to_string(i) + "]";
    Sequence s;
    s.context_len = int_field(seqs[i], "context_len", where.c_str());
    s.num_queries = int_field(seqs[i], "num_queries", where.c_str());
    const json& table = field(seqs[i], "block_table", where.c_str());
    if (!table.is_array()) throw CaseFileError(where + ": 'block_table' must be an array");
    for (std::size_t k = 0; k < table.size(); ++k) {
      if (!table[k].is_number_integer() || table[k].get<std::int64_t>() < std::numeric_limits<std::int32_t>::min() ||
          table[k].get<std::int64_t>() > std::numeric_limits<std::int32_t>::max())
        throw CaseFileError(where + ": block_table[" + std::to_string(k) + "] must be a 32-bit integer");
      s.block_table.push_back(table[k].get<std::int32_t>());
    }
    p.sequences.push_back(std::move(s));
  }
  const json& knobs = field(j, "knobs", top);
  c.knobs.tile_size = int_field(knobs, "tile_size", "knobs");
  c.knobs.split_size = int_field(knobs, "split_size", "knobs");
  c.knobs.num_splits = int_field(knobs, "num_splits", "knobs");
  if (c.knobs.tile_size <= 0 || c.knobs.split_size <= 0 || c.knobs.num_splits < 0)
    throw CaseFileError("knobs: tile_size and split_size must be positive and num_splits non-negative");
  p.k_pool = decode_values(string_field(j, "k_pool", top), p.dtype, "k_pool");
  p.v_pool = decode_values(string_field(j, "v_pool", top), p.dtype, "v_pool");
  p.queries = decode_values(string_field(j, "queries", top), p.dtype, "queries");
  const std::vector<std::string> errors = validation_errors(p);
  if (!errors.empty()) throw CaseFileError(InvalidProblem(errors).what());
  return c;
}

void write_case_file(const std::filesystem::path& path, const Case& c) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path);
  out << case_to_json(c) << "\n";
  if (!out) throw CaseFileError("cannot write case file " + path.string());
}

Case read_case_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw CaseFileError("cannot read case file " + path.string() + ": " + ec.message());
  if (size > kMaxCaseFileBytes)
    throw CaseFileError("case file " + path.string() + " is " + std::to_string(size) + " bytes, over the 1 GiB limit");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return case_from_json(text.str());
  } catch (const CaseFileError& e) {
    throw CaseFileError(path.string() + ": " + e.what());
  }
}

}  // namespace pacheck
