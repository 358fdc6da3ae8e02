"""Memory and time at scale: what a solve and its certificate need, each in a fresh process.

Rows (each a subprocess, so that its peak resident memory is its own):

* ``rbf-svm``: an RBF SVM on ``--m`` points (10 Gaussian features), ``fast.solve`` then
  ``certify(reference=False)``; above 2,000 points the certificate takes the representer
  form (kernel blocks, no Gram, no map). Target: ``m = 30,000`` within 4 GB.
* ``rbf-odm``: kernel ODM (RBF) on ``--odm-m`` points (10 Gaussian features, ``lam = m``,
  ``mu = 0.5``, ``theta = 0.3``: the DCD, as ``method="auto"`` chooses there), then
  ``certify(reference=False)``: the DCD's Gram beyond the 200 MB row cache, up to
  ``fast._kernels.AUTO_GRAM_MB``; beyond it (m > 16,384) ``"auto"`` takes the SMO on a row
  cache. ``--odm-method dcd`` / ``smo`` forces a method (the row is then named
  ``rbf-odm:dcd`` / ``rbf-odm:smo``), ``--odm-cache`` a ``cache_size`` (MB);
* ``csr-odm``: linear ODM on a CSR matrix (``--csr-m`` x ``--csr-d``, 20 non-zeros a row);
  the certificate must stay sparse.
* ``drm`` (``--drm``, long): DRM on ``--drm-m`` points (RBF, 20 test points), the closed
  form by panels with its progress bar: one ``m x m`` array.

The peak is ``ru_maxrss`` of the subprocess (solve and certificate together).

    python validation/bench_scale_memory.py                 # m = 30,000
    python validation/bench_scale_memory.py --quick
    python validation/bench_scale_memory.py --drm           # + DRM at 30,000 (minutes)
    python validation/bench_scale_memory.py --rows rbf-odm --odm-m 20000 --odm-method smo
"""
from __future__ import annotations

import json
import subprocess
import sys

import _harness as H

CHILD = r"""
import json, resource, sys, time, warnings
import numpy as np, scipy.sparse as sp
import refmodels as rm, fast
warnings.simplefilter("ignore")
kind, m, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
method, cache = sys.argv[4], float(sys.argv[5])
opts = {} if method == "auto" else {"method": method}
if cache > 0:
    opts["cache_size"] = cache
r = np.random.default_rng(0)
out = {}
if kind == "rbf-svm":
    X = r.normal(size=(m, 10)); y = np.where(X[:, 0] + 0.3 * r.normal(size=m) > 0, 1, -1)
    p = rm.SVM(X, y, C=1.0, kernel=rm.kernels.RBF(0.1))
elif kind == "rbf-odm":
    X = r.normal(size=(m, 10)); y = np.where(X[:, 0] + 0.5 * r.normal(size=m) > 0, 1, -1)
    p = rm.ODM(X, y, lam=float(m), mu=0.5, theta=0.3, kernel=rm.kernels.RBF(0.1))
elif kind == "csr-odm":
    rows = np.repeat(np.arange(m), 20); cols = r.integers(0, d, size=m * 20)
    X = sp.csr_matrix((r.random(m * 20), (rows, cols)), shape=(m, d)); X.sum_duplicates()
    y = np.where(X @ r.normal(size=d) > 0, 1, -1)
    p = rm.ODM(X, y, lam=1.0, mu=0.5, theta=0.3)
else:
    X = r.normal(size=(m, 10)); y = r.integers(0, 3, size=m)
    p = rm.DRM(X, y, r.normal(size=(20, 10)), alpha=0.5, beta=1.0, kernel=rm.kernels.RBF(0.1))
t = time.perf_counter()
s = fast.solve(p, random_state=0, **opts) if kind == "rbf-odm" else (
    fast.solve(p, random_state=0) if kind != "drm" else fast.solve(p))
out["solve_s"] = time.perf_counter() - t; out["status"] = s.status; out["solver"] = s.solver
out["solve_peak_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
if kind != "drm":
    t = time.perf_counter(); c = p.certify(s, reference=False)
    out["certify_s"] = time.perf_counter() - t; out["ok"] = c.ok
out["peak_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
print(json.dumps(out))
"""


def run(kind, m, d, method="auto", cache=0.0):
    res = subprocess.run([sys.executable, "-c", CHILD, kind, str(m), str(d), method,
                          str(cache)], capture_output=True, text=True)
    if res.returncode != 0:
        return {"error": (res.stderr.strip().splitlines() or ["?"])[-1][:120]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    p = H.parser(__doc__.splitlines()[0], m=30000, odm_m=12000, csr_m=200000, csr_d=20000,
                 drm_m=30000)
    p.add_argument("--drm", action="store_true", help="also DRM at --drm-m points (minutes)")
    p.add_argument("--odm-method", default="auto", choices=("auto", "dcd", "smo"),
                   help="the kernel ODM row's method (default: fast.solve's choice)")
    p.add_argument("--odm-cache", type=float, default=0.0,
                   help="the kernel ODM row's cache_size in MB (0: the method's default)")
    p.add_argument("--rows", default="rbf-svm,rbf-odm,csr-odm",
                   help="comma-separated rows to run (default: all but drm)")
    args = p.parse_args()
    if args.quick:
        args.m, args.odm_m, args.csr_m, args.csr_d, args.drm_m = 3000, 3000, 20000, 2000, 3000
    R = H.Report("Memory and time at scale (solve and certificate, one process per row)", args)
    rows = [("rbf-svm", args.m, 10), ("rbf-odm", args.odm_m, 10),
            ("csr-odm", args.csr_m, args.csr_d)]
    rows = [r for r in rows if r[0] in args.rows.split(",")]
    if args.drm:
        rows.append(("drm", args.drm_m, 10))
    table = []
    for kind, m, d in rows:
        odm = kind == "rbf-odm"
        out = run(kind, m, d, args.odm_method if odm else "auto",
                  args.odm_cache if odm else 0.0)
        name = kind + (f":{args.odm_method}" if odm and args.odm_method != "auto" else "")
        if "error" in out:
            table.append([name, f"{m:,} x {d:,}", "error", out["error"], "", "", "", ""])
            continue
        table.append([name, f"{m:,} x {d:,}", out["solver"], out["status"],
                      f"{out['solve_s']:.1f}",
                      f"{out['certify_s']:.1f}" if "certify_s" in out else "-",
                      str(out.get("ok", "-")), f"{out['peak_gb']:.2f}"])
    R.table(["row", "m x d", "solver", "status", "solve s", "certify s", "certificate holds",
             "peak GB"], table, caption="target: the RBF certificate at m = 30,000 within 4 GB")
    R.record()


if __name__ == "__main__":
    main()
