"""Ctrl-C stops every fast solver family within a second (fast/_chunk.py), checked with a
real SIGINT sent to a subprocess, and a chunked run takes exactly the steps of one long run.

The child process solves, for each case, a small problem first (numba compiles the solver,
or loads it from the cache that the earlier tests of the run filled), then a large one that
takes well over five seconds, printing ``started`` just before; the parent sends SIGINT a
second later and reads the child's ``interrupted`` line, which the child prints when it
catches the KeyboardInterrupt. The child then solves the same problem object again (a few
iterations) and a fresh copy of it, and prints whether the two agree bit for bit: nothing
of the interrupted solve is left behind on the problem.
"""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import fast
import refmodels as rm
from fast import _chunk

ROOT = Path(__file__).resolve().parents[1]

#: the largest delay from SIGINT to the child's KeyboardInterrupt accepted: in wall-clock
#: seconds, or, on a machine so loaded that the child does not get a core, in the CPU
#: seconds the child spent in between (the work a compiled chunk may still do)
LATENCY = 1.0


def _cpu_seconds(pid):
    """CPU seconds (user + system, all threads) used by ``pid`` so far; None without /proc."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
#: seconds between the child's "started" and the SIGINT (the solve is in its loops then)
DELAY = 1.0

CHILD = textwrap.dedent('''
    import signal, sys, time, warnings
    # a process inherits an ignored or blocked SIGINT from the one that started it (a test
    # runner's worker may run with either), and Python then keeps it so: the child is put in
    # the state of a program started from a terminal, and says what it inherited
    print("inherited SIGINT: handler", signal.getsignal(signal.SIGINT), "blocked",
          signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []), flush=True)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    import numpy as np
    import refmodels as rm, fast
    warnings.simplefilter("ignore")

    def binary(m, d, seed=0, noise=1.0):
        r = np.random.default_rng(seed)
        X = r.normal(size=(m, d))
        return X, np.where(X[:, 0] + noise * r.normal(size=m) > 0, 1.0, -1.0)

    def correlated(m, d, seed=0):
        # features mixed with singular values 1 ... 1e-3 (then standardised): TRON's CG
        # takes hundreds of steps per Newton step
        r = np.random.default_rng(seed)
        Q = np.linalg.qr(r.normal(size=(d, d)))[0]
        X = r.normal(size=(m, d)) @ (Q * np.logspace(0, -3, d)).T
        return X / X.std(0), np.where(X[:, 0] + 0.3 * r.normal(size=m) > 0, 1.0, -1.0)

    def multi(m, d, k, seed=0):
        r = np.random.default_rng(seed)
        X = r.normal(size=(m, d))
        return X, np.argmax(X[:, :k] + r.normal(size=(m, k)), axis=1)

    RBF = rm.kernels.RBF
    # name: (builder of a problem of m points, m small, m large, options, options of the
    # short solves after the interrupt or None (not done: they would take seconds), and
    # optionally a step of set-up before the solve)
    CASES = {
        "SVM dcd linear": (lambda m: rm.SVM(*binary(m, 40), C=64.0), 300, 150000,
                           dict(method="dcd", random_state=0), dict(max_iter=2)),
        "ODM dcd kernel cache": (lambda m: rm.ODM(*binary(m, 10), lam=256.0, mu=0.5,
                                                  theta=0.3, kernel=RBF(0.5)), 300, 4000,
                                 dict(random_state=0, cache_size=10), None),
        "SVM smo": (lambda m: rm.SVM(*binary(m, 10), C=64.0, kernel=RBF(0.5),
                                     fit_intercept=True), 300, 8000, {}, dict(max_iter=50)),
        "LDM smo": (lambda m: rm.LDM(*binary(m, 10), C=64.0, lam1=0.5, lam2=0.5,
                                     kernel=RBF(0.5)), 300, 2000, {}, None),
        "SVMm smo": (lambda m: rm.SVMm(*binary(m, 10), C1=64.0, C2=32.0, eps=0.3,
                                       kernel=RBF(0.5)), 300, 6000, {}, dict(max_iter=50)),
        "ODM smo": (lambda m: rm.ODM(*binary(m, 10), lam=256.0, mu=0.5, theta=0.3,
                                     kernel=RBF(0.5)), 300, 8000,
                    dict(method="smo", cache_size=10), dict(max_iter=50)),
        "ODM tron": (lambda m: rm.ODM(*correlated(m, 80), lam=1e6, mu=0.5, theta=0.3), 300,
                     100000, dict(method="tron"), None),
        "ODM svrg": (lambda m: rm.ODM(*binary(m, 50), lam=64.0, mu=0.5, theta=0.3), 300,
                     100000, dict(method="svrg", tol=1e-12, random_state=0),
                     dict(max_iter=1)),
        "ODML asgd": (lambda m: rm.ODML(*binary(m, 50), lam=64.0, mu1=0.5, mu2=0.3), 300,
                      100000, dict(method="asgd", tol=1e-12, max_iter=10000, random_state=0),
                      dict(max_iter=1)),
        "ODML dcd split": (lambda m: rm.ODML(*binary(m, 40), lam=64.0, mu1=0.5, mu2=0.3),
                           300, 150000, dict(method="dcd", path="split", random_state=0),
                           dict(max_iter=2)),
        "McODM bcd": (lambda m: rm.McODM(*multi(m, 50, 5), lam=64.0, mu=0.5, theta=0.3),
                      300, 60000, dict(random_state=0, max_outer=1), dict(max_iter=1)),
        "ODM kernel newton": (lambda m: rm.ODM(*binary(m, 10), lam=2.0**16, mu=0.5,
                                               theta=0.3, kernel=RBF(0.1)), 300, 4000, {},
                              None),
        "DRR apg": (lambda m: rm.DRR(*binary(m, 10, noise=0.5), binary(400, 10, seed=1)[0],
                                     alpha=0.5, beta=0.2, q=2, r=1, rho="identity",
                                     kernel=RBF(0.1)), 60, 3000,
                    dict(method="apg", tol=1e-14), None),
        # one LAPACK call, run in a worker thread (fast._chunk.cholesky_lower)
        "DRM closed form": (lambda m: rm.DRM(*binary(m, 10), binary(20, 10, seed=1)[0],
                                             alpha=0.5, beta=0.2, kernel=RBF(0.1)), 60,
                            10000, dict(method="closed_form"), None),
        "MKLm smo": (lambda m: rm.MKLm(*binary(m, 10), kernels=[RBF(0.05), RBF(0.5),
                                                                 rm.kernels.Linear()],
                                       C1=64.0, C2=32.0, eps=0.3), 100, 2400, {}, None,
                     # its base Grams first: MKLm's check that they are PSD (an
                     # eigendecomposition each, LAPACK: not interruptible) is problem set-up
                     lambda prob: prob.grams),
    }

    for name in sys.argv[1:]:
        make, m_small, m_large, options, after, *prepare = CASES[name]
        fast.solve(make(m_small), **options)     # compiled, or loaded from numba's cache
        prob = make(m_large)
        for step in prepare:
            step(prob)
        print("started", name, flush=True)
        t0 = time.perf_counter()
        try:
            fast.solve(prob, **options)
        except KeyboardInterrupt:
            print("interrupted", name, flush=True)
        else:
            print("finished", name, f"{time.perf_counter() - t0:.1f}", flush=True)
            continue
        if after is None:
            print("usable", name, "not checked", flush=True)
            continue
        short = {**options, **after}
        again = fast.solve(prob, **short)
        fresh = fast.solve(make(m_large), **short)
        same = (np.array_equal(again.coef, fresh.coef) and again.objective == fresh.objective
                and again.status == fresh.status)
        print("usable", name, same, again.status, flush=True)
''')

#: the cases of the child, with the seconds from "started" to the SIGINT where the first
#: second of the solve is set-up rather than the solver's loop (LDM's Woodbury factor)
CASES = {"SVM dcd linear": DELAY, "ODM dcd kernel cache": DELAY, "SVM smo": DELAY,
         "ODM smo": DELAY,
         "LDM smo": 3.0, "SVMm smo": DELAY, "ODM tron": DELAY, "ODM svrg": DELAY,
         "ODML asgd": DELAY, "ODML dcd split": DELAY, "McODM bcd": DELAY, "MKLm smo": DELAY,
         "ODM kernel newton": DELAY, "DRR apg": DELAY,
         # its first seconds build the Gram (interruptible too); then the factorisation
         "DRM closed form": 6.0}


def _lines(proc, out):
    """Push ``(time read, line)`` for every line of the child's output."""
    for line in proc.stdout:
        out.put((time.perf_counter(), line.rstrip("\n")))
    out.put((time.perf_counter(), None))


