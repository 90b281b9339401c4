"""engine/checks.py: every check accepts good input and refuses bad input with a message naming
the argument."""
import numpy as np
import pytest

from attnrank_lite.engine import checks

# ---------------------------------------------------------------- gamma

def test_gamma_is_k_u_over_one_minus_k_u_rounded_up():
    u = 2.0 ** -53
    for k in (1, 10, 10**6):
        exact = k * u / (1 - k * u)
        assert exact <= checks.gamma(k) <= exact * (1 + 1e-11)
    assert checks.UNIT_ROUNDOFF == u


def test_gamma_refuses_k_u_at_one_half():
    with pytest.raises(ValueError, match="gamma"):
        checks.gamma(2**52)


# ---------------------------------------------------------------- scalars

@pytest.mark.parametrize("value", [0, 0.0, 3, 2.5, np.float32(1.5), np.int64(4), np.array(0.25)])
def test_finite_nonnegative_accepts_real_numbers(value):
    assert checks.finite_nonnegative("beta", value) == float(value)


@pytest.mark.parametrize("value,error", [
    (None, TypeError), (True, TypeError), (np.bool_(False), TypeError), (1 + 0j, TypeError),
    ("1.0", TypeError), (np.array([1.0, 2.0]), TypeError), ([1.0], TypeError),
    (np.nan, ValueError), (np.inf, ValueError), (-np.inf, ValueError), (-1e-300, ValueError),
])
def test_finite_nonnegative_refuses_and_names_the_argument(value, error):
    with pytest.raises(error, match="beta"):
        checks.finite_nonnegative("beta", value)


def test_eps_value_is_named_eps():
    assert checks.eps_value(0.25) == 0.25
    with pytest.raises(ValueError, match="eps"):
        checks.eps_value(-0.1)
    with pytest.raises(TypeError, match="eps"):
        checks.eps_value("0.25")


@pytest.mark.parametrize("value", [0, 3, np.int32(7)])
def test_count_value_accepts_integers(value):
    assert checks.count_value("rank", value) == int(value)


@pytest.mark.parametrize("value,error", [(2.0, TypeError), (True, TypeError), ("2", TypeError),
                                         (None, TypeError), (-1, ValueError)])
def test_count_value_refuses_and_names_the_argument(value, error):
    with pytest.raises(error, match="rank"):
        checks.count_value("rank", value)


def test_count_value_minimum():
    assert checks.count_value("degree", 2, minimum=2) == 2
    with pytest.raises(ValueError, match="degree"):
        checks.count_value("degree", 1, minimum=2)


# ---------------------------------------------------------------- arrays

def test_real_array_converts_integers_and_keeps_values():
    out = checks.real_array("L", [[1, 2], [3, 4]], ndim=2)
    assert out.dtype == np.float64 and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert np.isinf(checks.real_array("w", [0.0, -np.inf], finite=False)[1])


@pytest.mark.parametrize("value,error,words", [
    (np.array([1 + 1j]), TypeError, "complex"),
    (np.array(["a"]), TypeError, "numeric"),
    (np.array([np.nan]), ValueError, "finite"),
    (np.array([np.inf]), ValueError, "finite"),
    (np.ones(3), ValueError, "2-dimensional"),
])
def test_real_array_refuses_and_names_the_argument(value, error, words):
    with pytest.raises(error, match="factor L") as info:
        checks.real_array("factor L", value, ndim=None if words != "2-dimensional" else 2)
    assert words in str(info.value)


def test_real_array_without_finite_still_refuses_nan():
    with pytest.raises(ValueError, match="w.*NaN"):
        checks.real_array("w", [0.0, np.nan], finite=False)


def test_real_matrix_requires_two_dimensions():
    assert checks.real_matrix("A", np.eye(2)).shape == (2, 2)
    for bad in (np.ones(3), np.ones((1, 2, 2))):
        with pytest.raises(ValueError, match="A"):
            checks.real_matrix("A", bad)


def test_real_array_returns_a_plain_ndarray():
    class Sub(np.ndarray):
        pass

    out = checks.real_array("L", np.eye(2).view(Sub))
    assert type(out) is np.ndarray


# ---------------------------------------------------------------- indices

def test_index_array_accepts_distinct_indices_in_range():
    assert checks.index_array("rows", [2, 0, 1], 3).tolist() == [2, 0, 1]
    assert checks.index_array("rows", np.array([0, 0], dtype=np.uint8), 3, unique=False).tolist() == [0, 0]
    assert checks.index_array("rows", [], 3).size == 0


@pytest.mark.parametrize("value,words", [
    ([0.0, 1.0], "integer"), ([True, False], "integer"), ([[0, 1]], "1-D"), ([-1], "lie in"),
    ([3], "lie in"), ([0, 0], "repeat"), (np.zeros((0, 2), dtype=int), "1-D"),
])
def test_index_array_refuses_and_names_the_argument(value, words):
    with pytest.raises(ValueError, match="groups\\[2\\]") as info:
        checks.index_array("groups[2]", value, 3)
    assert words in str(info.value)


# ---------------------------------------------------------------- log-weights

def test_log_weights_accepts_minus_infinity():
    w = checks.log_weights([0.0, -np.inf, -2.0], 3)
    assert w.dtype == np.float64 and np.isneginf(w[1])


@pytest.mark.parametrize("value,m", [([0.0, 1.0], 3), (np.zeros((1, 3)), 3), ([0.0, np.inf, 0.0], 3),
                                     ([0.0, np.nan, 0.0], 3), ([0j, 0, 0], 3)])
def test_log_weights_refuses_and_names_the_argument(value, m):
    with pytest.raises((ValueError, TypeError), match="log_weights"):
        checks.log_weights(value, m)


# ---------------------------------------------------------------- parse_stored

def test_parse_stored_turns_malformed_data_into_none():
    def parser(x):
        return checks.index_array("rows", x, 3)

    assert checks.parse_stored(parser, [0, 1]).tolist() == [0, 1]
    for bad in ([5], [0.5], "x"):
        assert checks.parse_stored(parser, bad) is None


def test_parse_stored_does_not_swallow_other_errors():
    def broken():
        raise RuntimeError("a bug, not bad data")

    with pytest.raises(RuntimeError):
        checks.parse_stored(broken)
