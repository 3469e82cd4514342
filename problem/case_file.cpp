#include "problem/case_file.h"

#include <bit>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <system_error>
#include <utility>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace pacheck {
namespace {

using json = nlohmann::json;

// A hostile file costs at most a bounded multiple of its size (CASE_FORMAT.md, "Errors and limits", gives each
// limit's reason): allocations follow the bytes present; declared sizes are only compared.
constexpr std::size_t kMaxCaseFileBytes = std::size_t{256} << 20;
constexpr int kMaxDepth = 4;                                  // case -> sequences -> sequence -> block_table -> id
constexpr std::size_t kMaxJsonValues = std::size_t{1} << 20;  // each costs the parsed tree tens of bytes
constexpr std::size_t kMaxQuotedChars = 40;                   // of a string from the file, in a message

// The integer fields of the problem and of the knobs, in the order they are read.
constexpr std::pair<const char*, int Problem::*> kShapeFields[] = {
    {"num_query_heads", &Problem::num_query_heads}, {"num_kv_heads", &Problem::num_kv_heads},
    {"head_dim", &Problem::head_dim},               {"block_size", &Problem::block_size},
    {"num_blocks", &Problem::num_blocks}};
constexpr std::pair<const char*, int Knobs::*> kKnobFields[] = {
    {"tile_size", &Knobs::tile_size}, {"split_size", &Knobs::split_size}, {"num_splits", &Knobs::num_splits}};

void append_escaped(std::string& out, unsigned char ch) {
  static const char* hex = "0123456789abcdef";
  out += "\\x";
  out += hex[ch >> 4];
  out += hex[ch & 0xf];
}

std::string quote_for_message(std::string_view text) {
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < kMaxQuotedChars; ++i) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if (ch >= 0x20 && ch < 0x7f) {
      out += static_cast<char>(ch);
    } else {
      append_escaped(out, ch);
    }
  }
  if (text.size() > kMaxQuotedChars) out += "...";
  return out + "'";
}

// A field's values as fixed-width hex bit patterns: `width` digits each, converted by `to_bits` / `from_bits`.
template <typename ToBits>
std::string encode_with(const std::vector<float>& values, int width, ToBits to_bits) {
  static const char* digits = "0123456789abcdef";
  std::string out(values.size() * width, '0');
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t bits = to_bits(values[i]);
    for (int k = width - 1; k >= 0; --k, bits >>= 4) out[i * width + k] = digits[bits & 0xf];
  }
  return out;
}

int hex_nibble(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

template <typename FromBits>
std::vector<float> decode_with(const std::string& text, std::size_t width, std::string_view format_name,
                               const char* field, FromBits from_bits) {
  if (text.size() % width != 0)
    throw CaseFileError(std::string(field) + ": length " + std::to_string(text.size()) + " is not a multiple of " +
                        std::to_string(width) + " hex digits per " + std::string(format_name) + " value");
  std::vector<float> values(text.size() / width);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t bits = 0;
    for (std::size_t k = 0; k < width; ++k) {
      const int nibble = hex_nibble(text[i * width + k]);
      if (nibble < 0)
        throw CaseFileError(std::string(field) + ": character " + quote_for_message(text.substr(i * width + k, 1)) +
                            " at offset " + std::to_string(i * width + k) + " is not a hex digit");
      bits = (bits << 4) | static_cast<std::uint32_t>(nibble);
    }
    values[i] = from_bits(bits);
  }
  return values;
}

std::string encode_values(const std::vector<float>& values, DType dtype) {
  if (dtype == DType::f32) return encode_with(values, 8, [](float x) { return std::bit_cast<std::uint32_t>(x); });
  const auto to_bits = dtype == DType::f16 ? to_f16_bits : to_bf16_bits;
  return encode_with(values, 4, [to_bits](float x) { return std::uint32_t{to_bits(x)}; });
}

std::string encode_values(const std::vector<float>& values, Fp8Format format) {
  return encode_with(values, 2, [format](float x) { return std::uint32_t{to_fp8_bits(x, format)}; });
}

