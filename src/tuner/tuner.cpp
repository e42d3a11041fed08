// The tuning loop. One thread drives the executor; a pool prepares (compiles) proposals ahead.
#include "steer/tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <deque>
#include <future>
#include <numeric>
#include <system_error>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "steer/error.hpp"
#include "steer/store.hpp"
#include "tuner/conditions_watch.hpp"
#include "tuner/thread_pool.hpp"
#include "tuner/tuning_choice.hpp"

namespace steer {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  if (values.size() % 2 == 1) return *mid;
  double upper = *mid;
  double lower = *std::max_element(values.begin(), mid);
  return (lower + upper) / 2;
}

// One proposal on its way through the pipeline.
struct Pending {
  Proposal proposal;
  std::unique_ptr<Result> cached;           // served from the store (resume)
  std::unique_ptr<Result> replaced;         // the store's test, which lacks what is asked for now
  std::future<std::unique_ptr<PreparedTest>> prepared;  // valid when prepared ahead
  std::unique_ptr<PreparedTest> modelled;  // a replay's compile, started on its modelled threads
};

class Loop {
 public:
  Loop(const Space& space, Executor& executor, Searcher& searcher, Store* store, const TuneOptions& options)
      : space_(space), executor_(executor), searcher_(searcher), store_(store), options_(options) {}

  TuneSummary run();

 private:
  bool should_stop();
  // One test at a time (Executor::slots() == 1), or several at once.
  void run_sequential();
  void run_parallel();
  // A finished test of run_parallel: stored, observed, recorded.
  void finish(Pending& pending, Result result, bool resumed, double overhead_ms);
  // Warnings of a test, each said once per run.
  void say_warnings(const Result& result, std::vector<std::string>& warnings);
  // Commits a finished test to the store (unless it was served from it) and scores it.
  void store_finished(Pending& pending, std::optional<Result>& owned, bool resumed);
  void refill();
  // Compiles the searcher's likely next proposals on compile threads that would idle.
  void guess_ahead();
  // Takes a guess compiled for `config` into `pending`; false where there is none.
  bool take_guess(ConfigIndex config, Pending& pending);
  void final_check();
  void forward_explanations() {
    if (!options_.on_explanation) return;
    for (const Explanation& e : searcher_.take_explanations()) options_.on_explanation(e);
  }
  // The searcher's own computation since `since`: a simulated clock is charged it (a
  // device's wall clock counts it anyway).
  void charge_searcher(Clock::time_point since) {
    if (executor_.simulated()) executor_.charge(seconds_since(since));
  }
  const Result& execute(Pending& pending);
  // The run options of the next test: the run's, with what it measures and its timing cap.
  RunOptions& run_options_for(const Pending& pending);
  void record(const Result& result, Result* owned, bool resumed, double overhead_ms);
  void store_abandoned_tests();
  void fail_early(const Result& result);
  void store_withheld() {
    for (const Result& result : withheld_) store_->append(tuning_id_, result);
    withheld_.clear();
  }
  // The configuration as a Result says it (its parameters and index), before it ran.
  Result configuration_of(ConfigIndex config) const;
  std::uint64_t planned_tests() const;

  const Space& space_;
  Executor& executor_;
  Searcher& searcher_;
  Store* store_;
  const TuneOptions& options_;

  std::unique_ptr<ThreadPool> pool_;
  RunOptions run_options_;                 // options_.run with each test's measure request and cap
  double fastest_ms_ = 0;                  // the fastest valid median so far (0: none yet)
  std::vector<std::string> warnings_;      // of the latest test
  std::int64_t tuning_id_ = 0;
  std::unordered_map<std::string, Result> stored_;
  std::deque<Pending> pipeline_;
  std::size_t ahead_ = 1;
  std::size_t in_flight_ = 0;  // submitted and not yet finished (run_parallel)
  std::unordered_map<ConfigIndex, Pending> submitted_;
  bool searcher_done_ = false;
  unsigned compile_threads_ = 0;  // the pool's
  // The searcher's guesses compiled ahead, by configuration: on the pool, or on a replay's
  // modelled streams; the oldest first in guess_order_, dropped once kGuessesKept are held.
  std::unordered_map<ConfigIndex, std::future<std::unique_ptr<PreparedTest>>> guesses_;
  std::unordered_map<ConfigIndex, std::unique_ptr<PreparedTest>> modelled_guesses_;
  std::deque<ConfigIndex> guess_order_;
  static constexpr std::size_t kGuessesKept = 64;

