"""examples/python/matmul.py, a Kernel Tuner script ported by its import, tunes on OpenCL."""
import importlib.util

from conftest import ROOT


def load_example():
    spec = importlib.util.spec_from_file_location("matmul_example", ROOT / "examples" / "python" / "matmul.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_ported_kernel_tuner_script_tunes_and_validates(tmp_path):
    example = load_example()
    assert "from steer import tune_kernel  # was: from kernel_tuner import tune_kernel" in \
        (ROOT / "examples" / "python" / "matmul.py").read_text()
    results, env = example.tune(size=128, fevals=8, cache=str(tmp_path / "matmul"), quiet=True)
    assert len(results) == 8
    valid = [r for r in results if "__error__" not in r]
    assert valid, [r.get("message") for r in results]
    assert all(r["GFLOP/s"] > 0 for r in valid)
    assert env["best_config"]["time"] == min(r["time"] for r in valid)
    assert env["searchspace_size"] < 3 * 5 * 3 * 3 * 3  # the restrictions removed some
