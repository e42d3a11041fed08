#include "backend/worker/protocol.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstring>

#include "core/fresh_memory.hpp"

namespace steer::worker {

SharedLayout layout_arguments(const std::vector<HostArgument>& arguments) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  auto on_page = [page](std::size_t offset) { return (offset + page - 1) / page * page; };
  // Every slot starts on a 64-byte boundary, so buffers can be copied at full speed.
  auto aligned = [](std::size_t offset) { return (offset + 63) / 64 * 64; };
  SharedLayout layout;
  layout.inputs_offset = page;  // the heartbeat's page comes first
  std::size_t end = layout.inputs_offset;
  for (const HostArgument& argument : arguments) {
    ArgumentSlot& slot = layout.arguments.emplace_back();
    slot.name = argument.name;
    slot.is_buffer = argument.is_buffer;
    slot.type = argument.type;
    slot.output = argument.output;
    slot.offset = aligned(end);
    slot.bytes = argument.data.size();
    end = slot.offset + slot.bytes;
  }
  layout.outputs_offset = on_page(end);
  end = layout.outputs_offset;
  for (ArgumentSlot& slot : layout.arguments) {
    if (!slot.output) continue;
    slot.output_offset = aligned(end);
    end = slot.output_offset + slot.bytes;
  }
  layout.application_offset = on_page(end);
  end = layout.application_offset;
  for (ArgumentSlot& slot : layout.arguments) {
    slot.application_offset = aligned(end);
    end = slot.application_offset + slot.bytes;
  }
  layout.expected_offset = on_page(end);
  end = layout.expected_offset;
  for (ArgumentSlot& slot : layout.arguments) {
    if (!slot.output) continue;
    slot.expected_offset = aligned(end);
    end = slot.expected_offset + slot.bytes;
  }
  layout.total_bytes = end;
  return layout;
}

SharedMemory share_arguments(const std::vector<HostArgument>& arguments, const SharedLayout& layout, const char* name) {
  SharedMemory memory = SharedMemory::create(layout.total_bytes, name);
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::vector<std::byte>& data = arguments[i].data;
    if (!data.empty()) copy_parallel(memory.bytes().data() + layout.arguments[i].offset, data.data(), data.size());
  }
  // The outputs' pages, which the worker writes at every test, faulted in on every core now
  // rather than on one thread during the first test.
  populate_pages(memory.bytes().data() + layout.outputs_offset, layout.application_offset - layout.outputs_offset);
  return memory;
}

void stage_launch_data(const SharedLayout& layout, const SharedMemory& memory, const LaunchData& data,
                       double timeout_ms, RunRequest& request, bool direct) {
  const std::vector<ArgumentSlot>& slots = layout.arguments;
  if (!data.inputs.empty() && data.inputs.size() != slots.size()) {
    throw BackendError(fmt::format("launch: {} inputs for a kernel of {} arguments", data.inputs.size(), slots.size()));
  }
  request.application = true;
  request.options.warmup = 0;
  request.options.repetitions = 1;
  request.options.min_total_ms = 0;
  request.options.max_total_ms = 0;
  request.options.timeout_ms = timeout_ms;
  request.options.read_outputs = false;
  request.options.measure = {};
  request.written.assign(slots.size(), 0);
  request.read.assign(slots.size(), 0);
  if (direct) {
    request.direct_inputs.assign(slots.size(), {});
    request.direct_outputs.assign(slots.size(), {});
  }
  std::size_t output = 0;
  for (std::size_t a = 0; a < slots.size(); ++a) {
    const ArgumentSlot& slot = slots[a];
    if (a < data.inputs.size() && !data.inputs[a].empty()) {
      if (data.inputs[a].size() != slot.bytes) {
        throw BackendError(fmt::format("launch: argument '{}' is given {} bytes; it has {}", slot.name,
                                       data.inputs[a].size(), slot.bytes));
      }
      if (direct) {
        request.direct_inputs[a] = data.inputs[a];
      } else {
        std::memcpy(memory.bytes().data() + slot.application_offset, data.inputs[a].data(), slot.bytes);
      }
      request.written[a] = 1;
    }
    if (!slot.is_buffer || !slot.output) continue;
    const std::size_t o = output++;
    if (o >= data.outputs.size() || data.outputs[o].empty()) continue;
    if (data.outputs[o].size() != slot.bytes) {
      throw BackendError(fmt::format("launch: output '{}' is given {} bytes to read into; it has {}", slot.name,
                                     data.outputs[o].size(), slot.bytes));
    }
    request.read[a] = 1;
    if (direct) request.direct_outputs[a] = data.outputs[o];
  }
}