  Clock::time_point start_;           // real time; the executor keeps the run's clock
  TuneSummary summary_;
  TuneProgress progress_;
  std::vector<double> overheads_ms_;
  std::vector<double> passes_, pass_overheads_ms_;
  // Fail early: the tests this run made so far (up to kFailEarlyTests), while every one of
  // them failed with the same error that does not depend on the configuration.
  std::uint64_t fresh_tests_ = 0;
  bool all_failed_alike_ = true;
  std::vector<std::string> failed_alike_;  // their configurations' keys
  std::string shared_failure_;             // and their error
  std::vector<Result> withheld_;           // their results, not yet stored
  MeasureRequest run_measure_;      // what every test measures (options + objective)
  ObjectiveBests bests_;            // running bests, the normalisers of a weighted objective
  std::optional<double> flops_;     // per launch, at the tuned size
  tuner_detail::ConditionsWatch conditions_;  // throttling and loaded cores, as tests report them

  // Whether `a` beats `b` under the objective. Scores are recomputed with the current
  // bests (a weighted objective's normalisers move as the run goes); a result the
  // objective cannot score (no energy) loses to one it can, and ties go to the faster.
  bool better(const Result& a, const Result& b) const {
    if (options_.objective.kind() == Objective::Kind::Time) return a.time.median_ms < b.time.median_ms;
    const double sa = options_.objective.score(a, bests_, flops_), sb = options_.objective.score(b, bests_, flops_);
    if (std::isnan(sa) != std::isnan(sb)) return std::isnan(sb);
    if (std::isnan(sa) || sa == sb) return a.time.median_ms < b.time.median_ms;
    return sa < sb;
  }
};

// A searcher's request and the run's own, combined: counters or energy if either asks.
MeasureRequest merged_measure(const MeasureRequest& run, const MeasureRequest& searcher) {
  MeasureRequest merged = searcher;
  merged.counters = run.counters || searcher.counters;
  merged.counters_optional = searcher.counters_optional && !run.counters;  // the run's own are needed
  if (merged.metrics.empty()) merged.metrics = run.metrics;
  merged.energy = run.energy || searcher.energy;
  // Only a side that asks for energy has a say in the window (an untouched request carries
  // the 0.5 s default, which would otherwise override a shorter --energy-window).
  if (run.energy && searcher.energy) {
    merged.energy_window_s = std::max(run.energy_window_s, searcher.energy_window_s);
  } else if (run.energy) {
    merged.energy_window_s = run.energy_window_s;
  }
  return merged;
}

// Whether a stored test lacks a measurement now asked for (only valid tests are measured
// again: a failed configuration fails the same way).
bool lacks(const Result& stored, const MeasureRequest& measure) {
  if (!stored.ok()) return false;
  return (measure.counters && stored.counters.empty()) || (measure.energy && !stored.energy);
}

// A test measured again to add energy keeps the counters the store held, and the other way
// round: both are properties of the configuration on this device and input, and measuring
// them again would only cost device time.
void keep_what_was_not_measured_again(const Result& stored, Result& fresh) {
  if (fresh.counters.empty() && !stored.counters.empty()) {
    fresh.counters = stored.counters;
    fresh.profiling_passes = stored.profiling_passes;
    fresh.profiling_ms = stored.profiling_ms;
  }
  if (!fresh.energy && stored.energy) fresh.energy = stored.energy;
}

std::uint64_t Loop::planned_tests() const {
  std::uint64_t planned = space_.size();
  if (options_.stop.tests) planned = std::min(planned, *options_.stop.tests);
  if (options_.stop.space_fraction) {
    auto share = static_cast<std::uint64_t>(std::ceil(*options_.stop.space_fraction * static_cast<double>(space_.size())));
    planned = std::min(planned, share);
  }
  return planned;
}

bool Loop::should_stop() {
  if (options_.interrupt && options_.interrupt->load()) {
    summary_.interrupted = true;
    summary_.stop_reason = "interrupted";
    return true;
  }
  if (summary_.tests >= planned_tests()) {
    summary_.stop_reason = summary_.tests >= space_.size() ? "space exhausted" : "test budget reached";
    return true;
  }
  if (options_.stop.wall_seconds && executor_.clock_s() >= *options_.stop.wall_seconds) {
    summary_.stop_reason = "time limit reached";
    return true;
  }
  if (options_.stop.target_ms && summary_.best && summary_.best->time.median_ms <= *options_.stop.target_ms) {
    summary_.stop_reason = "target runtime reached";
    return true;
  }
  return false;
}

