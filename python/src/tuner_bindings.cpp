// steer::Tuner from Python: a kernel on numpy arrays (or a spec), tuned by the loop `steer tune`
// runs, with progress and Ctrl-C handled between tests.
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <cstring>
#include <optional>

#include "callable.hpp"
#include "convert.hpp"
#include "space_handle.hpp"
#include "steer/embed.hpp"
#include "steer/objective.hpp"

namespace steer::python {
namespace {

using Array = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using WritableArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

// Calls `body` with a value of the C++ type of `type` (only its type matters).
template <typename Body>
void with_element_type(ElementType type, Body&& body) {
  switch (type) {
    case ElementType::F32: return body(float{});
    case ElementType::F64: return body(double{});
    case ElementType::I32: return body(std::int32_t{});
    case ElementType::U32: return body(std::uint32_t{});
    case ElementType::I64: return body(std::int64_t{});
    case ElementType::U64: return body(std::uint64_t{});
    case ElementType::I8: return body(std::int8_t{});
    case ElementType::U8: return body(std::uint8_t{});
  }
}

nb::dlpack::dtype dlpack_type(ElementType type) {
  nb::dlpack::dtype out{};
  with_element_type(type, [&](auto element) { out = nb::dtype<decltype(element)>(); });
  return out;
}

// A numpy array of `type` that owns a copy of `bytes`.
nb::object array_of(ElementType type, std::span<const std::byte> bytes) {
  auto* owned = new std::vector<std::byte>(bytes.begin(), bytes.end());
  nb::capsule owner(owned, [](void* pointer) noexcept { delete static_cast<std::vector<std::byte>*>(pointer); });
  const std::size_t count = owned->size() / size_of(type);
  return nb::cast(nb::ndarray<nb::numpy>(owned->data(), {count}, owner, {}, dlpack_type(type)));
}

// A backend by name ("auto", "cuda", "opencl"), as `steer tune --backend` opens it.
std::unique_ptr<Backend> open_backend_from_python(const std::string& kind, int device, int platform) {
  const BackendOptions options{.device = device, .platform = platform};
  return open_backend(kind, options);
}

Language language_of(const std::string& name) {
  if (name == "cuda") return Language::Cuda;
  if (name == "opencl") return Language::OpenCL;
  throw nb::value_error(("unknown kernel language '" + name + "': cuda or opencl").c_str());
}

nb::dict from_instance(const KernelInstance& instance) {
  nb::dict out;
  nb::dict defines;
  for (const auto& [name, value] : instance.defines) defines[name.c_str()] = value;
  out["defines"] = defines;
  out["grid"] = nb::make_tuple(instance.grid[0], instance.grid[1], instance.grid[2]);
  out["block"] = nb::make_tuple(instance.block[0], instance.block[1], instance.block[2]);
  out["shared_memory_bytes"] = instance.shared_memory_bytes;
  return out;
}

class PyTuner {
 public:
  using Source = std::tuple<std::string, std::string, bool>;  // language, text or path, is a file

  PyTuner(const std::string& name, const std::vector<Source>& sources, const std::string& backend, int device,
          int platform)
      : tuner_(kernel_of(name, sources), open_backend_from_python(backend, device, platform)) {}
  explicit PyTuner(Tuner tuner) : tuner_(std::move(tuner)) {}

  static PyTuner from_spec(const std::string& path, const std::string& backend, const std::string& size, int device,
                           int platform) {
    return PyTuner(Tuner::from_spec(load_spec(path), open_backend_from_python(backend, device, platform), size));
  }

  void parameter(const std::string& name, nb::handle values) {
    if (PyUnicode_Check(values.ptr())) {
      tuner_.parameter(name, nb::cast<std::string>(values));
    } else {
      tuner_.parameter(name, to_values(values, ("a value of parameter " + name).c_str()));
    }
  }

  void constraint(nb::handle constraint) {
    if (PyUnicode_Check(constraint.ptr())) {
      tuner_.constraint(nb::cast<std::string>(constraint));
      return;
    }
    std::vector<std::string> names = nb::cast<std::vector<std::string>>(constraint[0]);
    PythonCallable accept(nb::borrow(constraint[1]));
    tuner_.constraint(std::move(names), [accept](std::span<const Value> values) { return accept.test(values); });
  }

  void size(const std::string& name, nb::handle value) { tuner_.size(name, to_value(value, "a size variable")); }

