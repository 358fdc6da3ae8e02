"""Defaults that hold their own (issue 14): every estimator of :mod:`fast.estimators` with
its DEFAULT parameters in ``make_pipeline(MinMaxScaler(), Est())`` against ``SVC()``'s
defaults, by mean accuracy over stratified k-fold CV (default 3 folds, the same folds for
every estimator) on scikit-learn's bundled breast_cancer, wine, iris and digits.

Target: each estimator's mean over the four sets within 1 point of SVC's, and no set more
than 3 points below SVC's.

    python validation/bench_defaults.py                 # every estimator, 3-fold
    python validation/bench_defaults.py --cv 5 --only ODM McODM

Prints one row per estimator: the accuracy per set with the difference to SVC beside it,
the mean, its difference and ratio to SVC's, the worst set's gap, the target met or not,
the seconds spent (fit + predict over all folds) and the ConvergenceWarnings raised; then
appends the table to ``validation/RESULTS.md`` (``--no-record`` to skip that).
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

import fast

import _harness as H

DATASETS = {"breast_cancer": load_breast_cancer, "wine": load_wine, "iris": load_iris,
            "digits": load_digits}
ESTIMATORS = {"SVC": SVC, "SVM": fast.SVMClassifier, "ODML": fast.ODMLClassifier,
              "LDM": fast.LDMClassifier, "ODM": fast.ODMClassifier, "SVMm": fast.SVMmClassifier,
              "McODM": fast.McODMClassifier, "MKLm": fast.MKLmClassifier,
              "DRR": fast.DRRClassifier, "DRM": fast.DRMClassifier}


def measure(name, cv, data):
    accs, t0, n_warn = [], time.perf_counter(), 0
    for X, y in data.values():
        folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=0)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always", ConvergenceWarning)
            accs.append(cross_val_score(make_pipeline(MinMaxScaler(), ESTIMATORS[name]()), X, y,
                                        cv=folds).mean())
        n_warn += sum(issubclass(x.category, ConvergenceWarning) for x in w)
    return np.asarray(accs), time.perf_counter() - t0, n_warn


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cv", type=int, default=3, help="folds (StratifiedKFold, shuffled, seed 0)")
    ap.add_argument("--only", nargs="*", default=None, choices=list(ESTIMATORS)[1:],
                    help="estimators to measure (default: all)")
    ap.add_argument("--no-record", action="store_true",
                    help="do not append the table to validation/RESULTS.md")
    args = ap.parse_args(argv)
    lines = []

    def say(text):
        print(text, flush=True)
        lines.append(text)

    say(f"machine: {H.machine()}")
    data = {k: f(return_X_y=True) for k, f in DATASETS.items()}
    names = args.only or list(ESTIMATORS)[1:]
    ref, t_ref, _ = measure("SVC", args.cv, data)
    head = "".join(f"{k[:13]:>16}" for k in data)
    say(f"{args.cv}-fold CV, MinMaxScaler + defaults; each set: accuracy (difference to SVC)")
    say(f"{'estimator':<8}{head}{'mean':>16}{'ratio':>7}{'worst':>7}  target{'s':>7}  warn")
    svc_row = "".join(f"{a:>9.3f}{'':>7}" for a in ref)
    say(f"{'SVC':<8}{svc_row}{ref.mean():>9.3f}{'':>7}{1:>7.3f}{'':>7}  {'':<6}{t_ref:>7.1f}")
    for name in names:
        acc, t, n_warn = measure(name, args.cv, data)
        d = acc - ref
        ok = acc.mean() >= ref.mean() - 0.01 and d.min() >= -0.03
        row = "".join(f"{a:>9.3f} ({x:+.3f})" for a, x in zip(acc, d))
        say(f"{name:<8}{row}{acc.mean():>9.3f} ({acc.mean() - ref.mean():+.3f})"
            f"{acc.mean() / ref.mean():>7.3f}{d.min():>+7.3f}  {'met' if ok else 'MISSED':<6}"
            f"{t:>7.1f}  {n_warn}")
    say("target: mean within 1 point of SVC's and no set more than 3 points below SVC's")
    if not args.no_record:
        H.append_section("Defaults against SVC() (issue 14): MinMaxScaler + each estimator's "
                         "defaults", False, lines)


if __name__ == "__main__":
    main()
