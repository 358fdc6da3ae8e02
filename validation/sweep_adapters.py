"""Sweep of the adapters: foreign solvers' points certified on every real set.

For every set of ``validation/data/keel/{balanced,imbalanced}/*.dat`` (binary as
``bench_odm_path.binary``: the last sorted class is +1, the others -1; at most ``--max-m``
rows, subsampled with a fixed seed) and scikit-learn's breast_cancer, wine, iris, digits
(same convention), with MinMax-scaled and with raw features, this script fits each
supported scikit-learn model (and the ``fast`` estimators) once converged (tight ``tol``,
large ``max_iter``) and once stopped early (``max_iter`` tiny), maps it with
``rm.from_sklearn``, certifies it (``tol=1e-6``, the reference optimum when m <= 2,000) and
records:

* converged -> HOLDS?  (a FAIL is a finding, unless the library itself warned that it did
  not converge: then it is recorded as ``lib-warned``);
* early -> FAILS? and does ``cert.explain()`` name the likely cause ("stopped early" or
  "did not converge")?  (a HOLD is a finding unless the library reports no early stop and
  the point equals the converged one);
* any crash or mapping error.

The CLI route (``--cli``): for a few cases per library, the model file is written by the
library's own writer (LIBSVM ``svm_save_model``, LIBLINEAR ``save_model``; scikit-learn
exposes none, so the SVC is also written in LIBSVM's documented layout; LIBODM's layout from
a ``fast.ODMClassifier`` point; ``.npz`` for the others), ``python -m refmodels.cli certify``
is run on it, and its exit code and verdict are compared with Python's.

One JSON line per case goes to ``--out`` (default ``validation/results/sweep_adapters.jsonl``),
as it finishes; a summary table is printed at the end (``--summary FILE`` reprints it from a
JSONL file without running anything). Usage::

    nice -n 10 python validation/sweep_adapters.py --quick          # minutes
    nice -n 10 python validation/sweep_adapters.py                  # every set (hours)
    nice -n 10 python validation/sweep_adapters.py --sets heart,wdbc --models SVC,LinearSVC
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import refmodels as rm  # noqa: E402
from refmodels import formats  # noqa: E402
from refmodels.adapters import from_sklearn  # noqa: E402

KEEL = HERE / "data" / "keel"
SKLEARN_SETS = ("breast_cancer", "wine", "iris", "digits")
CS = (2.0 ** -2, 1.0, 2.0 ** 4, 2.0 ** 10)
TOL = 1e-6
SEED = 0


# ---- data ---------------------------------------------------------------------------------------
def keel_sets():
    return sorted((p.parent.name, p.stem) for p in KEEL.glob("*/*.dat"))


def load_keel(group, name):
    """A KEEL ``.dat`` file as ``(X raw, labels as strings)`` (as bench_odm_path.load_keel);
    rows with a missing value (``<null>``, ``?``) are dropped and non-numeric columns
    (german, housevotes, tic-tac-toe) one-hot encoded."""
    rows = []
    with open(KEEL / group / f"{name}.dat") as fh:
        for line in fh:
            line = line.strip()
            if line and not line.startswith("@"):
                r = [v.strip() for v in line.split(",")]
                if not any(v in ("<null>", "?", "") for v in r):
                    rows.append(r)
    cols = []
    for j in range(len(rows[0]) - 1):
        vals = [r[j] for r in rows]
        try:
            cols.append(np.array([float(v) for v in vals])[:, None])
        except ValueError:
            cats = sorted(set(vals))
            cols.append(np.array([[float(v == c) for c in cats] for v in vals]))
    return np.hstack(cols), np.array([r[-1] for r in rows])


def load_sklearn(name):
    from sklearn import datasets as D

    X, y = getattr(D, f"load_{name}")(return_X_y=True)
    return X.astype(float), y


def binary(lab):
    """The loader's convention (bench_odm_path.binary): the last sorted class is +1."""
    classes = np.unique(lab)
    return np.where(lab == classes[-1], 1.0, -1.0)


def subsample(X, y, max_m, seed=SEED):
    """At most ``max_m`` rows, a fixed-seed sample stratified so that both classes stay."""
    m = X.shape[0]
    if m <= max_m:
        return X, y
    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    k_pos = max(2, int(round(max_m * pos.size / m)))
    k_pos = min(k_pos, pos.size, max_m - 2)
    idx = np.sort(np.concatenate([rng.choice(pos, k_pos, replace=False),
                                  rng.choice(neg, max_m - k_pos, replace=False)]))
    return X[idx], y[idx]


