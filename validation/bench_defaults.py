"""Defaults that hold their own: every estimator of :mod:`fast.estimators` with
its DEFAULT parameters in ``make_pipeline(MinMaxScaler(), Est())`` against ``SVC()``'s
defaults, by mean accuracy over stratified k-fold CV (default 3 folds, shuffled with seed 0,
the same folds for every estimator) on scikit-learn's bundled breast_cancer, wine, iris and
digits, or on the KEEL sets copied under ``validation/data/keel`` (``--sets``).

Target: each estimator's mean over the sets within 1 point of SVC's, and no set more than
3 points below SVC's.

    python validation/bench_defaults.py                 # every estimator, 3-fold, 4 sets
    python validation/bench_defaults.py --cv 5 --only ODM McODM
    python validation/bench_defaults.py --sets keel --no-record        # all 34 KEEL sets
    python validation/bench_defaults.py --sets balanced --scaler none  # raw features
    python validation/bench_defaults.py --sets sonar vowel --only ODM

``--sets`` takes set names (a KEEL file name without ``.dat``, or one of the four
scikit-learn sets) or the groups ``sklearn``, ``balanced``, ``imbalanced``, ``keel`` (both).
KEEL sets are loaded by ``validation/reproduce/_common.py`` (categorical features as sorted
ordinal codes, labels as integer codes; multi-class sets stay multi-class). A set with more
than ``--max-m`` (3,000) samples is subsampled to ``--max-m``, stratified, seed 0.

With the four sets, prints one row per estimator: the accuracy per set with the difference
to SVC beside it, the mean, its difference and ratio to SVC's, the worst set's gap, the
target met or not, the seconds spent (fit + predict over all folds) and the
ConvergenceWarnings raised. With more sets, prints the difference to SVC per set (one row
per set, one column per estimator), then the summary per estimator (mean difference, worst
set, sets more than 3 points below, ConvergenceWarnings, other warnings, failed fits, time
relative to SVC's). A fit that raises is reported (``FAIL``) and counts as accuracy 0.
Writes the output to ``validation/results/bench/bench_defaults.md``, replacing the previous
record (``--no-record`` to skip that);
``--csv PATH`` also writes one row per (estimator, set).
"""
from __future__ import annotations

import argparse
import csv
import importlib.util
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

import fast

import _harness as H

SKLEARN = {"breast_cancer": load_breast_cancer, "wine": load_wine, "iris": load_iris,
           "digits": load_digits}
KEEL = Path(__file__).resolve().parent / "data" / "keel"
ESTIMATORS = {"SVC": SVC, "SVM": fast.SVMClassifier, "ODML": fast.ODMLClassifier,
              "LDM": fast.LDMClassifier, "ODM": fast.ODMClassifier, "SVMm": fast.SVMmClassifier,
              "McODM": fast.McODMClassifier, "MKLm": fast.MKLmClassifier,
              "DRR": fast.DRRClassifier, "DRM": fast.DRMClassifier}


