// import_recording: reads a file (gzip or plain), recognises its format by content and
// hands it to that format's importer; and the helpers the importers share.
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fmt/core.h>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "steer/error.hpp"
#include "steer/recording.hpp"
#include "steer/store.hpp"
#include "recording/formats.hpp"

namespace steer {

namespace {

using store_detail::Json;
using store_detail::Node;

// The whole file as text. zlib reads plain files transparently, so .gz or not is one path.
std::string read_text(const std::filesystem::path& file) {
  gzFile in = gzopen(file.c_str(), "rb");
  if (in == nullptr) {
    throw StoreError(fmt::format("cannot import '{}': cannot open it: {}", file.string(), std::strerror(errno)));
  }
  gzbuffer(in, 1 << 17);
  std::string text;
  std::vector<char> chunk(1 << 20);
  for (;;) {
    int n = gzread(in, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) {
      int code = 0;
      std::string message = gzerror(in, &code);
      gzclose(in);
      throw StoreError(fmt::format("cannot import '{}': cannot read it: {}", file.string(), message));
    }
    if (n == 0) break;
    text.append(chunk.data(), static_cast<std::size_t>(n));
  }
  gzclose(in);
  return text;
}

// Kernel Tuner appends entries to its cache file as it tunes and closes the JSON only
// at the end, so an interrupted run leaves "...}," without the final "}}". Read such a
// file as Kernel Tuner's own read_cache does: drop the trailing comma and close it.
std::optional<Json> parse_open_kernel_tuner_cache(std::string text) {
  if (text.find("\"tune_params_keys\"") == std::string::npos) return std::nullopt;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (!text.empty() && text.back() == ',') text.pop_back();
  text += "}}";
  Json document = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return std::nullopt;
  return document;
}

Json parse_document(const std::string& text) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error&) {
    if (auto repaired = parse_open_kernel_tuner_cache(text)) return std::move(*repaired);
    throw;  // the parser's message says where (line, column) and what
  }
}

std::optional<RecordingFormat> detect_format(const Json& document) {
  if (!document.is_object()) return std::nullopt;
  auto member = [&](const char* key) -> const Json* {
    auto it = document.find(key);
    return it == document.end() ? nullptr : &*it;
  };
  const Json* format = member("format");
  if (format != nullptr && format->is_string() && format->get<std::string>() == store_detail::kSteerFormatName)
    return RecordingFormat::Steer;
  if (const Json* results = member("Results"); results != nullptr && results->is_array()) return RecordingFormat::Ktt;
  const Json* cache = member("cache");
  const Json* keys = member("tune_params_keys");
  if (cache != nullptr && cache->is_object() && keys != nullptr && keys->is_array())
    return RecordingFormat::KernelTunerCache;
  if (const Json* results = member("results"); results != nullptr && results->is_array()) return RecordingFormat::T4;
  return std::nullopt;
}

}  // namespace

const char* to_string(RecordingFormat format) noexcept {
  switch (format) {
    case RecordingFormat::Ktt: return "ktt";
    case RecordingFormat::KernelTunerCache: return "kerneltuner";
    case RecordingFormat::T4: return "t4";
    case RecordingFormat::Steer: return "steer";
    case RecordingFormat::KttCsv: return "ktt-csv";
  }
  return "unknown";
}

std::string recorded_counter_name(std::string_view raw_name) { return std::string(raw_name); }

ImportedRecording import_recording(const std::filesystem::path& file, std::optional<std::int64_t> tuning) {
  if (!std::filesystem::exists(file)) throw StoreError(fmt::format("cannot read '{}': no such file", file.string()));
  std::string text = read_text(file);
  if (text.starts_with(store_detail::kSqliteHeader)) return store_detail::import_results_store(file, text, tuning);
  if (tuning) throw Error(fmt::format("--tuning applies to a results store; '{}' is a recording file", file.string()));
  if (store_detail::is_ktt_csv(text)) {
    try {
      ImportedRecording recording = store_detail::import_ktt_csv(text);
      store_detail::stamp_results(recording);
      return recording;
    } catch (const Error& e) {
      throw StoreError(fmt::format("cannot import '{}': {}", file.string(), e.what()));
    }
  }
  try {
    Json document = parse_document(text);
    text = {};  // the parsed document holds it all now; free the text
    std::optional<RecordingFormat> format = detect_format(document);
    if (!format) {
      throw StoreError(
          "not a recording Steer can read: expected KTT JSON ('Results'), a Kernel Tuner cache ('cache' and "
          "'tune_params_keys'), T4 ('results'), Steer JSON ('format': 'steer-results') or KTT CSV (a first line "
          "'Kernel name,...')");
    }
    Node root(document);
    ImportedRecording recording;
    switch (*format) {
      case RecordingFormat::Ktt: recording = store_detail::import_ktt(root); break;
      case RecordingFormat::KernelTunerCache: recording = store_detail::import_kernel_tuner_cache(root); break;
      case RecordingFormat::T4: recording = store_detail::import_t4(root); break;
      case RecordingFormat::Steer: recording = store_detail::import_steer_json(root); break;
      case RecordingFormat::KttCsv: break;  // not JSON: read above
    }
    // Other tools record device and size once per file; Steer JSON has each result's own.
    if (*format != RecordingFormat::Steer) store_detail::stamp_results(recording);
    return recording;
  } catch (const Json::exception& e) {
    throw StoreError(fmt::format("cannot import '{}': {}", file.string(), e.what()));
  } catch (const Error& e) {
    throw StoreError(fmt::format("cannot import '{}': {}", file.string(), e.what()));
  }
}

