// Bayesian optimisation over valid configurations only: a Gaussian process models runtime
// from the parameters' value indices scaled to [0, 1]; each next test is the configuration of
// greatest expected improvement among a random subset of the untested ones plus the untested
// neighbours of the fastest so far. Sequential, like Kernel Tuner's bayes_opt: every choice
// waits for the previous result.
//
// On several devices (parallel()) the choices go on while tests run, by the constant liar
// (Ginsbourger et al., "Kriging is well-suited to parallelize optimization", 2010): a
// configuration chosen while others are pending joins the model at once with the fastest
// cost measured so far as its (made-up) cost, so that the next choice looks elsewhere; its
// real cost replaces the lie when it finishes. The initial samples are then at least as many
// as the devices, and a profiled design point (guided with reaction_draws) runs beside them.
//
// `surrogate` (surrogate_searcher.cpp) and `guided` (guided_searcher.cpp) are this searcher
// with other settings (BayesOptions, bayes_options.hpp); `guided`'s features are the counters
// a model predicts for every configuration (and, given a source recording, its runtimes),
// with the parameters at a small weight; docs/searchers.md says why.
//
// Cost: the model is updated, not refitted. The Cholesky factor L of its n x n kernel matrix
// gains a row per measurement, O(n^2) where a refit is O(n^3). A candidate's variance needs
// v = L^-1 k(X, c): v is kept from the last time the candidate was scored and extended by the
// rows added since, O(n) each, rather than solved afresh, O(n^2), at every choice; its mean,
// v . L^-1 y, comes from dot products with L^-1 of the runtimes kept alongside v. A run's work
// is then about one solve per configuration ever drawn, not one per candidate per choice.
// The choices are those of a refit from scratch at every choice, up to rounding. Past
// `max_points` measurements the model is a selection of `max_points` of them (half the
// fastest, half spread over the rest by rank), made afresh at every choice; there every
// choice refits and solves its candidates afresh, O(n^3 + candidates x n^2).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <numbers>
#include <numeric>
#include <optional>
#include <span>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <Eigen/Cholesky>
#include <Eigen/Dense>

#include "search/bayes_options.hpp"
#include "search/file_cache.hpp"
#include "search/latin_hypercube.hpp"
#include "search/profile_scoring.hpp"
#include "search/search_support.hpp"
#include "search/source_recording.hpp"
#include "steer/model.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

using search::BayesOptions;
using search::Covariance;
using search::Lie;

// a . b with eight running sums: several times the throughput of one sum and, unlike letting
// the compiler reassociate, a result that does not depend on the x86-64 processor: where it
// has AVX2 the same sums go four to a register instead of two (without fused multiply-adds,
// which would round differently).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
double dot(const double* a, const double* b, std::size_t n) {
  double s[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (std::size_t k = 0; k < 8; ++k) s[k] += a[i + k] * b[i + k];
  }
  for (; i < n; ++i) s[0] += a[i] * b[i];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// dot() of `a` with kBlock vectors at once, stored interleaved (b[j * kBlock + c] is element j
// of vector c): per vector the same products summed in the same order, so the same bits, with
// each element of `a` read once for all of them.
constexpr std::size_t kBlock = 4;
// Work (flops) that is worth a thread of its own: starting one costs tens of microseconds.
constexpr double kFlopsPerThread = 2e6;
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
void dot_block(const double* a, const double* b, std::size_t n, double* out) {
  using Lanes = double __attribute__((vector_size(kBlock * sizeof(double))));  // one per vector
  Lanes s[8] = {};
  Lanes element;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (std::size_t k = 0; k < 8; ++k) {
      std::memcpy(&element, b + (i + k) * kBlock, sizeof element);
      s[k] += a[i + k] * element;
    }
  }
  for (; i < n; ++i) {
    std::memcpy(&element, b + i * kBlock, sizeof element);
    s[0] += a[i] * element;
  }
  const Lanes sums = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  std::memcpy(out, &sums, sizeof sums);
}

// exp(x) for x <= 0 (below -708 it gives exp(-708), not 0), within an ulp: exp(r) by its
// Taylor series on |r| <= ln 2 / 2 times 2^k. Plain IEEE arithmetic, two at a time with SSE2
// and one at a time in the same steps without: about twice as fast as libm's exp, and unlike
// it (which takes a fused multiply-add variant where the processor has one) the same on every
// x86-64 processor.
#if defined(__SSE2__)
inline __m128d exp_nonpositive(__m128d x) {
  x = _mm_max_pd(x, _mm_set1_pd(-708.0));
  const __m128d magic = _mm_set1_pd(0x1.8p52);  // adding it rounds to an integer
  const __m128d shifted = _mm_add_pd(_mm_mul_pd(x, _mm_set1_pd(0x1.71547652b82fep0)), magic);
  const __m128d k = _mm_sub_pd(shifted, magic);
  const __m128d r = _mm_sub_pd(_mm_sub_pd(x, _mm_mul_pd(k, _mm_set1_pd(0x1.62e42fee00000p-1))),
                               _mm_mul_pd(k, _mm_set1_pd(0x1.a39ef35793c76p-33)));
  __m128d p = _mm_set1_pd(1.0 / 6227020800.0);
  for (const double c : {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0,
                         1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0}) {
    p = _mm_add_pd(_mm_mul_pd(p, r), _mm_set1_pd(c));
  }
  // 2^k from k's bits in `shifted`: (k + 1023) << 52.
  const __m128i bits = _mm_sub_epi64(_mm_castpd_si128(shifted), _mm_castpd_si128(magic));
  const __m128i scale = _mm_slli_epi64(_mm_add_epi64(bits, _mm_set1_epi64x(1023)), 52);
  return _mm_mul_pd(p, _mm_castsi128_pd(scale));
}
#else
inline double exp_nonpositive(double x) {
  x = x > -708.0 ? x : -708.0;
  const double magic = 0x1.8p52;
  const double shifted = x * 0x1.71547652b82fep0 + magic;
  const double k = shifted - magic;
  const double r = (x - k * 0x1.62e42fee00000p-1) - k * 0x1.a39ef35793c76p-33;
  double p = 1.0 / 6227020800.0;
  for (const double c : {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0,
                         1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0}) {
    p = p * r + c;
  }
  const std::int64_t bits = std::bit_cast<std::int64_t>(shifted) - std::bit_cast<std::int64_t>(magic);
  return p * std::bit_cast<double>(static_cast<std::int64_t>(static_cast<std::uint64_t>(bits + 1023) << 52));
}
#endif

// The unit-variance kernel of squared distance s (in length scales): kernel(x, x) = 1.
#if defined(__SSE2__)
inline __m128d kernel_of(Covariance covariance, __m128d s) {
  switch (covariance) {
    case Covariance::Matern32: {
      const __m128d t = _mm_mul_pd(_mm_set1_pd(std::sqrt(3.0)), _mm_sqrt_pd(s));
      return _mm_mul_pd(_mm_add_pd(_mm_set1_pd(1.0), t), exp_nonpositive(_mm_sub_pd(_mm_setzero_pd(), t)));
    }
    case Covariance::Matern52: {
      const __m128d t = _mm_mul_pd(_mm_set1_pd(std::sqrt(5.0)), _mm_sqrt_pd(s));
      const __m128d poly = _mm_add_pd(_mm_add_pd(_mm_set1_pd(1.0), t), _mm_mul_pd(_mm_set1_pd(5.0 / 3.0), s));
      return _mm_mul_pd(poly, exp_nonpositive(_mm_sub_pd(_mm_setzero_pd(), t)));
    }
    case Covariance::Rbf:
      break;
  }
  return exp_nonpositive(_mm_mul_pd(_mm_set1_pd(-0.5), s));
}
#else
inline double kernel_of(Covariance covariance, double s) {
  switch (covariance) {
    case Covariance::Matern32: {
      const double t = std::sqrt(3.0) * std::sqrt(s);
      return (1.0 + t) * exp_nonpositive(0.0 - t);
    }
    case Covariance::Matern52: {
      const double t = std::sqrt(5.0) * std::sqrt(s);
      return ((1.0 + t) + 5.0 / 3.0 * s) * exp_nonpositive(0.0 - t);
    }
    case Covariance::Rbf:
      break;
  }
  return exp_nonpositive(-0.5 * s);
}
#endif

// The kernel of one squared distance, with the same arithmetic as the vectorised form.
inline double kernel_at(Covariance covariance, double s) {
#if defined(__SSE2__)
  return _mm_cvtsd_f64(kernel_of(covariance, _mm_set1_pd(s)));
#else
  return kernel_of(covariance, s);
#endif
}

// The Cholesky factor L of the kernel matrix K + nugget I over the model's points, grown one
// point at a time. Rows are packed: row i holds L(i, 0..i). The points' features are kept by
// dimension, so that the distances from one configuration to many points vectorise.
class IncrementalCholesky {
 public:
  IncrementalCholesky(std::size_t dims, Covariance covariance) : dims_(dims), covariance_(covariance) {}

  std::size_t size() const { return n_; }
  double nugget() const { return nugget_; }

  void clear(double nugget) {
    n_ = 0;
    nugget_ = nugget;
    l_.clear();
    inverse_diagonal_.clear();
  }

  // out[i - from] = kernel(x, point i) for the points from `from` on.
  void kernels(const double* x, std::size_t from, double* out) const {
    const std::size_t count = n_ - from;
    std::fill(out, out + count, 0.0);
    for (std::size_t d = 0; d < dims_; ++d) {
      const double xd = x[d];
      const double* column = xt_.data() + d * capacity_ + from;
      for (std::size_t i = 0; i < count; ++i) out[i] += (xd - column[i]) * (xd - column[i]);
    }
#if defined(__SSE2__)
    std::size_t i = 0;
    for (; i + 2 <= count; i += 2) _mm_storeu_pd(out + i, kernel_of(covariance_, _mm_loadu_pd(out + i)));
    if (i < count) out[i] = _mm_cvtsd_f64(kernel_of(covariance_, _mm_set1_pd(out[i])));
#else
    for (std::size_t i = 0; i < count; ++i) out[i] = kernel_of(covariance_, out[i]);
#endif
  }

