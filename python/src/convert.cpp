// Conversions between Steer's types and Python objects, and Steer's errors as Python exceptions.
#include "convert.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cmath>
#include <memory>
#include <string_view>

#include "steer/backend.hpp"
#include "steer/counters.hpp"
#include "steer/error.hpp"
#include "steer/model.hpp"

namespace steer::python {
namespace {

PyObject* g_steer_error = nullptr;
PyObject* g_expression_error = nullptr;
PyObject* g_space_error = nullptr;
PyObject* g_spec_error = nullptr;
PyObject* g_backend_error = nullptr;
PyObject* g_store_error = nullptr;
PyObject* g_compile_error = nullptr;
PyObject* g_model_error = nullptr;

PyObject* new_exception(nb::module_& module, const char* name, PyObject* bases, const char* doc) {
  const std::string qualified = std::string("steer._steer.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (!type) throw nb::python_error();
  module.attr(name) = nb::handle(type);
  return type;
}

// An exception of `type` with `message`, and for an expression its text and position.
void raise(PyObject* type, const std::string& message, const ExpressionError* expression = nullptr) {
  nb::object error = nb::steal(PyObject_CallFunction(type, "s", message.c_str()));
  if (!error.is_valid()) return;  // the call set an error of its own
  if (expression) {
    error.attr("expression") = nb::str(expression->expression().c_str());
    error.attr("position") = expression->position() == std::string::npos ? nb::object(nb::none()) : nb::object(nb::int_(expression->position()));
  }
  PyErr_SetObject(type, error.ptr());
}

void translate(const std::exception_ptr& pointer, void*) {
  try {
    std::rethrow_exception(pointer);
  } catch (const ExpressionError& e) {
    raise(g_expression_error, e.detailed(), &e);
  } catch (const SpaceError& e) {
    raise(g_space_error, e.what());
  } catch (const SpecError& e) {
    raise(g_spec_error, e.what());
  } catch (const BackendError& e) {
    raise(g_backend_error, e.what());
  } catch (const StoreError& e) {
    raise(g_store_error, e.what());
  } catch (const CompileError& e) {
    raise(g_compile_error, e.what());
  } catch (const ModelError& e) {
    raise(g_model_error, e.what());
  } catch (const Error& e) {
    raise(g_steer_error, e.what());
  }
}

nb::dict from_timing(const TimingStats& time) {
  nb::dict out;
  out["repetitions"] = time.repetitions;
  out["median_ms"] = time.median_ms;
  out["min_ms"] = time.min_ms;
  out["mean_ms"] = time.mean_ms;
  out["max_ms"] = time.max_ms;
  out["stddev_ms"] = time.stddev_ms;
  return out;
}

nb::object optional_number(const std::optional<double>& value) { return value ? nb::cast(*value) : nb::none(); }

template <typename T>
nb::list list_of(const std::vector<T>& values) {
  nb::list out;
  for (const T& value : values) out.append(value);
  return out;
}

}  // namespace

void register_exceptions(nb::module_& module) {
  g_steer_error = new_exception(module, "SteerError", PyExc_RuntimeError, "Base of every error Steer raises on purpose.");
  const auto with_value_error = [](PyObject* base) { return PyTuple_Pack(2, base, PyExc_ValueError); };
  nb::object value_bases = nb::steal(with_value_error(g_steer_error));
  g_expression_error = new_exception(
      module, "ExpressionError", value_bases.ptr(),
      "A constraint, value list or launch expression that does not parse or evaluate; the message shows the "
      "expression with a caret under the culprit (attributes: expression, position).");
  g_space_error = new_exception(module, "SpaceError", value_bases.ptr(), "A tuning space that cannot be built.");
  g_spec_error = new_exception(module, "SpecError", value_bases.ptr(),
                               "A malformed spec; the message names the file and the JSON path.");
  g_backend_error = new_exception(module, "BackendError", g_steer_error, "No device, no driver, a backend not built.");
  g_store_error = new_exception(module, "StoreError", g_steer_error, "A results store that cannot be opened or written.");
  g_compile_error = new_exception(module, "CompileError", g_steer_error, "The compiler rejected a kernel.");
  g_model_error = new_exception(module, "ModelError", g_steer_error, "A counter model that cannot be read or used.");
  nb::register_exception_translator(translate);
}

Value to_value(nb::handle object, const char* what) {
  if (PyBool_Check(object.ptr())) return Value(object.ptr() == Py_True);
  if (PyLong_Check(object.ptr())) return Value(static_cast<std::int64_t>(nb::cast<std::int64_t>(object)));
  if (PyFloat_Check(object.ptr())) return Value(PyFloat_AsDouble(object.ptr()));
  if (PyUnicode_Check(object.ptr())) return Value(nb::cast<std::string>(object));
  // numpy scalars (np.int32, np.float32, np.bool_) and other numbers: their Python value.
  if (nb::hasattr(object, "item") && nb::hasattr(object, "dtype")) return to_value(object.attr("item")(), what);
  throw nb::type_error(("expected " + std::string(what) + " (bool, int, float or str), got " +
                        nb::cast<std::string>(nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(object.ptr()))))))
                           .c_str());
}