std::vector<float> decode_values(const std::string& text, DType dtype, const char* field) {
  if (dtype == DType::f32)
    return decode_with(text, 8, dtype_name(dtype), field, [](std::uint32_t b) { return std::bit_cast<float>(b); });
  const auto from_bits = dtype == DType::f16 ? from_f16_bits : from_bf16_bits;
  return decode_with(text, 4, dtype_name(dtype), field,
                     [from_bits](std::uint32_t b) { return from_bits(static_cast<std::uint16_t>(b)); });
}

std::vector<float> decode_values(const std::string& text, Fp8Format format, const char* field) {
  return decode_with(text, 2, fp8_name(format), field,
                     [format](std::uint32_t b) { return from_fp8_bits(static_cast<std::uint8_t>(b), format); });
}

const json& object_at(const json& value, const std::string& where) {
  if (!value.is_object()) throw CaseFileError(where + " must be a JSON object");
  return value;
}

// A misspelt field would otherwise be ignored and the case replayed with the default.
void reject_unknown_fields(const json& object, std::initializer_list<const char*> known, const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    bool found = false;
    for (const char* name : known) found = found || key == name;
    if (!found) throw CaseFileError(where + ": unknown field " + quote_for_message(key));
  }
}

const json& field(const json& object, const char* name, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end()) throw CaseFileError(where + ": missing field '" + name + "'");
  return *it;
}

