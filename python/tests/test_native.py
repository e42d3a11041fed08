"""Steer's own interface: the Tuner on numpy arrays and specs, Ctrl-C, recordings, simulation, store, models."""
import io
import os
import signal

import numpy as np
import pytest

import steer
from conftest import ROOT, VECTOR_ADD, recording
from steer._progress import Progress

SAXPY = """
__kernel void saxpy(int n, float a, __global const float *x, __global float *y) {
    for (int k = 0; k < ITEMS; k++) {
        int i = get_global_id(0) * ITEMS + k;
        if (i < n) y[i] = a * x[i] + y[i];
    }
}
"""


def saxpy_tuner(n=4096):
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    tuner = steer.Tuner("saxpy", SAXPY, lang="opencl", backend="opencl")
    tuner.parameter("BLOCK", [16, 32, 64]).parameter("ITEMS", "[1, 2, 4]").constraint("BLOCK * ITEMS <= 128")
    tuner.size("N", n).scalar("n", np.int32(n)).scalar("a", np.float32(2)).input("x", x).inout("y", y)
    tuner.launch(["cdiv(N, BLOCK * ITEMS)"], ["BLOCK"])
    return tuner, x, y


def test_a_tuner_runs_a_configuration_on_the_arrays_and_writes_them_back():
    tuner, x, y = saxpy_tuner()
    tuner.reference({"y": 2 * x + 1})
    assert len(tuner.space) == 8
    instance = tuner.instance({"BLOCK": 32, "ITEMS": 2})
    assert instance["grid"] == (64, 1, 1) and instance["block"] == (32, 1, 1)
    assert instance["defines"] == {"BLOCK": "32", "ITEMS": "2"}
    ran = tuner.run({"BLOCK": 32, "ITEMS": 2})
    assert ran["result"]["status"] == "ok"
    np.testing.assert_allclose(ran["outputs"]["y"], 2 * x + 1)
    np.testing.assert_allclose(y, 2 * x + 1)


def test_a_reference_in_python_sees_the_inputs_and_sizes():
    tuner, x, _ = saxpy_tuner()
    seen = {}

    def reference(inputs):
        seen.update(inputs)
        return {"y": inputs["a"] * inputs["x"] + inputs["y"]}

    summary = tuner.reference(reference).searcher("exhaustive").tune(progress=False)
    assert summary["tests"] == 8 and summary["valid"] == 8
    assert seen["N"] == 4096 and seen["n"] == 4096 and seen["a"] == 2
    np.testing.assert_array_equal(seen["x"], x)


def test_a_wrong_reference_fails_every_test():
    tuner, x, _ = saxpy_tuner()
    summary = tuner.reference({"y": 2 * x}).searcher("exhaustive").tune(progress=False)
    assert summary["valid"] == 0
    assert {r["status"] for r in summary["results"]} == {"invalid_output"}