def _next(lines, timeout):
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        return time.perf_counter(), None


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a subprocess is POSIX")
def test_ctrl_c_stops_every_solver_family_within_a_second():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    proc = subprocess.Popen([sys.executable, "-c", CHILD, *CASES], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)
    lines = queue.Queue()
    threading.Thread(target=_lines, args=(proc, lines), daemon=True).start()
    latency, cpu_latency, usable, log = {}, {}, {}, []
    try:
        for name in CASES:
            # the warm-up may compile (a cold numba cache): generous
            t, line = _next(lines, 600)
            while line is not None and not line.startswith("started"):
                log.append(line)
                t, line = _next(lines, 600)
            assert line == f"started {name}", "\n".join(log + [str(line)])
            time.sleep(CASES[name])
            cpu0 = _cpu_seconds(proc.pid)
            sent = time.perf_counter()
            proc.send_signal(signal.SIGINT)
            t, line = _next(lines, 120)
            cpu1 = _cpu_seconds(proc.pid)
            assert line == f"interrupted {name}", (name, line, "\n".join(log))
            latency[name] = t - sent
            if latency[name] >= LATENCY and cpu0 is not None and cpu1 is not None:
                cpu_latency[name] = cpu1 - cpu0
            t, line = _next(lines, 300)
            assert line is not None and line.startswith(f"usable {name} "), (name, line)
            usable[name] = line
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    print("seconds from SIGINT to KeyboardInterrupt:", {k: round(v, 3) for k, v in
                                                          latency.items()})
    # late by the clock only because the machine is loaded: the child's CPU time in between
    # (the work done after the signal) is what the chunks bound
    slow = {k: (round(v, 3), round(cpu_latency[k], 3) if k in cpu_latency else None)
            for k, v in latency.items()
            if not v < LATENCY and not cpu_latency.get(k, np.inf) < LATENCY}
    assert not slow, (f"KeyboardInterrupt later than {LATENCY} s after SIGINT "
                      f"((wall, CPU) seconds): {slow}")
    # the problem object is usable afterwards and holds nothing of the interrupted solve
    assert all(" True " in v or "not checked" in v for v in usable.values()), usable


