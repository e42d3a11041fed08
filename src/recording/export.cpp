// Choosing an export format by name, and writing any of them.
#include "steer/recording.hpp"
#include "steer/store.hpp"

namespace steer {

std::optional<ExportFormat> export_format_from_string(std::string_view name) noexcept {
  if (name == "csv") return ExportFormat::Csv;
  if (name == "t4") return ExportFormat::T4;
  if (name == "json") return ExportFormat::Json;
  if (name == "kerneltuner") return ExportFormat::KernelTuner;
  return std::nullopt;
}

void export_results(std::ostream& out, ExportFormat format, const TuningKey& tuning, std::span<const Result> results) {
  switch (format) {
    case ExportFormat::Csv: export_csv(out, results); return;
    case ExportFormat::T4: export_t4(out, tuning, results); return;
    case ExportFormat::Json: export_steer_json(out, tuning, results); return;
    case ExportFormat::KernelTuner: export_kernel_tuner(out, tuning, results); return;
  }
}

}  // namespace steer