def minmax(X):
    lo, hi = X.min(0), X.max(0)
    return (X - lo) / np.where(hi > lo, hi - lo, 1.0)


def datasets(sets, max_m):
    """``[(label, X, y)]`` for every set and both scalings (raw, minmax)."""
    out = []
    for group, name in keel_sets():
        if sets and name not in sets:
            continue
        X, lab = load_keel(group, name)
        out.append((f"{group}/{name}", X, binary(lab)))
    for name in SKLEARN_SETS:
        if sets and name not in sets and f"sk-{name}" not in sets:
            continue
        X, lab = load_sklearn(name)
        out.append((f"sklearn/{name}", X, binary(lab)))
    res = []
    for label, X, y in out:
        keep = X.std(0) > 0                              # constant columns carry nothing
        X, y = subsample(X[:, keep], y, max_m)
        res.append((label, "raw", np.ascontiguousarray(X), y))
        res.append((label, "minmax", np.ascontiguousarray(minmax(X)), y))
    return res


# ---- the cases ----------------------------------------------------------------------------------
def cases(quick):
    """``[(library, case label, factory(converged: bool) -> estimator, targets)]``;
    ``targets`` is "labels" or "pm1" (the regressors get the -1/+1 labels as targets)."""
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.linear_model import Ridge
    from sklearn.svm import SVC, LinearSVC, NuSVC

    Cs = (1.0, 2.0 ** 4) if quick else CS
    kernels = (("linear", {}), ("rbf", {"gamma": "scale"}), ("poly2", {"degree": 2}),
               ("poly3", {"degree": 3}))
    out = []
    for kname, kw in kernels:
        kind = "poly" if kname.startswith("poly") else kname
        for C in Cs:
            def svc(conv, kind=kind, kw=kw, C=C):
                return SVC(kernel=kind, C=C, tol=1e-8 if conv else 1e-3,
                           max_iter=10 ** 6 if conv else 5, **kw)
            out.append(("SVC", f"SVC {kname} C={C:g}", svc, "labels"))
    for kname, kw in kernels[:2]:
        for nu in (0.1, 0.3):
            def nusvc(conv, kname=kname, kw=kw, nu=nu):
                return NuSVC(kernel=kname, nu=nu, tol=1e-8 if conv else 1e-3,
                             max_iter=10 ** 6 if conv else 5, **kw)
            out.append(("NuSVC", f"NuSVC {kname} nu={nu:g}", nusvc, "labels"))
    for C in Cs:
        for fi in (True, False):
            def lsvc(conv, C=C, fi=fi):
                return LinearSVC(loss="hinge", dual=True, C=C, fit_intercept=fi,
                                 tol=1e-10 if conv else 1e-4,
                                 max_iter=200_000 if conv else 2)
            out.append(("LinearSVC", f"LinearSVC hinge C={C:g} b={int(fi)}", lsvc, "labels"))
    for kname, kw in kernels[:3]:
        for C in Cs:
            def kr(conv, kind="poly" if kname.startswith("poly") else kname, kw=kw, C=C):
                kw2 = dict(kw)
                if kind == "rbf":
                    kw2 = {}                             # gamma set per data set below
                return KernelRidge(alpha=1.0 / C, kernel=kind, **kw2)
            out.append(("KernelRidge", f"KernelRidge {kname} alpha={1 / C:g}", kr, "pm1"))
    for C in Cs:
        for fi in (True, False):
            def ridge(conv, C=C, fi=fi):
                if conv:
                    return Ridge(alpha=1.0 / C, fit_intercept=fi, solver="cholesky")
                return Ridge(alpha=1.0 / C, fit_intercept=fi, solver="sag", tol=1e-12,
                             max_iter=2, random_state=0)
            out.append(("Ridge", f"Ridge alpha={1 / C:g} b={int(fi)}", ridge, "pm1"))
    import fast

    for name in ("SVMClassifier", "ODMLClassifier", "LDMClassifier", "ODMClassifier",
                 "SVMmClassifier"):
        for kname in ("linear", "rbf"):
            def fst(conv, name=name, kname=kname):
                return getattr(fast, name)(kernel=kname, **({} if conv else {"max_iter": 1}))
            out.append(("fast", f"fast.{name} {kname}", fst, "labels"))
    return out