  // A buffer argument on the array's own memory, which stays alive as long as this tuner.
  void argument(const std::string& name, nb::object array, const std::string& role) {
    const ElementType type = element_type_of(array.attr("dtype"));
    if (role == "input") {
      const Array view = nb::cast<Array>(array);
      with_element_type(type, [&](auto element) {
        using T = decltype(element);
        tuner_.input(name, std::span<const T>(static_cast<const T*>(view.data()), view.size()));
      });
    } else if (role == "output" || role == "inout") {
      const WritableArray view = nb::cast<WritableArray>(array);
      with_element_type(type, [&](auto element) {
        using T = decltype(element);
        const std::span<T> memory(static_cast<T*>(view.data()), view.size());
        if (role == "output") {
          tuner_.output(name, memory);
        } else {
          tuner_.inout(name, memory);
        }
      });
    } else {
      throw nb::value_error(("argument role '" + role + "': input, output or inout").c_str());
    }
    arguments_.push_back({name, type, role != "input"});
    arrays_.push_back(std::move(array));
  }

  void scalar(const std::string& name, nb::handle dtype, nb::bytes bytes) {
    const ElementType type = element_type_of(dtype);
    if (bytes.size() != size_of(type)) throw nb::value_error(("scalar '" + name + "': wrong number of bytes").c_str());
    with_element_type(type, [&](auto element) {
      using T = decltype(element);
      T value;
      std::memcpy(&value, bytes.c_str(), sizeof(T));
      tuner_.scalar(name, value);
    });
    arguments_.push_back({name, type, false});
  }

  void launch(std::vector<std::string> grid, std::vector<std::string> block, std::string shared) {
    tuner_.launch(std::move(grid), std::move(block), std::move(shared));
  }

  // The expected outputs, by name; outputs without one are not compared.
  void expected(const std::map<std::string, nb::object>& answers) {
    std::vector<std::vector<std::byte>> expected;
    for (const BoundArgument& argument : arguments_) {
      if (!argument.output) continue;
      auto found = answers.find(argument.name);
      if (found == answers.end()) {
        expected.emplace_back();
        tuner_.compare(argument.name, compare::ignore());
        continue;
      }
      const Array view = nb::cast<Array>(found->second);
      if (element_type_of(found->second.attr("dtype")) != argument.type) {
        throw nb::type_error(("the expected output of '" + argument.name + "' is not of its dtype").c_str());
      }
      const auto* bytes = static_cast<const std::byte*>(view.data());
      expected.emplace_back(bytes, bytes + view.nbytes());
    }
    tuner_.reference([expected = std::move(expected)](const ReferenceInput&, ReferenceOutputs& out) {
      for (std::size_t k = 0; k < out.size() && k < expected.size(); ++k) {
        if (expected[k].empty()) continue;
        if (expected[k].size() != out[k].size()) {
          throw Error("an expected output holds " + std::to_string(expected[k].size()) + " bytes, the output " +
                      std::to_string(out[k].size()));
        }
        std::memcpy(out[k].data(), expected[k].data(), expected[k].size());
      }
    });
  }

  // A reference computed in Python: function(inputs) -> {output name: array}, where inputs maps
  // each argument's name to its initialised value (an array, or a scalar) and each size variable
  // to its value.
  void reference(nb::object function) {
    PythonCallable compute(std::move(function));
    std::vector<BoundArgument> arguments = arguments_;
    tuner_.reference([compute, arguments](const ReferenceInput& in, ReferenceOutputs& out) {
      nb::gil_scoped_acquire gil;
      nb::dict inputs;
      for (const HostArgument& argument : in.arguments) {
        nb::object array = array_of(argument.type, argument.data);
        inputs[argument.name.c_str()] = argument.is_buffer ? array : array.attr("__getitem__")(0);
      }
      for (const auto& [name, value] : in.size.variables) inputs[name.c_str()] = from_value(value);
      nb::object answers = nb::steal(PyObject_CallOneArg(compute.object().ptr(), inputs.ptr()));
      if (!answers.is_valid()) throw nb::python_error();
      std::size_t k = 0;
      for (const BoundArgument& argument : arguments) {
        if (!argument.output) continue;
        if (k >= out.size()) break;
        if (PyMapping_HasKeyString(answers.ptr(), argument.name.c_str()) != 1) {
          throw Error("the reference function returned no '" + argument.name + "'");
        }
        nb::object answer = nb::module_::import_("numpy").attr("ascontiguousarray")(
            answers[argument.name.c_str()], numpy_name(argument.type));
        const Array view = nb::cast<Array>(answer);
        if (view.nbytes() != out[k].size()) {
          throw Error("the reference function's '" + argument.name + "' has " + std::to_string(view.size()) +
                      " elements, the output " + std::to_string(out[k].size() / size_of(argument.type)));
        }
        std::memcpy(out[k].data(), view.data(), out[k].size());
        ++k;
      }
    });
  }