def _keel_loader():
    """``validation/reproduce/_common.py``'s ``load`` (imported by path: ``_common`` is not
    a package module)."""
    path = Path(__file__).resolve().parent / "reproduce" / "_common.py"
    spec = importlib.util.spec_from_file_location("_reproduce_common", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.load


def set_names(tokens):
    """The data set names of ``--sets`` (groups expanded, order kept, duplicates dropped)."""
    groups = {"sklearn": list(SKLEARN),
              "balanced": sorted(p.stem for p in (KEEL / "balanced").glob("*.dat")),
              "imbalanced": sorted(p.stem for p in (KEEL / "imbalanced").glob("*.dat"))}
    groups["keel"] = groups["balanced"] + groups["imbalanced"]
    out = []
    for tok in tokens:
        for name in groups.get(tok, [tok]):
            if name not in out:
                out.append(name)
    return out


def load_sets(names, max_m, seed=0):
    """``{name: (X, y)}``; KEEL names are prefixed ``keel:`` when they clash with a
    scikit-learn set of the list; sets larger than ``max_m`` are subsampled (stratified,
    ``seed``)."""
    load_keel, data, notes = None, {}, []
    for name in names:
        if name in SKLEARN:
            X, y = SKLEARN[name](return_X_y=True)
            key = name
        else:
            load_keel = load_keel or _keel_loader()
            X, y = load_keel(name)
            key = f"keel:{name}" if name in SKLEARN and name in data else name
        X = np.asarray(X, float)
        if X.shape[0] > max_m:
            X, _, y, _ = train_test_split(X, y, train_size=max_m, stratify=y, random_state=seed)
            notes.append(f"{key} subsampled to {max_m} (stratified, seed {seed})")
        data[key] = (X, np.asarray(y))
    return data, notes


def make(name, params=None):
    """Estimator ``name`` at its defaults, with those of ``params`` (``--param``) that it
    takes (SVC takes none of them: it stays the reference)."""
    est = ESTIMATORS[name]()
    if params and name != "SVC":
        est.set_params(**{k: v for k, v in params.items() if k in est.get_params()})
    return est


def parse_params(tokens):
    """``--param NAME=VALUE`` tokens as a dict (VALUE a Python literal, else a string)."""
    import ast

    out = {}
    for tok in tokens or ():
        key, sep, val = tok.partition("=")
        if not sep or not key:
            raise ValueError(f"--param must be NAME=VALUE; got {tok!r}")
        try:
            out[key] = ast.literal_eval(val)
        except (ValueError, SyntaxError):
            out[key] = val
    return out


def measure(name, cv, X, y, scaler=True, params=None):
    """Accuracy (mean over the folds), seconds (fit + predict), ConvergenceWarnings, other
    warnings and the error of a failed fit (None if none) of estimator ``name`` at its
    defaults (with ``params``) on ``(X, y)``."""
    est = make(name, params)
    pipe = make_pipeline(MinMaxScaler(), est) if scaler else est
    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=0)
    accs, secs, n_conv, n_other, err = [], 0.0, 0, 0, None
    for tr, te in folds.split(X, y):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            try:
                model = clone(pipe).fit(X[tr], y[tr])
                accs.append(float(np.mean(model.predict(X[te]) == y[te])))
            except Exception as exc:             # reported, counted as accuracy 0
                err = f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
                accs.append(0.0)
            secs += time.perf_counter() - t0
        n_conv += sum(issubclass(x.category, ConvergenceWarning) for x in w)
        n_other += sum(not issubclass(x.category, (ConvergenceWarning, DeprecationWarning,
                                                   FutureWarning)) for x in w)
    return float(np.mean(accs)), secs, n_conv, n_other, err


