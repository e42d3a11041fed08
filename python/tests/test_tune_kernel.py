"""steer.tune_kernel: Kernel Tuner's interface, tuned on OpenCL (PoCL in CI)."""
import os

import numpy as np
import pytest

import steer
from steer import _steer
from steer._tune_kernel import _geometry


def test_results_and_env_as_kernel_tuner_returns_them(vector_add):
    name, source, size, arguments, answer = vector_add
    tune_params = {"block_size_x": [32, 64, 128, 256]}
    results, env = steer.tune_kernel(name, source, size, arguments, tune_params, answer=answer, quiet=True)
    assert [r["block_size_x"] for r in results] == [32, 64, 128, 256]
    for result in results:
        assert "__error__" not in result
        assert result["time"] > 0 and len(result["times"]) == 7          # iterations=7, as Kernel Tuner
        assert result["time"] == pytest.approx(np.median(result["times"]))
    assert env["best_config"]["time"] == min(r["time"] for r in results)
    assert env["searchspace_size"] == 4 and env["tests"] == 4
    assert env["device_name"] and env["backend"] == "opencl"
    assert env["argument_names"] == ["c", "a", "b", "n"]
    assert arguments[0].sum() == 0  # the caller's output array is left as it was


def test_a_wrong_answer_marks_the_configurations_invalid(vector_add):
    name, source, size, arguments, answer = vector_add
    answer[0] = answer[0] + 1
    results, env = steer.tune_kernel(name, source, size, arguments, {"block_size_x": [64, 128]}, answer=answer,
                                     quiet=True)
    assert [r["__error__"] for r in results] == ["InvalidOutput", "InvalidOutput"]
    assert "best_config" not in env


def test_the_grid_is_the_problem_size_divided_as_kernel_tuner_divides_it():
    params = {"block_size_x": [32], "block_size_y": [4], "tile": [3]}
    sizes, grid, block = _geometry((1000, 50), (["block_size_x", "tile"], None, None),
                                   ["block_size_x", "block_size_y", "block_size_z"], params)
    assert sizes == {"problem_size_x": 1000, "problem_size_y": 50}
    assert block == ["block_size_x", "block_size_y", "1"]
    space = steer.Space({"block_size_x": [32], "block_size_y": [4], "tile": [3]})
    assert len(space) == 1
    # Kernel Tuner: ceil(1000 / (32 * 3)) = 11, ceil(50 / 4) = 13; z: ceil(1 / 1).
    namespace = {"ceil": __import__("math").ceil, "int": int, **sizes, **space[0]}
    assert [eval(g, {}, namespace) for g in grid] == [11, 13, 1]
    # Without block_size_x among the parameters, Kernel Tuner's block is 256 wide and nothing divides.
    _, grid, block = _geometry(4096, (None, None, None), ["block_size_x", "block_size_y", "block_size_z"], {"N": [1]})
    assert block == ["256", "1", "1"] and grid[0] == "ceil(problem_size_x / (1))"
    # A problem size that is an expression of parameters is evaluated per configuration, as int().
    sizes, grid, _ = _geometry("block_size_x * 8", (None, None, None), ["block_size_x", "block_size_y", "block_size_z"],
                               {"block_size_x": [4]})
    assert sizes == {} and grid[0] == "ceil(int(block_size_x * 8) / (int(block_size_x)))"


def test_grid_divisors_and_defines_reach_the_kernel():
    source = """
    __kernel void fill(__global int *out) {
        int i = get_global_id(0);
        if (i < 1000) out[i] = grid_size_x * 1000 + block_size_x + kernel_tuner;
    }"""
    out = np.zeros(1000, dtype=np.int32)
    expected = np.full(1000, 4 * 1000 + 256 + 1, dtype=np.int32)
    # grid_div_x=["250"]: ceil(1000 / 250) = 4 work-groups of Kernel Tuner's default 256 work-items.
    results, env = steer.tune_kernel("fill", source, 1000, [out], {"unused": [1]}, grid_div_x=["250"],
                                     answer=[expected], quiet=True)
    assert results[0]["status"] == "ok", results[0]
    assert "-Dgrid_size_x=4" in env["compiler_options"]


def test_restrictions_in_kernel_tuners_forms(vector_add):
    name, source, size, arguments, answer = vector_add
    tune_params = {"block_size_x": [32, 64, 128, 256], "unroll": [1, 2]}
    results, env = steer.tune_kernel(name, source, size, arguments, tune_params,
                                     restrictions=["block_size_x * unroll <= 128", lambda p: p["unroll"] == 1],
                                     quiet=True)
    assert sorted((r["block_size_x"], r["unroll"]) for r in results) == [(32, 1), (64, 1), (128, 1)]