void deliver_launch_outputs(const SharedLayout& layout, const SharedMemory& memory, const LaunchData& data) {
  std::size_t output = 0;
  for (const ArgumentSlot& slot : layout.arguments) {
    if (!slot.is_buffer || !slot.output) continue;
    const std::size_t o = output++;
    if (o >= data.outputs.size() || data.outputs[o].empty() || slot.bytes == 0) continue;
    std::memcpy(data.outputs[o].data(), memory.bytes().data() + slot.application_offset, slot.bytes);
  }
}

OutputComparison summarise_comparison(const ArgumentSlot& slot, std::size_t argument,
                                      std::span<const std::uint64_t> partials, const SharedMemory& memory,
                                      const std::function<void(std::size_t, std::span<std::byte>)>& read_actual) {
  const std::size_t element = size_of(slot.type);
  OutputComparison result = reduce_comparison(partials);
  result.argument = argument;
  result.elements = slot.bytes / element;
  if (result.mismatches == 0) return result;
  std::array<std::byte, 8> actual{};
  const std::size_t offset = result.first_mismatch * element;
  read_actual(offset, std::span(actual).first(element));
  result.first_actual = element_as_double(slot.type, actual.data());
  result.first_expected = element_as_double(slot.type, memory.bytes().data() + slot.expected_offset + offset);
  return result;
}

void ExpectedOutputs::set(const SharedLayout& layout, const SharedMemory& memory,
                          const std::vector<ExpectedOutput>& expected) {
  std::vector<ComparedOutput> compared;
  for (const ExpectedOutput& output : expected) {
    if (output.comparison.kind == Comparison::Kind::Ignore) continue;
    if (output.argument >= layout.arguments.size() || !layout.arguments[output.argument].is_buffer ||
        !layout.arguments[output.argument].output) {
      throw BackendError(fmt::format("expected outputs: argument {} is not an output buffer of the loaded program",
                                     output.argument));
    }
    const ArgumentSlot& slot = layout.arguments[output.argument];
    if (output.bytes.size() != slot.bytes) {
      throw BackendError(fmt::format("expected outputs: output '{}' has {} bytes; its expected contents {}", slot.name,
                                     slot.bytes, output.bytes.size()));
    }
    compared.push_back(compared_output(output.argument, output.comparison));
  }
  for (const ExpectedOutput& output : expected) {
    if (output.comparison.kind == Comparison::Kind::Ignore || output.bytes.empty()) continue;
    copy_parallel(memory.bytes().data() + layout.arguments[output.argument].expected_offset, output.bytes.data(),
                  output.bytes.size());
  }
  compared_ = std::move(compared);
  ++generation_;  // a worker holding earlier contents uploads these
}

void ExpectedOutputs::prepare(RunRequest& request) const {
  if (!request.options.compare_outputs) return;
  if (compared_.empty()) {
    request.options.compare_outputs = false;
    request.options.read_outputs = true;
    return;
  }
  request.compared = compared_;
  request.expected_generation = generation_;
}

void ExpectedOutputs::take(RunReply& reply, RunResult& result) {
  result.comparisons = std::move(reply.comparisons);
  result.comparison_ms = reply.comparison_ms;
  if (reply.comparison_failed.empty()) return;
  compared_.clear();
  result.warnings.push_back(
      fmt::format("the outputs are compared on the host from now on: comparing them on the device failed: {}",
                  reply.comparison_failed));
}

Heartbeat::Heartbeat(std::span<std::byte> memory) {
  if (memory.size() >= sizeof(std::int64_t)) slot_ = reinterpret_cast<std::int64_t*>(memory.data());
}

void Heartbeat::promise(std::chrono::duration<double, std::milli> limit) noexcept {
  if (!slot_) return;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(limit);
  std::atomic_ref<std::int64_t>(*slot_).store(deadline.time_since_epoch().count(), std::memory_order_relaxed);
}

void Heartbeat::idle() noexcept {
  if (slot_) std::atomic_ref<std::int64_t>(*slot_).store(0, std::memory_order_relaxed);
}