void Loop::refill() {
  if (searcher_done_) return;
  const std::size_t waiting = pipeline_.size() + in_flight_;
  std::uint64_t budget_left = planned_tests() - std::min(planned_tests(), summary_.tests + waiting);
  std::size_t want = std::min<std::uint64_t>(ahead_ - std::min(ahead_, waiting), budget_left);
  if (want == 0) return;
  const Clock::time_point propose_start = Clock::now();
  std::vector<Proposal> proposals = searcher_.propose(want);
  charge_searcher(propose_start);
  forward_explanations();
  if (proposals.empty() && pipeline_.empty() && in_flight_ == 0) searcher_done_ = true;
  for (Proposal& proposal : proposals) {
    Pending pending;
    pending.proposal = proposal;
    pending.proposal.measure = merged_measure(run_measure_, proposal.measure);
    if (store_) {
      auto hit = stored_.find(space_.key(proposal.config));
      if (hit != stored_.end() && lacks(hit->second, pending.proposal.measure)) {
        pending.replaced = std::make_unique<Result>(hit->second);
      } else if (hit != stored_.end()) {
        pending.cached = std::make_unique<Result>(hit->second);
        pending.cached->config_index = proposal.config;
      }
    }
    if (!pending.cached && take_guess(proposal.config, pending)) {
      ++summary_.guesses_tested;
    } else if (!pending.cached && pool_) {
      pending.prepared = pool_->submit([this, config = proposal.config] { return executor_.prepare(config); });
    } else if (!pending.cached && executor_.simulated() && executor_.slots() == 1) {
      // A replay's compile pool is a model on its clock: the compile starts now.
      pending.modelled = executor_.prepare(proposal.config);
    }
    pipeline_.push_back(std::move(pending));
  }
}

bool Loop::take_guess(ConfigIndex config, Pending& pending) {
  if (auto guess = guesses_.find(config); guess != guesses_.end()) {
    pending.prepared = std::move(guess->second);
    guesses_.erase(guess);
  } else if (auto modelled = modelled_guesses_.find(config); modelled != modelled_guesses_.end()) {
    pending.modelled = std::move(modelled->second);
    modelled_guesses_.erase(modelled);
  } else {
    return false;
  }
  std::erase(guess_order_, config);
  return true;
}

void Loop::guess_ahead() {
  if (options_.guesses == 0 || searcher_done_ || executor_.slots() != 1) return;
  // One thread or stream is kept free beyond the guesses, for the next proposal's compile.
  std::size_t idle = 0;
  if (pool_) {
    std::size_t busy = pipeline_.size();  // compiling, or compiled and waiting
    for (const auto& [config, compile] : guesses_) {
      if (compile.wait_for(std::chrono::seconds(0)) != std::future_status::ready) ++busy;
    }
    idle = compile_threads_ > busy ? compile_threads_ - busy : 0;
  } else if (executor_.simulated()) {
    idle = executor_.idle_compile_streams();
  }
  if (idle <= 1) return;
  const std::size_t room = std::min(idle - 1, options_.guesses);
  const Clock::time_point guess_start = Clock::now();
  const std::vector<ConfigIndex> guessed = searcher_.likely_next(room);
  charge_searcher(guess_start);
  std::size_t started = 0;
  for (ConfigIndex config : guessed) {
    if (started == room) break;
    if (config >= space_.size() || guesses_.contains(config) || modelled_guesses_.contains(config)) continue;
    if (store_ && stored_.contains(space_.key(config))) continue;  // served from the store if proposed
    if (pool_) {
      guesses_.emplace(config, pool_->submit([this, config] { return executor_.prepare(config); }));
    } else {
      std::unique_ptr<PreparedTest> compile = executor_.prepare_idle(config);
      if (!compile) break;
      modelled_guesses_.emplace(config, std::move(compile));
    }
    guess_order_.push_back(config);
    ++summary_.guessed;
    ++started;
  }
  // The oldest guesses go once too many are kept; one still compiling waits for a later call,
  // so that what it compiled is freed here, not on a pool thread.
  for (auto it = guess_order_.begin(); guess_order_.size() > kGuessesKept && it != guess_order_.end();) {
    auto guess = guesses_.find(*it);
    if (guess != guesses_.end() && guess->second.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      ++it;
      continue;
    }
    if (guess != guesses_.end()) guesses_.erase(guess);
    modelled_guesses_.erase(*it);
    it = guess_order_.erase(it);
  }
}

RunOptions& Loop::run_options_for(const Pending& pending) {
  run_options_.measure = pending.proposal.measure;
  run_options_.max_total_ms = options_.run.max_total_ms;
  if (options_.max_test_relative > 0 && fastest_ms_ > 0) {
    const double relative = options_.max_test_relative * fastest_ms_ * std::max(1, options_.run.repetitions);
    if (run_options_.max_total_ms <= 0 || relative < run_options_.max_total_ms) run_options_.max_total_ms = relative;
  }
  return run_options_;
}