  // Extends v = L^-1 k(X, x), whose first v.size() entries are solved, to all n: forward
  // substitution over the rows after them only.
  void extend(const double* x, std::vector<double>& v) const {
    const std::size_t from = v.size();
    if (from >= n_) return;
    scratch_.resize(n_);
    kernels(x, from, scratch_.data());
    for (std::size_t i = from; i < n_; ++i) {
      const double* row = l_.data() + i * (i + 1) / 2;
      v.push_back((scratch_[i - from] - dot(row, v.data(), i)) * inverse_diagonal_[i]);
    }
  }

  // What solve_block works in: one per thread that solves.
  struct BlockScratch {
    std::vector<double> kernels, v;  // by configuration / interleaved
  };

  // extend() of kBlock empty v at once, for the configurations x[0..kBlock): the same
  // arithmetic per configuration, so the same bits, with each row of L read once for all of
  // them rather than once each (a refit re-solves every candidate; L of 300 points is 360 KB).
  // Each v must hold size() elements already: the solve allocates only in `scratch`, so that
  // blocks can be solved on several threads at once, each with a scratch of its own.
  void solve_block(const std::array<const double*, kBlock>& x, const std::array<std::vector<double>*, kBlock>& v,
                   BlockScratch& scratch) const {
    scratch.kernels.resize(n_ * kBlock);
    scratch.v.resize(n_ * kBlock);
    for (std::size_t c = 0; c < kBlock; ++c) kernels(x[c], 0, scratch.kernels.data() + c * n_);
    double sums[kBlock];
    for (std::size_t i = 0; i < n_; ++i) {
      dot_block(l_.data() + i * (i + 1) / 2, scratch.v.data(), i, sums);
      for (std::size_t c = 0; c < kBlock; ++c) {
        scratch.v[i * kBlock + c] = (scratch.kernels[c * n_ + i] - sums[c]) * inverse_diagonal_[i];
      }
    }
    for (std::size_t c = 0; c < kBlock; ++c) {
      for (std::size_t i = 0; i < n_; ++i) (*v[c])[i] = scratch.v[i * kBlock + c];
    }
  }

  // The same for w = L^-1 b, b given by b(i).
  template <typename B>
  void extend_solve(std::vector<double>& w, B b) const {
    for (std::size_t i = w.size(); i < n_; ++i) {
      w.push_back((b(i) - dot(l_.data() + i * (i + 1) / 2, w.data(), i)) * inverse_diagonal_[i]);
    }
  }

  // Adds the point x, given its complete v = L^-1 k(X, x). False, and nothing added, when the
  // matrix would not be positive definite at this nugget.
  bool append(const double* x, const std::vector<double>& v) {
    const double pivot = 1 + nugget_ - dot(v.data(), v.data(), n_);
    if (!(pivot > 0)) return false;
    if (n_ == capacity_) {
      const std::size_t capacity = std::max<std::size_t>(64, 2 * capacity_);
      std::vector<double> xt(dims_ * capacity);
      for (std::size_t d = 0; d < dims_; ++d) {
        std::copy_n(xt_.begin() + static_cast<std::ptrdiff_t>(d * capacity_), n_,
                    xt.begin() + static_cast<std::ptrdiff_t>(d * capacity));
      }
      xt_ = std::move(xt);
      capacity_ = capacity;
    }
    for (std::size_t d = 0; d < dims_; ++d) xt_[d * capacity_ + n_] = x[d];
    l_.insert(l_.end(), v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n_));
    l_.push_back(std::sqrt(pivot));
    inverse_diagonal_.push_back(1 / l_.back());
    ++n_;
    return true;
  }

 private:
  std::size_t dims_;
  Covariance covariance_;
  double nugget_ = 0;
  std::size_t n_ = 0;
  std::size_t capacity_ = 0;              // points xt_ has room for
  std::vector<double> xt_;                // features, dims x capacity: dimension d at d x capacity
  std::vector<double> l_;                 // packed lower triangle, n (n + 1) / 2
  std::vector<double> inverse_diagonal_;  // 1 / L(i, i)
  mutable std::vector<double> scratch_;
};

class BayesSearcher final : public Searcher {
 public:
  BayesSearcher(std::uint64_t seed, BayesOptions options) : random_(seed), options_(options) {}
  std::string name() const override { return options_.name; }

  void start(const Space& space) override {
    space_ = &space;
    source_first_.clear();
    design_pool_.clear();
    parameter_weights_.assign(space.parameters().size(), options_.parameter_weight);
    if (options_.counter_model && options_.unmodelled_weight >= 0) {
      for (std::size_t p = 0; p < parameter_weights_.size(); ++p) {
        if (!modelled(space.parameters()[p])) parameter_weights_[p] = options_.unmodelled_weight;
      }
    }
    fit_scales_ = options_.fit_length_scales ||
                  (options_.fit_length_scales_unmodelled && options_.counter_model &&
                   std::any_of(space.parameters().begin(), space.parameters().end(), [&](const Parameter& parameter) {
                     return parameter.values.size() > 1 && !modelled(parameter);
                   }));
    parameter_dims_ = std::any_of(parameter_weights_.begin(), parameter_weights_.end(), [](double w) { return w > 0; })
                          ? space.parameters().size()
                          : 0;
    counter_features_.clear();
    source_feature_at_.reset();
    prior_.clear();
    source_fastest_.clear();
    predicted_ = {};
    awaiting_profile_.reset();
    explanations_.clear();
    if (options_.counter_model) {
      predicted_ = options_.counter_model->predict(space);
      counter_features_ = counter_features(predicted_);
    }
    // A source that covers too little of the space is a feature only (source_coverage).
    source_prior_ = options_.source_prior;
    if (options_.source && source_prior_ > 0 && options_.source_coverage > 0 &&
        search::source_coverage(space, *options_.source) < options_.source_coverage) {
      source_prior_ = 0;
    }
    std::vector<ConfigIndex> first;
    const std::vector<std::pair<double, ConfigIndex>> order =
        options_.source ? search::source_order(space, *options_.source)
                        : (options_.work_prior ? work_order() : std::vector<std::pair<double, ConfigIndex>>{});
    if (!order.empty()) {
      const std::uint64_t tested_first = options_.source ? options_.source_first : options_.work_first;
      for (std::size_t i = 0; i < order.size() && first.size() < tested_first; ++i) {
        first.push_back(order[i].second);
      }
      if (options_.source && options_.work_after_source > 0) {
        const std::size_t wanted = first.size() + options_.work_after_source;
        for (const auto& [work, c] : work_order()) {
          if (first.size() >= wanted) break;
          if (std::find(first.begin(), first.end(), c) == first.end()) first.push_back(c);
        }
      }
      if (options_.design_stop && source_prior_ > 0) source_first_ = first;
      if (options_.design_share < 1 && source_prior_ > 0) {
        const auto share = static_cast<std::size_t>(std::ceil(options_.design_share * static_cast<double>(order.size())));
        for (std::size_t i = first.size(); i < std::min(share, order.size()); ++i) design_pool_.push_back(order[i].second);
        // A source that holds too few of the tuned configurations to draw `spread` of them
        // from its share ranks too little of the space: the design is drawn from all of it.
        if (design_pool_.size() < std::max<std::uint64_t>(options_.spread, 2)) design_pool_.clear();
      }
      if (options_.source_weight > 0) {
        source_feature_at_ = counter_features_.size();
        counter_features_.push_back(source_feature(order, space.size()));
      }
      if (source_prior_ > 0) {
        prior_ = prior_shape(order, space.size());
        for (std::size_t i = 0; i < order.size() && source_fastest_.size() < options_.source_candidates; ++i) {
          source_fastest_.push_back(order[i].second);
        }
      }
    }
    dims_ = parameter_dims_ + counter_features_.size();
    if (dims_ == 0) throw Error(fmt::format("searcher '{}': no features: the model predicts no counter that varies", options_.name));
    memory_.reset(space.size());
    // The smaller design of a prior mean only where the predicted work gives one.
    const bool no_work = options_.work_prior && order.empty() && options_.initial_samples_without_prior > 0;
    const std::uint64_t samples =
        std::max<std::uint64_t>(no_work ? options_.initial_samples_without_prior : options_.initial_samples, devices_);
    initial_ = options_.latin_hypercube ? search::latin_hypercube(space, samples, random_)
                                        : space.sample(random_.engine(), samples);
    profiled_at_ = first.size();
    profile_started_ = false;
    const std::size_t fixed = first.size() + 1;  // the source's fastest and the design's first point
    if (!design_pool_.empty() && !initial_.empty()) initial_[0] = design_pool_[random_.below(design_pool_.size())];
    if (!first.empty()) {
      for (ConfigIndex c : initial_) {
        if (std::find(first.begin(), first.end(), c) == first.end()) first.push_back(c);
      }
      initial_ = std::move(first);
    }
    scale_.clear();  // features() below: unscaled
    // Where the reaction to a profiled design point draws the rest of the design, it spreads its draws.
    if (options_.spread > 0 && !reacts()) spread_design(fixed);
    next_initial_ = 0;
    choices_ = 0;
    // A source's prior mean that design_stop will not judge is trusted at once; otherwise the
    // unproven margin holds until design_stop finds the source's fastest ahead.
    const bool trusted = !order.empty() && source_prior_ > 0 && source_first_.empty();
    xi_ = trusted || options_.xi_unproven < 0 ? options_.xi : options_.xi_unproven;
    next_fit_ = std::max<std::size_t>(options_.fit_from, options_.initial_samples);
    measured_.clear();
    test_costs_ = {};
    fastest_ = {std::numeric_limits<double>::infinity(), std::numeric_limits<ConfigIndex>::max()};
    improved_at_ = 0;
    climb_centre_.reset();
    climb_misses_ = 0;
    climb_pending_.clear();
    slowest_ok_ = -std::numeric_limits<double>::infinity();
    model_ = std::make_unique<IncrementalCholesky>(dims_, options_.covariance);
    model_points_.clear();
    modelled_ = 0;
    selected_of_ = 0;
    lies_.clear();
    refit({}, kFirstNugget);
    dense_.assign(space.size() <= kDenseUpTo ? space.size() : 0, Dense{});
    draw_ = 0;
    forget_all();
  }