nb::object from_value(const Value& value) {
  switch (value.type()) {
    case ValueType::Int:
      return nb::int_(value.as_int());
    case ValueType::Float:
      return nb::float_(value.as_double());
    case ValueType::Bool:
      return nb::bool_(value.as_bool());
    case ValueType::String:
      return nb::str(value.as_string().c_str(), value.as_string().size());
  }
  return nb::none();
}

std::vector<Value> to_values(nb::handle sequence, const char* what) {
  std::vector<Value> values;
  for (nb::handle item : sequence) values.push_back(to_value(item, what));
  return values;
}

nb::dict from_configuration(std::span<const std::pair<std::string, Value>> configuration) {
  nb::dict out;
  for (const auto& [name, value] : configuration) out[nb::str(name.c_str(), name.size())] = from_value(value);
  return out;
}

Configuration to_configuration(nb::handle mapping) {
  Configuration configuration;
  for (nb::handle key : nb::iter(mapping)) {
    configuration.emplace_back(nb::cast<std::string>(key), to_value(mapping[key]));
  }
  return configuration;
}

nb::dict from_result(const Result& result) {
  nb::dict out;
  out["configuration"] = from_configuration(result.configuration);
  out["config_index"] = result.config_index;
  out["status"] = to_string(result.status);
  out["message"] = result.message;
  out["time"] = from_timing(result.time);
  out["samples_ms"] = list_of(result.time.samples_ms);
  out["compile_ms"] = result.compile_ms;
  out["validation_ms"] = result.validation_ms;
  out["overhead_ms"] = result.overhead_ms;
  out["profiling_ms"] = result.profiling_ms;
  out["profiling_passes"] = result.profiling_passes;
  out["max_abs_error"] = result.max_abs_error;
  nb::dict counters;
  for (const auto& [name, value] : result.counters) counters[nb::str(name.c_str())] = value;
  out["counters"] = counters;
  if (result.energy) {
    nb::dict energy;
    energy["joules_per_launch"] = result.energy->joules_per_launch;
    energy["spread"] = result.energy->spread;
    energy["average_watts"] = result.energy->average_watts;
    energy["window_s"] = result.energy->window_s;
    energy["launches"] = result.energy->launches;
    energy["sm_clock_mhz"] = result.energy->sm_clock_mhz;
    energy["temperature_c"] = result.energy->temperature_c;
    out["energy"] = energy;
  } else {
    out["energy"] = nb::none();
  }
  out["score"] = optional_number(result.score);
  out["device"] = result.device;
  out["problem_size"] = result.problem_size;
  out["timestamp"] = result.timestamp;
  out["key"] = result.key();
  return out;
}

nb::dict from_measure(const MeasureRequest& measure) {
  nb::dict out;
  out["counters"] = measure.counters;
  out["metrics"] = list_of(measure.metrics);
  out["energy"] = measure.energy;
  out["energy_window_s"] = measure.energy_window_s;
  return out;
}

nb::dict from_progress(const TuneProgress& progress) {
  nb::dict out;
  out["tests"] = progress.tests;
  out["valid"] = progress.valid;
  out["resumed"] = progress.resumed;
  out["planned"] = progress.planned ? nb::cast(*progress.planned) : nb::none();
  out["elapsed_s"] = progress.elapsed_s;
  out["best_ms"] = progress.best ? nb::cast(progress.best->time.median_ms) : nb::none();
  out["best"] = progress.best ? nb::object(from_configuration(progress.best->configuration)) : nb::none();
  return out;
}

