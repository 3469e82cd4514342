// The extension module pacheck._pacheck: problems, the Python-kernel bridge and the catalogue (python/README.md).
#include <nanobind/nanobind.h>

#include "problem/case_file.h"
#include "python/src/kernel_bridge.h"
#include "python/src/problem_object.h"

NB_MODULE(_pacheck, m) {
  // Instances alive when the interpreter exits (a failure kept by pytest's report, a kernel whose closure holds its
  // own declaration) are not leaks of the bindings: no warning about them.
  nanobind::set_leak_warnings(false);
  m.doc() = "pacheck's C++ core: generators, the exact oracle, error models, properties, shrinking and case files.";
  nanobind::exception<pacheck::CaseFileError>(m, "CaseFileError", PyExc_ValueError);
  pacheck::python::bind_problem(m);
  pacheck::python::bind_kernel_bridge(m);
}