# ---------------------------------------------------------------------------------------
# a chunked run takes the steps of one long run, bit for bit
# ---------------------------------------------------------------------------------------
def _binary(m, d, seed, noise=0.5, scale=1.0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(m, d)) * scale
    return X, np.where(X[:, 0] + noise * scale * r.normal(size=m) > 0, 1.0, -1.0)


def _cases():
    """name: (a builder of the problem, fast.solve's options)."""
    R = rm.kernels.RBF(0.5)
    X, y = _binary(160, 4, 0)
    Xr, yr = _binary(120, 3, 1, scale=1e3)               # raw-scale features
    import scipy.sparse as sp

    Xs = sp.random(160, 30, density=0.15, random_state=2, format="csr")
    r = np.random.default_rng(3)
    Xm = r.normal(size=(90, 4))
    ym = np.argmax(Xm[:, :3] + 0.3 * r.normal(size=(90, 3)), axis=1)
    return {
        "SVM dcd gram": (lambda: rm.SVM(X, y, C=4.0, kernel=R), dict(method="dcd", path="gram",
                                                             random_state=0)),
        "ODM dcd cache": (lambda: rm.ODM(X, y, lam=8.0, mu=0.5, theta=0.3, kernel=R),
                          dict(method="dcd", path="cache", cache_size=0.05, random_state=0)),
        "SVM dcd linear": (lambda: rm.SVM(X, y, C=4.0), dict(method="dcd", random_state=1)),
        "ODM dcd csr": (lambda: rm.ODM(Xs, y, lam=8.0, mu=0.5, theta=0.3),
                        dict(method="dcd", random_state=2)),
        "LDM dcd raw": (lambda: rm.LDM(Xr, yr, C=2.0, lam1=0.5, lam2=0.5),
                        dict(method="dcd", random_state=3)),
        "ODML dcd split csr": (lambda: rm.ODML(Xs, y, lam=8.0, mu1=0.5, mu2=0.3),
                               dict(method="dcd", path="split", random_state=2)),
        "LDM dcd split": (lambda: rm.LDM(X, y, C=0.05, lam1=2.0, lam2=0.5),
                          dict(path="split", random_state=3)),
        "SVM smo": (lambda: rm.SVM(X, y, C=4.0, kernel=R, fit_intercept=True), {}),
        "SVM smo cache": (lambda: rm.SVM(X, y, C=64.0, kernel=R, fit_intercept=True),
                          dict(cache_size=0.05)),
        "SVM smo no equality": (lambda: rm.SVM(X, y, C=4.0, kernel=R), dict(method="smo")),
        "SVMm smo": (lambda: rm.SVMm(X, y, C1=4.0, C2=2.0, eps=0.3, kernel=R), {}),
        "LDM smo": (lambda: rm.LDM(X, y, C=2.0, lam1=0.5, lam2=0.5, kernel=R), {}),
        "ODM smo cache": (lambda: rm.ODM(X, y, lam=8.0, mu=0.5, theta=0.3, kernel=R),
                          dict(method="smo", cache_size=0.05)),
        "ODM tron": (lambda: rm.ODM(X, y, lam=8.0, mu=0.5, theta=0.3), dict(method="tron")),
        "ODM tron csr": (lambda: rm.ODM(Xs, y, lam=8.0, mu=0.5, theta=0.3), dict(method="tron")),
        "ODM tron raw": (lambda: rm.ODM(Xr, yr, lam=64.0, mu=0.5, theta=0.3), dict(method="tron")),
        "ODM svrg": (lambda: rm.ODM(X, y, lam=8.0, mu=0.5, theta=0.3),
                     dict(method="svrg", random_state=1, max_iter=40)),
        "ODML asgd": (lambda: rm.ODML(X, y, lam=8.0, mu1=0.5, mu2=0.3),
                      dict(method="asgd", random_state=1, max_iter=15)),
        "McODM bcd rbf": (lambda: rm.McODM(Xm, ym, lam=4.0, mu=0.5, theta=0.2, kernel=R),
                          dict(random_state=0)),
        "McODM bcd linear": (lambda: rm.McODM(Xm, ym, lam=4.0, mu=0.5, theta=0.2),
                             dict(random_state=0)),
        "MKLm": (lambda: rm.MKLm(X[:80], y[:80], kernels=[rm.kernels.RBF(0.2),
                                                          rm.kernels.Linear()],
                                 C1=4.0, C2=2.0, eps=0.3), {}),
    }


