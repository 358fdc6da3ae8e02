"""Linear families on sparse data at the seeds' large-scale sizes, against LIBLINEAR's primal
Newton on the same matrix.

Data: a CSR matrix of ``--m`` rows and ``--d`` features with ``--nnz`` non-zeros a row
(uniform columns, values in [0, 1), each row scaled to unit norm as rcv1's are; labels the
sign of a random linear function, 5 % flipped), built in each subprocess from seed 0 (the
build time is reported apart). ``--columns zipf`` draws a row's columns by Zipf's law
instead, as words in text: a few columns are in most rows. The default, 500,000 x 50,000 with 70 non-zeros a row (35 M
non-zeros), is rcv1's shape.

Rows (each a subprocess, so that its peak resident memory is its own):

* ``liblinear``: ``sklearn.svm.LinearSVC(loss="squared_hinge", dual=False, C=1,
  fit_intercept=False, tol=1e-4)``: LIBLINEAR's ``-s 2`` (trust-region Newton), the peer;
* ``liblinear-hinge``: ``LinearSVC(loss="hinge", dual=True, C=1, fit_intercept=False)`` at
  ``tol`` 1e-4 and 1e-5: LIBLINEAR's ``-s 3`` (dual coordinate descent), the SVM's own
  peer: the SVM row is the hinge loss, which ``-s 2``'s squared hinge is not. Its duality
  gap is reported relative to the fast SVM's dual objective (the certificate asks 1e-6);
* ``ODM``, ``SVM``, ``ODML``, ``LDM``: ``fast.solve`` (``method="auto"``) then
  ``prob.certify(sol, reference=False)``; ODM at ``lam = m`` (the estimator's default),
  ``mu = 0.5``, ``theta = 0.3``; SVM at ``C = 1`` (``--C``, which also sets LIBLINEAR's and
  LDM's); ODML ``lam = m``, ``mu1 = mu2 = 0.1``; LDM ``C = 1``, ``lam1 = lam2 = 0.05`` (the
  split path of ``fast.odml``: the whitened data would be dense 500,000 x 50,000).

Reported per row: the time of the solve and of the certificate, its verdict, the peak
resident memory of the process after the data were built (the interpreter, the data and
what the solver and the certificate add; on Linux the high-water mark is reset once the
data exist, so that the generator's temporary copies do not count; the resident size
with the data alone is reported too), and the ratios to LIBLINEAR's time and to the data's size (CSR arrays).
Targets: solve and certificate each within 2x LIBLINEAR, memory within 3x the data.

    python validation/bench_sparse_scale.py                  # 500,000 x 50,000 (minutes)
    python validation/bench_sparse_scale.py --quick          # 50,000 x 5,000
"""
from __future__ import annotations

import json
import subprocess
import sys

import _harness as H

