#pragma once
// Conversions between Steer's values and results and Python objects, shared by the bindings.
#include <nanobind/nanobind.h>

#include <span>
#include <string>
#include <vector>

#include "steer/result.hpp"
#include "steer/space.hpp"
#include "steer/tuner.hpp"
#include "steer/types.hpp"
#include "steer/value.hpp"

namespace steer::python {

namespace nb = nanobind;

// A tuning-parameter value from Python: bool, int, float or str, numpy scalars included.
// Throws TypeError naming `what` for anything else.
Value to_value(nb::handle object, const char* what = "a parameter value");
nb::object from_value(const Value& value);
std::vector<Value> to_values(nb::handle sequence, const char* what = "a parameter value");

// A configuration as a dict {name: value}, in definition order.
nb::dict from_configuration(std::span<const std::pair<std::string, Value>> configuration);
Configuration to_configuration(nb::handle mapping);

// Plain dicts, so that results pickle, print and go into pandas as they are.
nb::dict from_result(const Result& result);
nb::dict from_progress(const TuneProgress& progress);
nb::dict from_summary(const TuneSummary& summary);
nb::dict from_measure(const MeasureRequest& measure);

// A numpy array of doubles that owns a copy of `values`.
nb::object to_numpy(std::vector<double> values);
nb::object to_numpy(std::span<const float> values);

// The element type of a numpy array's dtype; throws TypeError for one a kernel cannot take.
ElementType element_type_of(nb::handle dtype);
const char* numpy_name(ElementType type);  // "float32", ...

// Exceptions: the Python types of Steer's errors (registered by the module).
void register_exceptions(nb::module_& module);

// Runs `body` with the GIL released; Python callbacks inside take it back.
template <typename Body>
auto without_gil(Body&& body) {
  nb::gil_scoped_release release;
  return body();
}

// Bindings, one file each.
void bind_space(nb::module_& module);
void bind_tuner(nb::module_& module);
void bind_data(nb::module_& module);

}  // namespace steer::python
