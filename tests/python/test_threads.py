"""anatomy.set_num_threads and get_num_threads: the engine's CPU thread count, as torch's."""

import numpy as np
import pytest

import anatomy as A
import anatomy.nn.functional as F


@pytest.fixture(autouse=True)
def restore_threads():
    saved = A.get_num_threads()
    yield
    A.set_num_threads(saved)


def test_set_then_get():
    A.set_num_threads(3)
    assert A.get_num_threads() == 3
    A.set_num_threads(1)
    assert A.get_num_threads() == 1


@pytest.mark.parametrize("bad", [0, -2])
def test_a_count_below_one_is_a_value_error_and_changes_nothing(bad):
    A.set_num_threads(2)
    with pytest.raises(ValueError, match=f"set_num_threads: the thread count must be at least 1, got {bad}"):
        A.set_num_threads(bad)
    assert A.get_num_threads() == 2


def test_not_an_int_is_a_type_error():
    with pytest.raises(TypeError):
        A.set_num_threads(1.5)


def test_kernels_give_the_same_values_at_any_count():
    # A sum large enough to be split over the pool, and a convolution (oneDNN's OpenMP team
    # follows the count): same values with one thread and with three.
    rng = np.random.default_rng(7)
    x = A.tensor(rng.standard_normal((2, 8, 20, 20), dtype=np.float32))
    w = A.tensor(rng.standard_normal((4, 8, 3, 3), dtype=np.float32))
    big = A.tensor(rng.standard_normal(1 << 20, dtype=np.float32))
    results = []
    for n in (1, 3):
        A.set_num_threads(n)
        results.append((F.conv2d(x, w, None, 1, 1).numpy(), big.sum().item()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5, atol=1e-5)
    assert results[0][1] == pytest.approx(results[1][1], rel=1e-6)
