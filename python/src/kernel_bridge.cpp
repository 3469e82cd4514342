// DeclaredKernel: the ExternalVariant around a Python callable, its property runs and replays (kernel_bridge.h).
#include "python/src/kernel_bridge.h"

#include <stdexcept>
#include <utility>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "problem/case_file.h"
#include "properties/agreement.h"
#include "properties/catalogue.h"
#include "properties/runner.h"
#include "python/src/from_python.h"

namespace nb = nanobind;

namespace pacheck::python {

namespace {

// The program name the catalogue writes into its replay lines; pacheck._check finds the case file's path after it.
constexpr const char* kReplayProgram = "pacheck";

// The kernel raised a Python exception (an Exception, not an interrupt); what() is its type, message and traceback.
class KernelRaised : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// pacheck._bridge.exception_text: the exception's traceback as text, its frames cleared.
std::string exception_text(const nb::python_error& error) {
  // Leaked on purpose: a static nb::object would be released after the interpreter has finalized.
  static nb::object* format = new nb::object(nb::module_::import_("pacheck._bridge").attr("exception_text"));
  return nb::cast<std::string>((*format)(error.value()));
}

nb::dict worst_element(const Problem& p, const Agreement& a) {
  nb::dict worst;
  worst["element"] = a.worst.element;
  worst["position"] = element_position(p, a.worst.element);
  worst["exact"] = a.worst.exact;
  worst["rounded_exact"] = a.worst.rounded_exact;
  worst["got"] = a.worst.got;
  worst["error"] = a.worst.error;
  worst["bound"] = a.worst.bound;
  worst["ulps"] = a.worst.ulps;
  worst["violations"] = a.violations;
  worst["elements"] = a.elements;
  return worst;
}

std::string comparable(const Problem& problem, const Knobs& knobs) { return case_to_json(Case{problem, knobs, ""}); }

std::vector<std::string> properties_applying(const Capabilities& capabilities) {
  std::vector<std::string> names;
  for (const Property& p : catalogue())
    if (p.applies(capabilities)) names.push_back(p.name);
  return names;
}

}  // namespace

// What the bridge knows across the kernel calls of one property run or replay.
struct BridgeState {
  nb::object kernel;
  std::string name;
  // While a property runs: what save_failure saves a kernel exception's case through.
  std::optional<PropertyContext> saving;
  std::string property;
  // The first contract error or interrupt ends the run: later calls fail without calling the kernel.
  std::optional<std::string> contract_error;
  nb::object interrupt;
  std::optional<std::string> kernel_exception;  // the latest exception the kernel raised
  // The latest case whose output exceeded its bound, and that comparison (without its per-element ulps).
  std::optional<Case> failing_case;
  Agreement failing;

  void start(const std::string& property_name) {
    property = property_name;
    saving.reset();
    contract_error.reset();
    interrupt = nb::object();
    kernel_exception.reset();
    failing_case.reset();
  }

  // Lends `p` to the kernel for one call, then revokes the loan. The kernel's Python exception propagates with
  // `propagate`, else becomes KernelRaised (an Exception) or an interrupt that stops the run.
  Output call(const Problem& p, const Knobs& knobs, bool propagate) {
    if (contract_error || interrupt.is_valid())
      throw std::runtime_error("the check of kernel '" + name + "' has stopped");
    nb::object lent = nb::cast(ProblemObject(p, knobs));
    Output out;
    std::optional<std::string> raised;
    try {
      // The result goes out of scope before the loan is checked: an output that is a view of the problem holds it.
      out = output_from(kernel(lent), p, name);
    } catch (nb::python_error& e) {
      nb::cast<ProblemObject&>(lent).release();
      if (propagate) throw;
      const std::string text = exception_text(e);
      if (e.matches(PyExc_Exception))
        raised = text;
      else  // KeyboardInterrupt, SystemExit: stop, and raise it again once the run is over
        interrupt = nb::borrow(e.value());
    } catch (const KernelContractError& e) {
      contract_error = e.what();
    }
    nb::cast<ProblemObject&>(lent).release();
    if (!contract_error && Py_REFCNT(lent.ptr()) > 1)
      contract_error = "kernel '" + name + "' kept a reference to its problem, or to an array view of it, after "
                       "returning; the views are valid only during the call: copy what the kernel keeps "
                       "(numpy.array(problem.k_pool))";
    if (contract_error) throw KernelContractError(*contract_error);
    if (interrupt.is_valid()) throw std::runtime_error("the check of kernel '" + name + "' was interrupted");
    if (raised) {
      kernel_exception = *raised;
      throw KernelRaised(*raised);
    }
    return out;
  }

