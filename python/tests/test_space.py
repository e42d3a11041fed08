"""steer.Space: parameters and restrictions as Kernel Tuner writes them, errors as the core says them."""
import pytest

import steer
from conftest import ROOT


def test_a_space_holds_the_configurations_its_restrictions_allow():
    space = steer.Space({"TILE": [8, 16, 32], "VEC": [1, 2, 4]}, ["TILE % VEC == 0", "TILE * VEC <= 64"])
    assert len(space) == 8
    assert space[0] == {"TILE": 8, "VEC": 1}
    assert space[-1] == {"TILE": 32, "VEC": 2}
    assert [c["TILE"] * c["VEC"] <= 64 for c in space] == [True] * 8
    assert space.index({"TILE": 16, "VEC": 4}) == space.index_of_key("TILE=16,VEC=4")
    assert space.index({"TILE": 32, "VEC": 4}) is None
    assert space.key(1) == "TILE=8,VEC=2"


def test_callables_take_kernel_tuners_forms():
    parameters = {"A": [1, 2, 3, 4], "B": [1, 2, 3, 4]}
    expected = len(steer.Space(parameters, ["A * B <= 6"]))
    assert len(steer.Space(parameters, lambda p: p["A"] * p["B"] <= 6)) == expected  # a dict of every value
    assert len(steer.Space(parameters, [lambda A, B: A * B <= 6])) == expected       # named arguments
    assert len(steer.Space(parameters, [(lambda x, y: x * y <= 6, ["A", "B"])])) == expected
    assert len(steer.Space(parameters, [lambda **p: p["A"] * p["B"] <= 6])) == expected
    with pytest.raises(TypeError, match="not tuning parameters"):
        steer.Space(parameters, [lambda A, C: True])


def test_an_exception_in_a_restriction_reaches_the_caller():
    def broken(A):
        raise ZeroDivisionError("in the restriction")
    with pytest.raises(ZeroDivisionError, match="in the restriction"):
        steer.Space({"A": [1, 2]}, [broken])


def test_a_faulty_expression_is_an_expression_error_with_a_caret():
    with pytest.raises(steer.ExpressionError) as raised:
        steer.Space({"A": [1, 2], "B": [1, 2]}, ["A < B", "A + * B > 1"])
    error = raised.value
    assert error.expression == "A + * B > 1"
    assert error.position == 4
    lines = str(error).splitlines()
    assert "constraints[1]" in lines[0]
    assert lines[-2].strip() == "A + * B > 1"
    assert lines[-1].index("^") - lines[-2].index("A") == 4
    assert isinstance(error, ValueError) and isinstance(error, steer.SteerError)


def test_a_space_without_a_valid_configuration_says_so():
    with pytest.raises(steer.SpaceError, match="no valid configuration"):
        steer.Space({"A": [1, 2]}, ["A > 2"])


def test_value_lists_as_expressions_and_numpy_values():
    import numpy as np
    space = steer.Space({"P": "[2**i for i in range(4)]", "Q": np.array([1, 3], dtype=np.int32)})
    assert space.parameters == {"P": [1, 2, 4, 8], "Q": [1, 3]}


def test_neighbours_sample_and_stats():
    space = steer.Space({"A": [1, 2, 3], "B": [1, 2, 3]})
    centre = space.index({"A": 2, "B": 2})
    assert len(space.neighbours(centre)) == 4
    assert len(space.neighbours(centre, kind="adjacent", distance=2)) == 8
    sample = space.sample(5, seed=3)
    assert len(set(sample)) == 5 and sample == space.sample(5, seed=3)
    assert space.stats["cross_product"] == 9


def test_a_spec_gives_its_space():
    spec = steer.load_spec(ROOT / "kernels" / "gemm_full" / "spec.json")
    assert len(spec.space()) == 205216
    assert spec.default_size in [size["name"] for size in spec.sizes]


def test_a_malformed_spec_names_the_json_path():
    with pytest.raises(steer.SpecError, match=r"parameters"):
        steer.parse_spec('{"name": "x", "parameters": {"A": []}}', "inline.json")


def test_a_searcher_driven_from_python_proposes_each_configuration_once():
    space = steer.Space({"A": [1, 2, 3, 4], "B": [1, 2]})
    searcher = steer.Searcher("random", seed=2)
    searcher.start(space)
    seen = []
    while True:
        proposals = searcher.propose(3)
        if not proposals:
            break
        for index, measure in proposals:
            assert measure["counters"] is False
            seen.append(index)
            searcher.observe(index, "ok", 1.0 + index)
    assert sorted(seen) == list(range(len(space)))
    assert "exhaustive" in dict(steer.searchers())