  std::vector<Proposal> propose(std::size_t max) override {
    std::vector<Proposal> out;
    // Its reaction draws the next samples (on several devices the others go on meanwhile).
    if (awaiting_profile_ && devices_ == 1) return out;
    while (out.size() < max && next_initial_ < initial_.size()) {
      // The first design point after the source's fastest is profiled: its bottlenecks draw
      // the next ones.
      if (reacts() && !profile_started_ && next_initial_ == profiled_at_) {
        profile_started_ = true;
        awaiting_profile_ = initial_[next_initial_++];
        memory_.propose(*awaiting_profile_);
        Proposal profiled{*awaiting_profile_, {}};
        profiled.measure.counters = true;
        profiled.measure.counters_optional = true;  // without them the hypercube stays
        out.push_back(profiled);
        if (devices_ == 1) return out;
        continue;
      }
      if (!source_first_.empty() && devices_ == 1 && next_initial_ >= source_first_.size() + 1) {
        if (memory_.pending() > 0 || !out.empty()) break;  // judged when both are measured
        if (source_led()) {
          initial_.resize(next_initial_);
          xi_ = options_.xi;
        }
        if (options_.source && options_.work_replaces_beaten_source && !source_fastest_led()) work_for_source();
        source_first_.clear();
        continue;
      }
      if (memory_.seen(initial_[next_initial_])) {  // drawn by the reaction as well
        ++next_initial_;
        continue;
      }
      memory_.propose(initial_[next_initial_]);
      out.push_back({initial_[next_initial_++], {}});
    }
    if (devices_ > 1 || options_.batch > 1) {
      // The initial samples are all proposed: each further choice lies about the pending ones.
      // On one device, up to `batch` are pending: the loop compiles them ahead while one runs.
      while (out.size() < max && !measured_.empty() && !memory_.exhausted() &&
             (devices_ > 1 || (next_initial_ >= initial_.size() && memory_.pending() < pipeline_depth()))) {
        ++choices_;  // as on one device: every local_every-th choice is local
        const bool climb = climb_choice();
        const std::vector<ConfigIndex> next = most_promising(1);
        if (next.empty()) break;
        if (climb) tag_climb(next.front());
        memory_.propose(next.front());
        out.push_back({next.front(), {}});
        lie_about(next.front());
      }
      return out;
    }
    if (out.size() < max && memory_.pending() == 0 && !memory_.exhausted()) {
      // The initial samples are all measured now.
      ++choices_;
      const bool climb = climb_choice();
      for (ConfigIndex next : most_promising(1)) {
        if (climb) tag_climb(next);
        memory_.propose(next);
        out.push_back({next, {}});
      }
    }
    return out;
  }

  // The next choice ranked before the pending result is in: of its kind (local or global,
  // `local_every`), from the same candidates, the random draws restored, so that guessing
  // leaves the choice itself as it was. Only where it chooses one test at a time.
  std::vector<ConfigIndex> likely_next(std::size_t count) override {
    if (count == 0 || devices_ > 1 || options_.batch > 1 || awaiting_profile_ || next_initial_ < initial_.size() ||
        measured_.empty() || memory_.pending() == 0 || memory_.exhausted()) {
      return {};
    }
    const search::Random drawn_so_far = random_;
    ++choices_;
    std::vector<ConfigIndex> guessed = most_promising(count);
    --choices_;
    random_ = drawn_so_far;
    return guessed;
  }

  std::vector<Explanation> take_explanations() override { return std::exchange(explanations_, {}); }

  void parallel(std::size_t devices) override { devices_ = std::max<std::size_t>(1, devices); }

  void use_threads(std::size_t threads) override { threads_ = std::max<std::size_t>(1, threads); }

  void observe(const Result& result) override {
    test_costs_.observe(result);
    double cost = memory_.observe(result);
    if (options_.log_targets && std::isfinite(cost)) cost = std::log(std::max(cost, 1e-300));
    measured_.emplace_back(cost, result.config_index);
    follow_climb(measured_.back());
    if (measured_.back() < fastest_) improved_at_ = measured_.size();
    fastest_ = std::min(fastest_, measured_.back());
    if (std::isfinite(cost)) slowest_ok_ = std::max(slowest_ok_, cost);
    if (awaiting_profile_ && *awaiting_profile_ == result.config_index) {
      awaiting_profile_.reset();
      draw_by_reaction(result);
    }
  }

 private:
  static constexpr double kFirstNugget = 1e-6;

  // Whether the counter model was trained on `parameter` with every value the tuned space
  // gives it (more than one), so that its predictions can tell configurations apart along it.
  bool modelled(const Parameter& parameter) const {
    for (const Parameter& trained : options_.counter_model->parameters()) {
      if (trained.name != parameter.name) continue;
      if (trained.values.size() < 2) return false;
      return std::all_of(parameter.values.begin(), parameter.values.end(), [&](const Value& v) {
        return std::find(trained.values.begin(), trained.values.end(), v) != trained.values.end();
      });
    }
    return false;
  }

  // Whether a profiled design point's reaction draws the rest of the design (reaction_draws).
  bool reacts() const { return options_.reaction_draws > 0 && options_.counter_model != nullptr; }

  // Whether the source's fastest, tested first (source_first of them, and the predicted
  // lightest of work_after_source after them), ran faster than every other test so far
  // (design_stop).
  bool source_led() const { return first_led(source_first_.size()); }
  // Whether the source's own fastest, without the predicted lightest, did
  // (work_replaces_beaten_source).
  bool source_fastest_led() const { return first_led(std::min<std::size_t>(options_.source_first, source_first_.size())); }
  // Whether the fastest of the first `count` of source_first_ ran faster than every other
  // test so far; a failure never leads.
  bool first_led(std::size_t count) const {
    const auto end = source_first_.begin() + static_cast<std::ptrdiff_t>(count);
    double first = std::numeric_limits<double>::infinity();
    double others = std::numeric_limits<double>::infinity();
    for (const auto& [cost, c] : measured_) {
      double& fastest = std::find(source_first_.begin(), end, c) != end ? first : others;
      fastest = std::min(fastest, cost);
    }
    return first < others;
  }

  // Sets the source aside for the predicted work (work_replaces_beaten_source): its prior
  // mean's shape, candidates and feature become the work's; the model is refitted to them.
  // Nothing changes where the model predicts no work to rank by.
  void work_for_source() {
    const std::vector<std::pair<double, ConfigIndex>> order = work_order();
    if (order.empty()) return;
    if (!prior_.empty()) prior_ = prior_shape(order, space_->size());
    source_fastest_.clear();
    if (source_prior_ > 0) {
      for (std::size_t i = 0; i < order.size() && source_fastest_.size() < options_.source_candidates; ++i) {
        source_fastest_.push_back(order[i].second);
      }
    }
    if (source_feature_at_) counter_features_[*source_feature_at_] = source_feature(order, space_->size());
    forget_all();  // every kept feature vector and solve is of the source's feature and prior
    std::vector<std::pair<double, ConfigIndex>> points = model_points_;
    refit(std::move(points), kFirstNugget);
  }

  // Length-scale fitting: the measurements it uses at most, the nugget of its kernel matrix,
  // and the range of the factors it puts on each feature.
  static constexpr std::size_t kFitPoints = 96;
  static constexpr double kFitNugget = 1e-4;
  static constexpr double kMinScale = 1.0 / 16, kMaxScale = 8;
  // Breeding candidates: parents are the kParents fastest, drawn by rank with Beta(1,
  // kParentBeta) (the genetic searcher's default pressure); a child mutates with kMutation.
  static constexpr std::size_t kParents = 20;
  static constexpr double kParentBeta = 6, kMutation = 0.3;
  // Doubles of kept v before all are dropped (and solved afresh as needed): 32 MB.
  static constexpr std::size_t kKeptLimit = std::size_t{1} << 22;
  // Spaces up to this size index what is kept per configuration by a table (8 bytes a
  // configuration), larger ones by hashing.
  static constexpr std::uint64_t kDenseUpTo = std::uint64_t{1} << 22;
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  // What is kept of a candidate while `generation` is the model's: v = L^-1 k(X, c) and its
  // dot products with itself and with the model's solved targets (see targets_).
  struct Kept {
    std::uint64_t generation = 0;
    std::uint64_t targets = 0;  // the targets_version_ its dot products are of
    double explained = 0, ok = 0, failed = 0, one = 0, prior = 0;  // over v's first `summed`
    std::vector<double> v;
    std::size_t summed = 0;
  };
  struct Dense {
    std::uint32_t slot = kNone;  // in kept_
    std::uint32_t draw = 0;      // the last choice that drew the configuration
  };

