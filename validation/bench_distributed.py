"""Linear ODM by the distributed TRON (fast/distributed.py) on a Dask LocalCluster and on a
file beyond memory.

(a) Overhead: ``fast.distributed.solve_odm`` on a ``LocalCluster(n_workers=2,
threads_per_worker=1, processes=False)`` with ``X`` persisted in ``--parts`` row chunks, and
on dask's threaded scheduler (no cluster) with the same chunks, against ``fast.solve(refmodels.ODM(...), method="tron")`` on the same in-memory data (the
single-machine TRON), interleaved, best of ``--repeat``. Reported: time, passes over the
data, Newton iterations, the relative gap of the two objectives (recomputed by the
problem), and the certificate ``prob.certify(prob.solution_from(w=...), reference=False)``
of each point. Data: ``_harness.binary_data`` (standardised, 5 % labels flipped), and CSR
rows (50 stored entries a row among 20,000 features, unit rows, as rcv1's); ODM at
``lam = m``, ``mu = 0.5``, ``theta = 0.3``.

(b) ``--out-of-core GB``: writes a raw float64 file of about that many GB (``--d`` features,
rows of a noisy linear rule, the labels in a second file) to ``--dir``, then, in a
subprocess of its own (its peak resident memory is the solve's), solves ODM on
``fast.distributed.memmap_rows(...)`` with the threaded scheduler: every pass reads the
file. Reported: wall time, passes, Newton iterations, the residual, the peak RSS against
the file's size. The file was just written, so the reads may come from the page cache (a
cold read runs at the disk's speed). The files are removed at the end (``--keep`` keeps them).

    python validation/bench_distributed.py                    # (a) at 200,000 x 100, 1,000,000 x 20
                                                              # and CSR 200,000 x 20,000
    python validation/bench_distributed.py --quick            # (a) at a tenth of that
    python validation/bench_distributed.py --out-of-core 2 --dir /tmp   # (b) only
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import _harness as H

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np


def peak_gb():
    # VmHWM: this process's own peak (getrusage's ru_maxrss keeps the parent's across exec)
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1e6
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


from fast import distributed as D
xpath, ypath, d = sys.argv[1], sys.argv[2], int(sys.argv[3])
# warm-up (numba compile / cache load) on a small instance, not timed
r = np.random.default_rng(1)
Xs = r.normal(size=(500, d)); ys = np.where(Xs[:, 0] > 0, 1.0, -1.0)
D.solve_odm(Xs, ys, 500.0, 0.5, 0.3)
base = peak_gb()
X = D.memmap_rows(xpath, d)
y = D.memmap_rows(ypath, 1, chunk_rows=X.chunks[0][0])[:, 0]
m = X.shape[0]
t = time.perf_counter()
res = D.solve_odm(X, y, float(m), 0.5, 0.3)
out = {"solve_s": time.perf_counter() - t, "status": res.status, "passes": res.passes,
       "n_iter": res.n_iter, "residual": res.residual, "m": m, "chunks": len(X.chunks[0]),
       "chunk_mb": X.chunks[0][0] * d * 8 / 1e6, "base_gb": base,
       "peak_gb": peak_gb(),
       "margin_mean": res.margins["mean"], "margin_std": res.margins["std"]}
print(json.dumps(out))
"""


def _fast_side(X, y):
    import fast
    import refmodels as rm

    prob = rm.ODM(X, y, lam=float(X.shape[0]), mu=0.5, theta=0.3)
    return lambda: (prob, fast.solve(prob, method="tron"))


def _dask_side(Xd, y, scheduler=None):
    import dask

    from fast import distributed as D

    def run():
        with dask.config.set(scheduler=scheduler) if scheduler else _nothing():
            return D.solve_odm(Xd, y, float(Xd.shape[0]), 0.5, 0.3)
    return run


def _nothing():
    import contextlib

    return contextlib.nullcontext()


