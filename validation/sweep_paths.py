"""Every point of every regularization path certified, on every real set.

For each data set x family x kernel x scaling, ``fast.path(prob, <param>=grid,
certify=True)`` runs the seeds' grid ``{2^0, 2^2, ..., 2^20}`` (11 values of ``lam`` for
ODM / ODML, ``C`` for LDM / SVM, ``C1`` for SVMm), strong to weak, warm-started, and every
point is recorded: status, the certificate's verdict (``sol.info["certificate"]``: holds /
worst scaled residual against its tolerance 1e-6), solve and certification time, and the
``ConvergenceWarning`` s its solve issued. Flagged:

* **silent wrong answers**: status ``optimal`` while the certificate fails (the target is
  zero; the most serious finding);
* **unwarned**: status not ``optimal`` and no ``ConvergenceWarning``;
* **crashes**: any exception but a ``ValueError`` (a ``ValueError`` is recorded too, as
  ``valueerror``, with its message);
* **warned, yet certifies**: status not ``optimal`` (with its warning) although the
  certificate holds (honest, but the solver's own stopping test is stricter than needed);
* **slow**: a path over ``--time-limit`` CPU seconds (the worker's process time, certificates
  included: robust to a loaded machine); a path still running after ``--kill-factor`` x the
  limit in wall seconds is killed and recorded as ``timeout`` with the grid value it was
  stuck at and the points it had solved (uncertified).

Data: every ``validation/data/keel/{balanced,imbalanced}/*.dat`` (``reproduce/_common.py
load``; categorical features as ordinal codes) and scikit-learn's breast_cancer, wine, iris,
digits (``sk_*``). Binary as ``bench_odm_path.binary``: the last sorted class is +1, the
others -1. Sets above ``--max-m`` rows (default 3,000) are subsampled (stratified by the +-1
label, seed ``--seed``); the summary says which. Kernels: ``linear``; ``rbf`` with
``gamma = 1/d`` on [0, 1]-scaled features (the seeds' ``delta``) and scikit-learn's
``"scale"`` (``1 / (d X.var())``) on raw ones; ``poly``: the quadratic kernel
``(x^T z / d + 1)^2`` on either (raw features: Gram entries of 1e8 and beyond). Scalings:
``minmax`` ([0, 1] per feature, the seeds') and ``raw`` (unscaled: Gram entries up to 1e8
and beyond on some sets, as the checker's "raw features, lambda of 2^20").

Other hyperparameters (``--params one`` the first, ``two`` both): ODM ``(mu, theta)`` =
(0.8, 0.2), (0.2, 0.4) (the seeds' grids are {0.2, ..., 0.8}, {0.1, ..., 0.4}); ODML
``(mu1, mu2)`` = (1, 1), (2^-4, 2^4); LDM ``(lam1, lam2)`` = (2^-8, 2^-8), (2^-2, 2^-2);
SVM ``fit_intercept`` = False, True; SVMm ``(C2, eps)`` = (1, 1), (0.1, 0.5).

Peers, timed on the same grid (cold solves: neither has a path), in their own task so that a
slow peer never costs the fast record: for ODM linear, LIBODM's dual CD (``-s 0``, eps 1e-3,
``bench_odm_path.libodm_train_solver``) when ``LIBODM_DIR`` is set; for SVM linear without
intercept, LIBLINEAR (``LinearSVC(loss="hinge", dual=True, fit_intercept=False)``, tol
1e-4, its default). The ratio fast / peer is of the summed solve times (the fast side
without its certificates).

Each path runs in a worker process (one at a time: the machine is shared); one JSON line
per path goes to ``--out`` as it finishes, and a summary (markdown) is printed at the end
(``--summary FILE`` reprints it from a JSONL file). Usage::

    nice -n 10 python validation/sweep_paths.py --quick
    nice -n 10 python validation/sweep_paths.py --kernel linear --scaling minmax
    nice -n 10 python validation/sweep_paths.py --kernel rbf --family ODM --sets sonar,wdbc
    OPENBLAS_NUM_THREADS=1 LIBODM_DIR=/path/to/libodm nice -n 10 \\
        python validation/sweep_paths.py --family ODM --kernel linear --peers
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import queue
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for p in (str(REPO), str(HERE), str(HERE / "reproduce")):
    if p not in sys.path:
        sys.path.insert(0, p)

GRID = [2.0 ** k for k in range(0, 21, 2)]
QUICK_GRID = [2.0 ** k for k in (0, 8, 20)]
FAMILIES = ("ODM", "ODML", "LDM", "SVM", "SVMm")
PARAM = {"ODM": "lam", "ODML": "lam", "LDM": "C", "SVM": "C", "SVMm": "C1"}
OTHER = {"ODM": [{"mu": 0.8, "theta": 0.2}, {"mu": 0.2, "theta": 0.4}],
         "ODML": [{"mu1": 1.0, "mu2": 1.0}, {"mu1": 2.0 ** -4, "mu2": 2.0 ** 4}],
         "LDM": [{"lam1": 2.0 ** -8, "lam2": 2.0 ** -8}, {"lam1": 0.25, "lam2": 0.25}],
         "SVM": [{"fit_intercept": False}, {"fit_intercept": True}],
         "SVMm": [{"C2": 1.0, "eps": 1.0}, {"C2": 0.1, "eps": 0.5}]}
SKLEARN = ("sk_breast_cancer", "sk_wine", "sk_iris", "sk_digits")
QUICK_SETS = ("sonar", "haberman", "sk_breast_cancer", "spambase")


def keel_sets():
    out = []
    for sub in ("balanced", "imbalanced"):
        out += sorted(p.stem for p in (REPO / "validation/data/keel" / sub).glob("*.dat"))
    return out


def load_set(name, scaling, max_m, seed):
    """``(X, y +-1, note)``; ``note`` says if the set was subsampled."""
    if name.startswith("sk_"):
        import sklearn.datasets as D

        X, lab = getattr(D, f"load_{name[3:]}")(return_X_y=True)
        X = X.astype(float)
    else:
        from _common import load

        X, lab = load(name)
    classes = np.unique(lab)
    y = np.where(lab == classes[-1], 1.0, -1.0)           # bench_odm_path.binary
    note = ""
    m = X.shape[0]
    if m > max_m:
        rng = np.random.default_rng(seed)
        idx = []
        for c in (-1.0, 1.0):
            ic = np.flatnonzero(y == c)
            k = max(1, int(round(max_m * ic.size / m)))
            idx.append(rng.choice(ic, min(k, ic.size), replace=False))
        idx = np.sort(np.concatenate(idx))
        X, y = X[idx], y[idx]
        note = f"subsampled {m} -> {idx.size} (stratified, seed {seed})"
    if scaling == "minmax":
        from _common import minmax

        X = minmax(X)
    return np.ascontiguousarray(X), y, note


def make_kernel(kernel, X, scaling):
    import refmodels as rm

    if kernel == "linear":
        return rm.kernels.Linear(), None
    if kernel == "poly":
        # the quadratic kernel (gamma = 1/d, coef0 = 1) on either scaling: on raw features
        # its Gram entries reach 1e8 and beyond (raw breast_cancer: 2.4e11), the checker's
        # "polynomial kernels on raw features"
        gamma = 1.0 / X.shape[1]
        return rm.kernels.Polynomial(degree=2, gamma=gamma, coef0=1.0), gamma
    if scaling == "minmax":
        gamma = 1.0 / X.shape[1]
    else:
        var = float(X.var())
        gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    return rm.kernels.RBF(gamma=gamma), gamma


def make_problem(family, X, y, kern, other, value):
    import refmodels as rm

    cls = {"ODM": rm.ODM, "ODML": rm.ODML, "LDM": rm.LDM, "SVM": rm.SVM,
           "SVMm": rm.SVMm}[family]
    return cls(X, y, kernel=kern, **{PARAM[family]: value}, **other)


# ---------------------------------------------------------------------------------------
# one task, in the worker
# ---------------------------------------------------------------------------------------
def _gram_max(X, kern):
    """The largest diagonal entry of the Gram (1 for the RBF)."""
    if kern.is_linear:
        return float(np.einsum("ij,ij->i", X, X).max())
    return float(np.max(kern.diag(X)))


_WARMED = set()


def warm_up(task):
    """Compile / load the numba code of this family, kernel and options on a tiny problem
    (not timed: the first solve of a fresh process would otherwise carry the compile)."""
    import fast

    k = (task["family"], task["kernel"], json.dumps(task["other"], sort_keys=True))
    if k in _WARMED:
        return
    rng = np.random.default_rng(0)
    X = rng.random((60, 4))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(60) > 0.5, 1.0, -1.0)
    kern, _ = make_kernel(task["kernel"], X, "minmax")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for grid in ([1.0, 2.0 ** 20], [2.0 ** 10]):
            fast.path(make_problem(task["family"], X, y, kern, task["other"], 1.0),
                      certify=True, **{PARAM[task["family"]]: grid})
    _WARMED.add(k)


def run_fast(task, progress):
    """``fast.path`` over the grid with ``certify=True``; one record per point."""
    import fast
    from sklearn.exceptions import ConvergenceWarning

    warm_up(task)

    X, y, note = load_set(task["set"], task["scaling"], task["max_m"], task["seed"])
    kern, gamma = make_kernel(task["kernel"], X, task["scaling"])
    fam, grid = task["family"], task["grid"]
    prob = make_problem(fam, X, y, kern, task["other"], grid[0])
    rec = {"m": int(X.shape[0]), "d": int(X.shape[1]), "note": note, "gamma": gamma,
           "max_diag": _gram_max(X, kern), "points": {}}
    solve0 = fast.solve
    seen = {}

    def solve(p, *a, **k):                 # fast.path calls fast.solve: record its warnings
        v = float(getattr(p, PARAM[fam]))
        progress(("solving", v))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            sol = solve0(p, *a, **k)
        cw = [str(x.message)[:300] for x in w if issubclass(x.category, ConvergenceWarning)]
        other = [f"{x.category.__name__}: {str(x.message)[:200]}" for x in w
                 if not issubclass(x.category, ConvergenceWarning)]
        seen[v] = {"conv_warnings": cw, "other_warnings": other,
                   "t_done": time.perf_counter()}
        progress(("point", v, {"status": sol.status, "solver": sol.solver,
                               "n_iter": sol.n_iter, "time": float(sol.time),
                               "cpu": time.process_time() - c0, "conv_warnings": cw}))
        return sol

    fast.solve = solve
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        sols = fast.path(prob, certify=True, **{PARAM[fam]: grid})
    finally:
        fast.solve = solve0
    rec["wall"] = time.perf_counter() - t0
    rec["cpu"] = time.process_time() - c0             # the path's CPU time, certificates in
    for v, sol in zip(grid, sols):
        s = seen.get(float(v), {})
        cert = sol.info.get("certificate")      # (none for a point of status "error")
        if cert is None:
            rec["points"][repr(float(v))] = {
                "status": sol.status, "solver": sol.solver, "n_iter": sol.n_iter,
                "time": float(sol.time), "cert_ok": False, "worst": float("inf"),
                "worst_name": "error: " + str(sol.info.get("error", ""))[:200],
                "cert_tol": float("nan"), "failing": [],
                "conv_warnings": s.get("conv_warnings", []),
                "other_warnings": s.get("other_warnings", []), "objective": None}
            continue
        name, worst = cert.worst
        rec["points"][repr(float(v))] = {
            "status": sol.status, "solver": sol.solver, "n_iter": sol.n_iter,
            "time": float(sol.time), "cert_ok": bool(cert.ok), "worst": float(worst),
            "worst_name": name, "cert_tol": cert.tol, "failing": cert.failing,
            "cold_retry": bool(sol.info.get("path", {}).get("cold_retry")),
            "conv_warnings": s.get("conv_warnings", []),
            "other_warnings": s.get("other_warnings", []),
            "objective": float(sol.objective) if sol.objective is not None else None}
    return rec


def run_peer(task, progress):
    """LIBODM dual CD (ODM linear) or LIBLINEAR (SVM linear, no intercept), cold per value."""
    X, y, note = load_set(task["set"], task["scaling"], task["max_m"], task["seed"])
    fam, grid = task["family"], task["grid"]
    rec = {"m": int(X.shape[0]), "d": int(X.shape[1]), "note": note, "points": {}}
    kern, _ = make_kernel("linear", X, task["scaling"])
    if task["peer"] == "LIBODM":
        import bench_libodm as L
        from bench_odm_path import libodm_train_solver

        lib, where = L.load_libodm()
        data = L.LibodmData(X, y)
        mu, theta = task["other"]["mu"], task["other"]["theta"]
        for v in grid:
            progress(("solving", v))
            t0 = time.perf_counter()
            _, w = libodm_train_solver(lib, data, L.LINEAR, v, mu, theta, 0.0, task["eps"], 0)
            t = time.perf_counter() - t0
            p = make_problem(fam, X, y, kern, task["other"], v)
            rec["points"][repr(float(v))] = {"time": t, "objective": float(p.primal_value(w))}
    else:
        from sklearn.svm import LinearSVC

        for v in grid:
            progress(("solving", v))
            with warnings.catch_warnings(record=True) as wl:
                warnings.simplefilter("always")
                t0 = time.perf_counter()
                clf = LinearSVC(C=v, loss="hinge", dual=True, fit_intercept=False,
                                tol=task["eps"], max_iter=1000).fit(X, y)
                t = time.perf_counter() - t0
            p = make_problem(fam, X, y, kern, task["other"], v)
            rec["points"][repr(float(v))] = {
                "time": t, "objective": float(p.primal_value(clf.coef_.ravel())),
                "warned": any("converge" in str(x.message) for x in wl)}
    return rec


def _worker(inq, outq):
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    while True:
        task = inq.get()
        if task is None:
            return
        key = task["key"]

        def progress(msg):
            outq.put(("progress", key, msg))
        try:
            rec = (run_peer if task.get("peer") else run_fast)(task, progress)
            rec["result"] = "ok"
        except ValueError as exc:
            rec = {"result": "valueerror", "why": str(exc)[:400]}
        except Exception as exc:                  # noqa: BLE001  a crash is a finding
            rec = {"result": "crash", "why": f"{type(exc).__name__}: {exc}"[:400],
                   "tb": traceback.format_exc()[-1200:]}
        outq.put(("done", key, rec))


def _proc_cpu(pid):
    """CPU seconds (user + system) of a process so far, from /proc (None elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            f = fh.read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class Pool1:
    """One worker process at a time, restarted after a kill."""

    def __init__(self):
        self.ctx = mp.get_context("spawn")
        self.proc = None

    def _start(self):
        self.inq, self.outq = self.ctx.Queue(), self.ctx.Queue()
        self.proc = self.ctx.Process(target=_worker, args=(self.inq, self.outq), daemon=True)
        self.proc.start()

    def run(self, task, hard_limit):
        if self.proc is None or not self.proc.is_alive():
            self._start()
        cpu0 = _proc_cpu(self.proc.pid) or 0.0
        self.inq.put(task)
        t0 = time.perf_counter()
        last = None
        partial = {}                    # the points solved so far (not yet certified)
        while True:
            left = hard_limit - (time.perf_counter() - t0)
            if left <= 0:
                cpu = _proc_cpu(self.proc.pid)
                cpu = None if cpu is None else cpu - cpu0
                self.proc.kill()
                self.proc.join()
                self.proc = None
                return {"result": "timeout", "stuck_at": last, "partial": partial,
                        "elapsed": time.perf_counter() - t0, "worker_cpu": cpu}
            try:
                kind, key, msg = self.outq.get(timeout=min(left, 5.0))
            except queue.Empty:
                if not self.proc.is_alive():
                    self.proc = None
                    return {"result": "crash", "why": "worker died (exit code "
                            f"{self.proc.exitcode if self.proc else '?'})"}
                continue
            if key != task["key"]:
                continue
            if kind == "progress" and msg[0] == "point":
                partial[repr(float(msg[1]))] = msg[2]
            elif kind == "progress":
                last = msg[1]
            else:
                msg["elapsed"] = time.perf_counter() - t0
                return msg

    def close(self):
        if self.proc is not None and self.proc.is_alive():
            self.inq.put(None)
            self.proc.join(10)
            if self.proc.is_alive():
                self.proc.kill()


# ---------------------------------------------------------------------------------------
# findings and summary
# ---------------------------------------------------------------------------------------
def findings(r, time_limit):
    """``[(kind, one-line reproduction)]`` of one fast record."""
    where = (f"set={r['set']} family={r['family']} kernel={r['kernel']} "
             f"scaling={r['scaling']} other={r['other']}")
    out = []
    res = r["res"]
    if res["result"] in ("crash", "valueerror"):
        return [(res["result"], f"{where}: {res['why']}")]
    if res["result"] == "timeout":
        done = res.get("partial") or {}
        last = ", ".join(f"{float(v):g}: {p['status']} {p['time']:.1f}s"
                         for v, p in list(done.items())[-3:])
        cpu = max([p.get("cpu", 0.0) for p in done.values()] or [0.0])
        wc = res.get("worker_cpu")
        wc = f" ({wc:.0f} CPU s on this path, any warm-up included)" if wc else ""
        return [("timeout", f"{where}: killed after {res['elapsed']:.0f} s wall{wc}, stuck at "
                            f"{PARAM[r['family']]}={res['stuck_at']}, {cpu:.1f} CPU s at the last point done "
                            f"({len(done)} points "
                            f"solved before, uncertified; last: {last})")]
    for v, p in res["points"].items():
        line = (f"{where} {PARAM[r['family']]}={float(v):g}: status={p['status']} "
                f"worst={p['worst_name']} {p['worst']:.2e} (tol {p['cert_tol']:g}) "
                f"time={p['time']:.2f}s solver={p['solver']} it={p['n_iter']}")
        if p["status"] == "error":                  # a SolverError: fast.path warned
            out.append(("solver error", line))
        elif p["status"] == "optimal" and not p["cert_ok"]:
            out.append(("SILENT WRONG", line))
        elif p["status"] != "optimal" and not p["conv_warnings"]:
            out.append(("unwarned", line))
        elif p["status"] != "optimal" and p["cert_ok"]:
            out.append(("warned, yet certifies", line))
        elif p["status"] != "optimal":
            out.append(("warned", line))
    if res.get("cpu", res["wall"]) > time_limit:
        out.append(("slow", f"{where}: path {res.get('cpu', res['wall']):.1f} CPU s > {time_limit:g} s "
                            f"(wall {res['wall']:.1f} s, solves "
                            f"{sum(p['time'] for p in res['points'].values()):.1f} s wall)"))
    return out


def summary(records, time_limit):
    fast_recs = [r for r in records if not r.get("peer")]
    peers = {(r["set"], r["family"], r["kernel"], r["scaling"], json.dumps(r["other"])): r
             for r in records if r.get("peer")}
    lines = ["| family | kernel | scaling | paths | points | optimal+certified | "
             "not optimal (warned) | SILENT WRONG | unwarned | crash/ValueError | timeout | "
             "slow | max path CPU s |", "|" + "---|" * 13]
    groups = {}
    for r in fast_recs:
        groups.setdefault((r["family"], r["kernel"], r["scaling"]), []).append(r)
    allf = []
    for (fam, ker, sc), rs in sorted(groups.items()):
        n_pts = n_ok = n_warn = n_sw = n_unw = n_cr = n_to = n_slow = 0
        tmax = 0.0
        for r in rs:
            f = findings(r, time_limit)
            allf += f
            kinds = [k for k, _ in f]
            res = r["res"]
            if res["result"] == "ok":
                n_pts += len(res["points"])
                n_ok += sum(p["status"] == "optimal" and p["cert_ok"]
                            for p in res["points"].values())
                tmax = max(tmax, res.get("cpu", res["wall"]))
            n_warn += kinds.count("warned") + kinds.count("warned, yet certifies")
            n_sw += kinds.count("SILENT WRONG")
            n_unw += kinds.count("unwarned")
            n_cr += (kinds.count("crash") + kinds.count("valueerror")
                     + kinds.count("solver error"))
            n_to += kinds.count("timeout")
            n_slow += kinds.count("slow")
        lines.append(f"| {fam} | {ker} | {sc} | {len(rs)} | {n_pts} | {n_ok} | {n_warn} | "
                     f"{n_sw} | {n_unw} | {n_cr} | {n_to} | {n_slow} | {tmax:.1f} |")
    # peers
    plines = []
    for r in fast_recs:
        k = (r["set"], r["family"], r["kernel"], r["scaling"], json.dumps(r["other"]))
        pr = peers.get(k)
        if pr is None or r["res"]["result"] != "ok":
            continue
        fres = r["res"]
        tf = sum(p["time"] for p in fres["points"].values())
        if pr["res"]["result"] != "ok":
            plines.append(f"| {r['set']} | {r['family']} | {r['scaling']} | {pr['peer']} | "
                          f"{tf:.3f} | {pr['res']['result']} "
                          f"({pr['res'].get('elapsed', 0):.0f} s) | - | - |")
            continue
        tp = sum(p["time"] for p in pr["res"]["points"].values())
        gaps = []
        for v, p in pr["res"]["points"].items():
            fo = fres["points"][v]["objective"]
            gaps.append((p["objective"] - fo) / max(abs(fo), 1e-300))
        plines.append(f"| {r['set']} | {r['family']} | {r['scaling']} | {pr['peer']} | "
                      f"{tf:.3f} | {tp:.3f} | {tf / tp:.3f} | {min(gaps):+.1e} .. "
                      f"{max(gaps):+.1e} |")
    out = ["## fast.path over the grid, certify=True", ""] + lines + [""]
    if plines:
        out += ["## fast (solves, no certificates) vs peers on the same grid (peer cold)", "",
                "| set | family | scaling | peer | fast s | peer s | fast/peer | "
                "peer obj above fast (rel, min..max) |", "|" + "---|" * 8] + plines + [""]
    notes = sorted({f"{r['set']}: {r['res']['note']}" for r in fast_recs
                    if r["res"].get("note")})
    if notes:
        out += ["Subsampled: " + "; ".join(notes), ""]
    order = ["SILENT WRONG", "crash", "valueerror", "solver error", "unwarned", "timeout",
             "slow", "warned", "warned, yet certifies"]
    out += ["## findings (one line each: set, family, kernel, scaling, grid value, status, "
            "worst residual, time)", ""]
    for kind in order:
        sel = [line for k, line in allf if k == kind]
        out.append(f"### {kind}: {len(sel)}")
        out += [f"- {line}" for line in sel]
        out.append("")
    return "\n".join(out), sum(k == "SILENT WRONG" for k, _ in allf)


# ---------------------------------------------------------------------------------------
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"sets {', '.join(QUICK_SETS)}, grid 2^0, 2^8, 2^20")
    ap.add_argument("--family", action="append", choices=FAMILIES)
    ap.add_argument("--sets", default=None, help="comma-separated (KEEL file names, sk_*)")
    ap.add_argument("--kernel", action="append", choices=("linear", "rbf", "poly"))
    ap.add_argument("--scaling", action="append", choices=("minmax", "raw"))
    ap.add_argument("--params", choices=("one", "two"), default="one",
                    help="the first, or both, of each family's other-hyperparameter values")
    ap.add_argument("--max-m", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=60.0,
                    help="CPU seconds per path, certificates included (flagged above)")
    ap.add_argument("--kill-factor", type=float, default=2.0,
                    help="a path still running after kill-factor x time-limit wall seconds "
                         "is killed (recorded as a timeout)")
    ap.add_argument("--peers", action="store_true",
                    help="also time LIBODM (ODM linear, needs LIBODM_DIR) and LIBLINEAR "
                         "(SVM linear, no intercept) on the same grid")
    ap.add_argument("--eps", type=float, default=None,
                    help="peer tolerance (default: LIBODM 1e-3, LIBLINEAR 1e-4)")
    ap.add_argument("--out", default=None,
                    help="JSON lines (default validation/results/sweep_paths.jsonl)")
    ap.add_argument("--md", default=None, help="also write the markdown summary here")
    ap.add_argument("--summary", default=None, help="reprint the summary of a JSONL file")
    args = ap.parse_args(argv)
    if args.summary:
        recs = [json.loads(line) for line in open(args.summary)]
        text, n_bad = summary(recs, args.time_limit)
        print(text)
        return 1 if n_bad else 0
    fams = args.family or list(FAMILIES)
    kernels = args.kernel or ["linear"]
    scalings = args.scaling or ["minmax"]
    sets = (args.sets.split(",") if args.sets else
            list(QUICK_SETS) if args.quick else keel_sets() + list(SKLEARN))
    grid = QUICK_GRID if args.quick else GRID
    others = {f: OTHER[f][:1] if args.params == "one" else OTHER[f] for f in fams}
    lib_ok = False
    if args.peers:
        import bench_libodm as L

        lib_ok = L.load_libodm()[0] is not None
        if not lib_ok:
            print(f"LIBODM not found ({L.load_libodm()[1]}): LIBODM column skipped")
    out_path = Path(args.out) if args.out else REPO / "validation/results/sweep_paths.jsonl"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fh = open(out_path, "a")
    print(f"# sweep_paths: {len(sets)} sets x {fams} x {kernels} x {scalings}, grid "
          f"{[f'2^{int(np.log2(v))}' for v in grid]}, time limit {args.time_limit:g} s, "
          f"max m {args.max_m}; JSONL -> {out_path}", flush=True)
    pool = Pool1()
    records = []
    key = 0
    try:
        for sc in scalings:
            for ker in kernels:
                for fam in fams:
                    for s in sets:
                        for other in others[fam]:
                            base = {"set": s, "family": fam, "kernel": ker, "scaling": sc,
                                    "other": other, "grid": grid, "max_m": args.max_m,
                                    "seed": args.seed}
                            jobs = [dict(base)]
                            if args.peers and ker == "linear":
                                if fam == "ODM" and lib_ok:
                                    jobs.append({**base, "peer": "LIBODM",
                                                 "eps": args.eps or 1e-3})
                                if fam == "SVM" and not other.get("fit_intercept"):
                                    jobs.append({**base, "peer": "LIBLINEAR",
                                                 "eps": args.eps or 1e-4})
                            for job in jobs:
                                key += 1
                                job["key"] = key
                                res = pool.run(job, args.kill_factor * args.time_limit)
                                rec = {k: job[k] for k in ("set", "family", "kernel",
                                                           "scaling", "other")}
                                rec["peer"] = job.get("peer")
                                rec["res"] = res
                                records.append(rec)
                                fh.write(json.dumps(rec, default=str) + "\n")
                                fh.flush()
                                tag = job.get("peer") or "fast"
                                if res["result"] == "ok":
                                    pts = res["points"].values()
                                    extra = ("" if job.get("peer") else
                                             f" certified {sum(p['cert_ok'] for p in pts)}"
                                             f"/{len(pts)}, optimal "
                                             f"{sum(p['status'] == 'optimal' for p in pts)}")
                                    print(f"{sc:6s} {ker:6s} {fam:5s} {s:28s} {tag:9s} "
                                          f"{res['elapsed']:7.1f} s{extra}", flush=True)
                                else:
                                    print(f"{sc:6s} {ker:6s} {fam:5s} {s:28s} {tag:9s} "
                                          f"{res['result'].upper()} "
                                          f"{res.get('why', res.get('stuck_at', ''))}",
                                          flush=True)
    finally:
        pool.close()
        fh.close()
    text, n_bad = summary(records, args.time_limit)
    print()
    print(text)
    if args.md:
        Path(args.md).write_text(text + "\n")
    return 1 if n_bad else 0


if __name__ == "__main__":
    sys.exit(main())