  // L^-1 of the model's runtimes split three ways, so that targets standardised with any mean
  // and spread, and failures at any runtime, are a weighted sum of them.
  struct Targets {
    std::vector<double> ok;      // L^-1 of the runtimes, 0 for failures
    std::vector<double> failed;  // L^-1 of 1 for failures, 0 otherwise
    std::vector<double> one;     // L^-1 of 1
    std::vector<double> prior;   // L^-1 of the prior mean's shape (prior_) at the points
  };

  void features(ConfigIndex c, double* x) {
    if (parameter_dims_ > 0) {
      const auto& parameters = space_->parameters();
      indices_.resize(parameter_dims_);
      space_->value_indices(c, indices_);
      for (std::size_t p = 0; p < parameter_dims_; ++p) {
        const auto last = static_cast<double>(parameters[p].values.size() - 1);
        x[p] = last > 0 ? indices_[p] / last * parameter_weights_[p] / options_.lengthscale : 0.0;
      }
    }
    // Over sqrt(features): a kernel's counters are many and move together (twice the loads,
    // twice the instructions), so the counters' distances keep one scale however many there are.
    const double scale = options_.counter_weight / options_.lengthscale /
                         std::sqrt(static_cast<double>(std::max<std::size_t>(1, counter_features_.size())));
    for (std::size_t k = 0; k < counter_features_.size(); ++k) {
      x[parameter_dims_ + k] = counter_features_[k][c] * scale;
    }
    if (!scale_.empty()) {  // fitted length scales, as factors on the features
      for (std::size_t d = 0; d < dims_; ++d) x[d] *= scale_[d];
    }
  }

