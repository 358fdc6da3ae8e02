"""Pictures of issue 16 (matplotlib PNG, into ``validation/results/figures/``):

1. ``margins_svm_odml_odm.png``: the cumulative margin distribution of SVM, ODM^L and ODM
   on one data set (seed 002 Fig. 2 / seed 000 Fig. 1), and ``margins_svm_ldm.png``: SVM
   against LDM (seed 001 Fig. 1). Hyperparameters by 5-fold CV on the training part (a
   small grid), margins of the training points.
2. ``time_vs_size.png``: fit time against problem size, log-log, for fast solvers and their
   peers (fast linear ODM and SVM by dual coordinate descent vs LIBLINEAR's ``LinearSVC``;
   fast SMO vs LIBSVM's ``SVC``), with the fitted slope of log(time) on log(size).
3. ``drm_scores.png``: DRM's decision scores delta_c (seed 004 eq. 10) on a 2-D three-class
   example, and ``drm_alpha_beta.png``: CV accuracy against alpha and beta on a real set.

    python validation/reproduce/figures.py [--quick] [--only margins,time,drm_scores,drm_alpha_beta]
"""
from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from _common import (SVMPerSample, load, minmax, outdir, parser, split,  # noqa: E402
                     warmup)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _cv_fit(est, grid, X, y, seed=0):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs = GridSearchCV(est, grid, cv=StratifiedKFold(5, shuffle=True, random_state=seed),
                          n_jobs=1).fit(X, y)
    return gs.best_estimator_, gs.best_params_


def _margins(est, X, y):
    """Functional margins y_i f(x_i) (the seeds' x-axis) and geometric ones y_i f(x_i)/||w||."""
    inner = getattr(est, "est_", est)
    f = inner.decision_function(X)
    yy = np.where(y == inner.classes_[1], 1.0, -1.0)
    if inner.kernel == "linear":
        wn = float(np.linalg.norm(inner.coef_[0]))
    else:
        K = inner.kernel_.cross(inner.X_fit_, inner.X_fit_)
        nu = inner.dual_coef_[0]
        wn = float(np.sqrt(max(nu @ K @ nu, 1e-300)))
    return yy * f, yy * f / wn