// The JSON integer as a 32-bit int; unsigned values checked as unsigned, so 2^64 - 1 does not wrap to -1.
std::optional<std::int32_t> as_int32(const json& v) {
  if (v.is_number_unsigned()) {
    const auto x = v.get<std::uint64_t>();
    if (x > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) return std::nullopt;
    return static_cast<std::int32_t>(x);
  }
  if (!v.is_number_integer()) return std::nullopt;
  const auto x = v.get<std::int64_t>();
  if (x < std::numeric_limits<std::int32_t>::min() || x > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
  return static_cast<std::int32_t>(x);
}

int int_field(const json& object, const char* name, const std::string& where) {
  const json& v = field(object, name, where);
  if (!v.is_number_integer()) throw CaseFileError(where + ": '" + name + "' must be an integer");
  const auto x = as_int32(v);
  if (!x) throw CaseFileError(where + ": '" + name + "' = " + v.dump() + " does not fit in 32 bits");
  return *x;
}

std::string string_field(const json& object, const char* name, const std::string& where) {
  const json& v = field(object, name, where);
  if (!v.is_string()) throw CaseFileError(where + ": '" + name + "' must be a string");
  return v.get<std::string>();
}

// Refuses nesting and value counts the format never needs before they cost memory.
json parse_bounded(std::string_view text) {
  if (text.size() > kMaxCaseFileBytes)
    throw CaseFileError("the case is " + std::to_string(text.size()) + " bytes, over the limit of " +
                        std::to_string(kMaxCaseFileBytes) + " bytes");
  std::size_t values = 0;
  const json::parser_callback_t limits = [&values](int depth, json::parse_event_t event, json&) {
    if (event == json::parse_event_t::object_end || event == json::parse_event_t::array_end) return true;
    if (depth > kMaxDepth)
      throw CaseFileError("JSON nested deeper than the case format's " + std::to_string(kMaxDepth) + " levels");
    if (++values > kMaxJsonValues)
      throw CaseFileError("more than " + std::to_string(kMaxJsonValues) + " JSON values, over the case format's limit");
    return true;
  };
  try {
    return json::parse(text, limits);
  } catch (const json::exception& e) {
    throw CaseFileError(std::string("not valid JSON: ") + e.what());
  }
}

Sequence read_sequence(const json& value, const std::string& where) {
  const json& object = object_at(value, where);
  reject_unknown_fields(object, {"context_len", "num_queries", "block_table"}, where);
  Sequence s;
  s.context_len = int_field(object, "context_len", where);
  s.num_queries = int_field(object, "num_queries", where);
  const json& table = field(object, "block_table", where);
  if (!table.is_array()) throw CaseFileError(where + ": 'block_table' must be an array");
  s.block_table.reserve(table.size());  // bounded by the values the file holds
  for (std::size_t k = 0; k < table.size(); ++k) {
    const auto id = as_int32(table[k]);
    if (!id) throw CaseFileError(where + ": block_table[" + std::to_string(k) + "] must be a 32-bit integer");
    s.block_table.push_back(*id);
  }
  return s;
}

// A kernel choice of the knobs: absent means automatic.
template <typename Choice>
void read_choice(const json& knobs, const char* name, std::optional<Choice> (*parse)(const std::string&),
                 const std::string& names, Choice& choice) {
  if (!knobs.contains(name)) return;
  const json& value = knobs.at(name);
  const auto parsed = value.is_string() ? parse(value.get<std::string>()) : std::nullopt;
  if (!parsed)
    throw CaseFileError(std::string("knobs: ") + name + " must be one of " + names + ", got " +
                        quote_for_message(value.dump()));
  choice = *parsed;
}

Knobs read_knobs(const json& value) {
  const std::string where = "knobs";
  const json& object = object_at(value, where);
  reject_unknown_fields(object, {"tile_size", "split_size", "num_splits", "layout", "merge"}, where);
  Knobs k;
  for (const auto& [name, member] : kKnobFields) k.*member = int_field(object, name, where);
  if (k.tile_size <= 0) throw CaseFileError("knobs: tile_size must be positive, got " + std::to_string(k.tile_size));
  if (k.split_size <= 0) throw CaseFileError("knobs: split_size must be positive, got " + std::to_string(k.split_size));
  if (k.num_splits < 0)
    throw CaseFileError("knobs: num_splits must be 0 (use split_size) or positive, got " + std::to_string(k.num_splits));
  read_choice(object, "layout", parse_kernel_layout, kernel_layout_names(), k.pins.layout);
  read_choice(object, "merge", parse_merge_shape, merge_shape_names(), k.pins.merge);
  return k;
}

// One fp32 value per query head, as hex bit patterns (NaN and -inf round-trip).
std::vector<float> read_per_head(const json& object, const char* name, const std::string& where) {
  return decode_values(string_field(object, name, where), DType::f32, name);
}

float read_one_fp32(const std::string& text, const char* name) {
  const auto bits = decode_values(text, DType::f32, name);
  if (bits.size() != 1) throw CaseFileError(std::string("case file: '") + name + "' must hold exactly one fp32 value");
  return bits[0];
}

// The logit options of a version-2 file: each optional, absent meaning off.
LogitOptions read_logit_options(const json& j, const std::string& where) {
  LogitOptions o;
  if (j.contains("soft_cap_bits")) o.soft_cap = read_one_fp32(string_field(j, "soft_cap_bits", where), "soft_cap_bits");
  if (j.contains("window")) o.window = int_field(j, "window", where);
  if (j.contains("alibi_slopes")) o.alibi_slopes = read_per_head(j, "alibi_slopes", where);
  if (j.contains("sinks")) o.sinks = read_per_head(j, "sinks", where);
  return o;
}

}  // namespace

int case_format_version(const Problem& problem) { return problem.options.any() || problem.fp8_cache ? 2 : 1; }