  // The log marginal likelihood, up to a constant, of standardised targets y at features x
  // (n rows of dims_) with each feature multiplied by `scale`.
  double log_likelihood(const std::vector<double>& x, const std::vector<double>& y,
                        const std::vector<double>& scale) const {
    const auto n = static_cast<Eigen::Index>(y.size());
    Eigen::MatrixXd k(n, n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const double* xi = x.data() + static_cast<std::size_t>(i) * dims_;
      for (Eigen::Index j = 0; j < i; ++j) {
        const double* xj = x.data() + static_cast<std::size_t>(j) * dims_;
        double s = 0;
        for (std::size_t d = 0; d < dims_; ++d) s += (xi[d] - xj[d]) * (xi[d] - xj[d]) * scale[d] * scale[d];
        k(i, j) = k(j, i) = kernel_at(options_.covariance, s);
      }
      k(i, i) = 1 + kFitNugget;
    }
    const Eigen::LLT<Eigen::MatrixXd> llt(k);
    if (llt.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
    const Eigen::VectorXd alpha = llt.matrixL().solve(Eigen::Map<const Eigen::VectorXd>(y.data(), n));
    double log_determinant = 0;
    for (Eigen::Index i = 0; i < n; ++i) log_determinant += std::log(llt.matrixLLT()(i, i));
    return -0.5 * alpha.squaredNorm() - log_determinant;
  }

  // A length scale per feature, as factors on the features (scale_), chosen by coordinate
  // search on the marginal likelihood: parameters matter unequally (a read-only flag next to
  // a tile size), and one length scale for all either blurs the important ones or splits
  // the unimportant. Fitted to at most kFitPoints measurements, the fastest half and a
  // spread of the rest, as the model keeps them past max_points.
  void fit_length_scales() {
    std::vector<std::pair<double, ConfigIndex>> points = selection(measured_, kFitPoints);
    const std::size_t n = points.size();
    std::vector<double> scale = std::exchange(scale_, {});  // features() below: unscaled
    if (scale.empty()) scale.assign(dims_, 1.0);
    std::vector<double> x(n * dims_);
    for (std::size_t i = 0; i < n; ++i) features(points[i].second, x.data() + i * dims_);
    const double failed = std::isfinite(slowest_ok_) ? slowest_ok_ : 1.0;
    std::vector<double> y(n);
    for (std::size_t i = 0; i < n; ++i) y[i] = std::isfinite(points[i].first) ? points[i].first : failed;
    const double mean = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(n);
    double variance = 0;
    for (double v : y) variance += (v - mean) * (v - mean);
    const double spread = std::sqrt(variance / static_cast<double>(n));
    for (double& v : y) v = (v - mean) / (spread > 0 ? spread : 1.0);

    double best = log_likelihood(x, y, scale);
    for (int sweep = 0; sweep < 2; ++sweep) {
      for (std::size_t d = 0; d < dims_; ++d) {
        const double current = scale[d];
        for (const double factor : {0.5, 2.0, 0.25, 4.0}) {  // the first that improves
          scale[d] = std::clamp(current * factor, kMinScale, kMaxScale);
          const double value = log_likelihood(x, y, scale);
          if (value > best + 1e-9) {
            best = value;
            break;
          }
          scale[d] = current;
        }
      }
    }
    scale_ = std::move(scale);
  }

  // The design's points from `fixed` on, each the farthest in feature space from the points
  // before it (the nearest of them) among `spread` random configurations: design
  // points whose features nearly coincide teach the model one thing twice. Of a few, not of
  // many: the farthest of the whole space are its extremes, often its slowest configurations.
  void spread_design(std::size_t fixed) {
    std::vector<double> chosen_x;  // features of initial_[0 .. i), row by row
    std::vector<ConfigIndex> candidates;
    for (std::size_t i = 0; i < initial_.size(); ++i) {
      if (i >= fixed) {
        candidates.clear();
        for (ConfigIndex c : design_candidates()) {
          if (std::find(initial_.begin(), initial_.begin() + static_cast<std::ptrdiff_t>(i), c) ==
              initial_.begin() + static_cast<std::ptrdiff_t>(i)) {
            candidates.push_back(c);
          }
        }
        if (!candidates.empty()) initial_[i] = farthest_from(candidates, chosen_x);
      }
      append_features(initial_[i], chosen_x);
    }
    // A draw can repeat a later point of the design: keep the first of each.
    std::vector<ConfigIndex> distinct;
    for (ConfigIndex c : initial_) {
      if (std::find(distinct.begin(), distinct.end(), c) == distinct.end()) distinct.push_back(c);
    }
    initial_ = std::move(distinct);
  }

  // `spread` distinct random configurations: of the design's pool (design_share) where there
  // is one, else of the whole space.
  std::vector<ConfigIndex> design_candidates() {
    if (design_pool_.empty()) return space_->sample(random_.engine(), std::min<std::uint64_t>(space_->size(), options_.spread));
    std::vector<ConfigIndex> out;
    const std::size_t count = std::min<std::size_t>(design_pool_.size(), options_.spread);
    while (out.size() < count) {
      const ConfigIndex c = design_pool_[random_.below(design_pool_.size())];
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
    return out;
  }

  // Of `candidates`, the one farthest in feature space from the points whose features `chosen`
  // holds row by row, the nearest of them counting.
  ConfigIndex farthest_from(std::span<const ConfigIndex> candidates, const std::vector<double>& chosen) {
    std::vector<double> x(dims_);
    double farthest = -1;
    ConfigIndex pick = candidates.front();
    for (ConfigIndex c : candidates) {
      features(c, x.data());
      double nearest = std::numeric_limits<double>::infinity();
      for (std::size_t row = 0; row < chosen.size(); row += dims_) {
        double d = 0;
        for (std::size_t k = 0; k < dims_; ++k) d += (x[k] - chosen[row + k]) * (x[k] - chosen[row + k]);
        nearest = std::min(nearest, d);
      }
      if (nearest > farthest) farthest = nearest, pick = c;
    }
    return pick;
  }

  void append_features(ConfigIndex c, std::vector<double>& rows) {
    rows.resize(rows.size() + dims_);
    features(c, rows.data() + rows.size() - dims_);
  }

  // The reaction to the profiled design point draws the next initial samples, in place of as
  // many Latin hypercube points; with nothing to analyse, the hypercube stays.
  void draw_by_reaction(const Result& profiled) {
    // The tuned GPU's facts: those known for the GPU the result names (none: no b_paral).
    search::ProfileAnalysis found;
    const std::optional<CounterValues> reaction = search::reaction_to(
        profiled, predicted_, *options_.counter_model, std::nullopt, options_.expert, true, &found);
    if (!reaction) {
      if (!found.missing_inputs.empty()) explanations_.push_back(search::explain(profiled.config_index, found, {}));
      return;
    }
    explanations_.push_back(search::explain(profiled.config_index, found, *reaction));
    const std::vector<search::ReactionTerm> terms = search::reaction_terms(*reaction, predicted_);
    if (terms.empty()) return;
    std::vector<float> scores(space_->size()), weights(space_->size());
    std::vector<std::uint8_t> explored(space_->size(), 0);
    for (ConfigIndex c = 0; c < space_->size(); ++c) explored[c] = memory_.seen(c) ? 1 : 0;
    search::score_configurations(terms, profiled.config_index, scores);
    const double total = search::normalise_scores(scores, explored, options_.normalisation, weights);
    if (!(total > 0)) return;
    // Spread as the design is: each draw the farthest in feature space from the tests before
    // it of `spread` the reaction drew. The reaction alone bunches its draws where its terms
    // score highest; spread, they probe that direction more widely (docs/searchers.md).
    const std::size_t group = std::max<std::size_t>(options_.spread, 1);
    const std::vector<ConfigIndex> pool =
        search::weighted_draws(weights, total, options_.reaction_draws * group, random_);
    std::vector<double> chosen_x;
    for (std::size_t i = 0; i < next_initial_; ++i) append_features(initial_[i], chosen_x);
    std::vector<ConfigIndex> drawn;
    for (std::size_t from = 0; from < pool.size(); from += group) {
      drawn.push_back(farthest_from(std::span(pool).subspan(from, std::min(group, pool.size() - from)), chosen_x));
      append_features(drawn.back(), chosen_x);
    }
    explanations_.back().next = drawn;
    std::vector<ConfigIndex> rest(initial_.begin() + static_cast<std::ptrdiff_t>(next_initial_), initial_.end());
    initial_.resize(next_initial_);
    initial_.insert(initial_.end(), drawn.begin(), drawn.end());
    const std::size_t keep = rest.size() > drawn.size() ? rest.size() - drawn.size() : 0;
    initial_.insert(initial_.end(), rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(keep));
  }

  // The predicted work of every configuration (work_prior), least first (ties: lower index);
  // empty where the model predicts no instructions, or they do not vary. A model of a counter
  // set without DRAM sectors (KTT 2.3) ranks by instructions alone, which in replay
  // did better than L2's traffic in their place (docs/guided-measurements.md, "A model without
  // DRAM counters").
  std::vector<std::pair<double, ConfigIndex>> work_order() const {
    const float* instructions = predicted_.counter("INST_EXE");
    const float* reads = predicted_.counter("DRAM_RT");
    const float* writes = predicted_.counter("DRAM_WT");
    std::vector<std::pair<double, ConfigIndex>> order;
    if (instructions == nullptr) return order;
    order.reserve(predicted_.configs);
    for (ConfigIndex c = 0; c < predicted_.configs; ++c) {
      const double traffic = (reads ? std::max(0.0f, reads[c]) : 0.0) + (writes ? std::max(0.0f, writes[c]) : 0.0);
      order.emplace_back(std::sqrt(std::max(1.0, static_cast<double>(instructions[c])) * (traffic + 1)), c);
    }
    std::sort(order.begin(), order.end());
    if (order.front().first == order.back().first) order.clear();
    return order;
  }

  // The source's runtime of each configuration as log(runtime) scaled to [0, 1], times
  // source_weight / counter_weight; configurations the source lacks take the middle of that
  // range, as uncertain as can be without leaving it.
  std::vector<float> source_feature(const std::vector<std::pair<double, ConfigIndex>>& order, std::uint64_t size) const {
    const double weight = options_.source_weight / std::max(options_.counter_weight, 1e-9);  // features() applies counter_weight
    std::vector<float> out(size, static_cast<float>(0.5 * weight));
    if (order.empty()) return out;
    const double low = std::log(order.front().first), high = std::log(order.back().first);
    for (const auto& [runtime, c] : order) {
      out[c] = static_cast<float>(high > low ? weight * (std::log(runtime) - low) / (high - low) : 0.0);
    }
    return out;
  }

  // The prior mean's shape: the source's log runtime, standardised over the configurations it
  // holds; those it lacks take 0, its mean.
  static std::vector<float> prior_shape(const std::vector<std::pair<double, ConfigIndex>>& order, std::uint64_t size) {
    std::vector<float> out(size, 0.0f);
    if (order.size() < 2) return out;
    double mean = 0, square = 0;
    for (const auto& [runtime, c] : order) mean += std::log(runtime);
    mean /= static_cast<double>(order.size());
    for (const auto& [runtime, c] : order) square += (std::log(runtime) - mean) * (std::log(runtime) - mean);
    const double spread = std::sqrt(square / static_cast<double>(order.size()));
    if (!(spread > 0)) return out;
    for (const auto& [runtime, c] : order) out[c] = static_cast<float>((std::log(runtime) - mean) / spread);
    return out;
  }

  // The prior mean's factor b: the generalised least-squares fit of the standardised targets
  // by the prior's shape, p^T K^-1 y / p^T K^-1 p, with the prior N(1, source_prior^2) on b;
  // with prior_fades, 0 where that comes out negative.
  double prior_factor(double failed, double mean, double scale) const {
    if (prior_.empty()) return 0;
    const std::size_t n = targets_.prior.size();
    double py = 0, pp = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double y = (targets_.ok[i] + failed * targets_.failed[i] - mean * targets_.one[i]) / scale;
      py += targets_.prior[i] * y;
      pp += targets_.prior[i] * targets_.prior[i];
    }
    const double precision = 1.0 / (source_prior_ * source_prior_);
    const double b = (py + precision) / (pp + precision);
    return options_.prior_fades ? std::max(0.0, b) : b;
  }

  // Each predicted counter that varies over the space, as log(1 + value) scaled to [0, 1]:
  // counters span orders of magnitude, and it is their ratios that say how configurations
  // differ (twice the memory traffic, half the occupancy).
  static std::vector<std::vector<float>> counter_features(const PredictedCounters& predicted) {
    std::vector<std::vector<float>> out;
    for (const std::vector<float>& values : predicted.values) {
      float low = INFINITY, high = -INFINITY;
      std::vector<float> logs(values.size());
      for (std::size_t c = 0; c < values.size(); ++c) {
        logs[c] = std::log1p(std::max(0.0f, values[c]));
        low = std::min(low, logs[c]);
        high = std::max(high, logs[c]);
      }
      if (!(high - low > 1e-6f)) continue;
      for (float& v : logs) v = (v - low) / (high - low);
      out.push_back(std::move(logs));
    }
    return out;
  }

  std::uint32_t& slot_of(ConfigIndex c) {
    if (!dense_.empty()) return dense_[c].slot;
    return sparse_.try_emplace(c, kNone).first->second;
  }

  // True the first time c is drawn for the current choice.
  bool newly_drawn(ConfigIndex c) {
    if (!dense_.empty()) {
      if (dense_[c].draw == draw_) return false;
      dense_[c].draw = draw_;
      return true;
    }
    return drawn_.insert(c).second;
  }

  // Where what is kept of c lies, made on first use.
  std::uint32_t slot_for(ConfigIndex c) {
    std::uint32_t& slot = slot_of(c);
    if (slot == kNone) {
      slot = static_cast<std::uint32_t>(kept_.size());
      kept_.emplace_back();
      kept_x_.resize(kept_x_.size() + dims_);
      features(c, kept_x_.data() + std::size_t{slot} * dims_);
    }
    return slot;
  }

  // What is kept in `slot`, v extended to the current model.
  Kept& scored(std::uint32_t slot) {
    Kept& k = current(slot);
    if (k.targets != targets_version_) {
      // A lie was replaced by its real cost: the targets changed under the kept products.
      k.targets = targets_version_;
      k.ok = dot(k.v.data(), targets_.ok.data(), k.summed);
      k.failed = dot(k.v.data(), targets_.failed.data(), k.summed);
      k.one = dot(k.v.data(), targets_.one.data(), k.summed);
      if (!prior_.empty()) k.prior = dot(k.v.data(), targets_.prior.data(), k.summed);
    }
    const std::size_t from = k.summed;
    if (from == model_->size()) return k;
    if (k.v.size() < model_->size()) {
      if (k.v.capacity() < model_->size()) {
        k.v.reserve(std::min<std::size_t>(2 * model_->size(), options_.max_points));
      }
      kept_doubles_ -= k.v.size();
      model_->extend(kept_x_.data() + std::size_t{slot} * dims_, k.v);
      kept_doubles_ += k.v.size();
    }
    k.summed = k.v.size();
    for (std::size_t i = from; i < k.v.size(); ++i) {
      k.explained += k.v[i] * k.v[i];
      k.ok += k.v[i] * targets_.ok[i];
      k.failed += k.v[i] * targets_.failed[i];
      k.one += k.v[i] * targets_.one[i];
      if (!prior_.empty()) k.prior += k.v[i] * targets_.prior[i];
    }
    return k;
  }

  // What is kept in `slot`, emptied if it is of an earlier fit.
  Kept& current(std::uint32_t slot) {
    Kept& k = kept_[slot];
    if (k.generation != generation_) {
      kept_doubles_ -= k.v.size();
      k.v.clear();
      k.summed = 0;
      k.generation = generation_;
      k.explained = k.ok = k.failed = k.one = k.prior = 0;
    }
    return k;
  }

  // Solves v from scratch for those of `slots` that have none yet (the newly drawn, and after
  // a refit every candidate), kBlock at a time (IncrementalCholesky::solve_block), so that
  // scored() finds them solved. The rest are left to scored(). After a refit (at every choice
  // past max_points, and when the length scales are fitted), which leaves every candidate to
  // solve afresh, the blocks are spread over the threads the loop lends (use_threads): each
  // block is the same arithmetic on any thread, so the choices are the same bits however many
  // solve them.
  void solve_unsolved(std::vector<std::uint32_t> slots) {
    const std::size_t n = model_->size();
    if (n < 2 * kBlock) return;
    std::sort(slots.begin(), slots.end());  // a configuration can be drawn twice in a choice
    slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
    struct Block {
      std::array<const double*, kBlock> x{};
      std::array<std::vector<double>*, kBlock> v{};
    };
    std::vector<Block> blocks;
    Block block;
    std::size_t filled = 0;
    for (std::uint32_t slot : slots) {
      Kept& k = current(slot);
      if (!k.v.empty()) continue;
      block.x[filled] = kept_x_.data() + std::size_t{slot} * dims_;
      block.v[filled] = &k.v;
      if (++filled < kBlock) continue;
      for (std::vector<double>* solved : block.v) {
        solved->reserve(std::max(n, std::min<std::size_t>(2 * n, options_.max_points)));
        solved->resize(n);
      }
      blocks.push_back(block);
      kept_doubles_ += kBlock * n;
      filled = 0;
    }
    // A block is about 2 kBlock n^2 / 2 flops: spread only what outweighs starting threads.
    const double flops = static_cast<double>(blocks.size()) * kBlock * static_cast<double>(n) * static_cast<double>(n);
    const std::size_t threads = flops < kFlopsPerThread ? 1
                                                         : std::min<std::size_t>({threads_, blocks.size(),
                                                                                  static_cast<std::size_t>(flops / kFlopsPerThread)});
    std::atomic<std::size_t> next{0};
    auto solve = [&] {
      IncrementalCholesky::BlockScratch scratch;
      scratch.kernels.reserve(n * kBlock);
      scratch.v.reserve(n * kBlock);
      for (std::size_t b; (b = next.fetch_add(1, std::memory_order_relaxed)) < blocks.size();) {
        model_->solve_block(blocks[b].x, blocks[b].v, scratch);
      }
    };
    std::vector<std::thread> helpers;
    for (std::size_t t = 1; t < threads; ++t) {
      try {
        helpers.emplace_back(solve);
      } catch (const std::system_error&) {
        break;  // fewer helpers, the same blocks: this thread solves what they would have
      }
    }
    solve();
    for (std::thread& helper : helpers) helper.join();
  }

  void forget(ConfigIndex c) {
    std::uint32_t slot = kNone;
    if (!dense_.empty()) {
      slot = dense_[c].slot;
    } else if (auto it = sparse_.find(c); it != sparse_.end()) {
      slot = it->second;
    }
    if (slot != kNone) {
      kept_doubles_ -= kept_[slot].v.size();
      kept_[slot].v = {};
    }
  }

  void forget_all() {
    for (Dense& d : dense_) d.slot = kNone;
    sparse_.clear();
    kept_.clear();
    kept_x_.clear();
    kept_doubles_ = 0;
  }

  // Brings targets_ up to the model's points.
  void extend_targets() {
    model_->extend_solve(targets_.ok, [&](std::size_t i) {
      const double cost = model_points_[i].first;
      return std::isfinite(cost) ? cost : 0.0;
    });
    model_->extend_solve(targets_.failed,
                         [&](std::size_t i) { return std::isfinite(model_points_[i].first) ? 0.0 : 1.0; });
    model_->extend_solve(targets_.one, [](std::size_t) { return 1.0; });
    if (!prior_.empty()) {
      model_->extend_solve(targets_.prior, [&](std::size_t i) { return static_cast<double>(prior_[model_points_[i].second]); });
    }
  }

  // Refits the model to `points`, from `nugget` up tenfold until the kernel matrix is
  // positive definite (nearby configurations make it nearly singular). All kept v go stale.
  void refit(std::vector<std::pair<double, ConfigIndex>> points, double nugget) {
    ++generation_;
    x_.resize(dims_);
    for (;; nugget *= 10) {
      model_->clear(nugget);
      model_points_.clear();
      bool ok = true;
      for (const auto& point : points) {
        features(point.second, x_.data());
        v_.clear();
        model_->extend(x_.data(), v_);
        if (!model_->append(x_.data(), v_)) {
          ok = false;
          break;
        }
        model_points_.push_back(point);
      }
      if (ok) break;
    }
    targets_ = {};
    extend_targets();
  }

  // At most `cap` of `points`: all when they are no more, else the fastest half, where
  // expected improvement is decided, and an even spread of the rest by rank (a model of the
  // fastest only would forget where the slow regions are and find them uncertain, so worth
  // testing, again and again).
  static std::vector<std::pair<double, ConfigIndex>> selection(std::vector<std::pair<double, ConfigIndex>> points,
                                                               std::size_t cap) {
    if (points.size() <= cap) return points;
    std::sort(points.begin(), points.end());  // failures (infinite) last
    const std::size_t fastest = cap / 2;
    const std::size_t spread = cap - fastest;
    const double stride = static_cast<double>(points.size() - fastest) / static_cast<double>(spread);
    std::vector<std::pair<double, ConfigIndex>> kept(points.begin(), points.begin() + static_cast<std::ptrdiff_t>(fastest));
    for (std::size_t k = 0; k < spread; ++k) {
      kept.push_back(points[fastest + static_cast<std::size_t>(static_cast<double>(k) * stride)]);
    }
    return kept;
  }

  // Brings the model up to date with the measurements since the last choice: it holds every
  // measurement up to max_points, and past them a selection of max_points made afresh at
  // every choice.
  void update_model() {
    const std::size_t cap = options_.max_points;
    if (measured_.size() > cap) {
      // The model is this selection of these very measurements already (the guesses of
      // likely_next, made after the choice): a refit would make the same model and solve
      // every candidate again.
      if (lies_.empty() && selected_of_ == measured_.size() && selected_generation_ == generation_) return;
      refit(selection(measured_, cap), kFirstNugget);
      for (; modelled_ < measured_.size(); ++modelled_) {
        lies_.erase(measured_[modelled_].second);
        forget(measured_[modelled_].second);
      }
      std::vector<ConfigIndex> pending(lies_.begin(), lies_.end());
      std::sort(pending.begin(), pending.end());
      lies_.clear();
      for (ConfigIndex c : pending) lie_about(c);
      selected_of_ = measured_.size();
      selected_generation_ = generation_;
      return;
    }
    bool retarget = false;
    for (; modelled_ < measured_.size(); ++modelled_) {
      const auto point = measured_[modelled_];
      if (lies_.erase(point.second) > 0) {
        // In the model already, under a lie: its real cost takes the lie's place.
        for (auto& model_point : model_points_) {
          if (model_point.second == point.second) model_point.first = point.first;
        }
        retarget = true;
        forget(point.second);
        continue;
      }
      // Its v is mostly kept from the choice that proposed it.
      const std::uint32_t slot = slot_for(point.second);
      scored(slot);
      if (model_->append(kept_x_.data() + std::size_t{slot} * dims_, kept_[slot].v)) {
        model_points_.push_back(point);
        extend_targets();
      } else {
        std::vector<std::pair<double, ConfigIndex>> points = model_points_;
        points.push_back(point);
        refit(std::move(points), model_->nugget() * 10);
      }
      forget(point.second);
    }
    if (retarget) {
      targets_ = {};
      extend_targets();
      ++targets_version_;
    }
  }

  // Proposals kept pending on one device: with adaptive_batch, enough for the compiles to
  // keep up with the device (search::TestCosts::pipeline_depth), at most `batch`.
  std::size_t pipeline_depth() const {
    if (!options_.adaptive_batch) return options_.batch;
    return std::min<std::size_t>(options_.batch, test_costs_.pipeline_depth());
  }

  // The constant liar's cost: the fastest measured so far, their mean, or the slowest.
  double lie_value() const {
    if (options_.lie == Lie::Fastest || !std::isfinite(slowest_ok_)) return fastest_.first;
    if (options_.lie == Lie::Slowest) return slowest_ok_;
    double sum = 0;
    std::size_t n = 0;
    for (const auto& [cost, config] : measured_) {
      if (std::isfinite(cost)) sum += cost, ++n;
    }
    return sum / static_cast<double>(n);
  }

  // The constant liar: the pending configuration `c` joins the model with lie_value() as its
  // cost (left out when the kernel matrix would not stay positive definite).
  void lie_about(ConfigIndex c) {
    const std::uint32_t slot = slot_for(c);
    scored(slot);
    if (model_->append(kept_x_.data() + std::size_t{slot} * dims_, kept_[slot].v)) {
      model_points_.emplace_back(lie_value(), c);
      extend_targets();
      lies_.insert(c);
    }
    forget(c);
  }

  std::vector<ConfigIndex> most_promising(std::size_t count) {
    if (kept_doubles_ > kKeptLimit) forget_all();
    if (fit_scales_ && measured_.size() >= next_fit_) {
      fit_length_scales();
      next_fit_ = std::max<std::size_t>(next_fit_ + 1, next_fit_ * 3 / 2);
      forget_all();  // every kept feature vector and solve is of the old scales
      std::vector<std::pair<double, ConfigIndex>> points = model_points_;
      refit(std::move(points), kFirstNugget);
    }
    update_model();

    // Standardised targets: the kernel has unit variance. Failures take the slowest
    // successful runtime, so they read as bad without an outlier that would swamp the scale.
    const std::size_t n = model_points_.size();
    const double failed = std::isfinite(slowest_ok_) ? slowest_ok_ : 1.0;
    double mean = 0;
    for (const auto& [cost, c] : model_points_) mean += std::isfinite(cost) ? cost : failed;
    mean /= static_cast<double>(n);
    double variance = 0;
    double lowest = std::numeric_limits<double>::infinity();
    for (const auto& [cost, c] : model_points_) {
      const double y = std::isfinite(cost) ? cost : failed;
      variance += (y - mean) * (y - mean);
      lowest = std::min(lowest, y);
    }
    const double spread = std::sqrt(variance / static_cast<double>(n));
    const double scale = spread > 0 ? spread : 1.0;
    const double best = (lowest - mean) / scale;
    const double b = prior_factor(failed, mean, scale);
    // The unproven margin gives way to xi once xi_unproven_tests are measured.
    const double xi = options_.xi_unproven_tests > 0 && measured_.size() >= options_.xi_unproven_tests ? options_.xi : xi_;

    // Mean at c: k(X, c)^T K^-1 y = v . L^-1 y, L^-1 y = (ok + failed x failure - mean x one) / scale.
    // The `count` of highest expected improvement, ties to the lower index (candidates ascend).
    const std::vector<ConfigIndex>& pool = candidates(fastest_.second);
    std::vector<std::uint32_t> slots;
    slots.reserve(pool.size());
    for (ConfigIndex c : pool) slots.push_back(slot_for(c));
    solve_unsolved(slots);
    std::vector<std::pair<double, ConfigIndex>> ranked;
    for (std::size_t p = 0; p < pool.size(); ++p) {
      const ConfigIndex c = pool[p];
      const Kept& k = scored(slots[p]);
      // With a prior mean b p: b p(c) + k(X, c)^T K^-1 (y - b p(X)).
      const double mu = (k.ok + failed * k.failed - mean * k.one) / scale + (prior_.empty() ? 0.0 : b * (prior_[c] - k.prior));
      const double sigma = std::sqrt(std::max(0.0, 1.0 - k.explained));
      const double ei = expected_improvement(best - xi - mu, sigma);
      ranked.emplace_back(std::isnan(ei) ? 1.0 : -ei, c);
    }
    const std::size_t keep = std::min(count, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end());
    std::vector<ConfigIndex> chosen;
    for (std::size_t i = 0; i < keep; ++i) chosen.push_back(ranked[i].second);
    return chosen;
  }

  // Untested candidates, ascending: every one in a small space, else a random subset; plus the
  // untested Hamming neighbours of the fastest configuration, where improvement is most likely.
  const std::vector<ConfigIndex>& candidates(ConfigIndex best) {
    ++draw_;
    drawn_.clear();
    pool_.clear();
    // Every local_every-th choice is local: among the elite's neighbours and bred children
    // only, so that the fastest region is refined however uncertain the rest of the space.
    const bool local = local_choice();
    if (climb_choice() && climb_candidates()) return pool_;
    if (local) {
      // no random candidates
    } else if (space_->size() <= 4 * options_.candidates) {
      for (ConfigIndex c = 0; c < space_->size(); ++c) {
        if (!memory_.seen(c)) pool_.push_back(c);
      }
    } else {
      for (std::uint64_t attempt = 0;
           attempt < 4 * options_.candidates && pool_.size() < options_.candidates; ++attempt) {
        const ConfigIndex c = space_->sample(random_.engine());
        if (!memory_.seen(c) && newly_drawn(c)) pool_.push_back(c);
      }
    }
    const std::vector<std::pair<double, ConfigIndex>> fastest =
        options_.elite > 1 || options_.bred > 0 ? fastest_valid(std::max<std::uint64_t>(options_.elite, kParents))
                                                : std::vector<std::pair<double, ConfigIndex>>{};
    if (options_.elite > 1) {
      for (std::size_t e = 0; e < fastest.size() && e < options_.elite; ++e) {
        for (ConfigIndex c : space_->neighbours(fastest[e].second)) {
          if (!memory_.seen(c)) pool_.push_back(c);
        }
      }
    } else {
      for (ConfigIndex c : space_->neighbours(best)) {
        if (!memory_.seen(c)) pool_.push_back(c);
      }
    }
    // Two parameters at once reach what no one-parameter step toward it shows: a level
    // exchange of two, then a gain (gemm_full live, docs/searchers.md).
    const bool stalled = measured_.size() >= improved_at_ + options_.pair_moves_after;
    for (std::size_t e = 0; stalled && e < options_.pair_moves && (e < fastest.size() || e == 0); ++e) {
      const ConfigIndex centre = e < fastest.size() ? fastest[e].second : best;
      for (ConfigIndex c : space_->neighbours(centre, {Neighbourhood::Kind::Hamming, 2})) {
        if (!memory_.seen(c)) pool_.push_back(c);
      }
    }
    if (options_.bred > 0 && fastest.size() >= 2) {
      for (std::uint64_t k = 0; k < options_.bred; ++k) {
        const ConfigIndex child = breed(fastest);
        if (!memory_.seen(child)) pool_.push_back(child);
      }
    }
    for (ConfigIndex c : source_fastest_) {
      if (!memory_.seen(c)) pool_.push_back(c);
    }
    if (pool_.empty()) pool_.push_back(*memory_.random_unseen(*space_, random_));
    std::sort(pool_.begin(), pool_.end());
    pool_.erase(std::unique(pool_.begin(), pool_.end()), pool_.end());
    return pool_;
  }

  // Whether the choice being made (choices_) is local (local_every).
  bool local_choice() const {
    return options_.local_every > 0 && choices_ % options_.local_every == 0 && measured_.size() >= 2;
  }

  // Whether the choice being made is a local one that climbs (climb_after): the fastest has
  // stood for climb_after measurements.
  bool climb_choice() const {
    return options_.climb_after > 0 && local_choice() && std::isfinite(fastest_.first) &&
           measured_.size() >= improved_at_ + options_.climb_after;
  }

  // The candidates of a climbing choice: the untested neighbours of the climb's fastest, or,
  // between climbs, jumps from the fastest. False (pool_ empty) where there are none.
  bool climb_candidates() {
    if (climb_centre_) {
      for (ConfigIndex c : space_->neighbours(*climb_centre_)) {
        if (!memory_.seen(c)) pool_.push_back(c);
      }
    }
    if (pool_.empty() && options_.climb_exchanges) {
      for (ConfigIndex c : search::exchanges(*space_, fastest_.second)) {
        if (!memory_.seen(c)) pool_.push_back(c);
      }
    }
    if (pool_.empty()) {
      for (std::uint64_t j = 0; j < options_.climb_jumps; ++j) {
        const ConfigIndex c = search::displace(*space_, fastest_.second, 1.0, random_);
        if (!memory_.seen(c)) pool_.push_back(c);
      }
    }
    std::sort(pool_.begin(), pool_.end());
    pool_.erase(std::unique(pool_.begin(), pool_.end()), pool_.end());
    return !pool_.empty();
  }

  // Records a climbing choice: a step from the climb's fastest (one parameter away) or the
  // start of the next climb.
  void tag_climb(ConfigIndex chosen) {
    bool step = false;
    if (climb_centre_) {
      const ValueIndices from = space_->value_indices(*climb_centre_);
      const ValueIndices to = space_->value_indices(chosen);
      std::size_t differ = 0;
      for (std::size_t p = 0; p < from.size(); ++p) differ += from[p] != to[p] ? 1 : 0;
      step = differ == 1;
    }
    climb_pending_[chosen] = step;
  }

  // Moves the climb on with a measurement (before fastest_ takes it in).
  void follow_climb(const std::pair<double, ConfigIndex>& measured) {
    const auto tagged = climb_pending_.find(measured.second);
    if (measured < fastest_) {  // a new fastest: its neighbours are the elite's
      climb_centre_.reset();
      climb_misses_ = 0;
    } else if (tagged != climb_pending_.end()) {
      const bool step = tagged->second;
      if (!step || measured.first < climb_cost_) {
        climb_centre_ = std::isfinite(measured.first) ? std::optional<ConfigIndex>(measured.second) : std::nullopt;
        climb_cost_ = measured.first;
        climb_misses_ = 0;
      } else if (++climb_misses_ >= options_.climb_tries) {
        climb_centre_.reset();
        climb_misses_ = 0;
      }
    }
    if (tagged != climb_pending_.end()) climb_pending_.erase(tagged);
  }

  // The `count` fastest valid measurements, fastest first.
  std::vector<std::pair<double, ConfigIndex>> fastest_valid(std::size_t count) const {
    std::vector<std::pair<double, ConfigIndex>> out = measured_;
    const std::size_t keep = std::min(out.size(), count);
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end());
    out.resize(keep);
    while (!out.empty() && !std::isfinite(out.back().first)) out.pop_back();
    return out;
  }