  // ExternalVariantSpec::run: a kernel's exception fails the property, its case saved like any failure's.
  Output run(const Problem& p, const Knobs& knobs) {
    try {
      return call(p, knobs, false);
    } catch (const KernelRaised& e) {
      if (!saving) throw;
      const std::string replay = save_failure(*saving, property, p, knobs, "the kernel raised an exception");
      throw std::runtime_error("kernel '" + name + "' raised an exception:\n" + e.what() + "replay: " + replay);
    }
  }

  void observe(const CaseObservation& o) {
    if (o.agreement == nullptr || o.agreement->ok) return;
    failing_case = Case{o.problem, o.knobs, ""};
    failing.ok = false;
    failing.elements = o.agreement->elements;
    failing.violations = o.agreement->violations;
    failing.worst = o.agreement->worst;
    failing.worst_ulps = o.agreement->worst_ulps;
  }

  // The keys every outcome dict shares, for the errors that end a run.
  void describe_stop(nb::dict& outcome) const {
    outcome["contract_error"] = contract_error ? nb::cast(*contract_error) : nb::none();
    outcome["interrupt"] = interrupt.is_valid() ? interrupt : nb::none();
  }
};

DeclaredKernel::DeclaredKernel(nb::object kernel, const std::string& name, nb::handle capabilities,
                               nb::handle error_model)
    : state_(std::make_shared<BridgeState>()) {
  if (!PyCallable_Check(kernel.ptr()))
    throw nb::type_error(("kernel must be callable (problem -> output), got " +
                          std::string(Py_TYPE(kernel.ptr())->tp_name)).c_str());
  state_->kernel = std::move(kernel);
  state_->name = name;
  ExternalVariantSpec spec;
  spec.name = name;
  spec.description = "a Python callable";
  spec.capabilities = parse_capabilities(capabilities);
  spec.error_model = parse_error_model(error_model);
  spec.run = [state = state_.get()](const Problem& p, const Knobs& knobs) { return state->run(p, knobs); };
  const std::string why = external_variant_problem(spec);
  if (!why.empty()) throw std::invalid_argument("kernel '" + name + "': " + why);
  variant_ = std::make_unique<ExternalVariant>(std::move(spec));
}

DeclaredKernel::~DeclaredKernel() = default;

const std::string& DeclaredKernel::name() const { return state_->name; }

std::vector<std::string> DeclaredKernel::applicable_properties() const {
  return properties_applying(variant_->capabilities());
}

const Property& DeclaredKernel::require_applicable(const std::string& property_name) const {
  const Property& property = property_named(property_name);
  if (!property.applies(variant_->capabilities()))
    throw std::invalid_argument("property " + property.name + " does not apply to kernel '" + name() +
                                "' as declared (SplitSizeInvariance needs uses_splits, Determinism deterministic, "
                                "BatchIsolation batch_invariant, GqaEquivalence gqa_ratios with 1 and one >= 2)");
  return property;
}

nb::dict DeclaredKernel::run_property(const std::string& property_name, int cases, std::uint64_t seed,
                                      bool engine_shapes, const std::string& failure_dir,
                                      const std::optional<std::string>& reproduce) {
  const Property& property = require_applicable(property_name);
  if (cases < 1) throw std::invalid_argument("cases must be positive, got " + std::to_string(cases));
  BridgeState& state = *state_;
  state.start(property.name);
  RunOptions options;
  options.cases = cases;
  options.seed = seed;
  options.engine_shapes = engine_shapes;
  options.failure_dir = failure_dir;
  options.replay_program = kReplayProgram;
  options.reproduce = reproduce;
  PropertyContext saving;
  saving.variant = variant_.get();
  saving.failure_dir = options.failure_dir;
  saving.replay_program = options.replay_program;
  state.saving = saving;
  const PropertyRun run = pacheck::run_property(property, *variant_, options,
                                                [&state](const CaseObservation& o) { state.observe(o); });
  state.saving.reset();

  nb::dict outcome;
  outcome["passed"] = run.passed;
  outcome["gave_up"] = run.gave_up;
  outcome["cases"] = run.cases;
  outcome["message"] = run.failure;
  outcome["reproduce"] = run.reproduce;
  state.describe_stop(outcome);
  const bool raised = state.kernel_exception && run.failure.find(*state.kernel_exception) != std::string::npos;
  outcome["kernel_exception"] = raised ? nb::cast(*state.kernel_exception) : nb::none();
  // The catalogue saves the final (shrunk) case and names it in the message's replay line.
  const std::string marker = std::string("replay: ") + kReplayProgram + " replay ";
  const std::string suffix = " --variant " + name();
  std::optional<std::string> case_file;
  if (const std::size_t at = run.failure.rfind(marker); !run.passed && at != std::string::npos) {
    const std::size_t start = at + marker.size();
    if (const std::size_t end = run.failure.find(suffix, start); end != std::string::npos)
      case_file = run.failure.substr(start, end - start);
  }
  outcome["case_file"] = case_file ? nb::cast(*case_file) : nb::none();
  outcome["worst"] = nb::none();
  if (case_file && state.failing_case) {
    const Case saved = read_case_file(*case_file);
    if (comparable(saved.problem, saved.knobs) == comparable(state.failing_case->problem, state.failing_case->knobs))
      outcome["worst"] = worst_element(saved.problem, state.failing);
  }
  return outcome;
}

nb::dict DeclaredKernel::replay(const std::string& case_file) {
  const Case c = read_case_file(case_file);
  BridgeState& state = *state_;
  state.start("");
  const OracleResult oracle = run_oracle(c.problem, oracle_split_sizes(c.problem, c.knobs));
  nb::dict outcome;
  outcome["case_file"] = case_file;
  outcome["note"] = c.note;
  outcome["fits_fp32"] = oracle.fits_fp32;
  outcome["cases"] = 0;
  outcome["reproduce"] = "";
  outcome["gave_up"] = false;
  outcome["kernel_exception"] = nb::none();
  outcome["worst"] = nb::none();
  try {
    const Output out = variant_->run(c.problem, c.knobs);
    const Agreement a = compare_with_oracle(c.problem, oracle, *variant_, c.knobs, out);
    outcome["passed"] = a.ok;
    outcome["cases"] = a.ok ? 1 : 0;
    outcome["message"] = a.ok ? std::string() : describe_failure(c.problem, *variant_, c.knobs, a);
    outcome["worst"] = worst_element(c.problem, a);
  } catch (const KernelRaised& e) {
    outcome["passed"] = false;
    outcome["message"] = "kernel '" + name() + "' raised an exception:\n" + e.what();
    outcome["kernel_exception"] = std::string(e.what());
  } catch (const std::runtime_error& e) {  // a contract error or an interrupt, described below
    outcome["passed"] = false;
    outcome["message"] = std::string(e.what());
  }
  state.describe_stop(outcome);
  return outcome;
}

nb::object DeclaredKernel::run(const ProblemObject& problem) {
  const Problem& p = problem.problem();
  require_declared_features(name(), variant_->capabilities(), p);
  state_->start("");
  Output out = state_->call(p, problem.knobs(), true);
  return owned_array(std::move(out), query_shape(p));
}

std::vector<std::string> applicable_properties(nb::handle capabilities) {
  return properties_applying(parse_capabilities(capabilities));
}

void bind_kernel_bridge(nb::module_& m) {
  nb::exception<KernelContractError>(m, "KernelContractError", PyExc_ValueError);
  nb::class_<DeclaredKernel>(m, "DeclaredKernel",
                             "A Python callable declared as a kernel; pacheck.check and pacheck.replay drive it.")
      .def(nb::init<nb::object, const std::string&, nb::handle, nb::handle>(), nb::arg("kernel"), nb::arg("name"),
           nb::arg("capabilities"), nb::arg("error_model"))
      .def_prop_ro("name", &DeclaredKernel::name)
      .def("applicable_properties", &DeclaredKernel::applicable_properties)
      .def("require_applicable", [](const DeclaredKernel& k, const std::string& property) {
        k.require_applicable(property);
      }, nb::arg("property"), "Raises ValueError unless the property exists and applies to the declaration.")
      .def("run_property", &DeclaredKernel::run_property, nb::arg("property"), nb::arg("cases"), nb::arg("seed"),
           nb::arg("engine_shapes"), nb::arg("failure_dir"), nb::arg("reproduce").none())
      .def("replay", &DeclaredKernel::replay, nb::arg("case_file"))
      .def("run", &DeclaredKernel::run, nb::arg("problem"));
  m.def("applicable_properties", &applicable_properties, nb::arg("capabilities"),
        "The catalogue's properties that apply to a kernel with these capabilities.");
  m.def("properties", [] {
    std::vector<std::pair<std::string, std::string>> all;
    for (const Property& p : catalogue()) all.emplace_back(p.name, p.what);
    return all;
  }, "Every property of the catalogue: (name, what must hold).");
}

}  // namespace pacheck::python