  void compare(const std::string& name, const std::string& kind, double abs, double rel, std::uint64_t ulps) {
    if (kind == "tolerance") {
      tuner_.compare(name, compare::tolerance(abs, rel));
    } else if (kind == "ulps") {
      tuner_.compare(name, compare::ulps(ulps));
    } else if (kind == "exact") {
      tuner_.compare(name, compare::exact());
    } else if (kind == "ignore") {
      tuner_.compare(name, compare::ignore());
    } else {
      throw nb::value_error("comparison kind: tolerance, ulps, exact or ignore");
    }
  }

  void compiler_options(std::vector<std::string> options) { tuner_.compiler_options(std::move(options)); }

  void searcher(const std::string& name, std::uint64_t seed, std::map<std::string, std::string> settings,
                std::string model) {
    tuner_.searcher(name, SearcherOptions{.seed = seed, .model_path = std::move(model), .settings = std::move(settings)});
  }

  void store(const std::string& path) { tuner_.store(path); }

  // The loop's options (TuneOptions), by name.
  void set_options(nb::kwargs options) {
    TuneOptions& o = tuner_.options();
    for (auto [key, value] : options) {
      const std::string name = nb::cast<std::string>(key);
      if (name == "repetitions") o.run.repetitions = nb::cast<int>(value);
      else if (name == "warmup") o.run.warmup = nb::cast<int>(value);
      else if (name == "timeout_ms") o.run.timeout_ms = nb::cast<double>(value);
      else if (name == "min_total_ms") o.run.min_total_ms = nb::cast<double>(value);
      else if (name == "max_total_ms") o.run.max_total_ms = nb::cast<double>(value);
      else if (name == "max_test_relative") o.max_test_relative = nb::cast<double>(value);
      else if (name == "validate_on_device") o.validate_on_device = nb::cast<bool>(value);
      else if (name == "objective") o.objective = Objective::parse(nb::cast<std::string>(value));
      else if (name == "compile_threads") o.compile_threads = nb::cast<int>(value);
      else if (name == "guesses") o.guesses = nb::cast<std::size_t>(value);
      else if (name == "final_check") o.final_check = nb::cast<std::size_t>(value);
      else if (name == "final_rounds") o.final_rounds = nb::cast<int>(value);
      else if (name == "counters") {
        o.run.measure.counters = !value.is_none() && !(PyBool_Check(value.ptr()) && value.ptr() == Py_False);
        o.run.measure.metrics.clear();
        if (!PyBool_Check(value.ptr()) && !value.is_none() && !PyUnicode_Check(value.ptr())) {
          o.run.measure.metrics = nb::cast<std::vector<std::string>>(value);
        }
      } else if (name == "energy") o.run.measure.energy = nb::cast<bool>(value);
      else throw nb::value_error(("unknown tuning option '" + name + "'").c_str());
    }
  }

  SpaceHandle space(nb::handle self) { return SpaceHandle(tuner_.space(), nb::borrow(self)); }

  nb::dict device() {
    const DeviceInfo info = tuner_.backend().device();
    nb::dict out;
    out["backend"] = info.backend;
    out["name"] = info.name;
    out["vendor"] = info.vendor;
    out["compute_capability"] = nb::make_tuple(info.compute_capability_major, info.compute_capability_minor);
    out["multiprocessors"] = info.multiprocessors;
    out["global_memory_bytes"] = info.global_memory_bytes;
    out["max_shared_memory_per_block"] = info.max_shared_memory_per_block;
    out["max_threads_per_block"] = info.max_threads_per_block;
    out["driver_version"] = info.driver_version;
    out["runs_on_host_cores"] = info.runs_on_host_cores;
    return out;
  }

  nb::dict device_limit() {
    const Tuner::DeviceLimit limit = tuner_.device_limit();
    nb::dict out;
    out["left_out"] = limit.left_out;
    out["rule"] = limit.rule;
    return out;
  }

  std::string problem_size() { return tuner_.problem_size().name; }
  std::string spec_hash() { return tuner_.spec().hash; }

  nb::dict instance(nb::handle configuration) { return from_instance(tuner_.instance(to_configuration(configuration))); }

  nb::dict run(nb::handle configuration) {
    const Configuration named = to_configuration(configuration);
    RunOutput output = without_gil([&] { return tuner_.run(named); });
    nb::dict out;
    out["result"] = from_result(output.result);
    nb::dict outputs;
    for (const RunOutput::Output& o : output.outputs) outputs[o.name.c_str()] = array_of(o.type, o.bytes);
    out["outputs"] = outputs;
    return out;
  }