# ---- one case -----------------------------------------------------------------------------------
def _fit(est, X, y):
    """Fit, returning ``(estimator, library warned (non-convergence, an ill-conditioned
    system), warning text)``."""
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    from scipy.linalg import LinAlgWarning

    words = ("converge", "max_iter", "ill-conditioned", "singular")
    conv = [str(w.message) for w in caught
            if issubclass(w.category, (ConvergenceWarning, LinAlgWarning))
            or any(k in str(w.message).lower() for k in words)]
    return est, bool(conv), (conv[0][:160] if conv else "")


def _cause_kind(cert):
    """Which cause ``explain()`` names: 'rounding-floor' (the residual is at the round-off
    of evaluating the objective on this data), 'stopped early', 'not converged' (far from
    optimal / did not converge), 'box', 'map', or 'other'."""
    text = " ".join(cert.explain().values()).lower()
    if "at the rounding floor" in text:
        return "rounding-floor"
    if "stopped early" in text:
        return "stopped-early"
    if "did not converge" in text:
        return "not-converged"
    if "outside its box" in text:
        return "box"
    if "not the map" in text or "not the same point" in text:
        return "map"
    return "other" if text else "none"


def _certify(prob, sol, reference):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cert = prob.certify(sol, tol=TOL, reference=reference)
    return cert, time.perf_counter() - t0


def _fix_gamma(est, X):
    """KernelRidge has no gamma='scale': give its rbf scikit-learn's SVC 'scale' value."""
    from sklearn.kernel_ridge import KernelRidge

    if isinstance(est, KernelRidge) and est.kernel == "rbf":
        var = X.var()
        est.set_params(gamma=1.0 / (X.shape[1] * var) if var > 0 else 1.0)
    return est


def run_case(lib, label, factory, target, X, y, reference):
    """Both fits of one case on one data set: a list of result dicts."""
    t = y                                                # -1/+1 labels (targets too)
    rows = []
    ref_sol = None
    conv_point = None
    for conv in (True, False):
        if lib == "KernelRidge" and not conv:
            break                                        # a direct solve: no early stop
        row = {"lib": lib, "case": label, "mode": "converged" if conv else "early"}
        try:
            est = _fix_gamma(factory(conv), X)
            t0 = time.perf_counter()
            try:
                est, warned, wtext = _fit(est, X, t)
            except ValueError as exc:
                if "nu is infeasible" not in str(exc):
                    raise
                row.update(outcome="skipped", error=f"{exc} (nu > 2 min(m+, m-) / m)")
                rows.append(row)
                break
            row["t_fit"] = time.perf_counter() - t0
            row["lib_warned"] = warned
            if wtext:
                row["lib_warning"] = wtext
            try:
                prob, sol = from_sklearn(est, X, t)
            except ValueError as exc:
                row.update(outcome="mapping-refused", error=str(exc)[:300])
                rows.append(row)
                continue
            ref = reference
            if not conv and ref_sol is not None and lib not in ("NuSVC",):
                ref = ref_sol                            # same problem: reuse P*
            if conv and reference == "auto" and prob.m <= 2000:
                t0 = time.perf_counter()
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        ref_sol = prob.reference_solution()
                    ref = ref_sol
                except Exception as exc:                  # noqa: BLE001 - recorded
                    row["reference_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
                    ref = False
                row["t_ref"] = time.perf_counter() - t0
            cert, dt = _certify(prob, sol, ref)
            row["t_certify"] = dt
            row["ok"] = cert.ok
            row["holds_at"] = float(cert.holds_at)
            row["worst"] = cert.worst[0]
            row["failing"] = list(cert.failing)
            row["has_objective_gap"] = "objective gap" in cert.residuals
            row["m"], row["d"] = int(X.shape[0]), int(X.shape[1])
            if conv:
                conv_point = _decision(est, X)
                row["outcome"] = ("ok" if cert.ok else
                                  "lib-warned" if warned else "CONVERGED-FAILS")
                if not cert.ok:
                    row["causes"] = cert.explain()
            else:
                row["cause_kind"] = _cause_kind(cert) if not cert.ok else None
                if not cert.ok:
                    row["outcome"] = "ok"
                    if row["cause_kind"] not in ("stopped-early", "not-converged",
                                                 "rounding-floor"):
                        row["outcome"] = "early-fails-cause-unclear"
                        row["causes"] = cert.explain()
                else:
                    same = conv_point is not None and np.allclose(
                        _decision(est, X), conv_point, rtol=1e-6, atol=1e-6)
                    row["same_as_converged"] = bool(same)
                    row["outcome"] = ("early-reached-optimum" if same or not warned
                                      else "EARLY-HOLDS")
        except Exception as exc:                          # noqa: BLE001 - recorded
            row.update(outcome="CRASH", error=f"{type(exc).__name__}: {str(exc)[:300]}",
                       trace=traceback.format_exc(limit=4)[-800:])
        rows.append(row)
    return rows


def _decision(est, X):
    if hasattr(est, "decision_function"):
        return np.asarray(est.decision_function(X), float)
    return np.asarray(est.predict(X), float)


# ---- the CLI route ------------------------------------------------------------------------------
def _write_csv(path, X, y):
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", fmt="%.17g")


def _cli(args):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "refmodels.cli", "certify", *args, "--json"],
                       capture_output=True, text=True, env=env, cwd=str(ROOT))
    verdict = None
    if p.returncode in (0, 1):
        try:
            verdict = bool(json.loads(p.stdout)["ok"])
        except (ValueError, KeyError):
            verdict = "unparsable"
    return p.returncode, verdict, p.stderr.strip()[-300:]


