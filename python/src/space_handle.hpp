#pragma once
// steer.Space in Python: a space of its own, or the space of another object (a recording, a
// tuner) kept alive by a reference to that object.
#include <nanobind/nanobind.h>

#include <memory>

#include "steer/space.hpp"

namespace steer::python {

class SpaceHandle {
 public:
  explicit SpaceHandle(Space space) : owned_(std::make_shared<Space>(std::move(space))), space_(owned_.get()) {}
  SpaceHandle(const Space& borrowed, nanobind::object owner) : space_(&borrowed), owner_(std::move(owner)) {}

  const Space& get() const noexcept { return *space_; }

 private:
  std::shared_ptr<Space> owned_;
  const Space* space_ = nullptr;
  nanobind::object owner_;
};

}  // namespace steer::python
