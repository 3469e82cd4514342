// pacheck.Problem's bindings: fields, zero-copy float views, storage-dtype and table arrays, case files, generation.
#include "python/src/problem_object.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "problem/case_file.h"
#include "properties/problem_spec.h"
#include "python/src/from_python.h"

namespace nb = nanobind;

namespace pacheck::python {

ProblemObject::ProblemObject(Problem owned, const Knobs& knobs, std::string note)
    : owned_(std::make_shared<const Problem>(std::move(owned))), knobs_(knobs), note_(std::move(note)) {
  problem_ = owned_.get();
}

const Problem& ProblemObject::problem() const {
  if (problem_ == nullptr)
    throw std::runtime_error(
        "this problem was lent to a kernel for one call and that call has returned; its arrays are views into "
        "memory pacheck has since reused: copy what a kernel keeps (numpy.array(problem.k_pool))");
  return *problem_;
}

const std::vector<std::uint8_t>& ProblemObject::fp8_bytes(const std::vector<float> Problem::*pool) const {
  const Problem& p = problem();
  std::vector<std::uint8_t>& bytes = pool == &Problem::k_pool ? k_bytes_ : v_bytes_;
  if (bytes.empty() && p.fp8_cache) {
    // Every value is representable in the format (validate checks), so the bytes are exact.
    bytes.resize((p.*pool).size());
    std::transform((p.*pool).begin(), (p.*pool).end(), bytes.begin(),
                   [format = p.fp8_cache->format](float x) { return to_fp8_bits(x, format); });
  }
  return bytes;
}

Shape query_shape(const Problem& p) {
  return {static_cast<std::size_t>(p.total_queries()), static_cast<std::size_t>(p.num_query_heads),
          static_cast<std::size_t>(p.head_dim)};
}

namespace {

// A numpy array over `data` that keeps `owner` (the Python object holding the memory) alive.
template <typename T>
nb::object view(const T* data, const Shape& shape, nb::handle owner) {
  return nb::cast(nb::ndarray<nb::numpy, T>(const_cast<T*>(data), shape.size(), shape.data(), owner));
}

const ProblemObject& object_of(nb::handle self) { return nb::cast<const ProblemObject&>(self); }
const Problem& problem_of(nb::handle self) { return object_of(self).problem(); }

std::size_t size(int n) { return static_cast<std::size_t>(n); }
Shape pool_shape(const Problem& p) {
  return {size(p.num_blocks), size(p.block_size), size(p.num_kv_heads), size(p.head_dim)};
}

// The values in the problem's storage: an fp8 cache's pools as the format's bytes (a view of the object's one copy),
// else the float view itself for fp32 and 16-bit patterns for fp16 and bf16.
nb::object storage(nb::handle self, const std::vector<float> Problem::*array, Shape shape) {
  const Problem& p = problem_of(self);
  if (p.fp8_cache && array != &Problem::queries) return view(object_of(self).fp8_bytes(array).data(), shape, self);
  const std::vector<float>& values = p.*array;
  if (p.dtype == DType::f32) return view(values.data(), shape, self);
  std::vector<std::uint16_t> bits(values.size());
  const auto to_bits = p.dtype == DType::f16 ? to_f16_bits : to_bf16_bits;
  std::transform(values.begin(), values.end(), bits.begin(), to_bits);
  return owned_array(std::move(bits), shape);
}

// One int32 per sequence.
template <typename Field>
nb::object per_sequence(nb::handle self, Field field) {
  const Problem& p = problem_of(self);
  std::vector<std::int32_t> values;
  for (const Sequence& s : p.sequences) values.push_back(field(s));
  return owned_array(std::move(values), {p.sequences.size()});
}

// One float per head, or None when the option is absent.
nb::object per_head(const std::vector<float>& values) {
  if (values.empty()) return nb::none();
  return owned_array(values, {values.size()});
}

// An fp8 cache's k_scales or v_scales; None without a cache.
nb::object fp8_scales(nb::handle self, const std::vector<float> Fp8Cache::*scales) {
  const Problem& p = problem_of(self);
  return p.fp8_cache ? per_head((*p.fp8_cache).*scales) : nb::none();
}

int max_context_len(const Problem& p) {
  int longest = 0;
  for (const Sequence& s : p.sequences) longest = std::max(longest, s.context_len);
  return longest;
}

std::string repr(const ProblemObject& o) {
  std::ostringstream out;
  try {
    const Problem& p = o.problem();
    out << "<pacheck.Problem " << dtype_name(p.dtype) << ", " << p.sequences.size() << " sequences (";
    for (std::size_t s = 0; s < p.sequences.size(); ++s) out << (s ? " " : "") << mode_name(p.mode_of(static_cast<int>(s)));
    out << "), " << p.num_query_heads << " query heads / " << p.num_kv_heads << " KV heads, head_dim " << p.head_dim
        << ", block_size " << p.block_size << ", " << knobs_text(o.knobs()) << ">";
  } catch (const std::runtime_error&) {
    out << "<pacheck.Problem, released after its kernel call>";
  }
  return out.str();
}

// Throws std::invalid_argument naming the first field of `spec` that make_problem cannot build a problem from.
void check_spec(const ProblemSpec& spec) {
  // Large enough for any real shape, small enough that a typo cannot ask for terabytes.
  constexpr double kMaxPoolElements = 1u << 27;
  const auto require = [](bool ok, const std::string& why) {
    if (!ok) throw std::invalid_argument("make_problem: " + why);
  };
  const std::pair<const char*, int> positive[] = {{"num_kv_heads", spec.num_kv_heads}, {"gqa_ratio", spec.gqa_ratio},
                                                  {"head_dim", spec.head_dim}, {"block_size", spec.block_size}};
  for (const auto& [name, value] : positive)
    require(value >= 1, std::string(name) + " must be positive, got " + std::to_string(value));
  const std::pair<const char*, int> non_negative[] = {{"spare_blocks", spec.spare_blocks},
                                                      {"table_padding", spec.table_padding}};
  for (const auto& [name, value] : non_negative)
    require(value >= 0, std::string(name) + " must not be negative, got " + std::to_string(value));
  require(!spec.sequences.empty(), "sequences is empty; give (context_len, num_queries) pairs");
  double blocks = spec.spare_blocks + 1.0;
  for (std::size_t s = 0; s < spec.sequences.size(); ++s) {
    const SequenceSpec& seq = spec.sequences[s];
    require(seq.context_len >= 1 && seq.num_queries >= 1 && seq.num_queries <= seq.context_len,
            "sequences[" + std::to_string(s) + "] = (" + std::to_string(seq.context_len) + ", " +
                std::to_string(seq.num_queries) + "): needs context_len >= 1 and 1 <= num_queries <= context_len");
    blocks += std::ceil(static_cast<double>(seq.context_len) / spec.block_size) + 1;
  }
  require(blocks * spec.block_size * spec.num_kv_heads * spec.head_dim <= kMaxPoolElements,
          "the KV pool would hold more than 2^27 values");
  require(spec.spread > 0 && std::isfinite(spec.spread), "spread must be a positive finite number");
}

// The problem's three value arrays: each a zero-copy view and a storage-dtype array.
struct ValueArray {
  const char* name;
  const char* storage_name;
  const std::vector<float> Problem::*values;
  Shape (*shape)(const Problem&);
  const char* doc;
  const char* storage_doc;
};
const ValueArray kValueArrays[] = {
    {"queries", "queries_storage", &Problem::queries, query_shape,
     "float32 [total_queries, num_query_heads, head_dim], sequences in order; a zero-copy view.",
     "queries in the storage dtype: the float32 view for fp32, else uint16 bit patterns (a copy)."},
    {"k_pool", "k_pool_storage", &Problem::k_pool, pool_shape,
     "float32 [num_blocks, block_size, num_kv_heads, head_dim]; a zero-copy view.",
     "k_pool in its storage: an fp8 cache's uint8 bit patterns (one buffer per problem object, zero-copy after the "
     "first read; pacheck.torch_float8 views them as torch float8), else the float32 view for fp32 or uint16 bit "
     "patterns for fp16 and bf16 (a copy)."},
    {"v_pool", "v_pool_storage", &Problem::v_pool, pool_shape, "float32, the shape of k_pool; a zero-copy view.",
     "v_pool in its storage, as k_pool_storage."},
};

}  // namespace

void bind_problem(nb::module_& m) {
  nb::class_<Sequence>(m, "Sequence", "One sequence of a problem: its block table, context length and query count.")
      .def_ro("block_table", &Sequence::block_table, "Physical block of each logical block; entries past "
              "ceil(context_len / block_size) are padding that a kernel must never follow.")
      .def_ro("context_len", &Sequence::context_len, "Keys in the sequence's history.")
      .def_ro("num_queries", &Sequence::num_queries, "New query tokens: the last num_queries positions.")
      .def_prop_ro("first_query_position", &Sequence::first_query_position)
      .def("__repr__", [](const Sequence& s) {
        std::ostringstream out;
        out << "Sequence(context_len=" << s.context_len << ", num_queries=" << s.num_queries << ", block_table=[";
        for (std::size_t i = 0; i < s.block_table.size(); ++i) out << (i ? ", " : "") << s.block_table[i];
        out << "])";
        return out.str();
      });

  nb::class_<ProblemObject> problem(m, "Problem",
                                    "A paged-attention problem and the knobs it runs with. Float arrays hold values "
                                    "already rounded to `dtype`; the *_storage arrays hold them in that dtype itself.");
  problem.def_prop_ro("dtype", [](nb::handle self) { return std::string(dtype_name(problem_of(self).dtype)); },
                   "'fp32', 'fp16' or 'bf16': the storage dtype of the pools, the queries and the output.")
      .def_prop_ro("gqa_ratio", [](nb::handle self) { return problem_of(self).gqa_ratio(); },
                   "Query heads per KV head: query head h reads KV head h // gqa_ratio.")
      .def_prop_ro("scale", [](nb::handle self) { return problem_of(self).scale(); }, "The softmax scale (fp32).")
      .def_prop_ro("num_sequences", [](nb::handle self) { return problem_of(self).sequences.size(); })
      .def_prop_ro("total_queries", [](nb::handle self) { return problem_of(self).total_queries(); })
      .def_prop_ro("max_context_len", [](nb::handle self) { return max_context_len(problem_of(self)); })
      .def_prop_ro("sequences", [](nb::handle self) { return problem_of(self).sequences; })
      .def_prop_ro("modes", [](nb::handle self) {
        const Problem& p = problem_of(self);
        std::vector<std::string> modes;
        for (std::size_t s = 0; s < p.sequences.size(); ++s) modes.push_back(mode_name(p.mode_of(static_cast<int>(s))));
        return modes;
      }, "Each sequence's mode: 'decode', 'prefill' or 'continuation'.")
      .def_prop_ro("tile_size", [](nb::handle self) { return object_of(self).knobs().tile_size; },
                   "Keys folded per online-softmax step.")
      .def_prop_ro("split_size", [](nb::handle self) { return object_of(self).knobs().split_size; },
                   "Keys per split (split-K kernels).")
      .def_prop_ro("num_splits", [](nb::handle self) { return object_of(self).knobs().num_splits; },
                   "Split-K: when > 0, this many splits per sequence instead of split_size keys each.")
      .def("split_size_for", [](nb::handle self, int context_len) {
        return effective_split_size(object_of(self).knobs(), context_len);
      }, nb::arg("context_len"), "The keys per split a split-K kernel uses for a sequence of this context length.")
      .def_prop_ro("note", [](nb::handle self) { return object_of(self).note(); },
                   "A case file's note (which property found it); empty otherwise.")
      .def_prop_ro("block_tables", [](nb::handle self) {
        const Problem& p = problem_of(self);
        std::size_t width = 0;
        for (const Sequence& s : p.sequences) width = std::max(width, s.block_table.size());
        std::vector<std::int32_t> tables(p.sequences.size() * width, -1);
        for (std::size_t s = 0; s < p.sequences.size(); ++s)
          std::copy(p.sequences[s].block_table.begin(), p.sequences[s].block_table.end(), tables.begin() + s * width);
        return owned_array(std::move(tables), {p.sequences.size(), width});
      }, "int32 [num_sequences, widest table]: each sequence's table, padded with -1 (a copy).")
      .def_prop_ro("context_lens", [](nb::handle self) {
        return per_sequence(self, [](const Sequence& s) { return s.context_len; });
      }, "int32 [num_sequences] (a copy).")
      .def_prop_ro("query_lens", [](nb::handle self) {
        return per_sequence(self, [](const Sequence& s) { return s.num_queries; });
      }, "int32 [num_sequences]: each sequence's new query tokens (a copy).")
      .def_prop_ro("query_starts", [](nb::handle self) {
        const Problem& p = problem_of(self);
        std::vector<std::int32_t> starts{0};
        for (const Sequence& s : p.sequences) starts.push_back(starts.back() + s.num_queries);
        return owned_array(std::move(starts), {p.sequences.size() + 1});
      }, "int32 [num_sequences + 1]: the first query row of each sequence, then total_queries (a copy).")
      .def_prop_ro("soft_cap", [](nb::handle self) { return problem_of(self).options.soft_cap; },
                   "The soft cap (fp32): logits become soft_cap * tanh(logit / soft_cap), after the scale; None: none.")
      .def_prop_ro("window", [](nb::handle self) { return problem_of(self).options.window; },
                   "The sliding window: a query at position pos sees keys pos - window + 1 ..= pos (FlashInfer's "
                   "window_left is window - 1); None: every key up to pos.")
      .def_prop_ro("alibi_slopes", [](nb::handle self) { return per_head(problem_of(self).options.alibi_slopes); },
                   "float32 [num_query_heads] (a copy): query head h adds alibi_slopes[h] * (t - pos) to the logit of "
                   "key t, after the soft cap; None: no ALiBi.")
      .def_prop_ro("sinks", [](nb::handle self) { return per_head(problem_of(self).options.sinks); },
                   "float32 [num_query_heads] (a copy): query head h's softmax has one more logit, sinks[h], whose "
                   "value is the zero vector (-inf: no sink for that head); None: no sinks.")
      .def_prop_ro("kv_cache", [](nb::handle self) {
        const Problem& p = problem_of(self);
        return p.fp8_cache ? std::optional<std::string>(fp8_name(p.fp8_cache->format)) : std::nullopt;
      }, "'fp8_e4m3' or 'fp8_e5m2' (vLLM's kv_cache_dtype names; torch's float8_e4m3fn and float8_e5m2) when the "
         "pools are an fp8 KV cache: k_pool and v_pool then hold the fp8 values before their scales, "
         "k_pool_storage and v_pool_storage their uint8 bit patterns; None: the pools hold `dtype` values.")
      .def_prop_ro("k_scales", [](nb::handle self) { return fp8_scales(self, &Fp8Cache::k_scales); },
                   "float32 [1] (per tensor) or [num_kv_heads] (a copy): KV head g's key is k_pool[..., g, :] * "
                   "k_scales[0 if len(k_scales) == 1 else g]; None without an fp8 cache.")
      .def_prop_ro("v_scales", [](nb::handle self) { return fp8_scales(self, &Fp8Cache::v_scales); },
                   "float32 [1] or [num_kv_heads] (a copy): the scales of V, as k_scales; None without an fp8 cache.")
      .def_prop_ro("logit_options", [](nb::handle self) { return logit_option_names(problem_of(self).options); },
                   "The names of the logit options the problem sets, in the order they apply (a kernel's "
                   "capabilities['logit_options'] must list each).")
      .def("describe", [](nb::handle self) {
        return describe(problem_of(self)) + "knobs: " + knobs_text(object_of(self).knobs()) + "\n";
      }, "The problem in words: shapes, dtype, scale, each sequence's mode, lengths and table, the knobs.")
      .def("__repr__", [](nb::handle self) { return repr(object_of(self)); });
  // The int fields, each a read-only property of its own name.
  const std::pair<const char*, int Problem::*> int_fields[] = {
      {"num_query_heads", &Problem::num_query_heads}, {"num_kv_heads", &Problem::num_kv_heads},
      {"head_dim", &Problem::head_dim}, {"block_size", &Problem::block_size}, {"num_blocks", &Problem::num_blocks}};
  for (const auto& [name, field] : int_fields)
    problem.def_prop_ro(name, [field = field](nb::handle self) { return problem_of(self).*field; });
  for (const ValueArray& array : kValueArrays) {
    problem.def_prop_ro(array.name, [&array](nb::handle self) {
      const Problem& p = problem_of(self);
      return view((p.*array.values).data(), array.shape(p), self);
    }, array.doc);
    problem.def_prop_ro(array.storage_name, [&array](nb::handle self) {
      const Problem& p = problem_of(self);
      return storage(self, array.values, array.shape(p));
    }, array.storage_doc);
  }

  m.def("load_case", [](const std::string& path) {
    Case c = read_case_file(path);
    return ProblemObject(std::move(c.problem), c.knobs, std::move(c.note));
  }, nb::arg("path"), "Reads a case file (problem/CASE_FORMAT.md) into a Problem. Raises CaseFileError naming what is wrong.");

  m.def("save_case", [](const std::string& path, const ProblemObject& problem, const std::string& note) {
    write_case_file(path, Case{problem.problem(), problem.knobs(), note.empty() ? problem.note() : note});
  }, nb::arg("path"), nb::arg("problem"), nb::arg("note") = "",
     "Writes a problem and its knobs as a case file that pacheck.replay and `pacheck replay` read.");

  m.def("make_problem",
        [](const std::string& dtype, int num_kv_heads, int gqa_ratio, int head_dim, int block_size,
           const std::vector<std::pair<int, int>>& sequences, const std::string& values, double spread,
           int spare_blocks, bool shared_prefix, int table_padding, bool padding_invalid, const std::string& poison,
           std::optional<float> scale, std::uint64_t seed, int tile_size, int split_size, int num_splits,
           std::optional<float> soft_cap, std::optional<int> window, std::optional<std::vector<float>> alibi_slopes,
           std::optional<std::vector<float>> sinks, std::optional<std::string> kv_cache, const std::string& fp8_scales) {
          ProblemSpec spec;
          spec.dtype = parse_dtype_name(dtype, "make_problem: dtype");
          spec.num_kv_heads = num_kv_heads;
          spec.gqa_ratio = gqa_ratio;
          spec.head_dim = head_dim;
          spec.block_size = block_size;
          for (const auto& [context_len, num_queries] : sequences) spec.sequences.push_back({context_len, num_queries});
          spec.spare_blocks = spare_blocks;
          spec.shared_prefix = shared_prefix;
          spec.table_padding = table_padding;
          spec.padding_invalid = padding_invalid;
          spec.poison = parse_named(poison, "make_problem: poison",
                                    {Poison::none, Poison::nan, Poison::pos_inf, Poison::neg_inf, Poison::huge},
                                    poison_name);
          spec.values = parse_named(values, "make_problem: values",
                                    {ValueKind::normal, ValueKind::all_negative, ValueKind::extremely_negative,
                                     ValueKind::identical_keys, ValueKind::integer_valued, ValueKind::near_range,
                                     ValueKind::below_sentinel},
                                    value_kind_name);
          spec.spread = spread;
          spec.explicit_scale = scale;
          spec.seed = seed;
          if (kv_cache) {
            spec.fp8.format = parse_named(*kv_cache, "make_problem: kv_cache", {Fp8Format::e4m3, Fp8Format::e5m2},
                                          fp8_name);
            spec.fp8.scales = parse_named(fp8_scales, "make_problem: fp8_scales",
                                          {Fp8ScaleChoice::amax, Fp8ScaleChoice::amax_per_head,
                                           Fp8ScaleChoice::power_of_two, Fp8ScaleChoice::underflowing},
                                          fp8_scale_choice_name);
          }
          check_spec(spec);
          const Knobs knobs = parse_knobs(tile_size, split_size, num_splits, "make_problem");
          Problem problem = materialize(spec);
          problem.options.soft_cap = soft_cap;
          problem.options.window = window;
          problem.options.alibi_slopes = alibi_slopes.value_or(std::vector<float>{});
          problem.options.sinks = sinks.value_or(std::vector<float>{});
          if (alibi_slopes && alibi_slopes->empty())
            throw std::invalid_argument("make_problem: alibi_slopes is empty; give one slope per query head, or None");
          if (sinks && sinks->empty())
            throw std::invalid_argument("make_problem: sinks is empty; give one logit per query head, or None");
          validate(problem);
          return ProblemObject(std::move(problem), knobs, "");
        },
        nb::kw_only(), nb::arg("dtype") = "fp32", nb::arg("num_kv_heads") = 1, nb::arg("gqa_ratio") = 1,
        nb::arg("head_dim") = 8, nb::arg("block_size") = 4, nb::arg("sequences"), nb::arg("values") = "normal",
        nb::arg("spread") = 1.0, nb::arg("spare_blocks") = 0, nb::arg("shared_prefix") = false,
        nb::arg("table_padding") = 0, nb::arg("padding_invalid") = false, nb::arg("poison") = "none",
        nb::arg("scale") = nb::none(), nb::arg("seed") = 0, nb::arg("tile_size") = 16, nb::arg("split_size") = 64,
        nb::arg("num_splits") = 0, nb::arg("soft_cap") = nb::none(), nb::arg("window") = nb::none(),
        nb::arg("alibi_slopes") = nb::none(), nb::arg("sinks") = nb::none(), nb::arg("kv_cache") = nb::none(),
        nb::arg("fp8_scales") = "amax",
        "A problem built the way the generators build theirs (properties/problem_spec.h): `sequences` is a list of "
        "(context_len, num_queries) pairs; blocks are scattered over the pool; the same seed gives the same values. "
        "soft_cap, window, alibi_slopes and sinks (one float per query head; -inf: no sink) set the logit options "
        "(problem/problem.h); each float is rounded to float32. kv_cache ('fp8_e4m3' or 'fp8_e5m2') quantises the "
        "pools into an fp8 cache as an engine writes one, with scales chosen by fp8_scales: 'amax' (one per tensor "
        "from the largest magnitude), 'amax-per-head', 'power-of-two' or 'underflowing' (most values subnormal).");
}

}  // namespace pacheck::python