def _write_libsvm_from_svc(path, est, X):
    """An sklearn SVC in LIBSVM's model layout (svm_save_model's, as refmodels.formats reads
    it): first label = classes_[1] so that the decision value keeps its sign."""
    kern = est.kernel
    lines = ["svm_type c_svc", f"kernel_type {'polynomial' if kern == 'poly' else kern}"]
    if kern == "poly":
        lines.append(f"degree {est.degree}")
    if kern in ("rbf", "poly"):
        lines.append(f"gamma {float(est._gamma)!r}")
    if kern == "poly":
        lines.append(f"coef0 {float(est.coef0)!r}")
    sv = est.support_vectors_
    lines += ["nr_class 2", f"total_sv {sv.shape[0]}", f"rho {-float(est.intercept_[0])!r}",
              f"label {est.classes_[1]:g} {est.classes_[0]:g}", "nr_sv 0 0", "SV"]
    for c, row in zip(est.dual_coef_[0], sv):
        feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0)
        lines.append(f"{float(c)!r} {feats}")
    Path(path).write_text("\n".join(lines) + "\n")


def _round_trip(label, prob, sol, csv, family, params, path, fmt=None, extra=()):
    """One check of the CLI round trip: its label, whether Python's ``certify`` accepts
    ``sol``, and the ``refmodels certify`` arguments that read the same model file."""
    argv = ["--data", csv, "--family", family]
    for p in params:
        argv += ["--param", p]
    argv += [*extra, "--solution", path] + ([] if fmt is None else ["--solution-format", fmt])
    return label, _certify(prob, sol, "auto")[0].ok, argv


