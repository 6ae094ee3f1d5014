"""Ctrl-C during a blocking wait raises KeyboardInterrupt while the engine's work is still
pending (the wait runs Python's signal handlers between slices), and the work carries on."""
import os
import subprocess
import sys
import textwrap

import pytest

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
    sys.setswitchinterval(1000.0)
    started = threading.Event()

    def interrupt():
        started.wait()
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=interrupt)
    t.start()
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


@pytest.mark.parametrize("wait", ["waitall", "asnumpy", "wait_to_read"])
def test_ctrl_c_interrupts_a_wait_before_the_work_finishes(wait):
    env = dict(os.environ, JANUS_ENGINE="threaded")
    proc = subprocess.run([sys.executable, "-c", _CHILD, wait], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    words = proc.stdout.split()
    assert words[0] == "in_flight", proc.stdout
    assert int(words[1]) > 0, "KeyboardInterrupt came only after the work had finished"
    assert float(words[3]) == pytest.approx(1.0) and float(words[4]) == pytest.approx(1.0)