std::optional<Heartbeat::Clock::time_point> Heartbeat::deadline() const noexcept {
  if (!slot_) return std::nullopt;
  const std::int64_t ticks = std::atomic_ref<std::int64_t>(*slot_).load(std::memory_order_relaxed);
  if (ticks == 0) return std::nullopt;
  return Clock::time_point(Clock::duration(ticks));
}

MessageWriter encode(const Setup& setup) {
  MessageWriter message;
  message.put(setup.platform).put(setup.device).put(setup.has_program);
  message.put(setup.layout.inputs_offset).put(setup.layout.outputs_offset).put(setup.layout.application_offset);
  message.put(setup.layout.expected_offset);
  message.put(setup.layout.total_bytes).put(setup.layout.arguments.size());
  for (const ArgumentSlot& slot : setup.layout.arguments) {
    message.put(slot.name).put(slot.is_buffer).put(slot.type).put(slot.output).put(slot.offset).put(slot.bytes);
    message.put(slot.output_offset).put(slot.application_offset).put(slot.expected_offset);
  }
  return message;
}

Setup decode_setup(MessageReader message) {
  Setup setup;
  setup.platform = message.get<int>();
  setup.device = message.get<int>();
  setup.has_program = message.get<bool>();
  setup.layout.inputs_offset = message.get<std::size_t>();
  setup.layout.outputs_offset = message.get<std::size_t>();
  setup.layout.application_offset = message.get<std::size_t>();
  setup.layout.expected_offset = message.get<std::size_t>();
  setup.layout.total_bytes = message.get<std::size_t>();
  setup.layout.arguments.resize(message.get<std::size_t>());
  for (ArgumentSlot& slot : setup.layout.arguments) {
    slot.name = message.get_string();
    slot.is_buffer = message.get<bool>();
    slot.type = message.get<ElementType>();
    slot.output = message.get<bool>();
    slot.offset = message.get<std::size_t>();
    slot.bytes = message.get<std::size_t>();
    slot.output_offset = message.get<std::size_t>();
    slot.application_offset = message.get<std::size_t>();
    slot.expected_offset = message.get<std::size_t>();
  }
  return setup;
}

MessageWriter encode(const Hello& hello) {
  MessageWriter message;
  const DeviceInfo& d = hello.device;
  message.put(hello.problem).put(d.backend).put(d.name).put(d.vendor).put(d.driver_version).put(d.runs_on_host_cores);
  message.put(d.compute_capability_major).put(d.compute_capability_minor).put(d.multiprocessors);
  message.put(d.global_memory_bytes).put(d.max_shared_memory_per_block).put(d.max_threads_per_block);
  message.put(hello.limits);
  return message;
}

Hello decode_hello(MessageReader message) {
  Hello hello;
  DeviceInfo& d = hello.device;
  hello.problem = message.get_string();
  d.backend = message.get_string();
  d.name = message.get_string();
  d.vendor = message.get_string();
  d.driver_version = message.get_string();
  d.runs_on_host_cores = message.get<bool>();
  d.compute_capability_major = message.get<int>();
  d.compute_capability_minor = message.get<int>();
  d.multiprocessors = message.get<int>();
  d.global_memory_bytes = message.get<std::size_t>();
  d.max_shared_memory_per_block = message.get<std::size_t>();
  d.max_threads_per_block = message.get<int>();
  hello.limits = message.get<DeviceLimits>();
  return hello;
}

MessageWriter encode(const RunRequest& request, bool with_image) {
  MessageWriter message;
  const KernelInstance& i = request.instance;
  const RunOptions& o = request.options;
  message.put(request.key).put(request.symbol).put(request.kernel_name);
  message.put(!with_image).put(with_image ? request.image : std::vector<char>());
  message.put(i.config_index).put(i.grid).put(i.block).put(i.shared_memory_bytes);
  message.put(o.warmup).put(o.repetitions).put(o.min_total_ms).put(o.max_total_ms).put(o.timeout_ms);
  message.put(o.read_outputs).put(o.compare_outputs);
  const MeasureRequest& m = o.measure;
  message.put(m.counters).put(m.metrics.size());
  for (const std::string& metric : m.metrics) message.put(metric);
  message.put(m.energy).put(m.energy_window_s).put(request.threads);
  message.put(request.application).put(request.written).put(request.read);
  message.put(request.compared).put(request.expected_generation);
  return message;
}

