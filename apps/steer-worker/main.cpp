// steer-worker: the process that runs kernels for the CUDA and OpenCL backends, one per
// device in use, started and replaced by the backend (src/backend/worker/process.hpp says
// why). It is not meant to be run by hand: it talks to its backend over descriptors the
// backend sets up.
#include <csignal>
#include <cstdio>
#include <cstring>

#include "backend/worker/serve.hpp"

int main(int argc, char** argv) {
  std::signal(SIGINT, SIG_IGN);  // first thing: Ctrl-C at the terminal is the tuner's (worker/serve.cpp)
  if (argc == 2 && std::strcmp(argv[1], "cuda") == 0) steer::worker::serve_cuda_worker();
  if (argc == 2 && std::strcmp(argv[1], "opencl") == 0) steer::worker::serve_opencl_worker();
  std::fputs("usage: steer-worker cuda|opencl\n"
             "Runs kernels for a Steer backend, which starts it; it is not run by hand.\n",
             stderr);
  return 2;
}
