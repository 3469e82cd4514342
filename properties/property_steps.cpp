#include "properties/property_steps.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace pacheck::steps {

int longest_context(const Problem& p) {
  int n = 1;
  for (const Sequence& s : p.sequences) n = std::max(n, s.context_len);
  return n;
}

DrawnCase draw_case(const PropertyContext& ctx) {
  return draw_case(ctx, [](ProblemSpec&) {});
}

void observe(const PropertyContext& ctx, const std::string& property, const Problem& p, const Knobs& k,
             const Agreement* a) {
  if (ctx.observer) ctx.observer(CaseObservation{property, p, k, a});
}

std::string knobs_line(const Knobs& k) { return "knobs: " + knobs_text(k) + "\n"; }

OracleResult oracle_for(const Problem& p, const Knobs& knobs) {
  OracleResult oracle = run_oracle(p, oracle_split_sizes(p, knobs));
  RC_PRE(oracle.fits_fp32);
  return oracle;
}

Output run_and_check(const PropertyContext& ctx, const std::string& property, const Problem& p, const Knobs& knobs,
                     const OracleResult& oracle, const ModelRefinement& refine_model) {
  const Output out = ctx.variant->run(p, knobs);
  const Agreement a = compare_with_oracle(p, oracle, *ctx.variant, knobs, out, refine_model);
  observe(ctx, property, p, knobs, &a);
  if (!a.ok) {
    const std::string replay = save_failure(ctx, property, p, knobs, "exceeds its error bound");
    RC_FAIL(describe_failure(p, *ctx.variant, knobs, a) + "replay: " + replay);
  }
  return out;
}

void require_bit_identical(const PropertyContext& ctx, const std::string& property, const Problem& p,
                           const Knobs& knobs, const Output& a, const Output& b, const std::string& what) {
  std::size_t first = a.size() == b.size() ? a.size() : 0;
  for (std::size_t i = 0; i < a.size() && i < b.size() && first == a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0 || (std::isnan(b[i]) && !std::isnan(a[i]))) first = i;
  if (first == a.size()) return;
  std::ostringstream msg;
  msg.precision(10);
  msg << what << " changed the output of " << ctx.variant->name() << "\n" << describe(p) << knobs_line(knobs);
  if (a.size() != b.size())
    msg << "output sizes differ: " << a.size() << " vs " << b.size() << "\n";
  else
    msg << "first difference: " << element_position(p, first) << ": " << a[first] << " vs " << b[first] << "\n";
  RC_FAIL(msg.str() + "replay: " + save_failure(ctx, property, p, knobs, what + " changed the output"));
}

}  // namespace pacheck::steps
