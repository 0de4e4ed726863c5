import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# Every array a pullback keeps only for its shape is a stand-in here, however small: a
# pullback that reads a stand-in's elements (NaN) fails the gradient checks of its rule.
import tapegrad.registry  # noqa: E402

tapegrad.registry.STAND_IN_BYTES = 0