nb::dict from_summary(const TuneSummary& summary) {
  nb::dict out;
  out["tests"] = summary.tests;
  out["valid"] = summary.valid;
  out["failed"] = summary.failed;
  out["resumed"] = summary.resumed;
  out["shortened"] = summary.shortened;
  out["interrupted"] = summary.interrupted;
  out["compiled_ahead"] = summary.compiled_ahead;
  out["guessed"] = summary.guessed;
  out["guesses_tested"] = summary.guesses_tested;
  out["stop_reason"] = summary.stop_reason;
  out["wall_s"] = summary.wall_s;
  out["setup_s"] = summary.setup_s;
  out["compile_wait_s"] = summary.compile_wait_s;
  out["run_s"] = summary.run_s;
  out["validation_s"] = summary.validation_s;
  out["overhead_s"] = summary.overhead_s;
  out["compile_cpu_s"] = summary.compile_cpu_s;
  out["median_overhead_ms"] = summary.median_overhead_ms;
  out["best"] = summary.best ? nb::object(from_result(*summary.best)) : nb::none();
  nb::list finalists;
  for (const TuneSummary::Finalist& finalist : summary.finalists) {
    nb::dict entry;
    entry["result"] = from_result(finalist.result);
    entry["low_ms"] = finalist.low_ms;
    entry["high_ms"] = finalist.high_ms;
    entry["score"] = finalist.score;
    entry["low_score"] = finalist.low_score;
    entry["high_score"] = finalist.high_score;
    entry["tied"] = finalist.tied;
    finalists.append(entry);
  }
  out["finalists"] = finalists;
  out["objective"] = summary.objective;
  out["best_objective"] = summary.best_objective;
  out["median_valid_ms"] = summary.median_valid_ms;
  out["profiled"] = summary.profiled;
  out["profiling_s"] = summary.profiling_s;
  nb::list pareto;
  for (const Result& result : summary.pareto) pareto.append(from_result(result));
  out["pareto"] = pareto;
  out["warnings"] = list_of(summary.warnings);
  out["device"] = summary.device;
  out["problem_size"] = summary.problem_size;
  nb::list results;
  for (const Result& result : summary.results) results.append(from_result(result));
  out["results"] = results;
  return out;
}

nb::object to_numpy(std::vector<double> values) {
  auto* owned = new std::vector<double>(std::move(values));
  nb::capsule owner(owned, [](void* pointer) noexcept { delete static_cast<std::vector<double>*>(pointer); });
  return nb::cast(nb::ndarray<nb::numpy, double, nb::ndim<1>>(owned->data(), {owned->size()}, owner));
}

nb::object to_numpy(std::span<const float> values) {
  auto* owned = new std::vector<float>(values.begin(), values.end());
  nb::capsule owner(owned, [](void* pointer) noexcept { delete static_cast<std::vector<float>*>(pointer); });
  return nb::cast(nb::ndarray<nb::numpy, float, nb::ndim<1>>(owned->data(), {owned->size()}, owner));
}

namespace {
constexpr std::pair<std::string_view, ElementType> kNumpyTypes[] = {
    {"float32", ElementType::F32}, {"float64", ElementType::F64}, {"int32", ElementType::I32},
    {"uint32", ElementType::U32},  {"int64", ElementType::I64},   {"uint64", ElementType::U64},
    {"int8", ElementType::I8},     {"uint8", ElementType::U8},
};
}  // namespace

ElementType element_type_of(nb::handle dtype) {
  const std::string name = nb::cast<std::string>(nb::str(dtype));
  for (const auto& [text, type] : kNumpyTypes) {
    if (name == text) return type;
  }
  throw nb::type_error(("a kernel argument of dtype " + name +
                        ": Steer passes float32, float64, int32, uint32, int64, uint64, int8 and uint8")
                           .c_str());
}

const char* numpy_name(ElementType type) {
  for (const auto& [text, known] : kNumpyTypes) {
    if (known == type) return text.data();
  }
  return "";
}

}  // namespace steer::python
