// steer-limits: the hardware and library references Steer's best kernels are judged
// against ("Quality against the limits" in docs/performance.md). Measured on the device, one JSON
// object on standard output, progress on standard error:
//   copy       cudaMemcpyDeviceToDevice and a float4 copy kernel of --copy-bytes bytes
//              (transpose reads M*N floats and writes M*N floats: pass M*N*4; GB/s counts
//              bytes read + written, 2 x bytes)
//   sgemm      cublasSgemm at --sgemm M N K, in CUBLAS_DEFAULT_MATH and CUBLAS_PEDANTIC_MATH
//              (neither allows TF32; a spot check against a double host product would show
//              TF32's ~1e-3 relative error)
//   dgemm      cublasDgemm at --dgemm M N K, both math modes (on sm_90 cuBLAS runs DGEMM on
//              the FP64 tensor cores (DMMA), which the SIMT FP64 peak does not include)
//   fp32/fp64  FMA-throughput microbenchmarks, and the SIMT peaks 2 x units/SM x SMs x clock
//              at the attribute clock and at the SM clock NVML reads during the load
//   rsqrt      MUFU.RSQ throughput (the SFU bound of nbody and coulomb), for context
// Times: CUDA events around each launch, median of --reps launches after --warmup.
// cuBLAS and NVML are loaded with dlopen: without them those parts report null.
// A watchdog (--timeout seconds, default 240) ends the process should anything hang.
//
// Build (tools/limits/limits.sh does this, with -arch=native):
//   nvcc -O3 -std=c++17 -arch=sm_90 -o limits tools/limits/limits.cu -ldl
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// ---------------------------------------------------------------- output helpers
void log(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::fputs("limits: ", stderr);
  std::vfprintf(stderr, format, args);
  std::fputc('\n', stderr);
  va_end(args);
}

// Set once the output object exists: die() then still prints what was measured so far,
// with the error, as the one JSON object on standard output.
void (*g_print_partial)(const char* error) = nullptr;

[[noreturn]] void die(const char* format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  std::fprintf(stderr, "limits: error: %s\n", message);
  if (g_print_partial) g_print_partial(message);
  std::exit(2);
}

#define CUDA_CHECK(call)                                                                          \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) die("%s failed: %s (%s:%d)", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
  } while (0)

std::string json_number(double v, int precision = 6) {
  if (!std::isfinite(v)) return "null";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", precision, v);
  return buffer;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + '"';
}

// A tiny JSON object writer: fields in order, nested objects as pre-rendered strings.
struct Obj {
  std::string body;
  Obj& raw(const char* key, const std::string& value) {
    if (!body.empty()) body += ',';
    body += json_string(key) + ':' + value;
    return *this;
  }
  Obj& num(const char* key, double v, int precision = 6) { return raw(key, json_number(v, precision)); }
  Obj& integer(const char* key, long long v) { return raw(key, std::to_string(v)); }
  Obj& str(const char* key, const std::string& v) { return raw(key, json_string(v)); }
  Obj& boolean(const char* key, bool v) { return raw(key, v ? "true" : "false"); }
  std::string render() const { return '{' + body + '}'; }
};

// ---------------------------------------------------------------- NVML (dlopen)
struct Nvml {
  using Device = void*;
  int (*init)() = nullptr;
  int (*by_pci)(const char*, Device*) = nullptr;
  int (*by_index)(unsigned, Device*) = nullptr;
  int (*clock)(Device, int, unsigned*) = nullptr;
  int (*max_clock)(Device, int, unsigned*) = nullptr;
  int (*power)(Device, unsigned*) = nullptr;
  int (*reasons)(Device, unsigned long long*) = nullptr;
  int (*driver)(char*, unsigned) = nullptr;
  Device device = nullptr;
  bool ok = false;