  // Tunes until a stop condition. After every test, with the GIL: `on_test(result, progress)`,
  // then Python's signal handlers; a KeyboardInterrupt (Ctrl-C) stops the loop after that test,
  // with every test stored, and the summary says so ("keyboard_interrupt"). An exception of
  // `on_test` stops it too and is raised once the loop has ended.
  nb::dict tune(std::optional<std::uint64_t> tests, std::optional<double> seconds, std::optional<double> fraction,
                std::optional<double> target_ms, nb::object on_test) {
    std::atomic<bool> interrupt{false};
    bool keyboard_interrupt = false;
    std::optional<nb::python_error> failure;
    TuneOptions& options = tuner_.options();
    options.interrupt = &interrupt;
    options.on_test = [&](const Result& result, const TuneProgress& progress) {
      nb::gil_scoped_acquire gil;
      try {
        if (!on_test.is_none()) on_test(from_result(result), from_progress(progress));
        if (PyErr_CheckSignals() != 0) throw nb::python_error();
      } catch (nb::python_error& error) {
        if (error.matches(PyExc_KeyboardInterrupt)) {
          keyboard_interrupt = true;
        } else if (!failure) {
          failure.emplace(std::move(error));
        }
        interrupt.store(true);
      }
    };
    struct Restore {  // the options refer to this frame: cleared however it is left
      TuneOptions& options;
      ~Restore() {
        options.interrupt = nullptr;
        options.on_test = nullptr;
      }
    } restore{options};
    const StopConditions stop{.tests = tests, .wall_seconds = seconds, .space_fraction = fraction, .target_ms = target_ms};
    const TuneSummary summary = without_gil([&] { return tuner_.tune(stop); });
    if (failure) {
      nb::python_error error = std::move(*failure);
      failure.reset();
      throw error;
    }
    nb::dict out = from_summary(summary);
    out["keyboard_interrupt"] = keyboard_interrupt;
    return out;
  }

 private:
  struct BoundArgument {
    std::string name;
    ElementType type;
    bool output;
  };

  static Kernel kernel_of(const std::string& name, const std::vector<Source>& sources) {
    if (sources.empty()) throw nb::value_error("a kernel needs a source");
    std::optional<Kernel> kernel;
    for (const auto& [language, text, is_file] : sources) {
      if (!kernel) {
        kernel = is_file ? Kernel::from_file(text, name) : Kernel::from_source(language_of(language), text, name);
      } else if (is_file) {
        kernel->with_file(text);
      } else {
        kernel->with_source(language_of(language), text);
      }
    }
    return std::move(*kernel);
  }

  Tuner tuner_;
  std::vector<BoundArgument> arguments_;
  std::vector<nb::object> arrays_;  // the memory the tuner's arguments point into
};

}  // namespace

void bind_tuner(nb::module_& m) {
  nb::class_<PyTuner>(m, "_Tuner")
      .def(nb::init<const std::string&, const std::vector<PyTuner::Source>&, const std::string&, int, int>(),
           nb::arg("name"), nb::arg("sources"), nb::arg("backend") = "auto", nb::arg("device") = 0,
           nb::arg("platform") = -1)
      .def_static("from_spec", &PyTuner::from_spec, nb::arg("path"), nb::arg("backend") = "auto",
                  nb::arg("size") = "", nb::arg("device") = 0, nb::arg("platform") = -1)
      .def("parameter", &PyTuner::parameter)
      .def("constraint", &PyTuner::constraint)
      .def("size", &PyTuner::size)
      .def("argument", &PyTuner::argument)
      .def("scalar", &PyTuner::scalar)
      .def("launch", &PyTuner::launch)
      .def("expected", &PyTuner::expected)
      .def("reference", &PyTuner::reference)
      .def("compare", &PyTuner::compare, nb::arg("name"), nb::arg("kind"), nb::arg("abs") = 1e-5, nb::arg("rel") = 1e-4,
           nb::arg("ulps") = 0)
      .def("compiler_options", &PyTuner::compiler_options)
      .def("searcher", &PyTuner::searcher, nb::arg("name"), nb::arg("seed") = 1,
           nb::arg("settings") = std::map<std::string, std::string>{}, nb::arg("model") = "")
      .def("store", &PyTuner::store)
      .def("set_options", &PyTuner::set_options)
      .def("space", [](nb::handle self) { return nb::cast<PyTuner&>(self).space(self); })
      .def("device", &PyTuner::device)
      .def("device_limit", &PyTuner::device_limit)
      .def("problem_size", &PyTuner::problem_size)
      .def("spec_hash", &PyTuner::spec_hash)
      .def("instance", &PyTuner::instance)
      .def("run", &PyTuner::run)
      .def("tune", &PyTuner::tune, nb::arg("tests") = nb::none(), nb::arg("seconds") = nb::none(),
           nb::arg("fraction") = nb::none(), nb::arg("target_ms") = nb::none(), nb::arg("on_test") = nb::none());
}

}  // namespace steer::python