def cli_route(data, tmp):
    """A few cases per library through ``refmodels certify``; compares exit code and verdict
    with Python's certificate of the same point."""
    import scipy.sparse as sp
    from sklearn.svm import SVC

    out = []
    for label, scaling, X, y in data:
        csv = os.path.join(tmp, "train.csv")
        _write_csv(csv, X, y)
        checks = []
        # 1. scikit-learn SVC written in LIBSVM's layout (sklearn has no model writer)
        for conv in (True, False):
            est = SVC(kernel="rbf", C=1.0, tol=1e-8 if conv else 1e-3,
                      max_iter=10 ** 7 if conv else 5)
            est, _, _ = _fit(est, X, y)
            path = os.path.join(tmp, f"svc{len(checks)}.model")
            _write_libsvm_from_svc(path, est, X)
            prob, sol = from_sklearn(est, X, y)
            checks.append(_round_trip(f"SVC rbf ({'conv' if conv else 'early'}) -> libsvm file",
                                      prob, sol, csv, "SVM", ["C=1"], path, "libsvm"))
        # 2. LIBSVM itself (libsvm-official), its own writer
        try:
            from libsvm import svmutil
        except ImportError:
            svmutil = None
        if svmutil is not None:
            for eps, tag in (("1e-10", "conv"), ("0.5", "early")):
                path = os.path.join(tmp, f"libsvm{len(checks)}.model")
                g = 1.0 / X.shape[1]
                svmutil.svm_save_model(path, svmutil.svm_train(
                    y, sp.csr_matrix(X), f"-c 1 -t 2 -g {g!r} -e {eps} -q"))
                info = formats.model_info(path, "libsvm")
                prob = rm.SVM(X, y, C=1.0, kernel=info["kernel"], fit_intercept=True)
                sol = prob.solution_from(**formats.load_model(path, "libsvm", X, y))
                checks.append(_round_trip(f"LIBSVM rbf -e {eps} ({tag})", prob, sol, csv,
                                          "SVM", ["C=1"], path, "libsvm"))
        # 3. LIBLINEAR itself, -s 3, with and without -B 1
        try:
            from liblinear import liblinearutil
        except ImportError:
            liblinearutil = None
        if liblinearutil is not None:
            for bias in (None, 1.0):
                for eps, tag in (("1e-10", "conv"), ("2", "early")):
                    path = os.path.join(tmp, f"liblinear{len(checks)}.model")
                    opts = f"-s 3 -c 0.25 -e {eps} -q" + ("" if bias is None else f" -B {bias}")
                    liblinearutil.save_model(path, liblinearutil.train(
                        y, sp.csr_matrix(X), opts))
                    Xa = X if bias is None else formats.augment(X, bias)
                    prob = rm.SVM(Xa, y, C=0.25)
                    sol = prob.solution_from(**formats.load_model(path, "liblinear", Xa, y))
                    checks.append(_round_trip(f"LIBLINEAR {opts}", prob, sol, csv, "SVM",
                                              ["C=0.25"], path, "liblinear"))
        # 4. LIBODM's layout from a fast.ODMClassifier point (linear: w)
        import fast

        for conv in (True, False):
            est, _, _ = _fit(fast.ODMClassifier(lam=1.0, mu=0.5, theta=0.3, kernel="linear",
                                                **({} if conv else {"max_iter": 1})), X, y)
            path = os.path.join(tmp, f"odm{len(checks)}.model")
            Path(path).write_text("\n".join([
                f"instance {X.shape[0]}", f"feature {X.shape[1]}", "bias 0", "solver 0",
                "kernel 0", "w", " ".join(f"{v:.16g}" for v in est.coef_[0]) + " "]) + "\n")
            prob = rm.ODM(X, y, lam=1.0, mu=0.5, theta=0.3, kernel=rm.kernels.Linear())
            sol = prob.solution_from(**formats.load_model(path, "libodm", X, y))
            checks.append(_round_trip(f"ODM linear -> libodm file ({'conv' if conv else 'early'})",
                                      prob, sol, csv, "ODM", ["lam=1", "mu=0.5", "theta=0.3"],
                                      path, "libodm"))
        # 5. a fast estimator's point as .npz
        est, _, _ = _fit(fast.SVMClassifier(C=1.0, kernel="rbf"), X, y)
        prob, sol = from_sklearn(est, X, y)
        path = os.path.join(tmp, f"fast{len(checks)}.npz")
        np.savez(path, coef=est.dual_coef_[0], intercept=est.intercept_[0])
        checks.append(_round_trip("fast.SVMClassifier rbf -> npz", prob, sol, csv, "SVM",
                                  ["C=1", "fit_intercept=true"], path,
                                  extra=("--kernel", "rbf")))
        for name, py, argv in checks:
            t0 = time.perf_counter()
            rc, verdict, err = _cli(argv)
            row = {"lib": "CLI", "case": name, "data": label, "scaling": scaling,
                   "python_ok": py, "cli_rc": rc, "cli_ok": verdict,
                   "t_cli": time.perf_counter() - t0}
            agree = rc in (0, 1) and verdict == py and (rc == 0) == py
            row["outcome"] = "ok" if agree else "CLI-DISAGREES"
            if err and not agree:
                row["stderr"] = err
            out.append(row)
            print(_line(row), flush=True)
    return out


# ---- reporting ----------------------------------------------------------------------------------
def _line(r):
    if r["lib"] == "CLI":
        return (f"  {r['outcome']:<22s} CLI {r['data']}/{r['scaling']} {r['case']}: python "
                f"{r['python_ok']} cli rc={r['cli_rc']} ok={r['cli_ok']} ({r['t_cli']:.1f}s)")
    extra = ""
    if "holds_at" in r:
        extra = (f" holds_at={r['holds_at']:.1e} worst={r['worst']} "
                 f"cert={r.get('t_certify', 0):.2f}s ref={r.get('t_ref', 0):.2f}s")
    if r.get("error"):
        extra += f" error={r['error'][:140]}"
    return (f"  {r['outcome']:<22s} {r.get('data', '')}/{r.get('scaling', '')} {r['case']} "
            f"[{r['mode']}]{extra}")


