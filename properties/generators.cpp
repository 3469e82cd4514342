#include "properties/generators.h"

#include <algorithm>

namespace pacheck::gen {

namespace {

// True in one draw of `n`, shrinking toward false.
rc::Gen<bool> one_in(int n) { return weighted<bool>({{n - 1, rc::gen::just(false)}, {1, rc::gen::just(true)}}); }

// Absent in three cases of four, else one of `corners`; shrinks toward absent.
template <typename T>
rc::Gen<T> option(bool taken, T absent, std::vector<T> corners) {
  if (!taken) return rc::gen::just(absent);
  return weighted<T>({{3, rc::gen::just(absent)}, {1, pick(std::move(corners))}});
}

}  // namespace

rc::Gen<DType> dtype(const Limits& limits) {
  if (limits.engine_shapes) {
    std::vector<DType> serving;  // the 16-bit types engines keep their caches in
    for (DType d : {DType::bf16, DType::f16})
      if (std::ranges::find(limits.dtypes, d) != limits.dtypes.end()) serving.push_back(d);
    if (!serving.empty()) return pick(serving);
  }
  return pick(limits.dtypes);
}

rc::Gen<int> head_dim(const Limits& limits) {
  const auto taken = [&](int d) { return d <= limits.max_head_dim && limits.head_dim_supported(d); };
  std::vector<int> real, small;
  for (int d : {64, 80, 96, 112, 120, 128, 192, 256})
    if (taken(d)) real.push_back(d);
  if (limits.engine_shapes) {
    // Plus 40 and 48: narrower than one 64-lane tensor copy, which zero-fills the lanes past the head.
    std::vector<int> engine = real;
    for (int d : {40, 48})
      if (taken(d)) engine.push_back(d);
    if (!engine.empty()) return pick(engine);
  }
  for (int d = 1; d <= 32; ++d)
    if (taken(d)) small.push_back(d);
  if (small.empty()) return pick(real);
  if (!limits.real_head_dims || real.empty()) return pick(small);
  return weighted<int>({{3, pick(small)}, {1, pick(real)}});
}

rc::Gen<int> block_size(const Limits& limits) {
  if (!limits.block_sizes.empty()) {
    std::vector<int> engine;
    for (int b : limits.block_sizes)
      if (b == 16 || b == 32 || b == 64) engine.push_back(b);
    return pick(limits.engine_shapes && !engine.empty() ? engine : limits.block_sizes);
  }
  if (limits.engine_shapes) return pick(std::vector<int>{16, 32, 64});
  return weighted<int>({{3, rc::gen::inRange(1, 17)}, {1, pick(std::vector<int>{3, 5, 7, 12, 16, 24, 32, 48, 64})}});
}

rc::Gen<int> gqa_ratio(const Limits& limits) {
  if (!limits.gqa_ratios.empty()) return pick(limits.gqa_ratios);
  return weighted<int>({{2, rc::gen::just(1)}, {3, rc::gen::inRange(2, 9)}});
}

rc::Gen<int> num_kv_heads() { return weighted<int>({{2, rc::gen::just(1)}, {2, rc::gen::inRange(2, 5)}}); }

rc::Gen<int> context_len(int bs, int max_context) {
  std::vector<int> corners;
  for (int c : {1, bs - 1, bs, bs + 1, 2 * bs, 2 * bs + 1, 3 * bs - 1, 4 * bs})
    if (c >= 1 && c <= max_context) corners.push_back(c);
  return weighted<int>({{3, pick(corners)},
                        {3, rc::gen::inRange(1, std::min(max_context, 8 * bs + 2) + 1)},
                        {1, rc::gen::inRange(1, max_context + 1)}});
}

rc::Gen<SequenceSpec> sequence(Mode mode, int bs, const Limits& limits) {
  return rc::gen::exec([=] {
    SequenceSpec s;  // one query, for decode
    s.context_len = *context_len(bs, mode == Mode::decode ? limits.max_decode_context : limits.max_prefill_context);
    if (mode == Mode::prefill) s.num_queries = s.context_len;
    if (mode == Mode::continuation && s.context_len > 1) s.num_queries = *rc::gen::inRange(1, s.context_len + 1);
    return s;
  });
}

rc::Gen<ValueKind> value_kind() {
  using rc::gen::just;
  return weighted<ValueKind>({{6, just(ValueKind::normal)},
                              {1, just(ValueKind::all_negative)},
                              {1, just(ValueKind::extremely_negative)},
                              {1, just(ValueKind::identical_keys)},
                              {1, just(ValueKind::integer_valued)},
                              {1, just(ValueKind::near_range)},
                              {1, just(ValueKind::below_sentinel)}});
}

rc::Gen<Poison> poison() {
  return pick(std::vector<Poison>{Poison::none, Poison::nan, Poison::pos_inf, Poison::neg_inf, Poison::huge});
}

rc::Gen<LogitOptionSpec> logit_options(const Limits& limits) {
  const LogitOptionSupport takes = limits.logit_options;
  return rc::gen::exec([takes] {
    LogitOptionSpec o;
    o.window = *option(takes.window, WindowChoice::none,
                       {WindowChoice::one, WindowChoice::block_size, WindowChoice::context, WindowChoice::beyond,
                        WindowChoice::inside});
    o.soft_cap = *option(takes.soft_cap, SoftCapChoice::none,
                         {SoftCapChoice::saturating, SoftCapChoice::curved, SoftCapChoice::gemma,
                          SoftCapChoice::linear});
    o.alibi = *option(takes.alibi, AlibiChoice::none, {AlibiChoice::geometric, AlibiChoice::steep});
    if (*option(takes.sinks, false, {true})) {
      const int count = *rc::gen::inRange(1, 5);  // head h takes sinks[h % count]
      for (int i = 0; i < count; ++i)
        o.sinks.push_back(*pick(std::vector<SinkChoice>{SinkChoice::minus_infinity, SinkChoice::among,
                                                        SinkChoice::far_above, SinkChoice::far_below}));
    }
    return o;
  });
}

rc::Gen<Fp8Spec> fp8_cache(const Limits& limits) {
  const std::vector<Fp8Format> formats = limits.fp8_caches;
  return rc::gen::exec([formats] {
    Fp8Spec spec;
    if (formats.empty() || !*one_in(5)) return spec;
    spec.format = *pick(formats);
    spec.scales = *pick(std::vector<Fp8ScaleChoice>{Fp8ScaleChoice::amax, Fp8ScaleChoice::amax_per_head,
                                                    Fp8ScaleChoice::power_of_two, Fp8ScaleChoice::underflowing});
    return spec;
  });
}

rc::Gen<ProblemSpec> problem_spec(const Limits& limits) {
  return rc::gen::exec([limits] {
    ProblemSpec spec;
    spec.dtype = *dtype(limits);
    spec.head_dim = *head_dim(limits);
    spec.block_size = *block_size(limits);
    spec.num_kv_heads = *num_kv_heads();
    spec.gqa_ratio = *gqa_ratio(limits);
    const int count = *rc::gen::inRange(1, limits.max_sequences + 1);
    for (int i = 0; i < count; ++i) {
      const Mode mode = *pick(limits.modes);
      spec.sequences.push_back(*sequence(mode, spec.block_size, limits));
    }
    spec.spare_blocks = *rc::gen::inRange(0, 4);
    spec.shared_prefix = count > 1 && *one_in(4);
    spec.table_padding = *rc::gen::inRange(0, 3);
    spec.padding_invalid = *rc::gen::arbitrary<bool>();
    spec.poison = limits.poison ? *poison() : Poison::none;
    spec.values = *value_kind();
    spec.spread = *pick(std::vector<double>{1.0, 0.01, 0.25, 4.0, 16.0, 100.0});
    if (*one_in(5)) spec.explicit_scale = *pick(std::vector<float>{0.5f, 0.125f, 1.0f, 0.0883883476f, 2.0f});
    spec.seed = *rc::gen::arbitrary<std::uint64_t>();
    spec.forked = count > 1 && *one_in(4);
    spec.options = *logit_options(limits);
    if (fp8_cache_shape_taken(limits.fp8_query_dtypes, limits.fp8_head_dim_multiple, spec.dtype, spec.head_dim))
      spec.fp8 = *fp8_cache(limits);
    return spec;
  });
}

rc::Gen<Knobs> knobs(int max_context, const Limits& limits) {
  return rc::gen::exec([max_context, engine_shapes = limits.engine_shapes, pins = limits.pins] {
    Knobs k;
    k.pins = pins;
    const int beyond = std::max(2, max_context + 8);
    if (engine_shapes) {
      k.tile_size = *pick(std::vector<int>{64, 16, 32, 48, 128});
      k.split_size = 16 * *weighted<int>({{2, rc::gen::inRange(1, 9)}, {1, rc::gen::inRange(1, beyond / 16 + 2)}});
      return k;
    }
    k.tile_size = *weighted<int>(
        {{3, rc::gen::inRange(1, 17)}, {1, pick(std::vector<int>{32, 64, 128})}, {1, rc::gen::inRange(1, beyond)}});
    k.split_size = *weighted<int>({{2, rc::gen::inRange(1, 33)}, {1, rc::gen::inRange(1, beyond)}});
    using rc::gen::just;
    k.num_splits = *weighted<int>({{3, just(0)}, {1, just(1)}, {1, just(2)}, {1, just(3)}, {1, just(7)}});
    return k;
  });
}

}  // namespace pacheck::gen

namespace pacheck {

void showValue(const ProblemSpec& spec, std::ostream& os) {
  os << "dtype=" << dtype_name(spec.dtype) << " kv_heads=" << spec.num_kv_heads << " gqa=" << spec.gqa_ratio
     << " head_dim=" << spec.head_dim << " block_size=" << spec.block_size << " sequences=[";
  constexpr std::size_t kShown = 16;  // a long batch is elided: the case file holds it whole
  for (std::size_t i = 0; i < spec.sequences.size() && i < kShown; ++i)
    os << (i ? ", " : "") << "(context " << spec.sequences[i].context_len << ", queries " << spec.sequences[i].num_queries << ")";
  if (spec.sequences.size() > kShown) os << ", ... " << spec.sequences.size() - kShown << " more";
  os << "] " << describe(spec);
  if (spec.explicit_scale) os << " scale=" << *spec.explicit_scale;
}

void showValue(const Knobs& knobs, std::ostream& os) { os << knobs_text(knobs); }
void showValue(WindowChoice choice, std::ostream& os) { os << "window " << window_choice_name(choice); }

}  // namespace pacheck
