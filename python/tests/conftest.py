import pytest

import janus as mx


@pytest.fixture(autouse=True)
def _seed():
    mx.random.seed(0)
    yield
    mx.npx.waitall()