  void open(int cuda_device) {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("/usr/local/nvidia/lib64/libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      log("NVML not found (%s): no clock readings during the loads", dlerror());
      return;
    }
    init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    by_pci = reinterpret_cast<int (*)(const char*, Device*)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    by_index = reinterpret_cast<int (*)(unsigned, Device*)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    clock = reinterpret_cast<int (*)(Device, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    max_clock = reinterpret_cast<int (*)(Device, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
    power = reinterpret_cast<int (*)(Device, unsigned*)>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
    reasons = reinterpret_cast<int (*)(Device, unsigned long long*)>(dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!reasons)
      reasons = reinterpret_cast<int (*)(Device, unsigned long long*)>(dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    driver = reinterpret_cast<int (*)(char*, unsigned)>(dlsym(lib, "nvmlSystemGetDriverVersion"));
    if (!init || !clock || (!by_pci && !by_index) || init() != 0) {
      log("NVML present but unusable: no clock readings during the loads");
      return;
    }
    char bus[32] = {};
    bool found = false;
    if (by_pci && cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) == cudaSuccess) found = by_pci(bus, &device) == 0;
    if (!found && by_index) found = by_index(static_cast<unsigned>(cuda_device), &device) == 0;
    ok = found;
    if (!ok) log("NVML: no handle for the CUDA device");
  }
  double sm_mhz() const {
    unsigned v = 0;
    return ok && clock(device, 1 /*NVML_CLOCK_SM*/, &v) == 0 ? v : NAN;
  }
  double mem_mhz() const {
    unsigned v = 0;
    return ok && clock(device, 2 /*NVML_CLOCK_MEM*/, &v) == 0 ? v : NAN;
  }
  double max_sm_mhz() const {
    unsigned v = 0;
    return ok && max_clock && max_clock(device, 1, &v) == 0 ? v : NAN;
  }
  double max_mem_mhz() const {
    unsigned v = 0;
    return ok && max_clock && max_clock(device, 2, &v) == 0 ? v : NAN;
  }
  double watts() const {
    unsigned v = 0;
    return ok && power && power(device, &v) == 0 ? v / 1000.0 : NAN;
  }
  unsigned long long clock_reasons() const {
    unsigned long long v = 0;
    return ok && reasons && reasons(device, &v) == 0 ? v : 0;
  }
  std::string driver_version() const {
    char buffer[96] = {};
    return ok && driver && driver(buffer, sizeof buffer) == 0 ? buffer : "";
  }
};

Nvml nvml;

// --dry-run: no CUDA call at all; made-up timings go through the same code paths and
// JSON writer, so that the output's shape can be checked on a machine without a GPU.
bool g_dry = false;

double fake_ms(const char* what) {
  const std::string w = what;
  if (w.find("memcpy") != std::string::npos) return 2.05;
  if (w.find("copy kernel") != std::string::npos) return 2.0;
  if (w.find("FP32 FMA") != std::string::npos) return 4.4;
  if (w.find("FP64 FMA") != std::string::npos) return 2.2;
  if (w.find("rsqrt") != std::string::npos) return 2.2;
  if (w.find("sgemm") != std::string::npos) return w.find("pedantic") != std::string::npos ? 2.75 : 2.7;
  if (w.find("dgemm") != std::string::npos) return w.find("pedantic") != std::string::npos ? 2.3 : 2.25;
  return 1.0;
}

// ---------------------------------------------------------------- timing
struct Stats {
  double median_ms = NAN, min_ms = NAN, max_ms = NAN;
  int reps = 0;
  double sm_mhz = NAN;   // median of the NVML samples taken while the timed launches ran
  double watts = NAN;    // likewise
  unsigned long long clock_reasons = 0;  // OR of the clock-event reasons seen
  int samples = 0;
};

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Each launch between its own pair of events; while the queue drains, NVML is sampled
// every ~5 ms (the first 20 % of the run skipped while clocks settle).
template <class Launch>
Stats time_launches(const char* what, Launch launch, int warmup, int reps) {
  if (g_dry) {
    Stats s;
    s.reps = reps;
    s.median_ms = fake_ms(what);
    s.min_ms = 0.99 * s.median_ms;
    s.max_ms = 1.02 * s.median_ms;
    s.sm_mhz = 1980;
    s.watts = 500;
    s.samples = 10;
    log("%-22s median %9.4f ms (dry run)", what, s.median_ms);
    return s;
  }
  for (int i = 0; i < warmup; ++i) launch();
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> start(reps), stop(reps);
  for (int i = 0; i < reps; ++i) {
    CUDA_CHECK(cudaEventCreate(&start[i]));
    CUDA_CHECK(cudaEventCreate(&stop[i]));
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) {
    CUDA_CHECK(cudaEventRecord(start[i]));
    launch();
    CUDA_CHECK(cudaEventRecord(stop[i]));
  }
  CUDA_CHECK(cudaGetLastError());
  std::vector<double> clocks, watts;
  unsigned long long reasons = 0;
  while (cudaEventQuery(stop[reps - 1]) == cudaErrorNotReady) {
    if (cudaEventQuery(stop[std::max(0, reps / 5 - 1)]) == cudaSuccess && nvml.ok) {
      clocks.push_back(nvml.sm_mhz());
      watts.push_back(nvml.watts());
      reasons |= nvml.clock_reasons();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<double> ms(reps);
  for (int i = 0; i < reps; ++i) {
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, start[i], stop[i]));
    ms[i] = t;
    cudaEventDestroy(start[i]);
    cudaEventDestroy(stop[i]);
  }
  Stats s;
  s.reps = reps;
  s.median_ms = median(ms);
  s.min_ms = *std::min_element(ms.begin(), ms.end());
  s.max_ms = *std::max_element(ms.begin(), ms.end());
  clocks.erase(std::remove_if(clocks.begin(), clocks.end(), [](double v) { return !std::isfinite(v); }), clocks.end());
  watts.erase(std::remove_if(watts.begin(), watts.end(), [](double v) { return !std::isfinite(v); }), watts.end());
  s.sm_mhz = median(clocks);
  s.watts = median(watts);
  s.samples = static_cast<int>(clocks.size());
  s.clock_reasons = reasons;
  log("%-22s median %9.4f ms  min %9.4f  max %9.4f  (%d launches, %.2f s; SM %s MHz, %s W, %d samples)", what,
      s.median_ms, s.min_ms, s.max_ms, reps, wall, json_number(s.sm_mhz, 5).c_str(), json_number(s.watts, 4).c_str(),
      s.samples);
  return s;
}

Obj stats_obj(const Stats& s) {
  Obj o;
  o.num("median_ms", s.median_ms).num("min_ms", s.min_ms).num("max_ms", s.max_ms).integer("reps", s.reps);
  o.num("sm_clock_mhz", s.sm_mhz).num("power_w", s.watts).integer("nvml_samples", s.samples);
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", s.clock_reasons);
  o.str("clock_event_reasons", hex);
  return o;
}

// ---------------------------------------------------------------- kernels
__global__ void copy_float4(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

constexpr int kChains = 8;   // independent FMA chains per thread
constexpr int kUnroll = 16;  // FMAs per chain per loop iteration

template <class T>
__global__ void fma_throughput(T* out, int iterations, T a, T b) {
  T x[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = static_cast<T>(threadIdx.x + c) * static_cast<T>(1e-3);
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int c = 0; c < kChains; ++c) x[c] = fma(x[c], a, b);
    }
  }
  T sum = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) sum += x[c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

__global__ void rsqrt_throughput(float* out, int iterations, float a) {
  float x[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = 1.0f + static_cast<float>(threadIdx.x + c) * 1e-3f;
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int c = 0; c < kChains; ++c) x[c] = rsqrtf(x[c]) * a;  // MUFU.RSQ + FMUL
    }
  }
  float sum = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) sum += x[c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

__global__ void fill(float* p, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = static_cast<float>(h & 0xffff) / 65536.0f - 0.5f;
  }
}
__global__ void fill(double* p, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = static_cast<double>(h & 0xffff) / 65536.0 - 0.5;
  }
}