def test_a_faulty_restriction_names_its_place_and_shows_a_caret(vector_add):
    name, source, size, arguments, _ = vector_add
    with pytest.raises(steer.ExpressionError) as raised:
        steer.tune_kernel(name, source, size, arguments, {"block_size_x": [32, 64]},
                          restrictions=["block_size_x >= 32", "block_size_x %% 2 == 0"], quiet=True)
    message = str(raised.value)
    assert message.startswith("restrictions[1]: ")
    assert message.splitlines()[-1].strip() == "^"


def test_a_cache_keeps_every_test_and_a_second_run_resumes(vector_add, tmp_path):
    name, source, size, arguments, answer = vector_add
    tune_params = {"block_size_x": [32, 64, 128]}
    cache = tmp_path / "vector_add.json"
    first, env = steer.tune_kernel(name, source, size, arguments, tune_params, answer=answer, cache=str(cache),
                                   quiet=True)
    assert env["cache"] == str(tmp_path / "vector_add.db")
    second, env = steer.tune_kernel(name, source, size, arguments, tune_params, answer=answer, cache=str(cache),
                                    quiet=True)
    assert env["resumed"] == 3
    assert [r["time"] for r in second] == [r["time"] for r in first]
    store = steer.Store(tmp_path / "vector_add.db", read_only=True)
    assert len(store.results()) == 3
    assert "tune_params_keys" in store.export("kerneltuner")


def test_a_strategy_with_max_fevals(vector_add):
    name, source, size, arguments, _ = vector_add
    tune_params = {"block_size_x": [16, 32, 64, 128, 256], "x": [1, 2, 3]}
    results, env = steer.tune_kernel(name, source, size, arguments, tune_params, strategy="random_sample",
                                     strategy_options={"max_fevals": 4}, seed=3, quiet=True)
    assert len(results) == 4 and env["searcher"] == "random"
    with pytest.raises(ValueError, match="Unknown strategy"):
        steer.tune_kernel(name, source, size, arguments, tune_params, strategy="pso", quiet=True)


def test_metrics_and_a_metric_objective(vector_add):
    name, source, size, arguments, _ = vector_add
    metrics = {"GB/s": lambda p: 3 * 4 * size / 1e9 / (p["time"] / 1e3), "double": "2 * time"}
    results, env = steer.tune_kernel(name, source, size, arguments, {"block_size_x": [64, 256]}, metrics=metrics,
                                     objective="GB/s", objective_higher_is_better=True, quiet=True)
    assert all(r["double"] == pytest.approx(2 * r["time"]) for r in results)
    assert env["best_config"]["GB/s"] == max(r["GB/s"] for r in results)


def test_what_steer_does_not_do_is_said(vector_add):
    name, source, size, arguments, _ = vector_add
    with pytest.raises(NotImplementedError, match="verify"):
        steer.tune_kernel(name, source, size, arguments, {"block_size_x": [64]}, verify=lambda a, b: True, quiet=True)
    with pytest.raises(TypeError, match="numpy scalars"):
        steer.tune_kernel(name, source, size, arguments[:3] + [size], {"block_size_x": [64]}, quiet=True)
    with pytest.raises(TypeError, match="do not match"):
        steer.tune_kernel(name, source, size, arguments, {"block_size_x": [64]}, answer=[None], quiet=True)


def test_cuda_kernels_run_in_the_packaged_worker_or_say_why_not():
    # The package ships steer-worker; the Python interpreter is never started as a worker.
    worker = os.environ.get("STEER_WORKER", "")
    assert os.path.basename(worker) == "steer-worker" and os.access(worker, os.X_OK), worker
    source = "extern \"C\" __global__ void scale(float *x) { x[threadIdx.x + blockIdx.x * blockDim.x] *= 2.0f; }"
    x = np.ones(64, np.float32)
    try:
        results, _ = steer.tune_kernel("scale", source, 64, [x], {"block_size_x": [32, 64]},
                                       answer=[2 * x], quiet=True)
    except steer.BackendError as error:  # no GPU or no CUDA driver here: it says which
        assert "CUDA" in str(error) or "cuda" in str(error), str(error)
        assert "/proc/self/exe" not in str(error)
    else:
        assert [r["status"] for r in results] == ["ok", "ok"]


def test_kernel_source_from_a_file(tmp_path, vector_add):
    name, source, size, arguments, answer = vector_add
    file = tmp_path / "vector_add.cl"
    file.write_text(source)
    results, _ = steer.tune_kernel(name, str(file), size, arguments, {"block_size_x": [128]}, answer=answer,
                                   quiet=True)
    assert results[0]["status"] == "ok"
