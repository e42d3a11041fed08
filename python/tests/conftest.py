"""Shared pieces of the Python tests: the repository's files and a small OpenCL kernel."""
import pathlib
import signal

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

VECTOR_ADD = """
__kernel void vector_add(__global float *c, __global const float *a, __global const float *b, int n) {
    int i = get_global_id(0);
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""


@pytest.fixture
def ctrl_c():
    """Ctrl-C raises KeyboardInterrupt, as in a terminal or a notebook, even where the tests were
    started with SIGINT ignored (a background job of a non-interactive shell, some CI runners):
    Python then installs no handler of its own."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def vector_add():
    """Kernel Tuner's first example: (name, source, size, arguments, answer)."""
    size = 10000
    rng = np.random.default_rng(1)
    a = rng.standard_normal(size).astype(np.float32)
    b = rng.standard_normal(size).astype(np.float32)
    c = np.zeros_like(a)
    return "vector_add", VECTOR_ADD, size, [c, a, b, np.int32(size)], [a + b, None, None, None]


def recording(name):
    return str(ROOT / "data" / "recordings" / name)