// ---------------------------------------------------------------- cuBLAS (dlopen)
struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasGetVersion_v2) version = nullptr;
  decltype(&cublasSetMathMode) set_math = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasDgemm_v2) dgemm = nullptr;
  cublasHandle_t handle = nullptr;
  std::string path;
  int version_number = 0;

  bool open() {
    const char* candidates[] = {"libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13",
                                "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcublas.so.13",
                                "/usr/local/cuda/targets/x86_64-linux/lib/libcublas.so.13", "libcublas.so"};
    void* lib = nullptr;
    for (const char* c : candidates) {
      lib = dlopen(c, RTLD_NOW | RTLD_LOCAL);
      if (lib) {
        path = c;
        break;
      }
      log("dlopen %s: %s", c, dlerror());
    }
    if (!lib) return false;
    create = reinterpret_cast<decltype(create)>(dlsym(lib, "cublasCreate_v2"));
    destroy = reinterpret_cast<decltype(destroy)>(dlsym(lib, "cublasDestroy_v2"));
    version = reinterpret_cast<decltype(version)>(dlsym(lib, "cublasGetVersion_v2"));
    set_math = reinterpret_cast<decltype(set_math)>(dlsym(lib, "cublasSetMathMode"));
    sgemm = reinterpret_cast<decltype(sgemm)>(dlsym(lib, "cublasSgemm_v2"));
    dgemm = reinterpret_cast<decltype(dgemm)>(dlsym(lib, "cublasDgemm_v2"));
    if (!create || !destroy || !set_math || !sgemm || !dgemm) {
      log("cuBLAS at %s lacks a needed symbol", path.c_str());
      return false;
    }
    if (create(&handle) != CUBLAS_STATUS_SUCCESS) {
      log("cublasCreate failed");
      return false;
    }
    if (version) version(handle, &version_number);
    return true;
  }
};

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) die("%s failed: cuBLAS status %d", what, static_cast<int>(s));
}

