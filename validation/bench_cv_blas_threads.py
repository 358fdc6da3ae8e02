"""The RBF CV estimator's fold paths with one BLAS thread against the default threads.

``fast.cv`` runs a fold of at most ``ONE_BLAS_THREAD_MAX_M`` training rows with one BLAS
thread (its factorisations are small, and the search's parallelism is its tasks). This
script times ``ODMClassifierCV(kernel="rbf")`` on scikit-learn's breast_cancer (569 x 30,
min-max scaled; 5-fold; ``lam`` 12 values x ``mu`` {0.2, 0.5, 0.8} x ``theta`` {0.2, 0.5} x
``gamma`` 6 values, 432 candidates) both ways, interleaved in one process, with the load
average of the machine, and checks that both select the same point.

    python validation/bench_cv_blas_threads.py [--repeat 2]
"""
from __future__ import annotations

import warnings

import _harness as H


def main():
    p = H.parser(__doc__.splitlines()[0])
    args = p.parse_args()
    R = H.Report("RBF ODMClassifierCV: one BLAS thread per small fold vs the default", args)
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import MinMaxScaler

    import fast.cv as C

    X, y = load_breast_cancer(return_X_y=True)
    X = MinMaxScaler().fit_transform(X)
    if args.quick:
        X, y = X[::3], y[::3]
    grid = dict(mus=[0.2, 0.5, 0.8], thetas=[0.2, 0.5])
    comp = H.warmup(lambda: C.ODMClassifierCV(kernel="rbf", mus=[0.5], thetas=[0.3],
                                              gammas=["scale"]).fit(X[:100], y[:100]))
    R.say(f"compile / warm-up: {comp:.2f} s; data {X.shape[0]} x {X.shape[1]}")
    limit = C.ONE_BLAS_THREAD_MAX_M

    def run(lim):
        def go():
            C.ONE_BLAS_THREAD_MAX_M = lim
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return C.ODMClassifierCV(kernel="rbf", **grid).fit(X, y)
        return go

    res = H.interleaved({"one": run(limit), "default": run(0)}, args.repeat)
    C.ONE_BLAS_THREAD_MAX_M = limit
    t1, _, one = res["one"]
    t0, _, dft = res["default"]
    R.table(["BLAS threads in the folds", "seconds", "best params", "CV accuracy"],
            [["one", f"{t1:.1f}", str(one.best_params_), f"{one.best_score_:.4f}"],
             ["default", f"{t0:.1f}", str(dft.best_params_), f"{dft.best_score_:.4f}"]])
    R.say(f"ratio one / default = {t1 / t0:.2f}; same selection: "
          f"{one.best_params_ == dft.best_params_}")
    R.record()


if __name__ == "__main__":
    main()
