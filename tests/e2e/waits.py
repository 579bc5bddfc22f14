"""How the end-to-end tests wait: for a condition (a port accepting, a line printed, a file
written, a counter moved, a process gone), never for a length of time.

CI runs `ctest -j2` on a loaded 2-core machine, and the same tests on an ASan/UBSan build, where
what takes a second on an idle machine can take a minute (the WAF's CRS compile, a 500k-route
table). So a wait ends when its condition holds; its bound, GUARD_S, only turns a hang into a
failure and is far above any slowness seen. A test that sets a shorter bound on purpose (an
error expected at once) says why."""
import time

# The bound on one wait or one command: a hang, not a slow machine (the WAF's start took 84 s
# under ASan at load 6 on 2 cores; ctest's own per-test limit is 1500 s).
GUARD_S = 600
POLL_S = 0.05   # between two looks at a condition


def wait_until(condition, guard_s=GUARD_S, poll_s=POLL_S, proc=None):
    """condition()'s first true value, looked at every poll_s; None once guard_s has passed, or
    (with proc, a subprocess.Popen) once proc has exited and the condition still does not hold."""
    deadline = time.monotonic() + guard_s
    while True:
        value = condition()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            return condition() or None
        if time.monotonic() > deadline:
            return None
        time.sleep(poll_s)