const Result& Loop::execute(Pending& pending) {
  const ConfigIndex config = pending.proposal.config;
  RunOptions& run_options = run_options_for(pending);
  std::vector<std::string>& warnings = warnings_;
  warnings.clear();
  if (executor_.simulated()) {
    // A lookup: timing it would cost more than it does (its time counts as the framework's),
    // and a replay has no compile, run or validation time of its own to add up.
    if (pending.modelled) return executor_.run(config, pending.modelled.get(), run_options, warnings);
    return executor_.run(config, executor_.prepare(config).get(), run_options, warnings);
  }
  double run_s = 0;
  const Result* outcome = nullptr;
  // Named in the store before it compiles inline or runs, so that a crash of this whole
  // process leaves the culprit's name behind (take_abandoned on the next start).
  if (store_) store_->mark_running(tuning_id_, configuration_of(config));
  {
    auto wait_start = Clock::now();
    std::unique_ptr<PreparedTest> prepared = pending.prepared.valid() ? pending.prepared.get() : executor_.prepare(config);
    summary_.compile_wait_s += seconds_since(wait_start);
    auto run_start = Clock::now();
    outcome = &executor_.run(config, prepared.get(), run_options, warnings);
    run_s = std::max(0.0, seconds_since(run_start) - outcome->validation_ms / 1e3);
  }
  const Result& result = *outcome;
  summary_.run_s += run_s;
  summary_.validation_s += result.validation_ms / 1e3;
  summary_.compile_cpu_s += result.compile_ms / 1e3;
  say_warnings(result, warnings);
  if (result.profiling_passes > 0) {
    ++summary_.profiled;
    summary_.profiling_s += result.profiling_ms / 1e3;
    summary_.profiled_run_s += run_s - (result.energy ? result.energy->window_s : 0);
    passes_.push_back(result.profiling_passes);
    if (result.status == Status::Ok && !result.time.samples_ms.empty()) {
      pass_overheads_ms_.push_back(result.profiling_ms / result.profiling_passes - result.time.median_ms);
    }
  }
  return result;
}

void Loop::say_warnings(const Result& result, std::vector<std::string>& warnings) {
  for (std::string& warning : conditions_.observe(result, summary_.tests + 1)) warnings.push_back(std::move(warning));
  for (std::string& warning : warnings) {
    if (std::find(summary_.warnings.begin(), summary_.warnings.end(), warning) != summary_.warnings.end()) continue;
    if (options_.on_warning) options_.on_warning(warning);
    summary_.warnings.push_back(std::move(warning));
  }
}

Result Loop::configuration_of(ConfigIndex config) const {
  Result test;
  test.config_index = config;
  for (std::size_t p = 0; p < space_.parameters().size(); ++p) {
    test.configuration.emplace_back(space_.parameters()[p].name, space_.value(config, p));
  }
  return test;
}

// Tests an earlier process of this tuning never finished: it died during each (a crash, or
// a kill). Each is stored as failed, so that resuming serves that failure instead of
// running the configuration, and dying, again.
void Loop::store_abandoned_tests() {
  const ExecutorInfo& info = executor_.info();
  for (const AbandonedTest& abandoned : store_->take_abandoned(tuning_id_)) {
    const std::optional<ConfigIndex> config = space_.index_of(abandoned.configuration);
    if (!config) continue;  // no longer in the space: nothing would run it
    Result failed = configuration_of(*config);
    failed.status = Status::LaunchError;
    failed.message = fmt::format(
        "the tuner ended while this configuration ran ({}, started {}): it crashed or was killed; the test is "
        "recorded as failed so that resuming does not run it again",
        abandoned.process, abandoned.started);
    failed.device = info.device.name;
    failed.problem_size = info.problem_size;
    failed.timestamp = abandoned.started;
    store_->append(tuning_id_, failed);
    const std::string warning =
        fmt::format("{} was running when an earlier run of this tuning ended without finishing it ({}, started {}); "
                    "it is recorded as failed",
                    failed.key(), abandoned.process, abandoned.started);
    if (options_.on_warning) options_.on_warning(warning);
    summary_.warnings.push_back(warning);
  }
}

void Loop::fail_early(const Result& result) {
  if (!all_failed_alike_ || fresh_tests_ >= kFailEarlyTests) return;
  ++fresh_tests_;
  const bool alike =
      result.independent_of_configuration && (failed_alike_.empty() || result.message == shared_failure_);
  if (!alike) {
    all_failed_alike_ = false;
    return;
  }
  if (failed_alike_.empty()) shared_failure_ = result.message;
  failed_alike_.push_back(result.key());
  if (fresh_tests_ < kFailEarlyTests) return;
  std::string configurations;
  for (const std::string& key : failed_alike_) configurations += (configurations.empty() ? "" : "; ") + key;
  if (store_) store_->clear_running(tuning_id_);
  throw Error(fmt::format("stopped before tuning: the first {} tests failed the same way, for a reason that does not "
                          "depend on the configuration, so every test would: {}\n(the configurations were {}; "
                          "nothing was stored for them)",
                          kFailEarlyTests, result.message, configurations));
}