  // A child of two of `parents` (fastest first, at least two), drawn by rank as the genetic
  // searcher draws them: uniform crossover, repaired toward the first parent, and one random
  // Hamming step with probability kMutation. Configurations near several fast ones are where
  // a model most often predicts improvement that a neighbour of one cannot reach.
  ConfigIndex breed(const std::vector<std::pair<double, ConfigIndex>>& parents) {
    const std::size_t n = parents.size();
    auto draw = [&] {
      const double x = 1.0 - std::pow(1.0 - random_.unit(), 1.0 / kParentBeta);  // Beta(1, kParentBeta)
      return std::min(n - 1, static_cast<std::size_t>(x * static_cast<double>(n)));
    };
    const std::size_t first = draw();
    std::size_t second = draw();
    if (second == first) second = (first + 1) % n;
    const ValueIndices anchor = space_->value_indices(parents[first].second);
    ValueIndices child = anchor;
    const ValueIndices other = space_->value_indices(parents[second].second);
    for (std::size_t d = 0; d < child.size(); ++d) {
      if (random_.chance(0.5)) child[d] = other[d];
    }
    ConfigIndex c = search::repair(*space_, child, anchor, random_);
    if (random_.chance(kMutation)) c = search::random_walk(*space_, c, 1, random_);
    return c;
  }