FINDINGS = ("CRASH", "CONVERGED-FAILS", "EARLY-HOLDS", "mapping-refused",
            "early-fails-cause-unclear", "CLI-DISAGREES")


def summary(rows):
    from collections import Counter, defaultdict

    by = defaultdict(Counter)
    t_cert = defaultdict(list)
    for r in rows:
        key = r["lib"] if r["lib"] == "CLI" else f"{r['lib']} [{r['mode']}]"
        by[key][r["outcome"]] += 1
        if "t_certify" in r:
            t_cert[r["lib"]].append(r["t_certify"] + r.get("t_ref", 0.0))
    lines = ["", "| library [mode] | cases | outcomes |", "| --- | ---: | --- |"]
    for k in sorted(by):
        c = by[k]
        lines.append(f"| {k} | {sum(c.values())} | "
                     + ", ".join(f"{o} {n}" for o, n in c.most_common()) + " |")
    lines += ["", "| library | certify+reference s: median | max |", "| --- | ---: | ---: |"]
    for k in sorted(t_cert):
        v = np.asarray(t_cert[k])
        lines.append(f"| {k} | {np.median(v):.2f} | {v.max():.2f} |")
    found = [r for r in rows if r["outcome"] in FINDINGS]
    lines.append(f"\nfindings: {len(found)}")
    for r in found:
        lines.append(_line(r))
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="m <= 300, C in {1, 16}, 6 sets: minutes")
    p.add_argument("--grid", choices=("quick", "full"), default=None,
                   help="C grid: quick {1, 16}, full {2^-2, 1, 2^4, 2^10} (default: full unless "
                   "--quick)")
    p.add_argument("--sets", default="", help="comma-separated set names (default: all)")
    p.add_argument("--models", default="",
                   help="comma-separated libraries: SVC,NuSVC,LinearSVC,KernelRidge,Ridge,fast")
    p.add_argument("--scalings", default="raw,minmax")
    p.add_argument("--max-m", type=int, default=None, help="rows per set (default 2000; 300 "
                   "with --quick)")
    p.add_argument("--reference", choices=("auto", "off"), default="auto",
                   help="auto: the reference optimum when m <= 2000 (as certify)")
    p.add_argument("--cli", action="store_true", help="also the CLI route (a few cases per "
                   "library, on the first sets)")
    p.add_argument("--cli-only", action="store_true")
    p.add_argument("--out", default=str(HERE / "results" / "sweep_adapters.jsonl"))
    p.add_argument("--summary", metavar="FILE", help="print the summary of a JSONL file")
    a = p.parse_args(argv)
    if a.summary:
        with open(a.summary) as fh:
            print(summary([json.loads(ln) for ln in fh if ln.strip()]))
        return 0
    max_m = a.max_m or (300 if a.quick else 2000)
    sets = [s for s in a.sets.split(",") if s]
    if a.quick and not sets:
        sets = ["heart", "sonar", "ionosphere", "glass2", "yeast-1_vs_7", "breast_cancer"]
    libs = [s for s in a.models.split(",") if s]
    scalings = a.scalings.split(",")
    data = [d for d in datasets(sets, max_m) if d[1] in scalings]
    reference = "auto" if a.reference == "auto" else False
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    rows = []
    print(f"{len(data)} data variants; m <= {max_m}; reference {a.reference}", flush=True)
    with open(a.out, "a") as fh:
        if not a.cli_only:
            grid_quick = (a.grid == "quick") if a.grid else a.quick
            all_cases = [c for c in cases(grid_quick) if not libs or c[0] in libs]
            for label, scaling, X, y in data:
                print(f"{label} ({scaling}): m={X.shape[0]} d={X.shape[1]} "
                      f"+1: {int((y > 0).sum())}", flush=True)
                for lib, clabel, factory, target in all_cases:
                    for r in run_case(lib, clabel, factory, target, X, y, reference):
                        r.update(data=label, scaling=scaling)
                        rows.append(r)
                        fh.write(json.dumps(r) + "\n")
                        fh.flush()
                        if r["outcome"] != "ok" or not a.quick:
                            print(_line(r), flush=True)
        if a.cli or a.cli_only:
            cli_data = [d for d in data if d[0] in ("balanced/heart", "sklearn/breast_cancer",
                                                    "imbalanced/glass2")] or data[:2]
            with tempfile.TemporaryDirectory() as tmp:
                for r in cli_route(cli_data, tmp):
                    rows.append(r)
                    fh.write(json.dumps(r) + "\n")
                    fh.flush()
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