void Loop::record(const Result& result, Result* owned, bool resumed, double overhead_ms) {
  ++summary_.tests;
  if (resumed) ++summary_.resumed;
  if (result.ok()) {
    ++summary_.valid;
    if (fastest_ms_ == 0 || result.time.median_ms < fastest_ms_) fastest_ms_ = result.time.median_ms;
    if (!resumed && !executor_.simulated() &&
        result.time.samples_ms.size() < static_cast<std::size_t>(std::max(0, options_.run.repetitions))) {
      ++summary_.shortened;
    }
    if (!summary_.best || better(result, *summary_.best)) {
      summary_.best = result;
      progress_.best = result;  // copied when it changes, not on every test
    }
  } else if (result.status != Status::Skipped) {
    ++summary_.failed;
  }
  if (!resumed) overheads_ms_.push_back(overhead_ms);
  progress_.tests = summary_.tests;
  progress_.valid = summary_.valid;
  progress_.resumed = summary_.resumed;
  progress_.elapsed_s = executor_.clock_s();
  if (options_.on_test) options_.on_test(result, progress_);
  if (options_.keep_results) summary_.results.push_back(owned ? std::move(*owned) : result);
}

// The 95 % interval of the median of sorted samples, by order statistics: ranks n/2 -+
// 0.98 sqrt(n) (the normal approximation to the binomial), clamped to the samples.
std::pair<double, double> median_interval(const std::vector<double>& sorted) {
  const double n = static_cast<double>(sorted.size());
  const double half = 0.98 * std::sqrt(n);
  const auto low = static_cast<std::size_t>(std::max(0.0, std::floor(n / 2 - half)));
  const auto high = static_cast<std::size_t>(std::min(n - 1, std::ceil(n / 2 + half)));
  return {sorted[low], sorted[high]};
}

void Loop::final_check() {
  if (executor_.simulated() || options_.final_check < 2 || options_.final_rounds < 1) return;
  const bool by_time = options_.objective.kind() == Objective::Kind::Time;
  // Other objectives score each result against the run's bests (a weighted objective's
  // normalisers), fixed here so that every round is scored alike.
  ObjectiveBests bests;
  for (const Result& r : summary_.results) bests.update(r);
  const auto score_of = [&](const Result& r) {
    return by_time ? r.time.median_ms : options_.objective.score(r, bests, flops_);
  };
  std::vector<const Result*> valid;
  for (const Result& r : summary_.results) {
    if (r.ok() && !std::isnan(score_of(r))) valid.push_back(&r);
  }
  if (valid.size() < 2) return;
  const std::size_t k = std::min(options_.final_check, valid.size());
  std::partial_sort(valid.begin(), valid.begin() + static_cast<std::ptrdiff_t>(k), valid.end(),
                    [&](const Result* a, const Result* b) { return score_of(*a) < score_of(*b); });
  std::vector<std::unique_ptr<PreparedTest>> prepared;
  std::vector<std::vector<double>> samples(k);
  std::vector<std::vector<Result>> rounds(k);  // each round's result, with its energy window
  for (std::size_t i = 0; i < k; ++i) prepared.push_back(executor_.prepare(valid[i]->config_index));
  RunOptions run = run_options_;
  run.measure = {};
  if (!by_time) {
    run.measure.energy = true;
    run.measure.energy_window_s = run_measure_.energy_window_s;
  }
  run.max_total_ms = options_.run.max_total_ms;  // the finalists are all timed in full
  std::vector<std::string> warnings;
  for (int round = 0; round < options_.final_rounds; ++round) {
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t i = (j + static_cast<std::size_t>(round)) % k;  // each round starts elsewhere
      Result result = executor_.run(valid[i]->config_index, prepared[i].get(), run, warnings);
      if (!result.ok() || (!by_time && !result.energy)) continue;
      samples[i].insert(samples[i].end(), result.time.samples_ms.begin(), result.time.samples_ms.end());
      rounds[i].push_back(std::move(result));
    }
  }
  for (std::size_t i = 0; i < k; ++i) {
    if (rounds[i].empty()) continue;  // failed when measured again: left out of the answer
    TuneSummary::Finalist finalist;
    finalist.result = rounds[i].back();
    finalist.result.time = TimingStats::from_samples(samples[i]);
    std::sort(samples[i].begin(), samples[i].end());
    std::tie(finalist.low_ms, finalist.high_ms) = median_interval(samples[i]);
    if (by_time) {
      finalist.score = finalist.result.time.median_ms;
      finalist.low_score = finalist.low_ms;
      finalist.high_score = finalist.high_ms;
    } else {
      // One energy figure per round: the median round's window is the answer's energy, and
      // the rounds' scores (each with that round's launches) give the interval.
      std::vector<Result>& measured = rounds[i];
      std::sort(measured.begin(), measured.end(), [](const Result& a, const Result& b) {
        return a.energy->joules_per_launch < b.energy->joules_per_launch;
      });
      finalist.result.energy = measured[(measured.size() - 1) / 2].energy;
      finalist.score = score_of(finalist.result);
      finalist.result.score = finalist.score;
      std::vector<double> scores;
      for (const Result& r : measured) scores.push_back(score_of(r));
      std::sort(scores.begin(), scores.end());
      std::tie(finalist.low_score, finalist.high_score) = median_interval(scores);
      finalist.low_score = std::min(finalist.low_score, finalist.score);
      finalist.high_score = std::max(finalist.high_score, finalist.score);
    }
    summary_.finalists.push_back(std::move(finalist));
  }
  if (summary_.finalists.empty()) return;
  std::sort(summary_.finalists.begin(), summary_.finalists.end(), [](const auto& a, const auto& b) {
    return a.score < b.score || (a.score == b.score && a.result.time.median_ms < b.result.time.median_ms);
  });
  const TuneSummary::Finalist& winner = summary_.finalists.front();
  for (TuneSummary::Finalist& f : summary_.finalists) f.tied = f.low_score <= winner.high_score;
  summary_.best = winner.result;
}