def warmup(name, scaler=True, params=None):
    """Fit and predict ``name`` once on a small two-class and a small three-class set, so
    that numba's compilation does not land in the timings."""
    X, y = load_iris(return_X_y=True)
    X = X[::3]
    y = y[::3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for yy in (np.minimum(y, 1), y):
            est = make(name, params)
            (make_pipeline(MinMaxScaler(), est) if scaler else est).fit(X, yy).predict(X)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cv", type=int, default=3, help="folds (StratifiedKFold, shuffled, seed 0)")
    ap.add_argument("--only", nargs="*", default=None, choices=list(ESTIMATORS)[1:],
                    help="estimators to measure (default: all)")
    ap.add_argument("--sets", nargs="+", default=["sklearn"],
                    help="data sets or groups: sklearn (default), balanced, imbalanced, keel, "
                         "or names (KEEL file names without .dat)")
    ap.add_argument("--max-m", type=int, default=3000,
                    help="larger sets are subsampled to this size (stratified, seed 0)")
    ap.add_argument("--scaler", choices=["minmax", "none"], default="minmax",
                    help="MinMaxScaler in the pipeline (default) or raw features")
    ap.add_argument("--csv", default=None, help="also write one row per (estimator, set) here")
    ap.add_argument("--param", action="append", default=None, metavar="NAME=VALUE",
                    help="set this parameter on every measured estimator that has it "
                         "(repeatable; e.g. --param beta=0.1 --only DRM)")
    ap.add_argument("--no-record", action="store_true",
                    help="do not write the output to validation/results/bench/"
                         "bench_defaults.md")
    args = ap.parse_args(argv)
    params = parse_params(args.param)
    lines = []

    def say(text):
        print(text, flush=True)
        lines.append(text)

    machine, load_start = H.machine(), H.load_average()
    print(f"machine: {machine}", flush=True)
    print(f"load average (1, 5, 15 min) at the start: {load_start}", flush=True)
    if params:
        say(f"parameters changed from the defaults: {params}")
    data, notes = load_sets(set_names(args.sets), args.max_m)
    for note in notes:
        say(note)
    scaler = args.scaler == "minmax"
    names = ["SVC"] + (args.only or list(ESTIMATORS)[1:])
    res = {}                                      # (estimator, set) -> measure(...)
    fh = open(args.csv, "w", newline="") if args.csv else None
    out = csv.writer(fh) if fh else None
    if out:
        out.writerow(["estimator", "set", "m", "d", "classes", "accuracy", "svc", "seconds",
                      "convergence_warnings", "other_warnings", "error"])
    for est in names:
        warmup(est, scaler, params)                     # numba compiles outside the timings
        for key, (X, y) in data.items():
            res[est, key] = r = measure(est, args.cv, X, y, scaler, params)
            if out:                               # row by row: a long run can be watched
                out.writerow([est, key, X.shape[0], X.shape[1], len(np.unique(y)), r[0],
                              res["SVC", key][0], r[1], r[2], r[3], r[4] or ""])
                fh.flush()
    if fh:
        fh.close()
    ref = np.array([res["SVC", k][0] for k in data])
    t_ref = sum(res["SVC", k][1] for k in data)
    prep = "MinMaxScaler" if scaler else "no scaler (raw features)"
    if list(data) == list(SKLEARN):               # the historical layout of the four sets
        head = "".join(f"{k[:13]:>16}" for k in data)
        say(f"{args.cv}-fold CV, {prep} + defaults; each set: accuracy (difference to SVC)")
        say(f"{'estimator':<8}{head}{'mean':>16}{'ratio':>7}{'worst':>7}  target{'s':>7}  warn")
        svc_row = "".join(f"{a:>9.3f}{'':>7}" for a in ref)
        say(f"{'SVC':<8}{svc_row}{ref.mean():>9.3f}{'':>7}{1:>7.3f}{'':>7}  {'':<6}"
            f"{t_ref:>7.1f}")
        for name in names[1:]:
            acc = np.array([res[name, k][0] for k in data])
            t = sum(res[name, k][1] for k in data)
            n_warn = sum(res[name, k][2] for k in data)
            d = acc - ref
            ok = acc.mean() >= ref.mean() - 0.01 and d.min() >= -0.03
            row = "".join(f"{a:>9.3f} ({x:+.3f})" for a, x in zip(acc, d))
            say(f"{name:<8}{row}{acc.mean():>9.3f} ({acc.mean() - ref.mean():+.3f})"
                f"{acc.mean() / ref.mean():>7.3f}{d.min():>+7.3f}  {'met' if ok else 'MISSED':<6}"
                f"{t:>7.1f}  {n_warn}")
    else:
        say(f"{args.cv}-fold CV, {prep} + defaults, {len(data)} sets; per set: SVC's "
            f"accuracy, then each estimator's difference to it (* more than 3 points below)")
        say(f"{'set':<26}{'m':>6}{'d':>4}{'k':>3}{'SVC':>7}"
            + "".join(f"{n:>8}" for n in names[1:]))
        for key, (X, y) in data.items():
            cells = []
            for name in names[1:]:
                acc, _, _, _, err = res[name, key]
                d = acc - res["SVC", key][0]
                cells.append(f"{'FAIL' if err else f'{d:+.3f}'}{'*' if d < -0.03 else ' ':1}")
            say(f"{key[:25]:<26}{X.shape[0]:>6}{X.shape[1]:>4}{len(np.unique(y)):>3}"
                f"{res['SVC', key][0]:>7.3f}" + "".join(f"{c:>8}" for c in cells))
        say("")
        say(f"{'estimator':<10}{'mean':>7}{'-SVC':>8}{'worst set':>28}{'>3pt':>6}{'conv.w':>8}"
            f"{'other.w':>8}{'fail':>5}{'time/SVC':>9}  target")
        say(f"{'SVC':<10}{ref.mean():>7.3f}{'':>8}{'':>28}{'':>6}"
            f"{sum(res['SVC', k][2] for k in data):>8}{sum(res['SVC', k][3] for k in data):>8}"
            f"{sum(bool(res['SVC', k][4]) for k in data):>5}{1:>9.2f}")
        for name in names[1:]:
            acc = np.array([res[name, k][0] for k in data])
            d = acc - ref
            worst = list(data)[int(np.argmin(d))]
            ok = acc.mean() >= ref.mean() - 0.01 and d.min() >= -0.03
            t = sum(res[name, k][1] for k in data)
            say(f"{name:<10}{acc.mean():>7.3f}{acc.mean() - ref.mean():>+8.3f}"
                f"{f'{worst[:18]} {d.min():+.3f}':>28}{int(np.sum(d < -0.03)):>6}"
                f"{sum(res[name, k][2] for k in data):>8}{sum(res[name, k][3] for k in data):>8}"
                f"{sum(bool(res[name, k][4]) for k in data):>5}{t / t_ref:>9.2f}  "
                f"{'met' if ok else 'MISSED'}")
        for (name, key), r in res.items():
            if r[4]:
                say(f"FAIL {name} on {key}: {r[4]}")
    say("target: mean within 1 point of SVC's and no set more than 3 points below SVC's")
    if not args.no_record:
        H.write_current(f"Defaults against SVC(): {prep} + each estimator's defaults, sets: "
                        f"{' '.join(args.sets)}", False, lines, machine_line=machine,
                        load_start=load_start, name="bench_defaults")


if __name__ == "__main__":
    main()
