"""The seeds' full linear ODM protocol in one call, against GridSearchCV.

Grid (seed 002 §6): ``lam`` in ``{2^0, 2^2, ..., 2^20}`` x ``mu`` in ``{0.2, 0.4, 0.6, 0.8}`` x
``theta`` in ``{0.2, 0.4, 0.6, 0.8}`` = 176 candidates, 5-fold (880 fits), on 7,000 points of
MAGIC gamma telescope (KEEL, ``validation/data/keel/balanced/magic.dat``, 10 features scaled
to [0, 1] on the whole set, a stratified random subsample of 7,000 with seed 0).

* ``fast.cv.ODMClassifierCV(n_jobs=1)``: 80 warm-started paths (5 folds x 16 (mu, theta)),
  TRON with each point checked in place (``fast.odm.linear_tron_path``), then the refit on
  all 7,000 points. Target: <= 2 minutes.
* ``GridSearchCV(ODMClassifier(kernel="linear"), grid, cv=5, n_jobs=1)`` over the plain
  estimator (TRON, one cold solve per fit, then the refit), run in full. Target: CV >= 10 x
  faster.

Also printed: the selected parameters and CV accuracy, and the largest difference between
the two tables' mean scores over the 176 candidates (same folds, so the same accuracies up
to the solvers' tolerance).

    OPENBLAS_NUM_THREADS=1 python validation/bench_cv_protocol.py
"""
from __future__ import annotations

import warnings

import numpy as np

import _harness as H
from bench_odm_path import binary, load_keel

TIME_TARGET = 120.0
SPEEDUP_TARGET = 10.0


def main():
    p = H.parser(__doc__.splitlines()[0])
    p.add_argument("--m", type=int, default=7000)
    p.add_argument("--n-jobs", type=int, default=1)
    args = p.parse_args()
    R = H.Report("Linear ODM protocol (11 x 4 x 4 grid, 5-fold): ODMClassifierCV vs "
                 "GridSearchCV", args)
    from sklearn.model_selection import GridSearchCV

    import refmodels as rm
    from fast.cv import ODMClassifierCV
    from fast.estimators import ODMClassifier
    from fast.path import path as fast_path

    X, lab = load_keel("magic")
    y = binary(lab)
    m = 1500 if args.quick else args.m
    rng = np.random.default_rng(0)
    idx = np.concatenate([rng.choice(np.flatnonzero(y == c), int(round(m * np.mean(y == c))),
                                     replace=False) for c in (-1.0, 1.0)])
    idx = np.sort(idx)
    X, y = X[idx], y[idx]
    R.say(f"data: KEEL magic, stratified subsample {X.shape[0]} x {X.shape[1]} (seed 0), "
          f"features scaled to [0, 1]")
    lams = [2.0 ** k for k in range(0, 21, 2)]
    mus = thetas = [0.2, 0.4, 0.6, 0.8]
    grid = {"lam": lams, "mu": mus, "theta": thetas}

    comp = H.warmup(lambda: (fast_path(rm.ODM(X[::20], y[::20], mu=0.8, theta=0.2),
                                       lam=[1.0, 4.0]),
                             ODMClassifierCV(kernel="linear", lams=[1.0, 4.0], mus=[0.8],
                                             thetas=[0.2],
                                             cv=2).fit(X[::20], y[::20]),
                             ODMClassifier(lam=4.0, kernel="linear").fit(X[::20], y[::20])))
    R.say(f"compile / warm-up (TRON, path, CV, plain fit on every 20th point): {comp:.2f} s")

    def run_cv():
        return ODMClassifierCV(kernel="linear", lams=lams, mus=mus, thetas=thetas, cv=5,
                               n_jobs=args.n_jobs).fit(X, y)

    def run_gs():
        # GridSearchCV over the plain estimator, run in full (880 cold fits + the refit):
        # the plain ODMClassifier defaults to TRON, so a fit takes milliseconds
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return GridSearchCV(ODMClassifier(kernel="linear"), grid, cv=5,
                                n_jobs=args.n_jobs).fit(X, y)

    res = H.interleaved({"cv": run_cv, "gs": run_gs}, args.repeat)
    t_cv, _, cv = res["cv"]
    t_gs, _, gs = res["gs"]
    R.say(f"ODMClassifierCV (n_jobs={args.n_jobs}): {t_cv:.2f} s in all (paths "
          f"{cv.cv_time_:.2f} s, refit {cv.refit_time_:.2f} s); best {cv.best_params_}, CV "
          f"accuracy {cv.best_score_:.4f}; target <= {TIME_TARGET:.0f} s: "
          f"{H.verdict(t_cv, TIME_TARGET)}")
    how = "run in full, refit included"
    diff = float(np.max(np.abs(gs.cv_results_["mean_test_score"]
                               - cv.cv_results_["mean_test_score"])))
    R.say(f"GridSearchCV best {gs.best_params_}, {gs.best_score_:.4f}; mean fit "
          f"{1e3 * np.mean(gs.cv_results_['mean_fit_time']):.2f} ms, mean score "
          f"{1e3 * np.mean(gs.cv_results_['mean_score_time']):.2f} ms a candidate and fold; "
          f"max |mean score difference| over the 176 candidates {diff:.2e}")
    R.say(f"ODMClassifierCV: {int(np.sum(cv.cv_results_['n_fits_not_optimal']))} of the 880 "
          f"fold fits not optimal")
    R.say(f"GridSearchCV(ODMClassifier) over the same grid: {t_gs:.2f} s ({how})")
    speedup = t_gs / t_cv
    R.say(f"speed-up GridSearchCV / ODMClassifierCV = {speedup:.1f}x (target >= "
          f"{SPEEDUP_TARGET:.0f}x: {H.verdict(speedup, SPEEDUP_TARGET, higher_is_better=True)})")
    R.record()


if __name__ == "__main__":
    main()