  // E[max(0, gain)] for a Gaussian gain with mean `gain` and standard deviation `sigma`.
  static double expected_improvement(double gain, double sigma) {
    if (sigma <= 1e-12) return std::max(0.0, gain);
    const double z = gain / sigma;
    const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
    const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
    return gain * cdf + sigma * pdf;
  }

  search::Random random_;
  BayesOptions options_;
  const Space* space_ = nullptr;
  std::size_t parameter_dims_ = 0;
  PredictedCounters predicted_;                // with a counter model
  std::optional<ConfigIndex> awaiting_profile_;  // the profiled design point, until it is observed
  std::size_t profiled_at_ = 0;                  // its place in initial_: after the source's fastest
  bool profile_started_ = false;                 // the profiled design point has been proposed
  std::vector<Explanation> explanations_;        // not yet taken
  std::vector<std::vector<float>> counter_features_;  // [counter][ConfigIndex], in [0, 1]
  double source_prior_ = 0;                     // source_prior, or 0 where the source covers too little
  std::vector<float> prior_;                    // the prior mean's shape per configuration (source_prior)
  std::optional<std::size_t> source_feature_at_;  // the source's runtime feature in counter_features_ (source_weight)
  std::vector<ConfigIndex> source_fastest_;     // the source's fastest, candidates (source_prior)
  std::vector<double> parameter_weights_;       // each parameter's feature range (unmodelled_weight)
  std::vector<ConfigIndex> design_pool_;        // where the design is drawn from (design_share); empty: anywhere
  std::vector<ConfigIndex> source_first_;       // the source's fastest, until design_stop has judged them
  double xi_ = 0.01;                            // expected improvement's margin now (xi, xi_unproven)
  std::size_t dims_ = 0;
  search::Memory memory_;
  std::vector<ConfigIndex> initial_;
  std::size_t next_initial_ = 0;
  std::uint64_t choices_ = 0;      // made by the model so far
  std::size_t next_fit_ = 0;       // measurements at which the length scales are fitted next
  std::vector<double> scale_;      // fitted factors per feature; empty before the first fit
  bool fit_scales_ = false;        // fit_length_scales, or fit_length_scales_unmodelled where it applies
  std::vector<std::pair<double, ConfigIndex>> measured_;  // (cost, configuration), as observed
  search::TestCosts test_costs_;                          // compile and device times seen
  std::pair<double, ConfigIndex> fastest_;                // the least of measured_
  std::size_t improved_at_ = 0;                           // measured_.size() when fastest_ last fell
  std::optional<ConfigIndex> climb_centre_;  // the climb's fastest (climb_after); unset between climbs
  double climb_cost_ = 0;                    // its cost
  std::uint64_t climb_misses_ = 0;           // its neighbours tested in a row, none faster (climb_tries)
  std::map<ConfigIndex, bool> climb_pending_;  // climbing choices not yet measured: a step (true) or a start
  double slowest_ok_ = -std::numeric_limits<double>::infinity();                                 // the slowest successful cost