std::vector<Result> merge_repeated_tests(std::span<const Result> results) {
  std::vector<Result> merged;
  std::vector<std::size_t> runs;  // per merged result: how many valid runs it pooled
  std::unordered_map<std::string, std::size_t> position;  // key -> index in merged
  for (const Result& result : results) {
    auto [it, first] = position.try_emplace(result.key(), merged.size());
    if (first) {
      merged.push_back(result);
      runs.push_back(result.ok() ? 1 : 0);
      continue;
    }
    if (!result.ok()) continue;
    Result& into = merged[it->second];
    if (runs[it->second]++ == 0) {  // the first valid run replaces failed ones
      into = result;
      continue;
    }
    std::vector<double> samples = into.time.samples_ms;
    samples.insert(samples.end(), result.time.samples_ms.begin(), result.time.samples_ms.end());
    into.time = TimingStats::from_samples(std::move(samples));
    for (const auto& [name, value] : result.counters) into.counters.try_emplace(name, value);
  }
  return merged;
}

namespace store_detail {

std::optional<TimeUnit> time_unit_named(std::string_view name) {
  std::string unit(name);
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::tolower(c); });
  // "miliseconds" is how Kernel Tuner spells it in T4 files.
  static const std::map<std::string, TimeUnit, std::less<>> kUnits{
      {"nanoseconds", {1, 1e6}},  {"ns", {1, 1e6}},          {"microseconds", {1, 1e3}}, {"us", {1, 1e3}},
      {"milliseconds", {1, 1}},   {"miliseconds", {1, 1}},   {"ms", {1, 1}},             {"seconds", {1e3, 1}},
      {"s", {1e3, 1}},
  };
  auto it = kUnits.find(unit);
  if (it == kUnits.end()) return std::nullopt;
  return it->second;
}

TimeUnit time_unit(const Node& name) {
  std::optional<TimeUnit> unit = time_unit_named(name.string());
  if (!unit) name.fail(fmt::format("unknown time unit '{}'", name.string()));
  return *unit;
}

std::string iso8601_utc(std::string_view timestamp) {
  std::string text(timestamp);
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, consumed = 0;
  char separator = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%n", &year, &month, &day, &separator, &hour, &minute,
                  &second, &consumed) != 7 ||
      (separator != ' ' && separator != 'T')) {
    return text;
  }
  std::string_view rest = std::string_view(text).substr(static_cast<std::size_t>(consumed));
  std::string_view fraction;
  if (!rest.empty() && rest.front() == '.') {
    std::size_t digits = 1;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    fraction = rest.substr(0, digits);
    rest.remove_prefix(digits);
  }
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest != "Z" && rest != "UTC" && rest != "+00:00" && rest != "+0000") return text;  // not known to be UTC
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{}Z", year, month, day, hour, minute, second, fraction);
}

namespace {

// A number written as a string: "16" -> 16, "0.500000" -> 0.5.
std::optional<Value> number_in(const std::string& text) {
  const char* first = text.data();
  const char* last = first + text.size();
  std::int64_t integer = 0;
  if (auto [end, error] = std::from_chars(first, last, integer); error == std::errc() && end == last) return Value(integer);
  double real = 0;
  if (auto [end, error] = std::from_chars(first, last, real); error == std::errc() && end == last && std::isfinite(real)) {
    return Value(real);
  }
  return std::nullopt;
}

}  // namespace

void read_numeric_strings(std::vector<Result>& results) {
  std::map<std::string, bool, std::less<>> numeric;  // parameter -> all its values numeric strings
  std::map<std::string, bool, std::less<>> any_float;
  for (const Result& result : results) {
    for (const auto& [name, value] : result.configuration) {
      auto [it, added] = numeric.try_emplace(name, true);
      std::optional<Value> number = value.is_string() ? number_in(value.as_string()) : std::nullopt;
      if (!number) {
        it->second = false;
        continue;
      }
      if (number->is_float()) any_float[name] = true;
    }
  }
  for (Result& result : results) {
    for (auto& [name, value] : result.configuration) {
      if (!numeric[name]) continue;
      Value number = *number_in(value.as_string());
      value = any_float.contains(name) ? Value(number.as_double()) : number;
    }
  }
}

std::vector<RecordedParameter> parameters_found(std::span<const Result> results) {
  std::vector<RecordedParameter> parameters;
  std::map<std::string, std::size_t, std::less<>> index;
  for (const Result& result : results) {
    for (const auto& [name, value] : result.configuration) {
      auto [it, added] = index.try_emplace(name, parameters.size());
      if (added) parameters.push_back({name, {}});
      parameters[it->second].values.push_back(value);
    }
  }
  for (RecordedParameter& parameter : parameters) {
    std::vector<Value>& values = parameter.values;
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
  }
  return parameters;
}

void stamp_results(ImportedRecording& recording) {
  for (Result& result : recording.results) {
    if (result.device.empty()) result.device = recording.device;
    if (result.problem_size.empty()) result.problem_size = recording.problem_size;
  }
}

}  // namespace store_detail
}  // namespace steer