// Commits a finished test to the store (unless it was served from it) and scores it under
// the objective.
void Loop::store_finished(Pending& pending, std::optional<Result>& owned, bool resumed) {
  if (!owned) return;  // neither a store nor an objective's score needs it (a replay)
  const Result* outcome = &*owned;
  if (store_ && !resumed && !pending.replaced && all_failed_alike_ && outcome->independent_of_configuration) {
    // Stored once it is clear that the run goes on (fail_early), never if it stops there.
    withheld_.push_back(*owned);
    store_->clear_running(tuning_id_);
  } else if (store_ && !resumed) {
    store_withheld();
    Result& result = *owned;
    if (pending.replaced && !result.ok()) {
      // Measured again only to add counters or energy, and failed this time: never lose
      // the valid measurement the store holds.
      result.message += "; the store keeps this configuration's earlier valid test";
      store_->clear_running(tuning_id_);
    } else if (pending.replaced) {
      keep_what_was_not_measured_again(*pending.replaced, result);
      store_->replace(tuning_id_, result);
    } else {
      store_->append(tuning_id_, result);
    }
  }
  if (options_.objective.kind() != Objective::Kind::Time) {
    bests_.update(*owned);
    owned->score = options_.objective.score(*owned, bests_, flops_);
  }
}

// One test at a time: the loop as it runs on one device.
void Loop::run_sequential() {
  // One clock read per test marks where the last one ended: the framework's time per test
  // is what the test took beyond compile waits, runs and validation.
  Clock::time_point iteration_start = Clock::now();
  while (!should_stop()) {
    double device_side_s = summary_.compile_wait_s + summary_.run_s + summary_.validation_s;
    refill();
    guess_ahead();
    if (pipeline_.empty()) {
      if (summary_.stop_reason.empty()) summary_.stop_reason = "searcher finished";
      break;
    }
    Pending pending = std::move(pipeline_.front());
    pipeline_.pop_front();
    const bool resumed = pending.cached != nullptr;
    progress_.measured = pending.proposal.measure;
    // The executor's result is read where it is; it is copied only where the loop must
    // keep or change it (the store, the summary, an objective's score). A replay then
    // copies nothing per test.
    const bool must_own = resumed || store_ || options_.keep_results || options_.objective.kind() != Objective::Kind::Time;
    std::optional<Result> owned;
    const Result* outcome = nullptr;
    if (resumed) {
      owned = std::move(*pending.cached);
    } else {
      try {
        outcome = &execute(pending);
      } catch (const Interrupted&) {
        // Abandoned unfinished: it has no result, and is not a failure of the configuration.
        if (store_) store_->clear_running(tuning_id_);
        summary_.interrupted = true;
        summary_.stop_reason = "interrupted";
        break;
      } catch (...) {
        // The run fails, not the configuration: its name must not be left behind as one
        // that crashed the process.
        if (store_) store_->clear_running(tuning_id_);
        throw;
      }
      if (must_own) owned = *outcome;
      if (!executor_.simulated()) fail_early(*outcome);
    }
    if (owned) outcome = &*owned;
    store_finished(pending, owned, resumed);
    const Clock::time_point observe_start = Clock::now();
    searcher_.observe(*outcome);
    charge_searcher(observe_start);
    const Clock::time_point iteration_end = Clock::now();
    const double iteration_s = std::chrono::duration<double>(iteration_end - iteration_start).count();
    iteration_start = iteration_end;
    double device_s = summary_.compile_wait_s + summary_.run_s + summary_.validation_s - device_side_s;
    double overhead_ms = std::max(0.0, iteration_s - device_s) * 1e3;
    if (owned) owned->overhead_ms = overhead_ms;
    record(*outcome, owned ? &*owned : nullptr, resumed, overhead_ms);
    forward_explanations();
  }
}