def overhead(R, args):
    import dask.array as da
    import distributed

    # (m, d, stored entries a row: None for dense rows)
    sizes = [(200000, 100, None), (1000000, 20, None), (200000, 20000, 50)]
    if args.quick:
        sizes = [(m // 10, d // (10 if k else 1), k) for m, d, k in sizes]
    rows = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        Xw, yw = H.binary_data(2000, 10, seed=1)
        wd = H.warmup(lambda: (_fast_side(Xw, yw)(), _dask_side(da.from_array(Xw, chunks=(500, 10)),
                                                               yw)()))
        for m, d, k in sizes:
            X, y = H.binary_data(m, d, seed=0) if k is None else _sparse_data(m, d, k)
            Xa = da.from_array(X, chunks=(-(-m // args.parts), d), asarray=k is None)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")        # (the data go to the workers once)
                Xd = client.persist(Xa)
                distributed.wait(Xd)
            runs = H.interleaved({"fast.solve": _fast_side(X, y),
                                  "distributed": _dask_side(Xd, y),
                                  "threads": _dask_side(Xa, y, "threads")}, args.repeat)
            t_fast, _, (prob, sol) = runs["fast.solve"]
            t_dist, _, res = runs["distributed"]
            t_thr, _, res_thr = runs["threads"]
            assert res_thr.passes == res.passes
            P_fast = prob.primal_value(sol.variables["w"])
            P_dist = prob.primal_value(res.w)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                c_fast = prob.certify(prob.solution_from(w=sol.variables["w"]), reference=False)
                c_dist = prob.certify(prob.solution_from(w=res.w), reference=False)
            rows.append([f"{m:,} x {d}" + ("" if k is None else f" CSR, {k} a row"),
                         f"{t_fast:.2f}", sol.n_iter, f"{t_dist:.2f}",
                         f"{t_dist / t_fast:.2f}", f"{t_thr:.2f}", f"{t_thr / t_fast:.2f}",
                         res.n_iter, res.passes,
                         f"{H.rel_gap(P_dist, P_fast):+.1e}", f"{res.residual:.1e}",
                         "holds" if c_fast.ok else "FAILS", "holds" if c_dist.ok else "FAILS"])
            del X, Xd, Xa
    R.say(f"warm-up (compile, both sides, small instance): {wd:.1f} s")
    R.table(["data", "fast.solve s", "Newton", "cluster s", "ratio", "threads s", "ratio",
             "Newton", "passes",
             "rel. gap", "residual", "cert. fast", "cert. dist."], rows,
            caption=f"(a) ODM lam = m, mu = 0.5, theta = 0.3: fast.solve(method='tron') vs "
                    f"the distributed TRON on a LocalCluster (2 workers x 1 thread, "
                    f"processes=False), X persisted in {args.parts} row chunks, and on "
                    f"dask's threaded scheduler (no cluster, the same chunks); ratio: "
                    f"/ fast.solve")


def _sparse_data(m, d, k, seed=0):
    """CSR rows with ``k`` stored entries each (uniform columns, values in [0, 1), rows of
    unit norm, as rcv1's), labels of a random linear rule with 5 % flipped."""
    import scipy.sparse as sp

    r = np.random.default_rng(seed)
    X = sp.csr_matrix((r.random(m * k), r.integers(0, d, size=m * k).astype(np.int32),
                       np.arange(0, m * k + 1, k, dtype=np.int64)), shape=(m, d))
    X.sum_duplicates()
    X = (sp.diags(1.0 / np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel())) @ X).tocsr()
    f = X @ r.normal(size=d)
    y = np.where(f > np.median(f), 1.0, -1.0)
    y[r.random(m) < 0.05] *= -1
    return X, y


def _write_file(directory, gb, d, seed=0):
    """A raw float64 file of about ``gb`` GB (rows ``N(0, 1)``, labels of a noisy linear
    rule in a second file), written by blocks; returns ``(xpath, ypath, m, seconds)``."""
    r = np.random.default_rng(seed)
    wstar = r.normal(size=d)
    m = max(1000, int(gb * 1e9 / (8 * d)))
    fd, xpath = tempfile.mkstemp(suffix=".f64", prefix="bench_distributed_X_", dir=directory)
    os.close(fd)
    ypath = xpath.replace("_X_", "_y_")
    t = time.perf_counter()
    with open(xpath, "wb") as fx, open(ypath, "wb") as fy:
        for a in range(0, m, 100000):
            n = min(100000, m - a)
            Xb = r.normal(size=(n, d))
            yb = np.where(Xb @ wstar + 2.0 * r.normal(size=n) > 0, 1.0, -1.0)
            Xb.astype("<f8").tofile(fx)
            yb.astype("<f8").tofile(fy)
    return xpath, ypath, m, time.perf_counter() - t


def out_of_core(R, args):
    xpath, ypath, m, t_write = _write_file(args.dir, args.out_of_core, args.d)
    size_gb = os.path.getsize(xpath) / 1e9
    try:
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH",
                                                                                  ""))
        res = subprocess.run([sys.executable, "-c", CHILD, xpath, ypath, str(args.d)],
                             capture_output=True, text=True, env=env)
    finally:
        if not args.keep:
            for p in (xpath, ypath):
                os.unlink(p)
    if res.returncode != 0:
        R.say(f"(b) out of core: the solve failed: {res.stderr.strip()[-400:]}")
        return
    out = json.loads(res.stdout.strip().splitlines()[-1])
    R.say(f"(b) out of core: {out['m']:,} x {args.d} float64 in {xpath if args.keep else args.dir}"
          f" ({size_gb:.2f} GB, written in {t_write:.0f} s), read by memmap_rows in "
          f"{out['chunks']} chunks of {out['chunk_mb']:.0f} MB, threaded scheduler; ODM lam = m, "
          f"mu = 0.5, theta = 0.3")
    R.table(["file GB", "status", "Newton", "passes", "residual", "solve s", "s / pass",
             "RSS before GB", "peak RSS GB", "peak / file"],
            [[f"{size_gb:.2f}", out["status"], out["n_iter"], out["passes"],
              f"{out['residual']:.1e}", f"{out['solve_s']:.1f}",
              f"{out['solve_s'] / out['passes']:.1f}", f"{out['base_gb']:.2f}",
              f"{out['peak_gb']:.2f}", f"{out['peak_gb'] / size_gb:.2f}"]],
            caption="RSS before: the peak of the process after imports and the warm-up; "
                    "peak RSS: its peak over the whole run (VmHWM)")


def main():
    p = H.parser(__doc__.splitlines()[0], parts=(8, "row chunks of X in (a)"),
                 out_of_core=(0.0, "GB of the file of (b); 0: (a) only"),
                 dir=(tempfile.gettempdir(), "directory of (b)'s file"),
                 d=(100, "features of (b)'s file"))
    p.add_argument("--keep", action="store_true", help="keep (b)'s files")
    p.add_argument("--only-out-of-core", action="store_true", help="skip (a)")
    args = p.parse_args()
    R = H.Report("Linear ODM by the distributed TRON: overhead on a LocalCluster, and out of "
                 "core", args)
    if not args.only_out_of_core:
        overhead(R, args)
    if args.out_of_core > 0:
        out_of_core(R, args)
    R.record()


if __name__ == "__main__":
    main()
