// pacheck.Problem: a Problem and its knobs as Python sees them, with its arrays as numpy views and copies.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "problem/knobs.h"
#include "problem/problem.h"

namespace pacheck::python {

using Shape = std::vector<std::size_t>;

// [total_queries, num_query_heads, head_dim]: the queries' shape and the output's.
Shape query_shape(const Problem& p);

// A numpy array that owns `values`.
template <typename T>
nanobind::object owned_array(std::vector<T> values, const Shape& shape) {
  auto* held = new std::vector<T>(std::move(values));
  nanobind::capsule owner(held, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nanobind::cast(nanobind::ndarray<nanobind::numpy, T>(held->data(), shape.size(), shape.data(), owner));
}

// Either lent (pacheck's problem, shown to a kernel for one call) or owned (a loaded, generated or shrunk case). A lent
// problem's float arrays are views into pacheck's memory: once the call returns, release() makes every further use
// raise, so nothing reads memory pacheck has freed.
class ProblemObject {
 public:
  ProblemObject(const Problem& lent, const Knobs& knobs) : problem_(&lent), knobs_(knobs) {}
  ProblemObject(Problem owned, const Knobs& knobs, std::string note);

  // Throws std::runtime_error once a lent problem is released.
  const Problem& problem() const;
  const Knobs& knobs() const { return knobs_; }
  const std::string& note() const { return note_; }
  void release() { problem_ = nullptr; }
  // An fp8 cache's pool (k_pool or v_pool) as the format's bytes, converted on first use and kept: every view of it
  // shares one buffer.
  const std::vector<std::uint8_t>& fp8_bytes(const std::vector<float> Problem::*pool) const;

 private:
  std::shared_ptr<const Problem> owned_;
  const Problem* problem_ = nullptr;
  Knobs knobs_;
  std::string note_;
  mutable std::vector<std::uint8_t> k_bytes_, v_bytes_;
};

// Adds pacheck.Problem, pacheck.Sequence, load_case, save_case and make_problem to the module.
void bind_problem(nanobind::module_& m);

}  // namespace pacheck::python