// Several tests at once: tests go to free slots as the searcher proposes them, and finish
// in the order the executor says (on a simulated clock, the earliest first). A stop rule met
// lets the running tests finish (each is a measurement already paid for) and starts no new
// one; an interrupt abandons them.
void Loop::run_parallel() {
  bool stopping = false;
  Clock::time_point last = Clock::now();
  for (;;) {
    // A slot that is lost (a device that failed, an MPI rank that died) leaves fewer.
    const std::size_t slots = executor_.slots();
    if (slots == 0 && in_flight_ == 0) {
      throw Error("every device of the run was lost (the warnings say how); the finished tests are stored");
    }
    if (!stopping && should_stop()) {
      if (summary_.interrupted) break;
      stopping = true;
    }
    if (!stopping) {
      refill();
      while (in_flight_ < slots && !pipeline_.empty()) {
        Pending pending = std::move(pipeline_.front());
        pipeline_.pop_front();
        if (pending.cached) {
          Result cached = std::move(*pending.cached);
          finish(pending, std::move(cached), true, 0);
          if (should_stop()) {
            stopping = true;
            break;
          }
          continue;
        }
        const ConfigIndex config = pending.proposal.config;
        executor_.submit(config, nullptr, run_options_for(pending));
        submitted_.emplace(config, std::move(pending));
        ++in_flight_;
      }
      if (summary_.interrupted) break;
      if (in_flight_ == 0) {
        if (!pipeline_.empty() || (!searcher_done_ && !stopping)) continue;
        if (summary_.stop_reason.empty()) summary_.stop_reason = "searcher finished";
        break;
      }
    }
    if (in_flight_ == 0) break;
    Executor::Finished finished;
    const Clock::time_point wait_start = Clock::now();
    try {
      finished = executor_.next();
    } catch (const Interrupted&) {
      summary_.interrupted = true;
      summary_.stop_reason = "interrupted";
      break;
    }
    const double waited_s = seconds_since(wait_start);
    summary_.run_s += waited_s;
    --in_flight_;
    auto it = submitted_.find(finished.result.config_index);
    if (it == submitted_.end()) {
      throw Error(fmt::format("the executor finished configuration {}, which was not running",
                              finished.result.config_index));
    }
    Pending pending = std::move(it->second);
    submitted_.erase(it);
    summary_.compile_cpu_s += finished.result.compile_ms / 1e3;
    say_warnings(finished.result, finished.warnings);
    if (!executor_.simulated()) fail_early(finished.result);
    const double overhead_ms = std::max(0.0, seconds_since(last) - waited_s) * 1e3;
    finish(pending, std::move(finished.result), false, overhead_ms);
    last = Clock::now();
  }
  submitted_.clear();
  in_flight_ = 0;
}

void Loop::finish(Pending& pending, Result result, bool resumed, double overhead_ms) {
  progress_.measured = pending.proposal.measure;
  std::optional<Result> owned = std::move(result);
  store_finished(pending, owned, resumed);
  const Clock::time_point observe_start = Clock::now();
  searcher_.observe(*owned);
  charge_searcher(observe_start);
  if (!resumed) owned->overhead_ms = overhead_ms;
  record(*owned, &*owned, resumed, overhead_ms);
  forward_explanations();
}