def margins(out, quick, dataset="heart", seed=0):
    import fast

    plt = _plt()
    X, y = load(dataset)
    X = minmax(X)
    Xtr, Xte, ytr, yte = split(X, y, 0.8, seed)
    lam = [2.0 ** p for p in ((0, 5, 10) if quick else range(0, 21, 2))]
    models = {
        "SVM": (SVMPerSample(tol=1e-3), {"lam": lam}),
        "ODML": (fast.ODMLClassifier(fit_intercept=False, kernel="linear", tol=1e-3), {"lam": lam, "mu1": [2.0 ** -4, 1.0, 2.0 ** 4],
                                                 "mu2": [2.0 ** -4, 1.0, 2.0 ** 4]}),
        "ODM": (fast.ODMClassifier(fit_intercept=False, kernel="linear", tol=1e-3), {"lam": lam, "mu": [0.2, 0.6],
                                               "theta": [0.2, 0.6]}),
        "LDM": (fast.LDMClassifier(fit_intercept=False, kernel="linear", tol=1e-3), {"C": [10.0, 50.0, 100.0],
                                               "lam1": [2.0 ** -8, 2.0 ** -5, 2.0 ** -2],
                                               "lam2": [2.0 ** -8, 2.0 ** -5, 2.0 ** -2]}),
        "SVM (C grid of seed 001)": (fast.SVMClassifier(fit_intercept=False, kernel="linear", tol=1e-3),
                                     {"C": [10.0, 50.0, 100.0]}),
    }
    fitted, info = {}, {}
    for name, (est, grid) in models.items():
        best, params = _cv_fit(est, grid, Xtr, ytr, seed)
        fitted[name] = _margins(best, Xtr, ytr)
        info[name] = {"params": {k: float(v) for k, v in params.items()},
                      "test_acc": float(np.mean(best.predict(Xte) == yte))}
    files = []
    for fname, names, title in (
            ("margins_svm_odml_odm.png", ["SVM", "ODML", "ODM"],
             "SVM, ODM$^L$ and ODM (seed 002 Fig. 2)"),
            ("margins_svm_ldm.png", ["SVM (C grid of seed 001)", "LDM"],
             "SVM and LDM (seed 001 Fig. 1)")):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for ax, which, xl in ((axes[0], 0, r"functional margin $y_i f(x_i)$"),
                              (axes[1], 1, r"geometric margin $y_i f(x_i)/\|w\|$")):
            for n, ls, lw in zip(names, ("-", "--", ":"), (2.6, 1.8, 1.8)):
                g = np.sort(fitted[n][which])
                ax.step(g, np.arange(1, g.size + 1) / g.size, where="post", ls=ls, lw=lw,
                        label=f"{n} (test acc {info[n]['test_acc']:.3f})")
            ax.axvline(0, color="0.7", lw=0.8)
            ax.set_xlabel(xl)
            ax.set_ylabel("cumulative frequency")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8, loc="lower right")
        chosen = "; ".join(f"{n}: " + ", ".join(f"{k}={v:g}" for k, v in
                                                 info[n]["params"].items()) for n in names)
        import textwrap

        sub = textwrap.fill(f"hyperparameters by 5-fold CV: {chosen} (curves that coincide "
                            "mean CV chose the SVM limit)", 140)
        fig.suptitle(f"Cumulative margin distribution on {dataset} (KEEL, {len(ytr)} training "
                     f"points, linear kernel): {title}\n{sub}", fontsize=9)
        fig.tight_layout()
        fig.savefig(out / fname, dpi=110)
        plt.close(fig)
        files.append(fname)
    (out / "margins.json").write_text(json.dumps(info, indent=1))
    print(f"margins on {dataset}: " + "; ".join(f"{k}: {v['params']} test {v['test_acc']:.3f}"
                                                 for k, v in info.items()))
    return files


