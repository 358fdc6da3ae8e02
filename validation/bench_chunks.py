"""The chunks of the compiled solver loops (``fast/_chunk.py``): how long one call runs,
and what running in chunks costs.

Part 1 (the chunks): for every chunked compiled loop, a large solve with a recorder around
the loop's compiled function: the CPU seconds (thread time, so that the machine's load does
not count) of each call, their median and the largest (the last call of a run, which ends
early, left out). Target: about 0.1 s, every call below 0.5 s, so that Ctrl-C is answered
within a second on a loaded machine.

Part 2 (the cost): mid-size solves of every family by ``fast.solve``, with the default
``CHUNK_WORK`` against ``CHUNK_WORK = 1e30`` (each loop in one call, as before the chunks),
interleaved, best of ``--repeat``; the two points must be the same bit for bit. Target:
ratio 1.0 within the noise.

    python validation/bench_chunks.py [--quick] [--part 1|2]
"""
from __future__ import annotations

import time
import warnings

import numpy as np

import _harness as H


def _binary(m, d, seed=0, noise=1.0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(m, d))
    return X, np.where(X[:, 0] + noise * r.normal(size=m) > 0, 1.0, -1.0)


def _multi(m, d, k, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(m, d))
    return X, np.argmax(X[:, :k] + 0.5 * r.normal(size=(m, k)), axis=1)


def _csr(m, d, nnz, seed=0):
    import scipy.sparse as sp

    r = np.random.default_rng(seed)
    X = sp.csr_matrix((r.normal(size=nnz), (r.integers(0, m, nnz), r.integers(0, d, nnz))),
                      shape=(m, d))
    return X, np.where(r.random(m) > 0.5, 1.0, -1.0)


class Recorder:
    """Wrap a module attribute (a compiled function, or a dict of them) to record the thread
    time of each call."""

    def __init__(self):
        self.calls = []
        self.undo = []

    def wrap(self, owner, name, key=None):
        target = getattr(owner, name) if key is None else getattr(owner, name)[key]

        def recorded(*args):
            t = time.thread_time()
            out = target(*args)
            self.calls.append(time.thread_time() - t)
            return out
        if key is None:
            setattr(owner, name, recorded)
            self.undo.append(lambda: setattr(owner, name, target))
        else:
            getattr(owner, name)[key] = recorded
            self.undo.append(lambda: getattr(owner, name).__setitem__(key, target))

    def restore(self):
        for f in self.undo:
            f()
        self.undo = []


