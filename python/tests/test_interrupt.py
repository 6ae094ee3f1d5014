"""Ctrl-C during a blocking wait raises KeyboardInterrupt while the engine's work is still
pending (the wait runs Python's signal handlers between slices), and the work carries on."""
import os
import subprocess
import sys
import textwrap

import pytest

# Both children arm a thread that sends SIGINT once `started` is set (see below).
_ARM = textwrap.dedent("""
    sys.setswitchinterval(1000.0)
    started = threading.Event()

    def interrupt():
        started.wait()
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=interrupt)
    t.start()
""")

# The child pushes a chain of matmuls (x @ x == x for x = ones / n, so the result is known),
# then waits. With a huge switch interval Python never preempts the main thread, so the
# signalling thread (woken by `started`) takes the GIL only once the main thread releases it:
# inside the wait. Its SIGINT therefore arrives during the wait. `in_flight > 0` when the
# KeyboardInterrupt is caught shows it came before the work finished: a wait that ran the
# handlers only at its end would raise it with nothing in flight.
_CHILD = textwrap.dedent("""
    import os, signal, sys, threading
    from janus import np, npx, _janus

    WAIT = sys.argv[1]
    n = 1024
    x = np.ones((n, n)) / n
    npx.waitall()
""") + _ARM + textwrap.dedent("""
    y = x
    for _ in range(25):
        y = np.dot(y, x)
    started.set()
    try:
        if WAIT == "waitall":
            npx.waitall()
        elif WAIT == "asnumpy":
            y.asnumpy()
        else:
            y.wait_to_read()
        print("not interrupted")
        sys.exit(1)
    except KeyboardInterrupt:
        in_flight = _janus._engine_stats()["in_flight"]
    t.join()
    sys.setswitchinterval(0.005)
    value = y.asnumpy()  # the interrupted work kept running; this wait sees its result
    print("in_flight", in_flight, "value", float(value[0, 0]) * n, float(value.max()) * n)
""")


def run_interrupted(child, wait, env):
    """Runs a child, checks that its KeyboardInterrupt came with work in flight, and returns
    the words it printed ("in_flight", N, "value", ...)."""
    proc = subprocess.run([sys.executable, "-c", child, wait], capture_output=True, text=True,
                          env=dict(os.environ, JANUS_ENGINE="threaded", **env), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    words = proc.stdout.split()
    assert words[0] == "in_flight", proc.stdout
    assert int(words[1]) > 0, "KeyboardInterrupt came only after the work had finished"
    return words


@pytest.mark.parametrize("wait", ["waitall", "asnumpy", "wait_to_read"])
def test_ctrl_c_interrupts_a_wait_before_the_work_finishes(wait):
    words = run_interrupted(_CHILD, wait, {})
    assert float(words[3]) == pytest.approx(1.0) and float(words[4]) == pytest.approx(1.0)


# Waits inside C++ layers (ReleaseGilInterruptibly: the thread's engine waits poll for signals):
# Trainer.step blocked by back-pressure (JANUS_MAX_IN_FLIGHT=1: its first push waits for the
# matmul chain), a metric's get() and save_parameters, each waiting on a value that the chain
# computes. After the KeyboardInterrupt the same call runs again and gives the right result.
_CPP_CHILD = textwrap.dedent("""
    import os, signal, sys, tempfile, threading
    import numpy as onp
    import janus as mx
    from janus import np, npx, _janus, autograd, gluon
    from janus.gluon import nn

    WAIT = sys.argv[1]
    n = 1024
    x = np.ones((n, n)) / n
    net = nn.Dense(n, in_units=n, use_bias=False)
    net.initialize(mx.init.Constant(1.0 / n))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.0})
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    metric = gluon.metric.Accuracy()
    scratch = tempfile.TemporaryDirectory()  # removed when the child exits
    path = os.path.join(scratch.name, "net.params")
    npx.waitall()
""") + _ARM + textwrap.dedent("""
    y = x
    for _ in range(int(os.environ["CHAIN"])):
        y = np.dot(y, x)
    if WAIT == "metric":
        metric.update(np.zeros((n,), dtype="int32"), y)
    elif WAIT == "save_parameters":
        net.weight.set_data(y)

    def call():
        if WAIT == "trainer_step":
            trainer.step(1)
        elif WAIT == "metric":
            return metric.get()[1]
        else:
            net.save_parameters(path)

    started.set()
    try:
        call()
        print("not interrupted")
        sys.exit(1)
    except KeyboardInterrupt:
        in_flight = _janus._engine_stats()["in_flight"]
    t.join()
    sys.setswitchinterval(0.005)
    npx.waitall()
    value = call()  # the process is usable: the same call again
    if WAIT == "trainer_step":
        npx.waitall()
        value = float(net.weight.data().asnumpy().mean()) * n  # lr 0: unchanged
    elif WAIT == "save_parameters":
        net.load_parameters(path)
        value = float(net.weight.data().asnumpy().max()) * n  # the chain's ones / n
    print("in_flight", in_flight, "value", value)
""")


@pytest.mark.parametrize("wait", ["trainer_step", "metric", "save_parameters"])
def test_ctrl_c_interrupts_a_wait_inside_a_cpp_call(wait):
    env = {"CHAIN": "25"}
    if wait == "trainer_step":
        env.update(JANUS_MAX_IN_FLIGHT="1", CHAIN="4")
    words = run_interrupted(_CPP_CHILD, wait, env)
    # argmax of a row of equal scores is class 0, the label: accuracy 1.
    assert float(words[3]) == pytest.approx(1.0)