def _best_time(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def timing(out, quick, seed=0):
    import fast
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC, LinearSVC

    plt = _plt()
    from matplotlib.ticker import FuncFormatter, NullFormatter

    repeat = 2 if quick else 3
    lin_sizes = [2000, 4000, 8000, 16000] if quick else [2000, 8000, 32000, 128000]
    ker_sizes = [500, 1000, 2000] if quick else [500, 1000, 2000, 4000, 8000]
    series = {}

    def data(m, d):
        X, y = make_classification(n_samples=m, n_features=d, n_informative=d // 2,
                                   flip_y=0.05, random_state=seed)
        return (X - X.mean(0)) / X.std(0), y

    C = 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m in lin_sizes:
            X, y = data(m, 50)
            for name, mk in (
                    ("fast ODM, linear (DCD)", lambda: fast.ODMClassifier(lam=C * m, fit_intercept=False, kernel="linear",
                                                               tol=1e-3)),
                    ("fast SVM, linear, no bias (DCD)",
                     lambda: fast.SVMClassifier(C=C, fit_intercept=False, kernel="linear", tol=1e-3)),
                    ("LIBLINEAR LinearSVC (hinge, dual)",
                     lambda: LinearSVC(C=C, loss="hinge", dual=True, fit_intercept=False,
                                       tol=1e-3, max_iter=10000))):
                series.setdefault(("linear", name), []).append(
                    (m, _best_time(lambda: mk().fit(X, y), repeat)))
        for m in ker_sizes:
            X, y = data(m, 20)
            for name, mk in (("fast SVM, RBF, bias (SMO)",
                              lambda: fast.SVMClassifier(C=1.0, kernel="rbf", gamma=0.05,
                                                         tol=1e-3)),
                             ("LIBSVM SVC (RBF)",
                              lambda: SVC(C=1.0, kernel="rbf", gamma=0.05, tol=1e-3)),
                             ("fast ODM, RBF (DCD)",
                              lambda: fast.ODMClassifier(lam=1.0 * m, fit_intercept=False, kernel="rbf",
                                                         gamma=0.05, tol=1e-3))):
                series.setdefault(("kernel", name), []).append(
                    (m, _best_time(lambda: mk().fit(X, y), repeat)))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    slopes = {}
    for ax, group, xl in ((axes[0], "linear", "m (50 features)"),
                          (axes[1], "kernel", "m (20 features)")):
        for (g, name), pts in series.items():
            if g != group:
                continue
            ms, ts = np.array(pts).T
            slope = float(np.polyfit(np.log(ms), np.log(ts), 1)[0])
            slopes[name] = slope
            ax.loglog(ms, ts, "o-", label=f"{name}: slope {slope:.2f}")
        # ticks at the measured sizes, written out (matplotlib's minor labels of a log axis
        # overlapped at 3x10^3 and 4x10^3)
        sizes = lin_sizes if group == "linear" else ker_sizes
        ax.set_xticks(sizes)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(xl)
        ax.set_ylabel("fit time, best of %d (s)" % repeat)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    axes[0].set_title("linear, C = 0.1 (ODM: lam = C m, mu 0.5, theta 0.3), tol 1e-3",
                      fontsize=9)
    axes[1].set_title("RBF gamma 0.05, C = 1 (ODM: lam = m), tol 1e-3", fontsize=9)
    fig.suptitle("Time against problem size (make_classification, standardised; one process, "
                 "after JIT warm-up)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out / "time_vs_size.png", dpi=110)
    plt.close(fig)
    (out / "time_vs_size.json").write_text(json.dumps(
        {"slopes": slopes, "points": {f"{g}: {n}": p for (g, n), p in series.items()}},
        indent=1))
    print("fitted log-log slopes (time ~ m^slope): " +
          "; ".join(f"{k}: {v:.2f}" for k, v in slopes.items()))
    return ["time_vs_size.png"]


def drm_scores(out, quick, seed=0):
    import fast
    from sklearn.datasets import make_blobs

    plt = _plt()
    X, y = make_blobs(n_samples=150, centers=[(-2, 0), (2, 0), (0, 2.5)], cluster_std=1.2,
                      random_state=seed)
    est = fast.DRMClassifier(alpha=1.0, beta=0.1, gamma=0.5).fit(X, y)
    xx, yy = np.meshgrid(np.linspace(-6, 6, 90), np.linspace(-4, 6.5, 70))
    P = np.c_[xx.ravel(), yy.ravel()]
    delta = -est.decision_function(P)                     # delta_c, shape (n, 3)
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.8))
    cols = ["tab:blue", "tab:orange", "tab:green"]
    for c in range(3):
        ax = axes[c]
        cs = ax.contourf(xx, yy, delta[:, c].reshape(xx.shape), levels=20, cmap="viridis")
        fig.colorbar(cs, ax=ax, fraction=0.046)
        ax.scatter(*X[y == c].T, s=8, c=cols[c], edgecolors="k", linewidths=0.3)
        ax.set_title(rf"$\delta_{c}(x)$ (small = class {c})", fontsize=9)
    ax = axes[3]
    ax.contourf(xx, yy, np.argmin(delta, 1).reshape(xx.shape), levels=[-0.5, 0.5, 1.5, 2.5],
                colors=["#c6dbef", "#fdd0a2", "#c7e9c0"])
    for c in range(3):
        ax.scatter(*X[y == c].T, s=8, c=cols[c], edgecolors="k", linewidths=0.3)
    ax.set_title(r"prediction $\arg\min_c \delta_c(x)$", fontsize=9)
    fig.suptitle(r"DRM decision scores $\delta_c = w_c^\top K w_c + w_{\bar c}^\top K "
                 r"w_{\bar c} - 2 w_c^\top K_x$ (seed 004 eq. 10); RBF $\gamma$ = 0.5, "
                 r"$\alpha$ = 1, $\beta$ = 0.1", fontsize=10)
    fig.tight_layout()
    fig.savefig(out / "drm_scores.png", dpi=100)
    plt.close(fig)
    return ["drm_scores.png"]


