#pragma once
// Progress of a tuning run on stderr: a redrawn bar on a terminal, plain lines otherwise.
#include <string>

#include "steer/tuner.hpp"

namespace steer::cli {

class Progress {
 public:
  explicit Progress(bool terminal) : terminal_(terminal) {}
  void update(const Result& result, const TuneProgress& progress);
  // A line of its own (an explanation), above the bar on a terminal.
  void note(const std::string& line);
  void finish();

 private:
  bool terminal_;
  bool drawn_ = false;
};

}  // namespace steer::cli