std::string case_to_json(const Case& c) {
  const Problem& p = c.problem;
  json j;
  j["format"] = "pacheck-case";
  j["version"] = case_format_version(p);
  j["note"] = c.note;
  j["dtype"] = std::string(dtype_name(p.dtype));
  for (const auto& [name, member] : kShapeFields) j[name] = p.*member;
  // Floats are stored as fp32 bit patterns, so they round-trip exactly; a null scale means the default.
  j["scale_bits"] = p.explicit_scale ? json(encode_values({*p.explicit_scale}, DType::f32)) : json(nullptr);
  json seqs = json::array();
  for (const Sequence& s : p.sequences)
    seqs.push_back({{"context_len", s.context_len}, {"num_queries", s.num_queries}, {"block_table", s.block_table}});
  j["sequences"] = seqs;
  for (const auto& [name, member] : kKnobFields) j["knobs"][name] = c.knobs.*member;
  if (c.knobs.pins.layout != KernelLayout::automatic) j["knobs"]["layout"] = knob_name(c.knobs.pins.layout);
  if (c.knobs.pins.merge != MergeShape::automatic) j["knobs"]["merge"] = knob_name(c.knobs.pins.merge);
  // The logit options (version 2), each written only when set.
  const LogitOptions& o = p.options;
  if (o.soft_cap) j["soft_cap_bits"] = encode_values({*o.soft_cap}, DType::f32);
  if (o.window) j["window"] = *o.window;
  if (!o.alibi_slopes.empty()) j["alibi_slopes"] = encode_values(o.alibi_slopes, DType::f32);
  if (!o.sinks.empty()) j["sinks"] = encode_values(o.sinks, DType::f32);
  // An fp8 cache (version 2): its format and scales, and pools of 2 hex digits per value.
  if (p.fp8_cache) {
    j["kv_cache"] = std::string(fp8_name(p.fp8_cache->format));
    j["k_scales"] = encode_values(p.fp8_cache->k_scales, DType::f32);
    j["v_scales"] = encode_values(p.fp8_cache->v_scales, DType::f32);
    j["k_pool"] = encode_values(p.k_pool, p.fp8_cache->format);
    j["v_pool"] = encode_values(p.v_pool, p.fp8_cache->format);
  } else {
    j["k_pool"] = encode_values(p.k_pool, p.dtype);
    j["v_pool"] = encode_values(p.v_pool, p.dtype);
  }
  j["queries"] = encode_values(p.queries, p.dtype);
  // The note is free text from the file's writer: replace invalid UTF-8 rather than refuse to save a failure.
  return j.dump(1, ' ', false, json::error_handler_t::replace);
}

