"""Trains an MLP on Fashion-MNIST with the Gluon API, as d2l.ai's MXNet edition does
(chapter "Multilayer Perceptrons"), with only the import changed:

    python3 examples/python/train_mlp.py [--epochs 10] [--batch-size 256] [--lr 0.1] [--hybridize]

The data come from the Debian package dataset-fashion-mnist (read by Janus's C++ FashionMNIST,
the same reader as `janus train`). Each epoch prints the mean loss, train and test accuracy.
"""
import argparse
import time

from janus import autograd, gluon, init, np, npx  # was: from mxnet import ...
import janus as mx                                 # was: import mxnet as mx

npx.set_np()


def load_data_fashion_mnist(batch_size):
    trans = gluon.data.vision.transforms.ToTensor()
    train = gluon.data.vision.FashionMNIST(train=True).transform_first(trans)
    test = gluon.data.vision.FashionMNIST(train=False).transform_first(trans)
    return (gluon.data.DataLoader(train, batch_size, shuffle=True, num_workers=1),
            gluon.data.DataLoader(test, batch_size, shuffle=False))


def accuracy(y_hat, y):
    return float((y_hat.argmax(axis=1) == y.astype("int64")).sum())


def evaluate_accuracy(net, data_iter):
    correct, total = 0.0, 0
    for X, y in data_iter:
        correct += accuracy(net(X), y)
        total += y.size
    return correct / total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--hybridize", action="store_true")
    args = parser.parse_args()

    mx.random.seed(0)
    train_iter, test_iter = load_data_fashion_mnist(args.batch_size)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Flatten(), gluon.nn.Dense(256, activation="relu"), gluon.nn.Dense(10))
    net.initialize(init.Normal(sigma=0.01), ctx=mx.cpu())
    if args.hybridize:
        net.hybridize(static_alloc=True, static_shape=False)
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": args.lr})

    for epoch in range(args.epochs):
        start = time.time()
        loss_sum, correct, n = 0.0, 0.0, 0
        for X, y in train_iter:
            with autograd.record():
                y_hat = net(X)
                l = loss(y_hat, y)
            l.backward()
            trainer.step(X.shape[0])
            loss_sum += float(l.sum())
            correct += accuracy(y_hat, y)
            n += y.size
        test_acc = evaluate_accuracy(net, test_iter)
        print(f"epoch {epoch + 1}: loss {loss_sum / n:.3f}, train acc {correct / n:.3f}, "
              f"test acc {test_acc:.3f}, {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
