"""Apache MXNet 1.9.1 exports (tests/fixtures/mxnet/) load with gluon.SymbolBlock.imports as in
MXNet, and give MXNet's outputs."""
import os

import numpy as onp
import pytest

import janus as mx
from janus import gluon, np
from janus.base import FormatError

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "mxnet")


@pytest.mark.parametrize("flavour,model", [("legacy", "lenet"), ("numpy", "blocks"),
                                           ("legacy", "symops"), ("legacy", "rnns")])
def test_symbolblock_imports_mxnet_exports(flavour, model):
    prefix = os.path.join(FIXTURES, flavour, model)
    net = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    x = np.array(onp.load(prefix + "-input.npy"))
    ys = net(x)
    ys = ys if isinstance(ys, (list, tuple)) else [ys]
    for k, y in enumerate(ys):
        expected = onp.load("%s-output%d.npy" % (prefix, k))
        onp.testing.assert_allclose(y.asnumpy(), expected, rtol=1e-5, atol=1e-7)


def test_unsupported_operator_is_a_format_error(tmp_path):
    path = str(tmp_path / "m-symbol.json")
    with open(path, "w") as f:
        f.write('{"nodes": [{"op": "null", "name": "data", "inputs": []}, '
                '{"op": "ROIPooling", "name": "roi", "inputs": [[0, 0, 0]]}], '
                '"arg_nodes": [0], "heads": [[1, 0, 0]]}')
    with pytest.raises(FormatError, match="node 'roi' uses the operator 'ROIPooling'"):
        gluon.SymbolBlock.imports(path, ["data"])