TuneSummary Loop::run() {
  start_ = Clock::now();
  const ExecutorInfo& info = executor_.info();
  summary_.device = info.device.name;
  summary_.problem_size = info.problem_size;
  summary_.objective = options_.objective.name();
  flops_ = info.flops;
  run_measure_ = options_.run.measure;
  if (options_.objective.needs_energy()) run_measure_.energy = true;
  if (options_.objective.needs_flops() && !flops_) {
    throw Error(fmt::format("the objective {} needs the FLOP count of size '{}', which spec '{}' does not give",
                            options_.objective.name(), info.problem_size, info.spec_name));
  }
  run_options_ = options_.run;
  if (options_.timeout_ms) {
    run_options_.timeout_ms = *options_.timeout_ms;
  } else if (info.timeout_ms) {
    run_options_.timeout_ms = *info.timeout_ms;
  }
  run_options_.interrupt = options_.interrupt;
  RunOptions start_options = run_options_;
  start_options.compare_outputs = options_.validate_on_device;
  executor_.start(start_options);
  summary_.devices = executor_.slots();

  if (store_) {
    const tuner_detail::TuningChoice choice = tuner_detail::choose_tuning(*store_, info, executor_.content(), options_);
    tuning_id_ = choice.id;
    summary_.tuning = choice.id;
    summary_.new_tuning = choice.created;
    for (const std::string& warning : choice.warnings) {
      if (options_.on_warning) options_.on_warning(warning);
      summary_.warnings.push_back(warning);
    }
    if (!executor_.simulated()) store_abandoned_tests();
    for (Result& stored : store_->results(tuning_id_)) {
      std::string key = stored.key();
      stored_.emplace(std::move(key), std::move(stored));
    }
  }
  const bool compilers_would_disturb = info.device.runs_on_host_cores && options_.compile_threads == 0;
  const bool parallel = executor_.slots() > 1;  // each slot prepares its own tests
  if (options_.compile_ahead && !executor_.simulated() && !compilers_would_disturb && !parallel) {
    unsigned threads = options_.compile_threads > 0
                           ? static_cast<unsigned>(options_.compile_threads)
                           : std::max(1u, std::thread::hardware_concurrency() - 1);
    try {
      pool_ = std::make_unique<ThreadPool>(threads);
    } catch (const std::system_error& e) {
      throw Error(fmt::format("cannot start {} compiler threads ({}): ask for fewer with --compile-threads", threads,
                              e.what()));
    }
    summary_.compiled_ahead = true;
    compile_threads_ = threads;
    ahead_ = 2 * threads;
  }
  if (options_.window > 0) ahead_ = options_.window;
  if (parallel) ahead_ = std::max(ahead_, executor_.slots());  // a proposal for every slot
  progress_.planned = planned_tests();
  const Clock::time_point searcher_start = Clock::now();
  if (parallel) searcher_.parallel(executor_.slots());
  if (!executor_.simulated() && !parallel && !info.device.runs_on_host_cores) {
    // The cores that neither this thread nor the compiles (the next proposal's and the
    // guesses') keep busy while the searcher chooses; at most 8, where more gain little.
    const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t compiling = pool_ ? std::min<std::size_t>(compile_threads_, options_.guesses + 1) : 0;
    searcher_.use_threads(cores > compiling + 1 ? std::min<std::size_t>(cores - compiling - 1, 8) : 1);
  }
  searcher_.start(space_);
  charge_searcher(searcher_start);
  summary_.setup_s = seconds_since(start_);

  if (executor_.slots() > 1) {
    run_parallel();
  } else {
    run_sequential();
  }
  if (store_) store_withheld();
  // Proposals still in the pipeline are never run: drop their queued compiles.
  pipeline_.clear();
  pool_.reset();
  // Guesses never proposed: what they compiled is freed here, their compiles finished.
  guesses_.clear();
  modelled_guesses_.clear();
  guess_order_.clear();
  if (!summary_.interrupted) {
    try {
      final_check();
    } catch (const Interrupted&) {
      summary_.interrupted = true;
      summary_.stop_reason = "interrupted";
      summary_.finalists.clear();
    }
  }
  for (std::string& line : conditions_.summary()) summary_.warnings.push_back(std::move(line));
  const double real_s = seconds_since(start_);
  summary_.wall_s = executor_.clock_s();
  double accounted = summary_.setup_s + summary_.compile_wait_s + summary_.run_s + summary_.validation_s;
  summary_.overhead_s = std::max(0.0, real_s - accounted);
  summary_.median_overhead_ms = median(overheads_ms_);
  std::vector<double> valid_times;
  for (const Result& r : summary_.results) {
    if (r.ok()) valid_times.push_back(r.time.median_ms);
  }
  summary_.median_valid_ms = median(valid_times);
  if (summary_.best) {
    // Final bests: the weighted objective's value as the paper defines it, over the run; the
    // final check's winner, measured again, stands.
    ObjectiveBests bests;
    for (const Result& r : summary_.results) bests.update(r);
    for (const Result& r : summary_.results) {
      if (summary_.finalists.empty() && r.ok() && options_.objective.kind() != Objective::Kind::Time &&
          options_.objective.score(r, bests, flops_) < options_.objective.score(*summary_.best, bests, flops_)) {
        summary_.best = r;
      }
    }
    summary_.best_objective = options_.objective.value(*summary_.best, bests, flops_);
  }
  summary_.pareto = pareto_front(summary_.results);
  if (!passes_.empty()) {
    summary_.mean_passes = std::accumulate(passes_.begin(), passes_.end(), 0.0) / static_cast<double>(passes_.size());
  }
  summary_.median_pass_overhead_ms = median(pass_overheads_ms_);
  if (summary_.stop_reason.empty()) summary_.stop_reason = "done";
  return std::move(summary_);
}

}  // namespace

void Executor::submit(ConfigIndex, std::unique_ptr<PreparedTest>, const RunOptions&) {
  throw Error("this executor runs one test at a time: use run()");
}

Executor::Finished Executor::next() { throw Error("this executor runs one test at a time: use run()"); }

TuneSummary tune(const Space& space, Executor& executor, Searcher& searcher, Store* store,
                 const TuneOptions& options) {
  Loop loop(space, executor, searcher, store, options);
  return loop.run();
}

TuneSummary tune(const Spec& spec, const Space& space, Backend& backend, Searcher& searcher, Store* store,
                 const TuneOptions& options) {
  DeviceExecutor executor(spec, space, backend, options.size);
  return tune(space, executor, searcher, store, options);
}

}  // namespace steer