  std::unique_ptr<IncrementalCholesky> model_;
  std::vector<std::pair<double, ConfigIndex>> model_points_;  // in the model's order
  Targets targets_;
  std::size_t modelled_ = 0;      // measured_[0 .. modelled_) have been offered to the model
  // Past max_points: how many measurements the model's selection was made of, by which refit.
  std::size_t selected_of_ = 0;
  std::uint64_t selected_generation_ = 0;
  std::uint64_t generation_ = 0;  // bumped by every refit, when all kept v go stale
  std::uint64_t targets_version_ = 0;    // bumped when a lie's real cost replaces it
  std::unordered_set<ConfigIndex> lies_;  // pending configurations in the model under a lie
  std::size_t devices_ = 1;               // tests at once (parallel())
  std::size_t threads_ = 1;               // threads solve_unsolved may use (use_threads())

  std::vector<Dense> dense_;  // per configuration, in spaces up to kDenseUpTo
  std::unordered_map<ConfigIndex, std::uint32_t> sparse_;  // configuration -> slot, in larger ones
  std::unordered_set<ConfigIndex> drawn_;                  // drawn for this choice, in larger ones
  std::uint32_t draw_ = 0;
  std::vector<Kept> kept_;
  std::vector<double> kept_x_;    // the features of kept_[s] at s x dims
  std::size_t kept_doubles_ = 0;  // in kept_[*].v

  std::vector<ConfigIndex> pool_;       // candidates of the current choice
  std::vector<std::uint32_t> indices_;  // scratch
  std::vector<double> x_, v_;           // scratch
};

}  // namespace

std::unique_ptr<Searcher> search::make_bayes(const SearcherOptions& options, BayesOptions bayes, bool with_model) {
  search::Settings settings(bayes.name, options.settings);
  // The source: the recording named by `source`, else (unless `source=none`) the one the
  // model was trained on, whose runtimes the model carries; not where a replay replays the
  // very measurements the model was trained on: they would be the answers.
  const std::string source = with_model ? settings.text("source") : std::string();
  if (with_model) bayes.counter_model = search::load_model_cached(options.model_path);
  if (!source.empty() && source != "none") {
    bayes.source = search::load_source_runtimes_cached(source);
  } else if (source.empty() && with_model) {
    bayes.source = search::model_source(options);
  }
  // The source's runtimes are a guess for time: under another objective its fastest is still
  // tested first (unprofiled; the reaction's profile is the next test), but its prior mean and
  // the smaller initial design, which lean on its runtimes, are off.
  const bool source_for_time = bayes.source && options.objective == "time";
  // Without a source the model's predicted work stands in for one, tuning for time.
  if (with_model) bayes.work_prior = settings.flag("work_prior", bayes.work_prior) && !bayes.source && options.objective == "time";
  const bool prior_for_time = source_for_time || bayes.work_prior;
  const std::uint64_t samples = !prior_for_time || bayes.initial_samples_with_source == 0
                                    ? bayes.initial_samples
                                    : bayes.initial_samples_with_source;
  bayes.initial_samples_without_prior = settings.integer("popsize", bayes.initial_samples, 1, 1'000'000);
  bayes.initial_samples = settings.integer("popsize", samples, 1, 1'000'000);
  bayes.latin_hypercube = settings.choice("samplingmethod", "lhs", {"lhs", "random"}) == "lhs";
  bayes.spread = settings.integer("spread", bayes.spread, 0, 1'000'000);
  bayes.candidates = settings.integer("candidates", bayes.candidates, 1, 10'000'000);
  bayes.max_points = settings.integer("max_points", bayes.max_points, 2, 5'000);
  const std::string covariance =
      settings.choice("covariancekernel", "matern32", {"matern32", "matern52", "rbf"});
  bayes.covariance = covariance == "matern32"   ? Covariance::Matern32
                     : covariance == "matern52" ? Covariance::Matern52
                                                : Covariance::Rbf;
  bayes.lengthscale = settings.number("covariancelengthscale", bayes.lengthscale, 1e-6, 1e6);
  bayes.xi = settings.number("xi", bayes.xi, 0, 1e6);
  bayes.batch = settings.integer("batch", bayes.batch, 1, 1'000'000);
  const std::string lie = settings.choice("lie", bayes.lie == Lie::Fastest ? "fastest" : bayes.lie == Lie::Mean ? "mean" : "slowest",
                                          {"fastest", "mean", "slowest"});
  bayes.lie = lie == "fastest" ? Lie::Fastest : lie == "mean" ? Lie::Mean : Lie::Slowest;
  bayes.adaptive_batch = settings.flag("adaptive_batch", bayes.adaptive_batch);
  bayes.log_targets = settings.flag("log", bayes.log_targets);
  bayes.elite = settings.integer("elite", bayes.elite, 1, 1'000'000);
  bayes.bred = settings.integer("bred", bayes.bred, 0, 1'000'000);
  bayes.local_every = settings.integer("local_every", bayes.local_every, 0, 1'000'000);
  bayes.pair_moves = settings.integer("pair_moves", bayes.pair_moves, 0, 1'000'000);
  bayes.pair_moves_after = settings.integer("pair_moves_after", bayes.pair_moves_after, 0, 1'000'000);
  bayes.climb_after = settings.integer("climb_after", bayes.climb_after, 0, 1'000'000);
  bayes.climb_tries = settings.integer("climb_tries", bayes.climb_tries, 1, 1'000'000);
  bayes.climb_jumps = settings.integer("climb_jumps", bayes.climb_jumps, 1, 1'000'000);
  bayes.climb_exchanges = settings.flag("climb_exchanges", bayes.climb_exchanges);
  bayes.fit_length_scales = settings.flag("ard", bayes.fit_length_scales);
  bayes.fit_from = settings.integer("ard_from", bayes.fit_from, 2, 1'000'000);
  if (with_model) bayes.fit_length_scales_unmodelled = settings.flag("ard_unmodelled", bayes.fit_length_scales_unmodelled);
  bayes.counter_weight = settings.number("counter_weight", bayes.counter_weight, 0, 1e6);
  bayes.parameter_weight = settings.number("parameter_weight", bayes.parameter_weight, 0, 1e6);
  if (with_model) {
    bayes.unmodelled_weight = settings.number("unmodelled_weight", bayes.unmodelled_weight, -1, 1e6);
    bayes.xi_unproven = settings.number("xi_unproven", bayes.xi_unproven, 0, 1e6);
    bayes.xi_unproven_tests = settings.integer("xi_unproven_tests", bayes.xi_unproven_tests, 0, 1'000'000);
    bayes.source_first = settings.integer("source_first", bayes.source_first, 0, 1'000'000);
    bayes.work_first = settings.integer("work_first", bayes.work_first, 0, 1'000'000);
    bayes.work_after_source = settings.integer("work_after_source", bayes.work_after_source, 0, 1'000'000);
    bayes.work_replaces_beaten_source = settings.flag("work_replaces_beaten_source", bayes.work_replaces_beaten_source);
    bayes.source_weight = settings.number("source_weight", bayes.source_weight, 0, 1e6);
    bayes.source_prior = settings.number("source_prior", prior_for_time ? bayes.source_prior : 0, 0, 1e6);
    bayes.source_candidates = settings.integer("source_candidates", bayes.source_candidates, 0, 1'000'000);
    bayes.source_coverage = settings.number("source_coverage", bayes.source_coverage, 0, 1);
    const std::uint64_t draws = options.objective == "time" ? bayes.reaction_draws : bayes.reaction_draws_not_time;
    bayes.reaction_draws = settings.integer("reaction_draws", draws, 0, 1'000'000);
    bayes.expert.compute_bound = settings.flag("compute_bound", false);
    bayes.design_stop = settings.flag("design_stop", bayes.design_stop);
    bayes.design_share = settings.number("design_share", bayes.design_share, 0.01, 1);
    bayes.prior_fades = settings.flag("prior_fades", bayes.prior_fades);
  }
  settings.finish();
  return std::make_unique<BayesSearcher>(options.seed, bayes);
}

std::unique_ptr<Searcher> make_bayes_searcher(const SearcherOptions& options) {
  return search::make_bayes(options, BayesOptions{}, false);
}

}  // namespace steer
