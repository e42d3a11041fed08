#pragma once
// A Python callable held by C++ code that may copy, call and drop it on threads without the GIL
// (the compile pool, a space's enumeration): copies share one reference, every call and the
// last release take the GIL.
#include <nanobind/nanobind.h>

#include <memory>
#include <span>

#include "convert.hpp"

namespace steer::python {

class PythonCallable {
 public:
  PythonCallable() = default;
  explicit PythonCallable(nb::object function)
      : function_(new nb::object(std::move(function)), [](nb::object* held) {
          nb::gil_scoped_acquire gil;
          delete held;
        }) {}

  explicit operator bool() const noexcept { return function_ != nullptr; }

  // Calls it with `values` as positional arguments, with the GIL; a Python exception propagates
  // as nb::python_error.
  nb::object operator()(std::span<const Value> values) const {
    nb::gil_scoped_acquire gil;
    nb::object arguments = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(values.size())));
    for (std::size_t i = 0; i < values.size(); ++i) {
      PyTuple_SET_ITEM(arguments.ptr(), static_cast<Py_ssize_t>(i), from_value(values[i]).release().ptr());
    }
    PyObject* returned = PyObject_Call(function_->ptr(), arguments.ptr(), nullptr);
    if (!returned) throw nb::python_error();
    return nb::steal(returned);
  }

  // The same, returning Python's truth of the answer.
  bool test(std::span<const Value> values) const {
    nb::gil_scoped_acquire gil;  // before `answer`, so that it is dropped with the GIL held
    nb::object answer = (*this)(values);
    const int truth = PyObject_IsTrue(answer.ptr());
    if (truth < 0) throw nb::python_error();
    return truth == 1;
  }

  const nb::object& object() const { return *function_; }

 private:
  std::shared_ptr<nb::object> function_;
};

}  // namespace steer::python