Case case_from_json(std::string_view text) {
  const json j = parse_bounded(text);
  const std::string top = "case file";
  if (!j.is_object() || !j.contains("format") || j.at("format") != "pacheck-case")
    throw CaseFileError("not a pacheck case file (missing \"format\": \"pacheck-case\")");
  // The version first: a newer file may differ in every other field, and "unsupported version" is what helps.
  const int version = int_field(j, "version", top);
  if (version < 1 || version > kCaseFormatVersion)
    throw CaseFileError("unsupported case file version " + std::to_string(version) + " (this build reads versions 1 to " +
                        std::to_string(kCaseFormatVersion) + ")");
  constexpr const char* kVersion2Fields[] = {"soft_cap_bits", "window", "alibi_slopes", "sinks",
                                             "kv_cache",      "k_scales", "v_scales"};
  if (version == 1)
    for (const char* name : kVersion2Fields)
      if (j.contains(name))
        throw CaseFileError(std::string("case file: '") + name + "' is a version-2 field, but the file says version 1");
  reject_unknown_fields(j,
                        {"format", "version", "note", "dtype", "num_query_heads", "num_kv_heads", "head_dim",
                         "block_size", "num_blocks", "scale_bits", "sequences", "knobs", "k_pool", "v_pool", "queries",
                         "soft_cap_bits", "window", "alibi_slopes", "sinks", "kv_cache", "k_scales", "v_scales"},
                        top);
  Case c;
  if (j.contains("note")) {
    if (!j.at("note").is_string()) throw CaseFileError("case file: 'note' must be a string");
    c.note = j.at("note").get<std::string>();
  }
  Problem& p = c.problem;
  const std::string dtype = string_field(j, "dtype", top);
  const auto parsed = parse_dtype(dtype);
  if (!parsed) throw CaseFileError("unknown dtype " + quote_for_message(dtype) + " (fp32, fp16 or bf16)");
  p.dtype = *parsed;
  for (const auto& [name, member] : kShapeFields) p.*member = int_field(j, name, top);
  const json& scale = field(j, "scale_bits", top);
  if (!scale.is_null()) {
    if (!scale.is_string()) throw CaseFileError("case file: 'scale_bits' must be null or a string");
    p.explicit_scale = read_one_fp32(scale.get<std::string>(), "scale_bits");
  }
  const json& seqs = field(j, "sequences", top);
  if (!seqs.is_array()) throw CaseFileError("case file: 'sequences' must be an array");
  p.sequences.reserve(seqs.size());
  for (std::size_t i = 0; i < seqs.size(); ++i)
    p.sequences.push_back(read_sequence(seqs[i], "sequences[" + std::to_string(i) + "]"));
  c.knobs = read_knobs(field(j, "knobs", top));
  if (version >= 2) p.options = read_logit_options(j, top);
  if (version >= 2 && j.contains("kv_cache")) {
    const std::string name = string_field(j, "kv_cache", top);
    const auto format = parse_fp8(name);
    if (!format) throw CaseFileError("unknown kv_cache " + quote_for_message(name) + " (fp8_e4m3 or fp8_e5m2)");
    p.fp8_cache = Fp8Cache{*format, read_per_head(j, "k_scales", top), read_per_head(j, "v_scales", top)};
    p.k_pool = decode_values(string_field(j, "k_pool", top), *format, "k_pool");
    p.v_pool = decode_values(string_field(j, "v_pool", top), *format, "v_pool");
  } else {
    if (j.contains("k_scales") || j.contains("v_scales"))
      throw CaseFileError("case file: 'k_scales' and 'v_scales' belong to an fp8 'kv_cache', which is absent");
    p.k_pool = decode_values(string_field(j, "k_pool", top), p.dtype, "k_pool");
    p.v_pool = decode_values(string_field(j, "v_pool", top), p.dtype, "v_pool");
  }
  p.queries = decode_values(string_field(j, "queries", top), p.dtype, "queries");
  const std::vector<std::string> errors = validation_errors(p);
  if (!errors.empty()) throw CaseFileError(InvalidProblem(errors).what());
  return c;
}

void write_case_file(const std::filesystem::path& path, const Case& c) {
  const std::string text = case_to_json(c) + "\n";
  // A temporary file renamed into place: a process killed mid-write leaves no truncated case.
  const std::filesystem::path temporary = path.string() + ".tmp" + std::to_string(::getpid());
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) throw CaseFileError("cannot create the folder of case file " + path.string() + ": " + ec.message());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::filesystem::remove(temporary, ec);
      throw CaseFileError("cannot write case file " + path.string());
    }
  }
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw CaseFileError("cannot write case file " + path.string() + ": " + ec.message());
  }
}

Case read_case_file(const std::filesystem::path& path) {
  const auto cannot_read = [&path](const std::string& why) {
    return CaseFileError("cannot read case file " + path.string() + why);
  };
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) throw cannot_read(": " + ec.message());
  // Devices and pipes are refused: /dev/zero has no end, and a FIFO can block forever.
  if (!std::filesystem::is_regular_file(status)) throw cannot_read(": not a regular file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw cannot_read(": " + ec.message());
  if (size > kMaxCaseFileBytes)
    throw CaseFileError("case file " + path.string() + " is " + std::to_string(size) + " bytes, over the limit of " +
                        std::to_string(kMaxCaseFileBytes) + " bytes");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw cannot_read("");
  // At most the size checked above, plus one byte to notice a file that grew meanwhile.
  std::string text(static_cast<std::size_t>(size) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) throw cannot_read(": read error");
  try {
    return case_from_json(text);
  } catch (const CaseFileError& e) {
    throw CaseFileError(path.string() + ": " + e.what());
  }
}

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const unsigned char ch = static_cast<unsigned char>(c);
    if (ch < 0x20 || ch == 0x7f) {
      append_escaped(out, ch);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace pacheck