CHILD = r"""
import json, resource, sys, time, warnings
import numpy as np, scipy.sparse as sp
warnings.simplefilter("ignore")
kind, m, d, nnz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
CC = float(sys.argv[5])
columns = sys.argv[6]
import refmodels as rm, fast
out = {}
t = time.perf_counter()
r = np.random.default_rng(0)
indptr = np.arange(0, m * nnz + 1, nnz, dtype=np.int64)
if columns == "zipf":
    # text-like columns: the j-th most frequent drawn with probability ~ 1 / (j + 1)
    # (a word's frequency by its rank), so a few columns are in most rows
    pz = 1.0 / np.arange(1, d + 1)
    idx = np.searchsorted(np.cumsum(pz / pz.sum()), r.random(m * nnz)).astype(np.int32)
    np.minimum(idx, d - 1, out=idx)
else:
    idx = r.integers(0, d, size=m * nnz).astype(np.int32)
val = r.random(m * nnz)
X = sp.csr_matrix((val, idx, indptr), shape=(m, d))
X.sum_duplicates()
X = sp.diags(1.0 / np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel())) @ X
X = X.tocsr()
f = X @ r.normal(size=d)
y = np.where(f > np.median(f), 1.0, -1.0)
y[r.random(m) < 0.05] *= -1
out["build_s"] = time.perf_counter() - t
out["data_gb"] = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 1e9
out["nnz"] = int(X.nnz)
# the peak resident memory from here on: the building's temporaries (several copies of the
# arrays) are not the solver's. Linux resets the high-water mark VmHWM on "5" written to
# clear_refs; elsewhere the peak includes the building (ru_maxrss)
# the generator's arrays (``val`` alone is the size of the data) are not the solver's: free
# them before the resident size is read
del indptr, idx, val, f
import gc
gc.collect()
def _status_gb(key):
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1e6
    except OSError:
        return None
try:
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    out["peak_from"] = "after the data were built"
except OSError:
    out["peak_from"] = "process start"
out["rss_data_gb"] = _status_gb("VmRSS")
if kind == "liblinear":
    from sklearn.svm import LinearSVC
    LinearSVC(loss="squared_hinge", dual=False, C=CC, fit_intercept=False,
              tol=1e-4).fit(X[:2000], y[:2000])
    t = time.perf_counter()
    LinearSVC(loss="squared_hinge", dual=False, C=CC, fit_intercept=False, tol=1e-4).fit(X, y)
    out["solve_s"] = time.perf_counter() - t; out["status"] = "-"
elif kind.startswith("liblinear-hinge"):
    from sklearn.svm import LinearSVC
    tol = float(kind.split("@")[1])
    LinearSVC(loss="hinge", C=CC, fit_intercept=False, tol=tol).fit(X[:2000], y[:2000])
    t = time.perf_counter()
    est = LinearSVC(loss="hinge", C=CC, fit_intercept=False, tol=tol, max_iter=100000).fit(X, y)
    out["solve_s"] = time.perf_counter() - t; out["status"] = f"{est.n_iter_} epochs"
    w = est.coef_.ravel()
    out["primal"] = float(0.5 * w @ w + CC * np.maximum(0.0, 1.0 - y * (X @ w)).sum())
else:
    make = {"ODM": lambda X, y: rm.ODM(X, y, lam=float(X.shape[0]), mu=0.5, theta=0.3),
            "SVM": lambda X, y: rm.SVM(X, y, C=CC),
            "ODML": lambda X, y: rm.ODML(X, y, lam=float(X.shape[0]), mu1=0.1, mu2=0.1),
            "LDM": lambda X, y: rm.LDM(X, y, C=CC, lam1=0.05, lam2=0.05)}[kind]
    # (the warm-up compiles the path the full solve takes: ODML / LDM take the split path
    # on the full matrix, the whitened one on 2,000 rows)
    warm = {"ODML": dict(path="split"), "LDM": dict(path="split")}.get(kind, {})
    t = time.perf_counter(); fast.solve(make(X[:2000], y[:2000]), random_state=0, **warm)
    out["compile_s"] = time.perf_counter() - t
    p = make(X, y)
    t = time.perf_counter(); s = fast.solve(p, random_state=0)
    out["solve_s"] = time.perf_counter() - t; out["status"] = s.status
    out["method"] = str(s.info.get("method"))
    t = time.perf_counter(); c = p.certify(s, reference=False)
    out["certify_s"] = time.perf_counter() - t; out["ok"] = bool(c.ok)
    out["worst"] = f"{c.worst[0]} {c.worst[1]:.2e}"
    out["dual"] = s.info.get("dual_objective")
hwm = _status_gb("VmHWM") if out["peak_from"] != "process start" else None
out["peak_gb"] = hwm if hwm is not None else (
    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6)
print(json.dumps(out))
"""

KINDS = ("liblinear", "ODM", "SVM", "ODML", "LDM")
#: the SVM's own peer (hinge loss, dual CD) at these tolerances, when the SVM row runs
HINGE_TOLS = (1e-4, 1e-5)