def test_ctrl_c_stops_after_the_current_test_with_every_result_stored(tmp_path, ctrl_c):
    tuner, x, _ = saxpy_tuner()
    tuner.reference({"y": 2 * x + 1}).searcher("exhaustive").store(tmp_path / "r.db")
    tested = []

    def press_ctrl_c_at_the_third(result, progress):
        tested.append(result["key"])
        if len(tested) == 3:
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C (or Jupyter's interrupt) sends

    with pytest.raises(steer.Interrupted) as raised:
        tuner.tune(progress=False, on_test=press_ctrl_c_at_the_third)
    assert isinstance(raised.value, KeyboardInterrupt)
    assert [r["key"] for r in raised.value.results] == tested == tested[:3]
    stored = steer.Store(tmp_path / "r.db").results()
    assert [r["key"] for r in stored] == tested
    # The next run resumes: the three come from the store.
    summary = tuner.tune(progress=False)
    assert summary["resumed"] == 3 and summary["tests"] == 8


def test_tune_kernel_raises_interrupted_with_results_and_env(vector_add, ctrl_c):
    name, source, size, arguments, answer = vector_add

    def interrupt(result, progress):
        os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(steer.Interrupted) as raised:
        steer.tune_kernel(name, source, size, arguments, {"block_size_x": [32, 64, 128]}, answer=answer,
                          quiet=True, progress=interrupt)
    assert len(raised.value.results) == 1 and raised.value.env["interrupted"]


def test_an_exception_in_on_test_stops_tuning_and_propagates():
    tuner, _, _ = saxpy_tuner()

    def broken(result, progress):
        raise RuntimeError("from on_test")

    with pytest.raises(RuntimeError, match="from on_test"):
        tuner.tune(progress=False, on_test=broken)


def test_progress_prints_plain_lines_where_there_is_no_terminal():
    stream = io.StringIO()
    progress = Progress("gemm", stream=stream, interval_s=0)
    progress.bar = None  # the plain form, tqdm or not
    progress({}, {"tests": 1, "valid": 1, "planned": 4, "best_ms": 1.5, "best": {"A": 1}})
    progress.close()
    assert stream.getvalue().splitlines()[0] == "gemm: 1/4 tests, 1 valid, best 1.5 ms (A=1)"


def test_a_spec_tunes_from_python_as_steer_tune_does():
    tuner = steer.Tuner.from_spec(ROOT / "kernels" / "transpose" / "spec.json", size="small", backend="opencl")
    summary = tuner.searcher("random", seed=4).tune(tests=3, progress=False)
    assert summary["tests"] == 3 and summary["valid"] == 3
    assert summary["problem_size"] == "small"


def test_a_recording_replays_through_the_loop_with_python_called_per_test():
    data = steer.Recording.load(recording("ktt/coulomb_gtx1070.ktt.json.gz"))
    assert data.valid > 0 and len(data.space) == data.present
    runtimes = data.runtimes()
    assert np.nanmin(runtimes) == pytest.approx(data.best_runtime_ms)
    seen = []
    summary = steer.replay(data, "random", seed=1, tests=20, on_test=lambda r, p: seen.append(r["key"]))
    assert len(seen) == summary["tests"] == 20 and len(set(seen)) == 20


def test_simulate_gives_tests_to_target_and_the_performance_score(tmp_path):
    out = steer.simulate([recording("ktt/coulomb_gtx1070.ktt.json.gz")], ["random", "ils"], runs=20, score=True,
                         threads=1, json=tmp_path / "simulation.json")
    space = out["spaces"][0]
    assert [s["name"] for s in space["searchers"]][:2] == ["random", "ils"]
    assert space["searchers"][0]["runs"] == 20
    assert not np.isnan(space["searchers"][1]["score_fevals"])
    written = steer.report(tmp_path / "report", simulation=tmp_path / "simulation.json", plots=False)
    assert written > 0 and (tmp_path / "report" / "index.html").exists()


def test_counter_models_train_and_predict_a_space():
    model = steer.train_model(recording("ktt/coulomb_rtx2080.ktt.json.gz"), kind="tree")
    assert model.kind == "tree" and model.counters
    target = steer.Recording.load(recording("ktt/coulomb_gtx1070.ktt.json.gz"))
    predicted = model.predict(target.space)
    assert set(predicted) == set(model.counters)
    assert all(len(values) == len(target.space) for values in predicted.values())
    assert any(name == "DRAM_RT" for name, _, _ in steer.counters())


def test_a_model_saves_loads_and_measures_its_accuracy(tmp_path):
    data = recording("ktt/coulomb_rtx2080.ktt.json.gz")
    model = steer.train_model(data, kind="lsq")
    model.save(tmp_path / "model.json")
    loaded = steer.load_model(tmp_path / "model.json")
    assert loaded.counters == model.counters and loaded.provenance["rows"] > 0
    # the runtimes of every configuration that ran travel with it: guided's source
    assert loaded.provenance["recorded"] == steer.Recording.load(data).valid
    assert set(loaded.accuracy(data)) == set(model.counters)
    held_out = steer.held_out_accuracy(data, kind="tree", holdout=0.3)
    assert set(held_out) <= set(model.counters) and held_out


def test_a_store_gives_the_best_and_its_deployment(tmp_path):
    tuner, x, _ = saxpy_tuner()
    # Without the final check the answer is the best stored test (the check's re-measurements
    # are not stored, so with it the two may differ among tied configurations).
    tuner.reference({"y": 2 * x + 1}).searcher("exhaustive").store(tmp_path / "saxpy.db").options(final_check=0)
    summary = tuner.tune(progress=False)
    store = steer.Store(tmp_path / "saxpy.db", read_only=True)
    (tuning,) = store.tunings()
    assert tuning["spec_name"] == "saxpy" and tuning["tests"] == 8 and tuning["problem_size"] == "N=4096"
    (best,) = store.best("saxpy")
    assert best["best"]["configuration"] == summary["best"]["configuration"]
    assert '"saxpy"' in store.export_deployment("saxpy", "wisdom")
    assert store.export("csv").count("\n") == 9


def test_tests_far_slower_than_the_fastest_time_fewer_launches():
    # A cap of 0.001 x the fastest test's 5 launches is less than one launch: after the first
    # valid test every test times one; with the cap off, all five.
    for relative, later in ((0.001, 1), (0, 5)):
        tuner, x, _ = saxpy_tuner()
        tuner.reference({"y": 2 * x + 1}).searcher("exhaustive")
        tuner.options(repetitions=5, final_check=0, max_test_relative=relative)
        summary = tuner.tune(progress=False)
        assert [r["time"]["repetitions"] for r in summary["results"]] == [5] + [later] * 7
        assert summary["shortened"] == (7 if later == 1 else 0)


def test_large_outputs_are_judged_alike_on_the_device_and_on_the_host():
    # 4M floats, 16 MiB: compared on a GPU unless validate_on_device=False (on PoCL, whose device
    # is the host's cores, on the host either way). A reference off by one at element 5 fails
    # every configuration the same way.
    n = 1 << 22
    verdicts = []
    for on_device in (True, False):
        tuner, x, _ = saxpy_tuner(n)
        expected = 2 * x + 1
        expected[5] += 1
        tuner.reference({"y": expected}).searcher("exhaustive")
        tuner.options(repetitions=1, final_check=0, validate_on_device=on_device)
        summary = tuner.tune(progress=False)
        verdicts.append([(r["status"], r["message"]) for r in summary["results"]])
        assert not any("compared on the host" in w or "disagreed" in w for w in summary["warnings"])
    assert verdicts[0] == verdicts[1]
    assert all(status == "invalid_output" for status, _ in verdicts[0])
    assert "first at index 5" in verdicts[0][0][1]


def test_energy_objectives_and_the_pareto_front():
    assert steer.objective_name("weighted:0.5") == "weighted:0.5"
    with pytest.raises(steer.SteerError, match="weighted"):
        steer.objective_name("speed")
    assert steer.pareto_optimal([1.0, 2.0, 3.0], [3.0, 1.0, 2.0]) == [True, True, False]


def test_opencl_has_no_counters_and_says_so():
    tuner, x, _ = saxpy_tuner()
    tuner.reference({"y": 2 * x + 1}).options(counters=True)
    with pytest.raises(steer.SteerError):
        tuner.tune(tests=1, progress=False)
