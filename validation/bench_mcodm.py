"""McODM (SPEC §5, seed 002 Alg. 3) by the fast block coordinate
descent against the reference outer loop (``refmodels.McODM.solve()``: the same Alg. 3 with
CVXPY/Clarabel solves of the relaxed dual, eq. 23) at m = 300, k = 4 (RBF): target >= 100x
faster. Both start from W = 0; the relaxed objective of the last round (eq. 20) and the
original non-convex objective at the returned W are compared. For context, the fast solver
with its active-set Newton polish switched off (``polish=False``: seed 002's BCD alone).

For context (no target): on scikit-learn's digits (scaled to [0, 1], 70/30 split),
``fast.McODMClassifier`` (linear and RBF) against ``LinearSVC(multi_class="crammer_singer")``
and ``SVC`` for fit time and test accuracy.

    python validation/bench_mcodm.py [--quick]
"""
from __future__ import annotations

import numpy as np

import _harness as H

TARGET = 100


def main():
    args = H.parser(__doc__.splitlines()[0], lam=10.0, mu=0.8, theta=0.2).parse_args()
    import fast
    import refmodels as rm
    from sklearn.datasets import load_digits, make_classification
    from sklearn.model_selection import train_test_split
    from sklearn.svm import SVC, LinearSVC

    R = H.Report("mcODM: fast BCD vs the reference outer loop (CVXPY); digits for context",
                 args)
    m, k, d = (120, 4, 10) if args.quick else (300, 4, 10)
    X, y = make_classification(n_samples=m, n_features=d, n_informative=6, n_classes=k,
                               n_clusters_per_class=1, random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    kern = rm.kernels.RBF(gamma=1.0 / d)
    lam, mu, th = args.lam, args.mu, args.theta
    comp = H.warmup(lambda: (fast.solve(rm.McODM(X[:40], y[:40], lam, mu, th, kernel=kern)),
                             fast.solve(rm.McODM(X[:40], y[:40], lam, mu, th))))
    R.say(f"compile / warm-up of the fast mcODM (kernel + linear, 40 points): {comp:.2f} s")
    R.say(f"data: make_classification {m} x {d}, k = {k}, RBF gamma = {1 / d:g}, lam = {lam}, "
          f"mu = {mu}, theta = {th}")

    def make():
        return rm.McODM(X, y, lam, mu, th, kernel=kern)

    loose = "fast inner_tol=1e-8 kkt_tol=1e-6"
    bcd_only = "fast polish=False (BCD alone)"
    res = H.interleaved({"fast": lambda: fast.solve(make()),
                         "reference (CVXPY dual)": lambda: make().solve(),
                         loose: lambda: fast.solve(make(), inner_tol=1e-8, kkt_tol=1e-6),
                         bcd_only: lambda: fast.solve(make(), polish=False)},
                        max(1, min(args.repeat, 2)))
    prob = make()
    rows, vals = [], {}
    for name, (t, ts, sol) in res.items():
        coef = np.asarray(sol.coef)
        Gc = prob.gram @ coef
        W2 = float(np.sum(coef * Gc))                 # ||W||_F^2 from the Gram
        vals[name] = (sol.objective, sol.info.get("mcodm_objective"), coef, W2)
        rows.append([name, t, " ".join(f"{x:.3f}" for x in ts), sol.status, sol.n_iter,
                     sol.objective, sol.info.get("mcodm_objective")])
    fo, ro = vals["fast"], vals["reference (CVXPY dual)"]
    for r in rows:
        r += [H.rel_gap(vals[r[0]][1], ro[1]), res[r[0]][0] / res["fast"][0]]
    R.table(["solver", "best s", "runs s", "status", "rounds", "relaxed objective (eq. 20)",
             "mcODM objective", "rel gap (mcODM obj.)", "time / fast"], rows)
    dcoef = fo[2] - ro[2]
    dW = float(np.sqrt(max(np.sum(dcoef * (prob.gram @ dcoef)), 0.0)))
    speedup = res["reference (CVXPY dual)"][0] / res["fast"][0]
    R.say(f"speed-up reference / fast = {speedup:.1f}x (target >= {TARGET}x: "
          f"{H.verdict(speedup, TARGET, higher_is_better=True)}); ||W_fast - W_ref||_F / "
          f"||W_ref||_F = {dW / np.sqrt(ro[3]):.2e}")
    sp2 = res["reference (CVXPY dual)"][0] / res[loose][0]
    R.say(f"at a tolerance comparable to Clarabel's 1e-8 ({loose}): speed-up {sp2:.1f}x "
          f"(target >= {TARGET}x: {H.verdict(sp2, TARGET, higher_is_better=True)}), rel gap "
          f"of the mcODM objective {H.rel_gap(vals[loose][1], ro[1]):+.2e}")
    R.say("fast default: relative duality gap 1e-12 per relaxed QP and KKT residuals 1e-9; "
          f"BCD epochs per round: {res['fast'][2].info.get('inner_iters')}, active-set Newton "
          f"(polish) steps per round: {res['fast'][2].info.get('inner_polish')}; "
          f"{bcd_only}: epochs per round {res[bcd_only][2].info.get('inner_iters')}")
    R.say()

    # ---- digits, for context ---------------------------------------------------------
    Xd, yd = load_digits(return_X_y=True)
    Xd = Xd / 16.0
    if args.quick:
        Xd, yd = Xd[:600], yd[:600]
    Xtr, Xte, ytr, yte = train_test_split(Xd, yd, test_size=0.3, random_state=0, stratify=yd)
    models = {
        "fast McODMClassifier linear": lambda: fast.McODMClassifier(kernel="linear"),
        "fast McODMClassifier rbf": lambda: fast.McODMClassifier(kernel="rbf"),
        "fast McODMClassifier rbf lam=100": lambda: fast.McODMClassifier(kernel="rbf",
                                                                          lam=100.0),
        "LinearSVC crammer_singer": lambda: LinearSVC(multi_class="crammer_singer",
                                                      max_iter=10000),
        "SVC rbf (one-vs-one)": lambda: SVC(kernel="rbf"),
    }
    H.warmup(lambda: [mk().fit(Xtr[:100], ytr[:100]) for mk in models.values()])
    res = H.interleaved({n: (lambda mk=mk: mk().fit(Xtr, ytr)) for n, mk in models.items()},
                        args.repeat)
    rows = [[n, t, est.score(Xtr, ytr), est.score(Xte, yte)] for n, (t, _, est) in res.items()]
    R.table(["estimator (default hyperparameters)", "fit s", "train accuracy",
             "test accuracy"], rows,
            caption=f"digits: {Xtr.shape[0]} train / {Xte.shape[0]} test, 64 features / 16, "
                    "10 classes (context only)")
    R.record()


if __name__ == "__main__":
    main()