// Host spot check of C = alpha A B + beta C0 (column-major, no transposes) at 16 entries
// against a double product; returns the largest error scaled by the root of the sum of the
// squared terms, sqrt(sum (alpha a b)^2 + (beta c0)^2). With random inputs that is about
// 1e-5..3e-4 per entry when the inputs are rounded to TF32, and below ~3e-6 for FP32 arithmetic
// (u sqrt(K) at K = 4096, less with cuBLAS's blocked sums).
template <class T>
double spot_check(const T* dA, const T* dB, const T* dC, const T* dC0, int m, int n, int k, T alpha, T beta) {
  const int probes = 16;
  double worst = 0;
  std::vector<T> row(k), col(k);
  for (int p = 0; p < probes; ++p) {
    const int i = static_cast<int>((p * 2654435761u + 7u) % static_cast<unsigned>(m));
    const int j = static_cast<int>((p * 40503u + 11u) % static_cast<unsigned>(n));
    // row i of A: stride m; column j of B: contiguous.
    CUDA_CHECK(cudaMemcpy2D(row.data(), sizeof(T), dA + i, sizeof(T) * static_cast<std::size_t>(m), sizeof(T), k,
                            cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(col.data(), dB + static_cast<std::size_t>(j) * k, sizeof(T) * k, cudaMemcpyDeviceToHost));
    T c = 0, c0 = 0;
    CUDA_CHECK(cudaMemcpy(&c, dC + static_cast<std::size_t>(j) * m + i, sizeof(T), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&c0, dC0 + static_cast<std::size_t>(j) * m + i, sizeof(T), cudaMemcpyDeviceToHost));
    double exact = 0, squares = 0;
    for (int q = 0; q < k; ++q) {
      const double term = static_cast<double>(row[q]) * static_cast<double>(col[q]);
      exact += term;
      squares += term * term;
    }
    const double a = alpha, b = beta, c0d = static_cast<double>(c0);
    exact = a * exact + b * c0d;
    const double scale = std::sqrt(a * a * squares + b * b * c0d * c0d);
    worst = std::max(worst, std::fabs(static_cast<double>(c) - exact) / std::max(scale, 1e-300));
  }
  return worst;
}

template <class T>
std::string gemm_section(Cublas& blas, int m, int n, int k, int warmup, int reps) {
  const bool fp32 = sizeof(T) == 4;
  const char* name = fp32 ? "sgemm" : "dgemm";
  const std::size_t a_n = static_cast<std::size_t>(m) * k, b_n = static_cast<std::size_t>(k) * n,
                    c_n = static_cast<std::size_t>(m) * n;
  T *A = nullptr, *B = nullptr, *C = nullptr, *C0 = nullptr;
  if (!g_dry) {
    CUDA_CHECK(cudaMalloc(&A, a_n * sizeof(T)));
    CUDA_CHECK(cudaMalloc(&B, b_n * sizeof(T)));
    CUDA_CHECK(cudaMalloc(&C, c_n * sizeof(T)));
    CUDA_CHECK(cudaMalloc(&C0, c_n * sizeof(T)));
    fill<<<1024, 256>>>(A, a_n, 1u);
    fill<<<1024, 256>>>(B, b_n, 2u);
    fill<<<1024, 256>>>(C0, c_n, 3u);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(C, C0, c_n * sizeof(T), cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  const T alpha = static_cast<T>(1.5), beta = static_cast<T>(-0.5);
  const double flops = 2.0 * m * n * k;
  Obj section;
  section.integer("m", m).integer("n", n).integer("k", k).num("flops", flops, 12);
  section.str("layout", "column-major, CUBLAS_OP_N x CUBLAS_OP_N, alpha 1.5, beta -0.5");
  struct Mode {
    const char* key;
    cublasMath_t mode;
  } modes[] = {{"default", CUBLAS_DEFAULT_MATH}, {"pedantic", CUBLAS_PEDANTIC_MATH}};
  double best_default = NAN;
  for (const Mode& mode : modes) {
    if (!g_dry) check_cublas(blas.set_math(blas.handle, mode.mode), "cublasSetMathMode");
    auto launch = [&] {
      // Timed launches update C in place (C = 1.5 AB - 0.5 C stays bounded): the same work
      // every time; the spot check below starts again from C0.
      cublasStatus_t s;
      if constexpr (sizeof(T) == 4)
        s = blas.sgemm(blas.handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, m, B, k, &beta, C, m);
      else
        s = blas.dgemm(blas.handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, m, B, k, &beta, C, m);
      check_cublas(s, name);
    };
    std::string label = std::string(name) + " " + mode.key;
    Stats s = time_launches(label.c_str(), launch, warmup, reps);
    // Spot check one fresh product.
    double err = fp32 ? 1e-6 : 1e-15;
    if (!g_dry) {
      CUDA_CHECK(cudaMemcpy(C, C0, c_n * sizeof(T), cudaMemcpyDeviceToDevice));
      launch();
      CUDA_CHECK(cudaDeviceSynchronize());
      err = spot_check<T>(A, B, C, C0, m, n, k, alpha, beta);
    }
    const double gflops = flops / (s.median_ms * 1e-3) / 1e9;
    log("%-22s %.1f GFLOP/s, spot-check max scaled error %.2e", label.c_str(), gflops, err);
    Obj o = stats_obj(s);
    o.num("gflops", gflops).num("spot_check_max_scaled_error", err, 3);
    if (fp32) o.boolean("tf32_suspected", err > 2e-5);
    section.raw(mode.key, o.render());
    if (mode.mode == CUBLAS_DEFAULT_MATH) best_default = s.median_ms;
  }
  if (!g_dry) check_cublas(blas.set_math(blas.handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  section.num("reference_ms", best_default);
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  cudaFree(C0);
  return section.render();
}

struct Args {
  std::size_t copy_bytes = std::size_t(32768) * 32768 * 4;
  int sgemm[3] = {4096, 4096, 4096};
  int dgemm[3] = {4096, 4096, 4096};
  int reps = 30, warmup = 3, device = 0, timeout_s = 240;
  bool cublas = true;
  bool dry = false;
};

void usage() {
  std::fprintf(stderr,
               "usage: limits [--copy-bytes B] [--sgemm M N K] [--dgemm M N K] [--reps N] [--warmup N]\n"
               "              [--device N] [--timeout S] [--no-cublas] [--dry-run]\n");
  std::exit(64);
}

long long parse_int(const char* s) {
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  if (!end || *end || v <= 0) die("bad number '%s'", s);
  return v;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string opt = argv[i];
    auto need = [&](int count) {
      if (i + count >= argc) usage();
    };
    if (opt == "--copy-bytes") {
      need(1);
      a.copy_bytes = static_cast<std::size_t>(parse_int(argv[++i]));
    } else if (opt == "--sgemm" || opt == "--dgemm") {
      need(3);
      int* dst = opt == "--sgemm" ? a.sgemm : a.dgemm;
      for (int d = 0; d < 3; ++d) dst[d] = static_cast<int>(parse_int(argv[++i]));
    } else if (opt == "--reps") {
      need(1);
      a.reps = static_cast<int>(parse_int(argv[++i]));
    } else if (opt == "--warmup") {
      need(1);
      a.warmup = static_cast<int>(parse_int(argv[++i]));
    } else if (opt == "--device") {
      need(1);
      a.device = static_cast<int>(std::strtol(argv[++i], nullptr, 10));
    } else if (opt == "--timeout") {
      need(1);
      a.timeout_s = static_cast<int>(parse_int(argv[++i]));
    } else if (opt == "--no-cublas") {
      a.cublas = false;
    } else if (opt == "--dry-run") {
      a.dry = true;
    } else {
      usage();
    }
  }
  if (a.reps < 3) a.reps = 3;
  if (a.copy_bytes % 16) die("--copy-bytes must be a multiple of 16");
  return a;
}

void on_alarm(int) {
  const char msg[] = "limits: error: watchdog expired, giving up\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(124);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  std::signal(SIGALRM, on_alarm);
  alarm(static_cast<unsigned>(args.timeout_s));
  static Obj out;
  out.str("tool", "steer-limits").integer("version", 1);
  g_print_partial = [](const char* error) {
    Obj partial = out;
    partial.str("error", error);
    std::printf("%s\n", partial.render().c_str());
    std::fflush(stdout);
  };

  g_dry = args.dry;
  cudaDeviceProp prop{};
  if (!g_dry) {
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    if (args.device >= count) die("device %d of %d", args.device, count);
    CUDA_CHECK(cudaSetDevice(args.device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, args.device));
  } else {
    std::snprintf(prop.name, sizeof prop.name, "dry run (made-up figures)");
    prop.totalGlobalMem = std::size_t(143771) << 20;
  }
  auto attr = [&](cudaDeviceAttr a) {
    if (g_dry) {  // an H200's values
      switch (a) {
        case cudaDevAttrMultiProcessorCount: return 132;
        case cudaDevAttrComputeCapabilityMajor: return 9;
        case cudaDevAttrComputeCapabilityMinor: return 0;
        case cudaDevAttrClockRate: return 1980000;
        case cudaDevAttrMemoryClockRate: return 3201000;
        case cudaDevAttrGlobalMemoryBusWidth: return 6144;
        default: return 0;
      }
    }
    int v = 0;
    return cudaDeviceGetAttribute(&v, a, args.device) == cudaSuccess ? v : 0;
  };
  const int sms = attr(cudaDevAttrMultiProcessorCount);
  const int cc_major = attr(cudaDevAttrComputeCapabilityMajor), cc_minor = attr(cudaDevAttrComputeCapabilityMinor);
  const double clock_attr_mhz = attr(cudaDevAttrClockRate) / 1000.0;
  const double mem_clock_attr_mhz = attr(cudaDevAttrMemoryClockRate) / 1000.0;
  const int bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
  int driver = 0, runtime = 0;
  if (!g_dry) {
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    nvml.open(args.device);
  }
  log("%s, sm_%d%d, %d SMs, clock attribute %.0f MHz, NVML max SM clock %s MHz, current %s MHz", prop.name, cc_major,
      cc_minor, sms, clock_attr_mhz, json_number(nvml.max_sm_mhz(), 5).c_str(), json_number(nvml.sm_mhz(), 5).c_str());
  // FP32 lanes per SM (FFMA per clock): 64 on sm_7x and sm_80 (V100, T4, A100), 128 on sm_86 and later, sm_90 included.
  const int fp32_per_sm = cc_major <= 7 || (cc_major == 8 && cc_minor == 0) ? 64 : 128;
  // FP64 SIMT units per SM: 64 on GH100/GA100 (sm_90, sm_80) and GV100; 2 on most others.
  const int fp64_per_sm = (cc_major == 9 && cc_minor == 0) || (cc_major == 8 && cc_minor == 0) ||
                          (cc_major == 7 && cc_minor == 0) ? 64 : 2;

  {
    Obj d;
    d.str("name", prop.name).str("compute_capability", std::to_string(cc_major) + "." + std::to_string(cc_minor));
    d.integer("sm_count", sms).num("clock_attribute_mhz", clock_attr_mhz).num("memory_clock_attribute_mhz", mem_clock_attr_mhz);
    d.integer("memory_bus_bits", bus_bits);
    // HBM: double data rate on the memory clock attribute.
    d.num("dram_theoretical_gbs", 2.0 * mem_clock_attr_mhz * 1e6 * bus_bits / 8 / 1e9);
    d.num("global_memory_gib", prop.totalGlobalMem / 1073741824.0, 5);
    d.integer("cuda_driver", driver).integer("cuda_runtime", runtime);
    d.str("nvml_driver", nvml.driver_version());
    d.num("nvml_max_sm_clock_mhz", nvml.max_sm_mhz()).num("nvml_max_mem_clock_mhz", nvml.max_mem_mhz());
    d.num("nvml_mem_clock_mhz", nvml.mem_mhz());
    d.num("nvml_idle_sm_clock_mhz", nvml.sm_mhz()).num("nvml_idle_power_w", nvml.watts());
    d.integer("fp32_lanes_per_sm", fp32_per_sm).integer("fp64_units_per_sm", fp64_per_sm);
    out.raw("device", d.render());
  }

  // ------------------------------------------------------------ copy
  {
    const std::size_t bytes = args.copy_bytes;
    float *src = nullptr, *dst = nullptr;
    if (!g_dry) {
      CUDA_CHECK(cudaMalloc(&src, bytes));
      CUDA_CHECK(cudaMalloc(&dst, bytes));
      fill<<<4096, 256>>>(src, bytes / 4, 5u);
      CUDA_CHECK(cudaMemset(dst, 0, bytes));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    const double moved = 2.0 * static_cast<double>(bytes);
    Stats memcpy_stats = time_launches(
        "memcpy D2D", [&] { CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); }, args.warmup,
        args.reps);
    // Verify the copy (a few words).
    if (!g_dry) {
      float a[4], b[4];
      const std::size_t at[4] = {0, bytes / 8, bytes / 4 - 2, bytes / 4 - 1};
      for (int i = 0; i < 4; ++i) {
        CUDA_CHECK(cudaMemcpy(&a[i], src + at[i], 4, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(&b[i], dst + at[i], 4, cudaMemcpyDeviceToHost));
        if (a[i] != b[i]) die("memcpy check failed at float %zu", at[i]);
      }
    }
    const std::size_t n4 = bytes / 16;
    const int copy_blocks = sms * 4;  // 4 x 512 threads: one full wave, grid-stride
    Stats kernel_stats = time_launches(
        "float4 copy kernel",
        [&] {
          copy_float4<<<copy_blocks, 512>>>(reinterpret_cast<const float4*>(src), reinterpret_cast<float4*>(dst), n4);
        },
        args.warmup, args.reps);
    if (!g_dry) CUDA_CHECK(cudaGetLastError());
    const double memcpy_gbs = moved / (memcpy_stats.median_ms * 1e-3) / 1e9;
    const double kernel_gbs = moved / (kernel_stats.median_ms * 1e-3) / 1e9;
    log("copy of %.3f GB: memcpy %.1f GB/s, kernel %.1f GB/s (read + written)", bytes / 1e9, memcpy_gbs, kernel_gbs);
    Obj c;
    c.num("bytes_per_buffer", static_cast<double>(bytes), 15).num("bytes_moved", moved, 15);
    c.raw("memcpy_d2d", stats_obj(memcpy_stats).num("gbs", memcpy_gbs).render());
    c.raw("copy_kernel", stats_obj(kernel_stats).num("gbs", kernel_gbs).integer("blocks", copy_blocks).integer("threads", 512).render());
    c.num("reference_gbs", memcpy_gbs).num("reference_ms", memcpy_stats.median_ms);
    c.num("dram_peak_estimate_gbs", std::max(memcpy_gbs, kernel_gbs));
    out.raw("copy", c.render());
    cudaFree(src);
    cudaFree(dst);
  }

  // ------------------------------------------------------------ FMA / SFU throughput
  {
    const int threads = 256, blocks = sms * 8;  // 2,048 threads per SM
    float* sink = nullptr;
    if (!g_dry) CUDA_CHECK(cudaMalloc(&sink, sizeof(double) * threads * blocks));
    const double lanes = static_cast<double>(threads) * blocks;
    const int iters32 = 4096, iters64 = 1024, iters_rsqrt = 256;
    Stats f32 = time_launches(
        "FP32 FMA throughput", [&] { fma_throughput<float><<<blocks, threads>>>(sink, iters32, 0.999999f, 1e-6f); },
        args.warmup, args.reps);
    Stats f64 = time_launches(
        "FP64 FMA throughput",
        [&] { fma_throughput<double><<<blocks, threads>>>(reinterpret_cast<double*>(sink), iters64, 0.999999, 1e-6); },
        args.warmup, args.reps);
    Stats rs = time_launches(
        "rsqrt (MUFU) throughput", [&] { rsqrt_throughput<<<blocks, threads>>>(sink, iters_rsqrt, 1.0000001f); },
        args.warmup, args.reps);
    if (!g_dry) CUDA_CHECK(cudaGetLastError());
    cudaFree(sink);
    const double f32_flops = 2.0 * kChains * kUnroll * static_cast<double>(iters32) * lanes;
    const double f64_flops = 2.0 * kChains * kUnroll * static_cast<double>(iters64) * lanes;
    const double rsqrts = static_cast<double>(kChains) * kUnroll * iters_rsqrt * lanes;
    const double f32_gflops = f32_flops / (f32.median_ms * 1e-3) / 1e9;
    const double f64_gflops = f64_flops / (f64.median_ms * 1e-3) / 1e9;
    const double rsqrt_g = rsqrts / (rs.median_ms * 1e-3) / 1e9;
    const double clock_max = std::isfinite(nvml.max_sm_mhz()) ? nvml.max_sm_mhz() : clock_attr_mhz;
    auto peak = [&](int per_sm, double mhz) { return 2.0 * per_sm * sms * mhz * 1e6 / 1e9; };
    Obj p32;
    p32.integer("lanes_per_sm", fp32_per_sm);
    p32.num("peak_gflops_at_clock_attribute", peak(fp32_per_sm, clock_attr_mhz));
    p32.num("peak_gflops_at_max_clock", peak(fp32_per_sm, clock_max));
    p32.num("peak_gflops_at_measured_clock", peak(fp32_per_sm, f32.sm_mhz));
    p32.raw("fma_benchmark", stats_obj(f32).num("gflops", f32_gflops).num("flops", f32_flops, 12).render());
    // The reference for nbody and coulomb: the datasheet-style peak at the maximum clock.
    p32.num("reference_gflops", peak(fp32_per_sm, clock_max));
    out.raw("fp32", p32.render());
    Obj p64;
    p64.integer("units_per_sm", fp64_per_sm);
    p64.num("simt_peak_gflops_at_clock_attribute", peak(fp64_per_sm, clock_attr_mhz));
    p64.num("simt_peak_gflops_at_max_clock", peak(fp64_per_sm, clock_max));
    p64.num("simt_peak_gflops_at_measured_clock", peak(fp64_per_sm, f64.sm_mhz));
    p64.raw("fma_benchmark", stats_obj(f64).num("gflops", f64_gflops).num("flops", f64_flops, 12).render());
    p64.num("reference_gflops", peak(fp64_per_sm, clock_max));
    out.raw("fp64", p64.render());
    Obj r;
    r.raw("benchmark", stats_obj(rs).num("g_rsqrt_per_s", rsqrt_g).render());
    r.num("bound_g_per_s_at_max_clock", 16.0 * sms * clock_max / 1e3);
    out.raw("rsqrt", r.render());
    log("FP32 FMA %.1f GFLOP/s (peak %.1f at %.0f MHz), FP64 FMA %.1f GFLOP/s, rsqrt %.1f G/s", f32_gflops,
        peak(fp32_per_sm, clock_max), clock_max, f64_gflops, rsqrt_g);
  }

  // ------------------------------------------------------------ cuBLAS
  Cublas blas;
  if (args.cublas && (g_dry || blas.open())) {
    log("cuBLAS %d from %s", blas.version_number, blas.path.c_str());
    Obj b;
    b.integer("version", blas.version_number).str("library", blas.path);
    out.raw("cublas", b.render());
    out.raw("sgemm", gemm_section<float>(blas, args.sgemm[0], args.sgemm[1], args.sgemm[2], args.warmup, args.reps));
    out.raw("dgemm", gemm_section<double>(blas, args.dgemm[0], args.dgemm[1], args.dgemm[2], args.warmup, args.reps));
    out.str("dgemm_note",
            "cuBLAS DGEMM on sm_90 runs on the FP64 tensor cores (DMMA, 2x the SIMT FP64 rate); the hand-written SIMT "
            "kernel is bounded by fp64.simt_peak_*");
    if (!g_dry) blas.destroy(blas.handle);
  } else {
    out.raw("cublas", "null").raw("sgemm", "null").raw("dgemm", "null");
  }
  out.num("nvml_sm_clock_after_mhz", nvml.sm_mhz());
  std::printf("%s\n", out.render().c_str());
  std::fflush(stdout);
  return 0;
}
