"""Command line: ``refmodels verify`` (the main job) and ``refmodels certify``.

``verify`` solves every family's primal and dual on built-in data, certifies both and
prints one row per family and kernel; with the fast solvers present it adds their
columns (the one place where ``refmodels`` reaches into ``fast``, lazily).
Exit status 1 if any certificate fails.

``certify`` takes a data file, a family with its hyperparameters and kernel, and a
solution file from any solver, and prints the KKT certificate. Exit status 0 only
when it holds, 1 when it fails, 2 on bad input.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np

import refmodels as rm
from refmodels import datasets
from refmodels.kernels import RBF, Linear, make_kernel

# --------------------------------------------------------------------------- verify


def _binary_data(m=120):
    X, y = datasets.load("heart")
    return X[:m], y[:m]


def _cases():
    """``(family, kernel label, data label, factory)`` of every row of the table."""
    Xb, yb = _binary_data()
    kernels = {"linear": Linear(), "rbf": RBF(gamma=1.0 / Xb.shape[1])}
    rows = []
    binary = [
        ("SVM", lambda k: rm.SVM(Xb, yb, C=1.0, kernel=k)),
        ("SVM+b", lambda k: rm.SVM(Xb, yb, C=1.0, kernel=k, fit_intercept=True)),
        ("ODML", lambda k: rm.ODML(Xb, yb, lam=100.0, mu1=0.5, mu2=0.1, kernel=k)),
        ("LDM", lambda k: rm.LDM(Xb, yb, C=1.0, lam1=0.25, lam2=0.1, kernel=k)),
        ("ODM", lambda k: rm.ODM(Xb, yb, lam=1.0, mu=0.5, theta=0.3, kernel=k)),
        ("SVMm", lambda k: rm.SVMm(Xb, yb, C1=1.0, C2=0.5, eps=0.5, kernel=k)),
        ("EpsSVM", lambda k: rm.EpsSVM(Xb, yb, C1=1.0, C2=0.5, kernel=k)),
    ]
    for fam, make in binary:
        for kname, k in kernels.items():
            rows.append((fam, kname, f"heart[{len(yb)}]", (lambda make=make, k=k: make(k))))
    # multi-class: mcODM (Alg. 3 outer loop; both forms of the inner relaxed QP) on iris
    Xi, yi = datasets.load("iris")
    Xi, yi = Xi[::2], yi[::2]
    for kname, k in {"linear": Linear(), "rbf": RBF(gamma=0.25)}.items():
        rows.append(("McODM", kname, f"iris[{len(yi)}]",
                     lambda k=k: rm.McODM(Xi, yi, lam=1.0, mu=0.5, theta=0.3, kernel=k)))
    # MKLm: two base kernels of different scales
    Xm, ym = Xb[:80], yb[:80]
    rows.append(("MKLm", "lin+rbf", f"heart[{len(ym)}]",
                 lambda: rm.MKLm(Xm, ym, kernels=[Linear(), RBF(gamma=1.0 / Xm.shape[1])],
                                 C1=1.0, C2=0.5, eps=0.5)))
    # DRR / DRM (seed 004): training points and a batch of test points from wine
    Xw, yw = datasets.load("wine")
    Xtr, ytr, Xte = Xw[::3], yw[::3], Xw[1::15]
    for kname, k in {"linear": Linear(), "rbf": RBF(gamma=1.0 / Xw.shape[1])}.items():
        data = f"wine[{len(ytr)}x{len(Xte)}]"
        rows.append(("DRM", kname, data,
                     lambda k=k: rm.DRM(Xtr, ytr, Xte, alpha=1.0, beta=1.0, kernel=k)))
        rows.append(("DRR21", kname, data,
                     lambda k=k: rm.DRR(Xtr, ytr, Xte, alpha=1.0, beta=1.0, q=2, r=1,
                                        rho="identity", kernel=k)))
    return rows


def _verify_row(family, kname, data, factory, use_fast):
    row = {"family": family, "kernel": kname, "data": data}
    try:
        prob = factory()
    except (ImportError, AttributeError) as exc:       # family not available in this build
        row.update(verdict="N/A", error=str(exc))
        return row
    t0 = time.perf_counter()
    sp = prob.solve(form="primal")
    sd = prob.solve(form="dual")
    cp = prob.certify(sp, reference=sd)
    cd = prob.certify(sd, reference=sp)
    row["time"] = time.perf_counter() - t0
    P = float(np.sum(sp.objective))
    D = float(np.sum(cd.values["dual_objective"]))
    row.update(P=P, D=D, gap=abs(P - D) / (1 + abs(P)),
               kkt=max(abs(cp.worst[1]), abs(cd.worst[1])),
               ok=cp.ok and cd.ok)
    failing = sorted(set(cp.failing) | set(cd.failing))
    if failing:
        row["failing"] = failing
    if use_fast:
        _fast_columns(prob, sp, row)
    row["verdict"] = "OK" if row["ok"] and row.get("fast_ok", True) else "FAIL"
    return row


def _fast_columns(prob, ref, row):
    try:
        import fast
    except ImportError:
        return
    try:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fast.solve(prob)                    # JIT warm-up (compile time not in the column)
        row["fast_warmup"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        sol = fast.solve(prob)
        row["fast_time"] = time.perf_counter() - t0
    except ValueError as exc:
        if "no fast solver" in str(exc):
            return
        raise
    cert = prob.certify(sol, reference=ref)
    row["fast_gap"] = abs(float(np.sum(sol.objective)) - row["P"]) / (1 + abs(row["P"]))
    row["fast_ok"] = cert.ok
    if not cert.ok:
        row.setdefault("failing", []).extend(f"fast:{f}" for f in cert.failing)


def _print_table(rows, out):
    fast_cols = any("fast_time" in r for r in rows)
    head = (f"{'family':<8} {'kernel':<7} {'data':<11} {'P*':>14} {'D*':>14} {'gap':>9} "
            f"{'worst KKT':>9} {'time[s]':>8}")
    if fast_cols:
        head += f" {'fast gap':>9} {'fast[s]':>8}"
    head += "  verdict"
    print(head, file=out)
    print("-" * len(head), file=out)
    for r in rows:
        if r["verdict"] == "N/A":
            print(f"{r['family']:<8} {r['kernel']:<7} {r['data']:<11} {'not available: ' + r['error']}",
                  file=out)
            continue
        line = (f"{r['family']:<8} {r['kernel']:<7} {r['data']:<11} {r['P']:14.8g} {r['D']:14.8g} "
                f"{r['gap']:9.1e} {r['kkt']:9.1e} {r['time']:8.2f}")
        if fast_cols:
            if "fast_time" in r:
                line += f" {r['fast_gap']:9.1e} {r['fast_time']:8.3f}"
            else:
                line += f" {'-':>9} {'-':>8}"
        line += f"  {r['verdict']}"
        if r.get("failing"):
            line += f" ({', '.join(r['failing'])})"
        print(line, file=out)


def cmd_verify(args):
    rows = []
    t0 = time.perf_counter()
    for family, kname, data, factory in _cases():
        if args.family and family.lower() not in {f.lower() for f in args.family}:
            continue
        rows.append(_verify_row(family, kname, data, factory, use_fast=not args.no_fast))
    if args.json:
        print(json.dumps(rows, indent=1, default=float))
    else:
        _print_table(rows, sys.stdout)
        n_ok = sum(r["verdict"] == "OK" for r in rows)
        print(f"\n{n_ok} of {len(rows)} rows certified (tol 1e-6, scaled residuals) "
              f"in {time.perf_counter() - t0:.1f} s")
        warm = sum(r.get("fast_warmup", 0.0) - r.get("fast_time", 0.0) for r in rows)
        if any("fast_time" in r for r in rows):
            print(f"fast columns: one solve after a warm-up solve; warm-up minus solve time "
                  f"(numba compilation or cache loading) {warm:.1f} s in all")
    return 0 if all(r["verdict"] in ("OK", "N/A") for r in rows) else 1


# --------------------------------------------------------------------------- certify

_FAMILY_NAMES = ("SVM", "ODML", "LDM", "ODM", "SVMm", "EpsSVM", "McODM", "MKLm", "EpsMKL",
                 "DRR", "DRM")


def _parse_value(s):
    low = s.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("inf", "infinity"):
        return float("inf")
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        return s


def _load_solution(path):
    if str(path).endswith(".npz"):
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    elif str(path).endswith(".json"):
        with open(path) as fh:
            try:
                data = json.load(fh)
            except json.JSONDecodeError as exc:
                raise ValueError(f"solution file {path} is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError(f"solution file {path} must hold a JSON object")
    else:
        raise ValueError(f"solution file must be .npz or .json; got {path}")
    return data


def cmd_certify(args):
    family = args.family
    matches = [f for f in _FAMILY_NAMES if f.lower() == family.lower()]
    if not matches:
        raise ValueError(f"--family must be one of {_FAMILY_NAMES}; got {family!r}")
    cls = getattr(rm, matches[0])
    X, y = datasets.read_data(args.data)
    hyper = {}
    for item in args.param or []:
        if "=" not in item:
            raise ValueError(f"--param takes name=value; got {item!r}")
        k, v = item.split("=", 1)
        hyper[k.strip()] = _parse_value(v.strip())
    kparams = {k: getattr(args, k) for k in ("gamma", "degree", "coef0") if getattr(args, k) is not None}
    kernel = make_kernel(args.kernel, **kparams)
    try:
        prob = cls(X, y, kernel=kernel, **hyper)
    except TypeError as exc:
        raise ValueError(f"--param: {exc}") from None
    data = _load_solution(args.solution)
    dual_names = getattr(prob, "dual_names", ())
    known = {"w", "coef", "intercept", *dual_names, *getattr(prob, "primal_slack_names", ())}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"solution file has unknown arrays {sorted(unknown)}; expected some of "
                         f"{sorted(known)}")
    kw = {}
    for k in ("w", "coef"):
        if k in data:
            kw[k] = np.asarray(data[k], float)
    if "intercept" in data:
        kw["intercept"] = float(np.asarray(data["intercept"], float).ravel()[0])
    dual = {k: np.asarray(data[k], float) for k in dual_names if k in data}
    if dual:
        kw["dual"] = dual
    for k in getattr(prob, "primal_slack_names", ()):
        if k in data:
            kw[k] = np.asarray(data[k], float)
    sol = prob.solution_from(**kw)
    cert = prob.certify(sol, tol=args.tol, reference=not args.no_reference)
    if args.json:
        print(cert.to_json(indent=1))
    else:
        print(cert)
    return 0 if cert.ok else 1


# --------------------------------------------------------------------------- main


def build_parser():
    p = argparse.ArgumentParser(prog="refmodels", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="solve and certify every family on built-in data")
    v.add_argument("--family", action="append", help="only these families (repeatable)")
    v.add_argument("--no-fast", action="store_true", help="reference columns only")
    v.add_argument("--json", action="store_true", help="rows as JSON")
    v.set_defaults(func=cmd_verify)
    c = sub.add_parser("certify", help="certify a solution file from any solver",
                       description="Certify a solution of a family on a data file. Exit 0 iff "
                                   "the KKT certificate holds.")
    c.add_argument("--data", required=True, help="CSV (label in the last column) or LIBSVM format")
    c.add_argument("--family", required=True, help=f"one of {', '.join(_FAMILY_NAMES)}")
    c.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="a hyperparameter by its SPEC name, e.g. --param lam=1 (repeatable)")
    c.add_argument("--kernel", default="linear", help="linear | rbf | poly (default linear)")
    c.add_argument("--gamma", type=float)
    c.add_argument("--degree", type=int)
    c.add_argument("--coef0", type=float)
    c.add_argument("--solution", required=True,
                   help=".npz or .json with w or coef, optional intercept, optional dual "
                        "variables by SPEC name")
    c.add_argument("--tol", type=float, default=1e-6, help="tolerance on scaled residuals")
    c.add_argument("--no-reference", action="store_true",
                   help="skip the reference solve (no objective gap; the duality gap remains)")
    c.add_argument("--json", action="store_true", help="print the certificate as JSON")
    c.set_defaults(func=cmd_certify)
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, OSError) as exc:
        print(f"refmodels {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
