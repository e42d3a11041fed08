// Spaces, specs and searchers from Python.
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <random>

#include "callable.hpp"
#include "convert.hpp"
#include "space_handle.hpp"
#include "steer/searcher.hpp"
#include "steer/spec.hpp"

namespace steer::python {
namespace {

// A constraint from Python: an expression, or (parameter names, callable) whose callable gets
// the values of those parameters positionally.
void add_constraint(SpaceDefinition& definition, nb::handle constraint, std::size_t index) {
  const std::string label = "constraints[" + std::to_string(index) + "]";
  if (PyUnicode_Check(constraint.ptr())) {
    definition.add_constraint(nb::cast<std::string>(constraint), label);
    return;
  }
  if (!PyTuple_Check(constraint.ptr()) || nb::len(constraint) != 2) {
    throw nb::type_error((label + ": a constraint is an expression (str) or (parameter names, callable)").c_str());
  }
  std::vector<std::string> names = nb::cast<std::vector<std::string>>(constraint[0]);
  PythonCallable accept(nb::borrow(constraint[1]));
  definition.add_constraint(
      std::move(names), [accept](std::span<const Value> values) { return accept.test(values); }, label);
}

SpaceDefinition definition_of(nb::handle parameters, nb::handle constraints) {
  SpaceDefinition definition;
  for (nb::handle item : parameters) {
    const std::string name = nb::cast<std::string>(item[0]);
    nb::handle values = item[1];
    if (PyUnicode_Check(values.ptr())) {
      definition.add_parameter(name, nb::cast<std::string>(values));
    } else {
      definition.add_parameter(name, to_values(values, ("a value of parameter " + name).c_str()));
    }
  }
  std::size_t index = 0;
  for (nb::handle constraint : constraints) add_constraint(definition, constraint, index++);
  return definition;
}

std::uint64_t checked_index(const SpaceHandle& space, std::int64_t index) {
  const auto size = static_cast<std::int64_t>(space.get().size());
  if (index < 0) index += size;
  if (index < 0 || index >= size) throw nb::index_error("configuration index out of range");
  return static_cast<std::uint64_t>(index);
}

nb::dict configuration_at(const SpaceHandle& space, std::uint64_t index) {
  const Space& built = space.get();
  nb::dict out;
  const auto& parameters = built.parameters();
  for (std::size_t p = 0; p < parameters.size(); ++p) out[parameters[p].name.c_str()] = from_value(built.value(index, p));
  return out;
}

nb::dict spec_size(const ProblemSize& size) {
  nb::dict out;
  out["name"] = size.name;
  out["variables"] = from_configuration(size.variables);
  out["flops"] = size.flops ? nb::cast(*size.flops) : nb::none();
  out["bytes"] = size.bytes ? nb::cast(*size.bytes) : nb::none();
  return out;
}

// A searcher from Python: it proposes configurations of a space and observes their results.
class PySearcher {
 public:
  PySearcher(const std::string& name, std::uint64_t seed, std::map<std::string, std::string> settings,
             std::string model, std::string objective)
      : searcher_(make_searcher(name, SearcherOptions{.seed = seed, .model_path = std::move(model),
                                                       .settings = std::move(settings), .objective = std::move(objective)})) {}

  std::string name() const { return searcher_->name(); }
  void start(nb::object space) {
    space_ = nb::cast<SpaceHandle*>(space);
    space_object_ = space;
    searcher_->start(space_->get());
  }
  nb::list propose(std::size_t max) {
    nb::list out;
    for (const Proposal& proposal : searcher_->propose(max)) out.append(nb::make_tuple(proposal.config, from_measure(proposal.measure)));
    return out;
  }
  // A test's outcome: its index, status and times (one runtime or every launch's).
  void observe(std::uint64_t index, const std::string& status, nb::object time_ms) {
    if (!space_) throw Error("observe() before start()");
    Result result;
    result.config_index = index;
    const Space& space = space_->get();
    for (std::size_t p = 0; p < space.parameters().size(); ++p) {
      result.configuration.emplace_back(space.parameters()[p].name, space.value(index, p));
    }
    const std::optional<Status> parsed = status_from_string(status);
    if (!parsed) throw Error("unknown status '" + status + "': ok, compile_error, launch_error, invalid_output, timeout, skipped");
    result.status = *parsed;
    if (!time_ms.is_none()) {
      std::vector<double> samples;
      if (PyFloat_Check(time_ms.ptr()) || PyLong_Check(time_ms.ptr())) {
        samples.push_back(nb::cast<double>(time_ms));
      } else {
        samples = nb::cast<std::vector<double>>(time_ms);
      }
      result.time = TimingStats::from_samples(std::move(samples));
    }
    searcher_->observe(result);
  }

