"""Seed 002's "Hybrid Programming" (d2l.ai 12.1) with only the import changed: an MLP run
imperatively and hybridized, the HybridNet that prints only while it is traced, then export and
SymbolBlock.imports (the exported model runs without this code):

    python3 examples/python/hybrid_programming.py [--out /tmp/my_mlp]
"""
import argparse
import time

from janus import np, npx, gluon  # was: from mxnet import ...
from janus.gluon import nn

npx.set_np()


def get_net():
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation='relu'),
            nn.Dense(128, activation='relu'),
            nn.Dense(2))
    net.initialize()
    return net


class HybridNet(nn.HybridBlock):
    def __init__(self, **kwargs):
        super(HybridNet, self).__init__(**kwargs)
        self.hidden = nn.Dense(4)
        self.output = nn.Dense(2)

    def hybrid_forward(self, F, x):
        print('module F: ', F)
        print('value  x: ', x)
        x = F.npx.relu(self.hidden(x))
        print('result  : ', x)
        return self.output(x)


def timed(description, net, x, calls=1000):
    start = time.perf_counter()
    for _ in range(calls):
        net(x)
    npx.waitall()
    print(f'{description}: {time.perf_counter() - start:.4f} sec')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="/tmp/my_mlp", help="export prefix")
    args = parser.parse_args()

    x = np.random.normal(size=(1, 512))
    net = get_net()
    timed('Without hybridization', net, x)
    net.hybridize()
    timed('With hybridization', net, x)
    symbol_file, params_file = net.export(args.out)
    print('exported', symbol_file, params_file)
    back = gluon.SymbolBlock.imports(symbol_file, ['data'], params_file)
    print('imported model agrees:', bool(np.abs(back(x) - net(x)).max() < 1e-5))

    net = HybridNet()
    net.initialize()
    x = np.random.normal(size=(1, 3))
    print(net(x))   # imperative: prints the values
    net.hybridize()
    print(net(x))   # traced once: prints symbols
    print(net(x))   # the compiled graph: prints nothing


if __name__ == "__main__":
    main()