def drm_alpha_beta(out, quick, seed=0):
    import fast
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    from _common import infnorm

    plt = _plt()

    name = "wine"
    Xw, yw = load(name)
    Xw = infnorm(Xw)
    alphas = [0.0] + [10.0 ** p for p in range(-3, 4)]
    betas = [10.0 ** p for p in range(-3, 4)] if not quick else [1e-3, 1e-1, 1e1, 1e3]
    if quick:
        alphas = [0.0, 1e-3, 1e-1, 1e1, 1e3]
    A = np.zeros((len(alphas), len(betas)))
    folds = StratifiedKFold(5, shuffle=True, random_state=seed)
    for i, a in enumerate(alphas):
        for j, b in enumerate(betas):
            A[i, j] = cross_val_score(fast.DRMClassifier(alpha=a, beta=b, gamma=0.5), Xw, yw,
                                      cv=folds).mean()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    im = axes[0].imshow(A, origin="lower", cmap="magma", aspect="auto", vmin=max(A.min(), 0.3))
    axes[0].set_xticks(range(len(betas)), [f"{b:g}" for b in betas], fontsize=8)
    axes[0].set_yticks(range(len(alphas)), [f"{a:g}" for a in alphas], fontsize=8)
    axes[0].set_xlabel(r"$\beta$")
    axes[0].set_ylabel(r"$\alpha$ (0 = KRR)")
    for i in range(len(alphas)):
        for j in range(len(betas)):
            axes[0].text(j, i, f"{A[i, j]:.2f}", ha="center", va="center", fontsize=7,
                         color="w" if A[i, j] < A.max() - 0.1 else "k")
    fig.colorbar(im, ax=axes[0])
    axes[0].set_title("5-fold CV accuracy", fontsize=9)
    for j, b in enumerate(betas):
        axes[1].semilogx([max(a, 1e-4) for a in alphas], A[:, j], "o-", label=rf"$\beta$={b:g}")
    axes[1].set_xlabel(r"$\alpha$ (0 plotted at 1e-4)")
    axes[1].set_ylabel("5-fold CV accuracy")
    axes[1].grid(alpha=0.3)
    axes[1].legend(fontsize=7)
    fig.suptitle(f"DRM on {name} (KEEL, features / inf-norm, RBF gamma 0.5): accuracy against "
                 r"$\alpha$ and $\beta$", fontsize=10)
    fig.tight_layout()
    fig.savefig(out / "drm_alpha_beta.png", dpi=110)
    plt.close(fig)
    print(f"DRM on {name}: best CV accuracy {A.max():.3f} at alpha={alphas[np.argmax(A) // len(betas)]}"
          f", beta={betas[np.argmax(A) % len(betas)]}; alpha=0 (KRR) best {A[0].max():.3f}")
    return ["drm_alpha_beta.png"]


def main(argv=None):
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--only", default="margins,time,drm_scores,drm_alpha_beta")
    args = p.parse_args(argv)
    out = outdir(args, "figures")
    only = [s.strip() for s in args.only.split(",")]
    if not args.no_warmup:
        print(f"numba warm-up {warmup():.1f} s")
    files = []
    for part, fn in (("margins", margins), ("time", timing), ("drm_scores", drm_scores),
                     ("drm_alpha_beta", drm_alpha_beta)):
        if part in only:
            t = time.perf_counter()
            files += fn(out, args.quick, seed=args.seed)
            print(f"[{part}] {time.perf_counter() - t:.1f} s")
    print("wrote " + ", ".join(str(out / f) for f in files))
    return files


if __name__ == "__main__":
    main()