 private:
  std::unique_ptr<Searcher> searcher_;
  SpaceHandle* space_ = nullptr;
  nb::object space_object_;  // keeps the space alive while the searcher refers to it
};

}  // namespace

void bind_space(nb::module_& m) {
  nb::class_<SpaceHandle>(m, "Space",
                          "The valid configurations of tuning parameters under constraints (steer/space.hpp).")
      .def(
          "__init__",
          [](SpaceHandle* self, nb::handle parameters, nb::handle constraints) {
            SpaceDefinition definition = definition_of(parameters, constraints);
            new (self) SpaceHandle(without_gil([&] { return Space::build(definition); }));
          },
          nb::arg("parameters"), nb::arg("constraints") = nb::list(),
          "parameters: [(name, values or a value-list expression)]; constraints: [expression or (names, callable)]")
      .def("__len__", [](const SpaceHandle& s) { return s.get().size(); })
      .def_prop_ro("size", [](const SpaceHandle& s) { return s.get().size(); })
      .def_prop_ro("parameters",
                   [](const SpaceHandle& s) {
                     nb::dict out;
                     for (const Parameter& p : s.get().parameters()) {
                       nb::list values;
                       for (const Value& v : p.values) values.append(from_value(v));
                       out[p.name.c_str()] = values;
                     }
                     return out;
                   })
      .def("__getitem__", [](const SpaceHandle& s, std::int64_t i) { return configuration_at(s, checked_index(s, i)); })
      .def(
          "index",
          [](const SpaceHandle& s, nb::handle configuration) -> std::optional<std::uint64_t> {
            const Configuration named = to_configuration(configuration);
            return s.get().index_of(named);
          },
          "The index of a configuration {name: value}; None when it is not valid.")
      .def("key", [](const SpaceHandle& s, std::int64_t i) { return s.get().key(checked_index(s, i)); })
      .def("index_of_key", [](const SpaceHandle& s, const std::string& key) { return s.get().index_of_key(key); })
      .def(
          "value_indices",
          [](const SpaceHandle& s, std::int64_t i) {
            const ValueIndices indices = s.get().value_indices(checked_index(s, i));
            return std::vector<std::uint32_t>(indices.begin(), indices.end());
          })
      .def(
          "neighbours",
          [](const SpaceHandle& s, std::int64_t i, const std::string& kind, int distance) {
            Neighbourhood hood{.distance = distance};
            if (kind == "adjacent") {
              hood.kind = Neighbourhood::Kind::Adjacent;
            } else if (kind != "hamming") {
              throw nb::value_error("neighbourhood kind is 'hamming' or 'adjacent'");
            }
            return s.get().neighbours(checked_index(s, i), hood);
          },
          nb::arg("index"), nb::arg("kind") = "hamming", nb::arg("distance") = 1)
      .def(
          "sample",
          [](const SpaceHandle& s, std::uint64_t count, std::uint64_t seed) {
            std::mt19937_64 rng(seed);
            return s.get().sample(rng, count);
          },
          nb::arg("count"), nb::arg("seed") = 1, "count distinct configurations, uniform without replacement")
      .def_prop_ro("stats", [](const SpaceHandle& s) {
        const BuildStats& stats = s.get().stats();
        nb::dict out;
        out["seconds"] = stats.seconds;
        out["groups"] = stats.groups;
        out["memory_bytes"] = stats.memory_bytes;
        out["cross_product"] = stats.cross_product;
        nb::dict rejected;
        for (const ConstraintStats& c : stats.constraints) rejected[c.text.c_str()] = c.rejected;
        out["rejected"] = rejected;
        return out;
      });

  nb::class_<Spec>(m, "Spec", "A tuning spec (docs/spec.md): space, kernel, sizes, reference.")
      .def_prop_ro("name", [](const Spec& s) { return s.name; })
      .def_prop_ro("description", [](const Spec& s) { return s.description; })
      .def_prop_ro("path", [](const Spec& s) { return s.path.string(); })
      .def_prop_ro("hash", [](const Spec& s) { return s.hash; })
      .def_prop_ro("default_size", [](const Spec& s) { return s.default_size; })
      .def_prop_ro("sizes",
                   [](const Spec& s) {
                     nb::list out;
                     for (const ProblemSize& size : s.sizes) out.append(spec_size(size));
                     return out;
                   })
      .def_prop_ro("has_kernel", [](const Spec& s) { return s.kernel.has_value(); })
      .def("space", [](const Spec& s) { return SpaceHandle(without_gil([&] { return Space::build(s.space); })); },
           "The spec's space, built (without any device's limits).");
  m.def("load_spec", [](const std::filesystem::path& path) { return load_spec(path); }, nb::arg("path"),
        "Loads a Steer JSON spec or a KTT tuning file; SpecError names the file and the JSON path.");
  m.def("parse_spec", [](const std::string& text, const std::string& origin) { return parse_spec(text, origin); },
        nb::arg("text"), nb::arg("origin") = "");

  m.def("searchers", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const SearcherInfo& info : searchers()) out.emplace_back(info.name, info.description);
    return out;
  }, "Every search strategy: (name, description).");
  nb::class_<PySearcher>(m, "Searcher", "A search strategy driven from Python: start, propose, observe.")
      .def(nb::init<const std::string&, std::uint64_t, std::map<std::string, std::string>, std::string, std::string>(),
           nb::arg("name"), nb::arg("seed") = 1, nb::arg("settings") = std::map<std::string, std::string>{},
           nb::arg("model") = "", nb::arg("objective") = "time")
      .def_prop_ro("name", &PySearcher::name)
      .def("start", &PySearcher::start, nb::arg("space"))
      .def("propose", &PySearcher::propose, nb::arg("max") = 1,
           "Up to `max` (index, measure) proposals; [] while results are pending means wait, else done.")
      .def("observe", &PySearcher::observe, nb::arg("index"), nb::arg("status") = "ok", nb::arg("time_ms") = nb::none());
}

}  // namespace steer::python
