// The bodies of the catalogue's properties (RapidCheck property functions over one variant), grouped by kind.
#pragma once

#include "properties/catalogue.h"

namespace pacheck::bodies {

// oracle_properties.cpp: agreement with the exact oracle.
void ulp_bounded_agreement(const PropertyContext& ctx);
void tile_size_invariance(const PropertyContext& ctx);
void split_size_invariance(const PropertyContext& ctx);

// invariance_properties.cpp: changes that must not change the output at all.
void masked_lanes_zero_weight(const PropertyContext& ctx);
void physical_layout_invariance(const PropertyContext& ctx);
void gqa_equivalence(const PropertyContext& ctx);
void batch_isolation(const PropertyContext& ctx);
void determinism(const PropertyContext& ctx);

// exact_case_properties.cpp: cases whose answer is known exactly.
void single_key_returns_its_value(const PropertyContext& ctx);
void power_of_two_value_scaling(const PropertyContext& ctx);
void identical_keys_give_the_mean(const PropertyContext& ctx);

// logit_option_properties.cpp: the laws of the logit options.
void windowed_out_keys_zero_weight(const PropertyContext& ctx);
void large_soft_cap_is_no_cap(const PropertyContext& ctx);
void minus_infinity_sink_is_no_sink(const PropertyContext& ctx);

}  // namespace pacheck::bodies