def run(kind, m, d, nnz, C=1.0, columns="uniform"):
    res = subprocess.run([sys.executable, "-c", CHILD, kind, str(m), str(d), str(nnz), repr(C),
                          columns],
                         capture_output=True, text=True)
    if res.returncode != 0:
        return {"error": (res.stderr.strip().splitlines() or ["?"])[-1][:120]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    p = H.parser(__doc__.splitlines()[0], m=500000, d=50000, nnz=70)
    p.add_argument("--only", nargs="*", default=list(KINDS), choices=KINDS)
    p.add_argument("--C", type=float, default=1.0,
                   help="C of the SVM, the LDM and the LIBLINEAR rows (default 1)")
    p.add_argument("--columns", choices=("uniform", "zipf"), default="uniform",
                   help="how a row's columns are drawn: uniformly (default), or by Zipf's law "
                        "(column j with probability ~ 1/(j + 1), as words in text; the "
                        "repeated draws of a row are summed, so rows hold fewer entries)")
    args = p.parse_args()
    if args.quick:
        args.m, args.d = 50000, 5000
    # (one record per kind of columns: bench_sparse_scale.md, bench_sparse_scale_zipf.md)
    R = H.Report("Linear families on sparse data at scale, against LIBLINEAR -s 2"
                 + (", Zipf columns" if args.columns == "zipf" else ""), args,
                 name=None if args.columns == "uniform" else f"{H.script_name()}_zipf")
    kinds = ["liblinear"] + [k for k in args.only if k != "liblinear"]
    if "SVM" in kinds:
        kinds += [f"liblinear-hinge@{t:g}" for t in HINGE_TOLS]
    outs = {k: run(k, args.m, args.d, args.nnz, args.C, args.columns) for k in kinds}
    svm_dual = outs.get("SVM", {}).get("dual")
    peer = outs["liblinear"].get("solve_s")
    table = []
    for kind, out in outs.items():
        if "error" in out:
            # (the message's head: which array and the estimate follow in the log)
            table.append([kind, "-", "refused" if "MemoryError" in out["error"] else "error",
                          "", "", "", "", out["error"][:70], ""])
            continue
        solve, cert = out["solve_s"], out.get("certify_s")
        if "primal" in out:           # the hinge peer: its gap to the fast SVM's dual
            gap = ((out["primal"] - svm_dual) / abs(out["primal"]) if svm_dual is not None
                   else float("nan"))
            out["worst"] = f"rel. gap to fast SVM's dual {gap:.1e}"
            if svm_dual is not None and outs["SVM"].get("solve_s"):
                out["worst"] += f"; fast SVM / this = {outs['SVM']['solve_s'] / solve:.2f}"
        table.append([kind, out.get("method", "-"), out["status"], f"{solve:.2f}",
                      f"{solve / peer:.2f}" if peer else "-",
                      f"{cert:.2f}" if cert is not None else "-",
                      f"{cert / peer:.2f}" if cert is not None and peer else "-",
                      out.get("worst", "-") + (f" ({'holds' if out['ok'] else 'FAILS'})"
                                               if "ok" in out else ""),
                      f"{out['peak_gb']:.2f} ({out['peak_gb'] / out['data_gb']:.1f}x)"])
    first = next(o for o in outs.values() if "error" not in o)
    R.say(f"data: {args.m:,} x {args.d:,} CSR, {first['nnz']:,} non-zeros "
          f"({first['data_gb']:.2f} GB of arrays), built in {first['build_s']:.1f} s; "
          f"resident with the data alone: {first.get('rss_data_gb') or float('nan'):.2f} GB; "
          f"columns {args.columns}; "
          f"peak memory counted from {first.get('peak_from', 'process start')}; C = {args.C:g} "
          f"(SVM, LDM, LIBLINEAR)")
    R.table(["row", "method", "status", "solve s", "/ LIBLINEAR", "certify s", "/ LIBLINEAR",
             "certificate (worst residual)", "peak GB (x data)"], table,
            caption="targets: solve and certificate each <= 2x LIBLINEAR; memory <= 3x data")
    R.record()


if __name__ == "__main__":
    main()