RunRequest decode_run_request(MessageReader message) {
  RunRequest request;
  KernelInstance& i = request.instance;
  RunOptions& o = request.options;
  request.key = message.get_string();
  request.symbol = message.get_string();
  request.kernel_name = message.get_string();
  request.image_left_out = message.get<bool>();
  request.image = message.get_vector<char>();
  i.config_index = message.get<std::uint64_t>();
  i.grid = message.get<std::array<std::uint64_t, 3>>();
  i.block = message.get<std::array<std::uint64_t, 3>>();
  i.shared_memory_bytes = message.get<std::size_t>();
  o.warmup = message.get<int>();
  o.repetitions = message.get<int>();
  o.min_total_ms = message.get<double>();
  o.max_total_ms = message.get<double>();
  o.timeout_ms = message.get<double>();
  o.read_outputs = message.get<bool>();
  o.compare_outputs = message.get<bool>();
  MeasureRequest& m = o.measure;
  m.counters = message.get<bool>();
  m.metrics.resize(message.get<std::size_t>());
  for (std::string& metric : m.metrics) metric = message.get_string();
  m.energy = message.get<bool>();
  m.energy_window_s = message.get<double>();
  request.threads = message.get<std::uint64_t>();
  request.application = message.get<bool>();
  request.written = message.get_vector<std::uint8_t>();
  request.read = message.get_vector<std::uint8_t>();
  request.compared = message.get_vector<ComparedOutput>();
  request.expected_generation = message.get<std::uint64_t>();
  return request;
}

MessageWriter encode(const RunReply& reply) {
  MessageWriter message;
  message.put(reply.status).put(reply.message).put(reply.independent_of_configuration);
  message.put(reply.samples_ms).put(reply.outputs_written);
  message.put(reply.comparisons).put(reply.comparison_ms).put(reply.comparison_failed);
  message.put(reply.context_lost).put(reply.image_needed);
  message.put(reply.counters.size());
  for (const auto& [name, value] : reply.counters) message.put(name).put(value);
  message.put(reply.profiling_ms).put(reply.profiling_passes).put(reply.energy.has_value());
  if (reply.energy) message.put(*reply.energy);
  message.put(reply.conditions.has_value());
  if (reply.conditions) {
    const DeviceConditions& c = *reply.conditions;
    message.put(c.sm_clock_mhz).put(c.memory_clock_mhz).put(c.power_watts).put(c.power_limit_watts);
    message.put(c.temperature_c).put(c.throttle).put(c.other_load);
  }
  message.put(reply.warnings.size());
  for (const std::string& warning : reply.warnings) message.put(warning);
  message.put(reply.measure_unavailable).put(reply.measure_failed);
  return message;
}

RunReply decode_run_reply(MessageReader message) {
  RunReply reply;
  reply.status = message.get<Status>();
  reply.message = message.get_string();
  reply.independent_of_configuration = message.get<bool>();
  reply.samples_ms = message.get_vector<double>();
  reply.outputs_written = message.get<bool>();
  reply.comparisons = message.get_vector<OutputComparison>();
  reply.comparison_ms = message.get<double>();
  reply.comparison_failed = message.get_string();
  reply.context_lost = message.get<bool>();
  reply.image_needed = message.get<bool>();
  for (auto n = message.get<std::size_t>(); n > 0; --n) {
    std::string name = message.get_string();
    reply.counters[name] = message.get<double>();
  }
  reply.profiling_ms = message.get<double>();
  reply.profiling_passes = message.get<int>();
  if (message.get<bool>()) reply.energy = message.get<EnergyStats>();
  if (message.get<bool>()) {
    DeviceConditions& c = reply.conditions.emplace();
    c.sm_clock_mhz = message.get<double>();
    c.memory_clock_mhz = message.get<double>();
    c.power_watts = message.get<double>();
    c.power_limit_watts = message.get<double>();
    c.temperature_c = message.get<double>();
    c.throttle = message.get_string();
    c.other_load = message.get<double>();
  }
  reply.warnings.resize(message.get<std::size_t>());
  for (std::string& warning : reply.warnings) warning = message.get_string();
  reply.measure_unavailable = message.get_string();
  reply.measure_failed = message.get_string();
  return reply;
}

}  // namespace steer::worker
