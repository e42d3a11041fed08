#include "tuner/host_load.hpp"

#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace steer::tuner_detail {
namespace {

double seconds_per_tick() {
  static const double tick = 1.0 / static_cast<double>(std::max(1L, ::sysconf(_SC_CLK_TCK)));
  return tick;
}

// The CPU time of one process and of its children it has waited for, in ticks: fields 14
// to 17 of /proc/PID/stat (utime, stime, cutime, cstime), counted after the command name,
// which may hold spaces and parentheses. A worker that ended and was waited for thus stays
// counted, in its parent.
std::optional<double> process_ticks(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string text;
  if (!std::getline(in, text)) return std::nullopt;
  const auto name_end = text.rfind(')');
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(name_end + 1));
  std::string field;
  double ticks = 0;
  for (int index = 3; fields >> field && index <= 17; ++index) {  // the state is field 3
    if (index >= 14) ticks += std::strtod(field.c_str(), nullptr);
  }
  return ticks;
}

// The children of every thread of `pid` (/proc/PID/task/TID/children).
std::vector<std::string> children_of(const std::string& pid) {
  std::vector<std::string> children;
  const std::string tasks = "/proc/" + pid + "/task";
  DIR* dir = ::opendir(tasks.c_str());
  if (dir == nullptr) return children;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream in(tasks + "/" + entry->d_name + "/children");
    for (std::string child; in >> child;) children.push_back(child);
  }
  ::closedir(dir);
  return children;
}

}  // namespace

std::optional<CpuTimes> read_cpu_times() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const bool have_affinity = ::sched_getaffinity(0, sizeof allowed, &allowed) == 0;
  std::ifstream stat("/proc/stat");
  if (!stat) return std::nullopt;
  CpuTimes times;
  bool any = false;
  for (std::string line; std::getline(stat, line);) {
    // "cpuN user nice system idle iowait irq softirq steal ..." (the line "cpu " sums them all)
    if (line.size() < 4 || line.compare(0, 3, "cpu") != 0 || line[3] == ' ') continue;
    std::istringstream fields(line.substr(3));
    int cpu = -1;
    double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    if (!(fields >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq)) continue;
    fields >> steal;  // absent on old kernels
    if (have_affinity && (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed))) continue;
    const double busy = user + nice + system + irq + softirq + steal;
    times.busy_s += busy * seconds_per_tick();
    times.total_s += (busy + idle + iowait) * seconds_per_tick();
    any = true;
  }
  if (!any) return std::nullopt;
  // This process and its descendants, depth first.
  std::vector<std::string> pending{std::to_string(::getpid())};
  while (!pending.empty()) {
    const std::string pid = std::move(pending.back());
    pending.pop_back();
    if (std::optional<double> ticks = process_ticks(pid)) times.own_s += *ticks * seconds_per_tick();
    for (std::string& child : children_of(pid)) pending.push_back(std::move(child));
  }
  return times;
}

double other_load(const CpuTimes& before, const CpuTimes& after) {
  const double total = after.total_s - before.total_s;
  if (!(total >= 0.02)) return std::numeric_limits<double>::quiet_NaN();
  const double others = (after.busy_s - before.busy_s) - (after.own_s - before.own_s);
  return std::clamp(others / total, 0.0, 1.0);
}

}  // namespace steer::tuner_detail