CHUNK_CASES = _cases()


def _run(prob, options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = fast.solve(prob, **options)
        # a warm start too (the SMO's setup sums kernel rows of a nonzero point)
        warm = (fast.solve(prob, warm_start=sol, **options)
                if "svrg" not in str(options) and "asgd" not in str(options) else sol)
    return sol, warm


@pytest.mark.parametrize("name", list(CHUNK_CASES))
def test_a_chunked_run_takes_the_steps_of_one_long_run(name, monkeypatch):
    """Every compiled loop returns after a few work units (``CHUNK_WORK = 37``: a pause at
    nearly every step, inside epochs, CG runs, reconstructions and the SMO's setup) and
    resumes: the same point, iterations and status as one call each, bit for bit."""
    make, options = CHUNK_CASES[name]
    monkeypatch.setattr(_chunk, "CHUNK_WORK", 1e30)
    long_run = _run(make(), options)         # (a fresh problem each: a path's state, e.g.
    monkeypatch.setattr(_chunk, "CHUNK_WORK", 37.0)   # TRON's Hessian, stays on it)
    chunked = _run(make(), options)
    for a, b in zip(long_run, chunked):
        assert a.status == b.status and a.n_iter == b.n_iter
        assert np.array_equal(np.asarray(a.objective), np.asarray(b.objective))
        for k in ("coef", "intercept"):
            u, v = getattr(a, k), getattr(b, k)
            assert (u is None and v is None) or np.array_equal(np.asarray(u), np.asarray(v))
        for k, v in a.variables.items():
            assert np.array_equal(np.asarray(v), np.asarray(b.variables[k])), k


def test_the_cv_path_chunked_is_the_path_in_one_call(monkeypatch):
    """The cross-validated estimators' linear TRON path (one compiled call per point before)
    gives the same points and verdicts in chunks."""
    from fast.odm import linear_tron_path

    X, y = _binary(400, 6, 5)
    lams = 2.0 ** np.arange(0, 21, 4)
    out = []
    for work in (1e30, 37.0):
        monkeypatch.setattr(_chunk, "CHUNK_WORK", work)
        W, passed, _ = linear_tron_path(rm.ODM(X, y, lam=1.0, mu=0.8, theta=0.2), lams)
        out.append((W, passed))
    assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])
    assert out[0][1].all()


def test_kernel_rows_and_gram_in_chunks(monkeypatch):
    """The solvers' RBF Gram and the self-check's ``K v`` from cached rows: the same numbers
    built in chunks as in one call, and the Gram as the kernel's own (exact) Gram."""
    from fast import _kernels as K

    r = np.random.default_rng(6)
    X = r.normal(size=(150, 4))
    X[0, 0] = 1e7                                  # a far point (exact distances)
    kern = rm.kernels.RBF(0.3)
    Xd = K.kernel_data(K.RBF, X)
    v = np.where(r.random(150) < 0.5, r.normal(size=150), 0.0)
    out = []
    for work in (1e30, 37.0):
        monkeypatch.setattr(_chunk, "CHUNK_WORK", work)
        G = K._rbf_gram(Xd, K.sq_norms(Xd, 150), 0.3)
        Kv = K.RowSource(kern, X, 0.05).times(v)   # (an LRU cache of a few rows)
        out.append((G, Kv))
    assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])
    np.testing.assert_allclose(out[0][0], kern.gram(X), rtol=0, atol=1e-14)
    np.testing.assert_allclose(out[0][1], kern.gram(X) @ v, rtol=1e-12, atol=1e-12)