def part1(R, args):
    import fast
    import refmodels as rm
    from fast import _dcd, _kernels, _mcodm_bcd, _sgd, _smo, _tron, mcodm

    q = args.quick
    RBF = rm.kernels.RBF
    # name, what is wrapped, problem builder, options, small builder for the warm-up
    cases = [
        ("DCD linear dense", (_dcd, "_EPOCHS", _dcd.MODE_LINEAR),
         lambda m: rm.SVM(*_binary(m, 50), C=1.0), 100000,
         dict(method="dcd", max_iter=30, polish=False, tol=1e-12, random_state=0)),
        ("DCD linear CSR", (_dcd, "_EPOCHS", _dcd.MODE_CSR),
         lambda m: rm.SVM(*_csr(m, 2000, 20 * m), C=1.0), 100000,
         dict(method="dcd", max_iter=5, polish=False, tol=1e-12, random_state=0)),
        ("DCD Gram", (_dcd, "_EPOCHS", _dcd.MODE_GRAM),
         lambda m: rm.SVM(*_binary(m, 10), C=4.0, kernel=RBF(0.5)), 4000,
         dict(method="dcd", path="gram", max_iter=20, polish=False, tol=1e-12,
              random_state=0)),
        ("DCD kernel cache", (_dcd, "_EPOCHS", _dcd.MODE_CACHE),
         lambda m: rm.SVM(*_binary(m, 10), C=4.0, kernel=RBF(0.5)), 20000,
         dict(method="dcd", path="cache", max_iter=1, polish=False, tol=1e-12,
              random_state=0)),
        ("SMO (Gram filled lazily)", (_smo, "_smo_chunk", None),
         lambda m: rm.SVM(*_binary(m, 10), C=4.0, kernel=RBF(0.5), fit_intercept=True), 5000,
         dict(max_iter=20000)),
        ("SMO SVMm", (_smo, "_smo_chunk", None),
         lambda m: rm.SVMm(*_binary(m, 10), C1=4.0, C2=2.0, eps=0.3, kernel=RBF(0.5)), 4000,
         dict(max_iter=20000)),
        ("TRON dense", (_tron, "_tron", None),
         lambda m: rm.ODM(*_binary(m, 100), lam=64.0, mu=0.5, theta=0.2), 200000,
         dict(method="tron")),
        ("TRON formed Hessian", (_tron, "_tron", None),
         lambda m: rm.ODM(*_binary(m, 10), lam=64.0, mu=0.5, theta=0.2), 500000,
         dict(method="tron")),
        ("SVRG dense", (_sgd, "_svrg_loop", None),
         lambda m: rm.ODM(*_binary(m, 50), lam=4.0, mu=0.5, theta=0.2), 100000,
         dict(method="svrg", max_iter=3, tol=1e-12)),
        ("ASGD dense", (_sgd, "_asgd_loop", None),
         lambda m: rm.ODML(*_binary(m, 50), lam=4.0, mu1=0.1, mu2=0.1), 100000,
         dict(method="asgd", max_iter=3, tol=1e-12)),
        ("mcODM BCD linear", (mcodm, "_bcd", None),
         lambda m: rm.McODM(*_multi(m, 50, 5), lam=4.0, mu=0.5, theta=0.2), 100000,
         dict(random_state=0, max_iter=8, max_outer=1)),
        ("mcODM BCD Gram", (mcodm, "_bcd", None),
         lambda m: rm.McODM(*_multi(m, 10, 5), lam=4.0, mu=0.5, theta=0.2,
                            kernel=RBF(0.1)), 3000,
         dict(random_state=0, max_iter=8, max_outer=1)),
        ("RBF Gram rows (ODM's Gram)", (_kernels, "_rbf_gram_rows", None),
         lambda m: rm.ODM(*_binary(m, 10), lam=1.0, mu=0.5, theta=0.2, kernel=RBF(0.5)),
         5000, dict(method="dcd", path="gram", max_iter=1, polish=False, random_state=0)),
    ]
    _ = _mcodm_bcd
    rows = []
    for name, (owner, attr, key), make, m, options in cases:
        if q:
            m = max(200, m // 10)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fast.solve(make(200), **options)               # compiled or loaded
            prob = make(m)
            rec = Recorder()
            rec.wrap(owner, attr, key)
            t0 = time.perf_counter()
            try:
                fast.solve(prob, **options)
            finally:
                rec.restore()
            wall = time.perf_counter() - t0
        calls = rec.calls[:-1] if len(rec.calls) > 1 else rec.calls or [np.nan]
        rows.append((name, m, len(rec.calls), float(np.median(calls)), float(np.max(calls)),
                     wall))
        print(f"  {name}: {len(rec.calls)} calls, median {np.median(calls):.3f} s",
              flush=True)
    R.table(["loop", "m", "calls", "median CPU s", "largest CPU s", "solve wall s"], rows,
            caption="Part 1: CPU seconds of one call of each chunked compiled loop "
                    "(target ~0.1, below 0.5)")


def part2(R, args):
    import fast
    import refmodels as rm
    from fast import _chunk

    RBF = rm.kernels.RBF
    s = 4 if args.quick else 1
    cases = [
        ("SVM DCD linear 20000x100", lambda: rm.SVM(*_binary(20000 // s, 100), C=0.1),
         dict(method="dcd", tol=1e-12, max_iter=1000, polish=False, random_state=0)),
        ("SVM DCD Gram 1500", lambda: rm.SVM(*_binary(1500 // s, 10), C=1.0, kernel=RBF(0.1)),
         dict(method="dcd", random_state=0)),
        ("ODM DCD cache 4000", lambda: rm.ODM(*_binary(4000 // s, 10), lam=1.0, mu=0.8,
                                              theta=0.2, kernel=RBF(0.1)),
         dict(method="dcd", path="cache", random_state=0)),
        ("SVM SMO 5000", lambda: rm.SVM(*_binary(5000 // s, 10), C=4.0, kernel=RBF(0.1),
                                        fit_intercept=True), {}),
        ("SVM SMO cache 10000", lambda: rm.SVM(*_binary(10000 // s, 10), C=1.0,
                                               kernel=RBF(0.1), fit_intercept=True), {}),
        ("SVMm SMO 2000", lambda: rm.SVMm(*_binary(2000 // s, 10), C1=4.0, C2=2.0, eps=0.5,
                                          kernel=RBF(0.1)), {}),
        ("ODM TRON 50000x100", lambda: rm.ODM(*_binary(50000 // s, 100), lam=16.0, mu=0.8,
                                              theta=0.2), dict(method="tron")),
        ("ODM TRON 100000x10", lambda: rm.ODM(*_binary(100000 // s, 10), lam=16.0, mu=0.8,
                                              theta=0.2), dict(method="tron")),
        ("ODM SVRG 20000x20", lambda: rm.ODM(*_binary(20000 // s, 20), lam=1.0, mu=0.8,
                                             theta=0.2),
         dict(method="svrg", max_iter=30, random_state=0)),
        ("ODML ASGD 20000x20", lambda: rm.ODML(*_binary(20000 // s, 20), lam=1.0, mu1=0.1,
                                               mu2=0.1),
         dict(method="asgd", max_iter=30, random_state=0)),
        ("McODM 400 RBF", lambda: rm.McODM(*_multi(400 // s, 10, 4), lam=4.0, mu=0.8,
                                           theta=0.2, kernel=RBF(0.1)),
         dict(random_state=0)),
        ("MKLm 300", lambda: rm.MKLm(*_binary(300 // s, 10), kernels=[RBF(0.05), RBF(0.2),
                                                                      rm.kernels.Linear()],
                                     C1=4.0, C2=2.0, eps=0.5), {}),
    ]
    default = _chunk.CHUNK_WORK
    rows = []
    for name, make, options in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fast.solve(make(), **options)                  # warm-up (compile, caches)

        def run(work, make=make, options=options):
            _chunk.CHUNK_WORK = work
            try:
                return fast.solve(make(), **options)
            finally:
                _chunk.CHUNK_WORK = default
        res = H.interleaved({"chunks": lambda: run(default), "one call": lambda: run(1e30)},
                            args.repeat)
        a, b = res["chunks"][2], res["one call"][2]
        same = (np.array_equal(np.asarray(a.coef), np.asarray(b.coef))
                and a.objective == b.objective and a.n_iter == b.n_iter)
        rows.append((name, res["chunks"][0], res["one call"][0],
                     res["chunks"][0] / res["one call"][0], same, a.status))
        print(f"  {name}: {res['chunks'][0]:.3f} s vs {res['one call'][0]:.3f} s", flush=True)
    R.table(["solve", "chunks s", "one call s", "ratio", "same point", "status"], rows,
            caption=f"Part 2: fast.solve with CHUNK_WORK = {default:g} (chunks) and 1e30 (each "
                    "loop in one call); target ratio 1.0")


def main():
    args = H.parser(__doc__.splitlines()[0], part=(0, "1 or 2 (default: both)")).parse_args()
    R = H.Report("Chunks of the compiled solver loops: their length and their cost", args)
    if args.part in (0, 1):
        part1(R, args)
    if args.part in (0, 2):
        part2(R, args)
    R.record()


if __name__ == "__main__":
    main()
