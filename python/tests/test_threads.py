"""The GIL is released while a thread waits on Janus: another Python thread runs meanwhile."""
import sys
import threading

from janus import np, npx


def _helper_ran_during_wait():
    # With a huge switch interval Python never preempts the main thread, so the helper (woken
    # by `started`) can take the GIL only when the main thread releases it: inside asnumpy()'s
    # wait. `ran` set right after that wait therefore means the wait released the GIL. A wait
    # that held it would never let the helper in first; the only way this can miss is a wait
    # shorter than the helper's wake-up, hence a few tries.
    started = threading.Event()
    ran = threading.Event()

    def helper():
        started.wait()
        ran.set()

    t = threading.Thread(target=helper)
    t.start()
    x = np.random.normal(0, 1, (256, 256))
    for _ in range(30):
        x = np.dot(x, x) * 0.01
    started.set()
    x.asnumpy()
    result = ran.is_set()
    t.join()
    return result


def test_other_thread_runs_during_a_wait():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        assert any(_helper_ran_during_wait() for _ in range(5))
    finally:
        sys.setswitchinterval(old)
    npx.waitall()
