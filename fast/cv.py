"""Cross-validated estimators: the seeds' protocol in one call.

``ODMClassifierCV``, ``ODMLClassifierCV``, ``LDMClassifierCV`` and ``SVMClassifierCV`` select
their hyperparameters by ``cv``-fold cross-validation (accuracy) over the grids of the
papers, then refit the plain estimator of :mod:`fast.estimators` on the whole training set.
They expose ``best_params_``, ``best_score_``, ``best_index_``, ``cv_results_`` (the keys of
``GridSearchCV``: ``params``, ``param_<name>``, ``split<k>_test_score``,
``mean_test_score``, ``std_test_score``, ``rank_test_score``, ``mean_fit_time``,
``std_fit_time``, ``mean_score_time``, ``std_score_time``; and ``n_fits_not_optimal``: per
candidate, the fold fits whose solve did not reach the certificate's tolerance, reported
together in one ``ConvergenceWarning``) and ``best_estimator_``, and predict through it. A
fold path that a solver refuses (``SolverError``) scores NaN and ranks last, with one
``FitFailedWarning``, as ``GridSearchCV``'s ``error_score=np.nan``. Candidates are listed
in ``ParameterGrid`` order and the folds are
``check_cv(cv, y, classifier=True)``'s, as ``GridSearchCV`` does, so the two give the
same table (up to the solvers' tolerance).

What makes it fast: for every fold and every value of the *other* hyperparameters, the
regularization parameter's grid is one warm-started path (:func:`fast.path`, strong to
weak), and linear ODM runs TRON (``method="auto"``). Linear ODM on dense rows with few
features (``d <= 32``) runs its path without a :class:`Solution` per point
(:func:`fast.odm.linear_tron_path`): TRON with the formed Hessian, carried from one ``lam``
to the next, and each point's certificate residuals (duality gap, stationarity) computed
where the point is, on scales no more lenient than the certificate's; a path with one point
that does not pass runs again through :func:`fast.path`, so every score comes from a
point that is certified or reported in ``n_fits_not_optimal``. The ``n_folds x n_other``
paths are independent tasks dispatched through ``joblib.Parallel(n_jobs=n_jobs)``, so
``with joblib.parallel_backend("dask"): clf.fit(X, y)`` sends them to a Dask cluster
unchanged. ``verbose`` from 1 to 9 shows a ``tqdm``
bar of the paths (joblib's text progress without ``tqdm``); ``>= 10`` prints joblib's
progress and one line per path.

Defaults: one set with the plain estimator. The kernel is the plain estimator's (``"rbf"``,
``gamma="scale"``), and every default grid is the papers' grid with the plain estimator's
default value added, so that the search can return the plain estimator itself:

* ODM (seed 002 §6): ``lam`` in ``{None, 2^0, 2^2, ..., 2^20}``, ``mu`` in
  ``{0.2, 0.4, 0.5, 0.6, 0.8}``, ``theta`` in ``{0.2, 0.3, 0.4, 0.6, 0.8}``;
* ODML (seed 002 §6): ``lam`` in ``{None, 2^0, ..., 2^20}``, ``mu1``, ``mu2`` in
  ``{2^-4, 0.1, 2^-2, 2^0, 2^2, 2^4}``;
* LDM (seed 001 §5): ``C`` in ``{1, 10, 50, 100}``, ``lam1``, ``lam2`` in
  ``{2^-8, ..., 2^-5, 0.05, 2^-4, 2^-3, 2^-2}``;
* SVM (seeds 000/001 §5): ``C`` in ``{1, 10, 50, 100}``;
* the RBF and polynomial kernels: ``gamma`` in ``{"scale", 2^-4/d, 2^-2/d, 2^0/d, 2^2/d,
  2^4/d}`` (seed 002's widths; ``"scale"`` and ``"auto"`` are computed on each fold's
  training part, as a cloned estimator in ``GridSearchCV`` would). The linear kernel has
  no ``gamma``.

``lam`` is on one scale everywhere: a number is the ``lam`` of SPEC (the weight of the
loss sum, as in the papers' grids), and ``None`` is the plain estimator's default, ``m``,
the number of samples of the fit (of each fold's training part in the search; the refit's
own). The other kernel parameters (``degree``, ``coef0``) are fixed.
"""
from __future__ import annotations

import numbers
import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import ParameterGrid, check_cv
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import _common
from . import estimators as _E
from .estimators._base import StoresInitParams

_POW2_0_20 = tuple(2.0 ** k for k in range(0, 21, 2))
_POW2_M4_4 = tuple(2.0 ** k for k in range(-4, 5, 2))
_POW2_M8_M2 = tuple(2.0 ** k for k in range(-8, -1))
_ODM_MU_THETA = (0.2, 0.4, 0.6, 0.8)
_SEED001_C = (10.0, 50.0, 100.0)
#: seed 002's RBF widths: ``gamma = width / d``
_SEED002_WIDTHS = tuple(2.0 ** k for k in range(-4, 5, 2))


def _with_default(values, default):
    """The papers' grid ``values`` with the plain estimator's ``default`` added (sorted;
    ``None``, ``lam``'s ``m``, first)."""
    vals = sorted(set(values) | ({default} - {None}))
    return ((None,) if default is None else ()) + tuple(vals)


# ---------------------------------------------------------------------------------------
# one task: one fold, one value of the non-path hyperparameters, the whole path
# ---------------------------------------------------------------------------------------
#: a fold whose training part has at most this many rows runs with one BLAS thread: its
#: factorisations (at most this size squared) gain little from a second thread, and on a
#: busy machine the threads' contention makes each small LAPACK call many times slower;
#: the parallelism of a search is its tasks (``n_jobs``)
ONE_BLAS_THREAD_MAX_M = 2000


def _fold_path(*args):
    """:func:`_fold_path_in` inside a workspace of its own (the fold's data: its Gram,
    feature map and TRON rows shared by the fold's path, dropped afterwards), with one BLAS
    thread on a small fold (:data:`ONE_BLAS_THREAD_MAX_M`)."""
    import contextlib

    from refmodels.workspace import using

    from ._polish import one_blas_thread

    # (one_blas_thread's controller is made once: finding the BLAS libraries anew for every
    # fold's path cost ~2 ms, 1-2 % of a grid search on a small set)
    small = args[2].shape[0] <= ONE_BLAS_THREAD_MAX_M
    with using(None), (one_blas_thread() if small else contextlib.nullcontext()):
        return _fold_path_in(*args)


def _fold_path_in(cls, kernel, X_tr, y_tr, X_te, y_te, classes, fixed, path_name, values,
                  method, tol, max_iter, random_state, verbose):
    """Fit the path on the training part, score every point on the test part.

    Returns ``(accuracy (n_values,), fit seconds (n_values,), score seconds (n_values,),
    fits not certified (n_values,), error)``: the fourth counts, per value, the solves (one
    per class in one-vs-rest) whose status is neither ``"optimal"`` nor ``"converged"``
    (their own warnings are silenced here; :meth:`_PathSearchCV.fit` reports them once).
    ``error`` is None, or the message of a ``SolverError`` (a solver's honest refusal, e.g.
    a factorisation that fails at the data's scale): the value whose solve raised it
    (``fast.path`` goes on past it with a point of status ``"error"``), or every value if
    the path could not start, scores NaN, as ``GridSearchCV``'s ``error_score=np.nan``
    scores a failed fit.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from refmodels.solution import SolverError

    from .path import path as _path

    targets = [y_tr] if classes.size == 2 else [np.where(y_tr == c, 1, -1) for c in classes]
    # lam=None is the plain estimator's m: the training part's number of samples
    values = [float(X_tr.shape[0]) if v is None else v for v in values]
    n = len(values)
    scores = np.zeros((n, X_te.shape[0], len(targets)))
    fit_t = np.zeros(n)
    score_t = np.zeros(n)
    not_optimal = np.zeros(n, dtype=np.int64)
    failed = np.zeros(n, dtype=bool)          # a grid value whose solve raised SolverError
    error = None
    Kx = None
    for j, t in enumerate(targets):
        prob = cls(X_tr, t, kernel=kernel, **{path_name: values[0]}, **fixed)
        if _lean(prob, path_name, method, tol, max_iter):
            from refmodels import registry

            lean_path = registry.of(prob).fast_module().SOLVERS.lean_path
            W, passed, secs = lean_path(prob, values)
            if passed.all():                     # every point checked: score them
                t0 = time.perf_counter()
                d = X_te.shape[1]                # (a bias feature's weight is W[:, d])
                scores[:, :, j] = np.asarray(X_te @ W[:, :d].T).T
                if W.shape[1] > d:
                    scores[:, :, j] += prob.intercept_scaling * W[:, d:d + 1]
                score_t += (time.perf_counter() - t0) / n
                fit_t += secs
                continue
            # a point did not pass its check: the whole path again through fast.path,
            # whose self-check gives every point its honest status (from a fresh start:
            # the same path as without this lane)
            _common.drop(prob, "tron_data", on=(prob.X,))
        with warnings.catch_warnings():
            if verbose < 10:
                warnings.simplefilter("ignore", ConvergenceWarning)
            try:
                sols = _path(prob, method=method, tol=tol, max_iter=max_iter,
                             random_state=random_state, **{path_name: values})
            except SolverError as exc:
                return np.full(n, np.nan), fit_t, score_t, not_optimal, str(exc)
        for k, sol in enumerate(sols):
            fit_t[k] += sol.time
            not_optimal[k] += sol.status not in ("optimal", "converged")
            if sol.status == "error":             # fast.path went on past it: score it NaN
                failed[k] = True
                error = error or sol.info.get("error")
                continue
            t0 = time.perf_counter()
            if kernel.is_linear:
                w = sol.variables.get("w")
                if w is None:
                    w = np.asarray(X_tr.T @ sol.coef).ravel()
                # (with a bias feature, its weight is last in w and s w_b is the intercept)
                f = np.asarray(X_te @ w[:X_te.shape[1]]).ravel()
            else:
                if Kx is None:
                    Kx = kernel.cross(X_tr, X_te) if not kernel.is_precomputed else X_te.T
                f = Kx.T @ sol.coef
            scores[k, :, j] = f + float(sol.intercept or 0.0)
            score_t[k] += time.perf_counter() - t0
        # labels of the problem: the larger sorted label is +1
    if classes.size == 2:
        pred = classes[(scores[:, :, 0] >= 0).astype(int)]         # the estimators' rule
    else:
        pred = classes[np.argmax(scores, axis=2)]
    acc = np.mean(pred == y_te[None, :], axis=1)
    acc[failed] = np.nan
    if verbose >= 10:
        print(f"[CV] {fixed} {path_name}={list(values)}: accuracies "
              f"{np.round(acc, 4).tolist()}, fit {fit_t.sum():.3f} s", flush=True)
    return acc, fit_t, score_t, not_optimal, error


def _lean(prob, path_name, method, tol, max_iter):
    """Whether the fold's path runs as :func:`fast.odm.linear_tron_path` (linear ODM on
    dense rows with ``d <= fast._tron.DENSE_HESSIAN_MAX_D`` and no more features than points
    (where ``"auto"`` takes TRON: :func:`fast.odm.choose_method`), the default method, tolerance
    and iteration cap): TRON per point and the certificate's residuals checked in place,
    without a :class:`Solution` per point, which is much faster than :func:`fast.path`
    (``validation/bench_cv_protocol.py`` measures it; validation/decisions.md)."""
    import scipy.sparse as sp

    from . import _tron

    from refmodels import registry

    return (registry.of(prob).fast_module().SOLVERS.lean_path is not None
            and prob.kernel.is_linear
            and path_name == "lam" and method in (None, "auto") and tol is None
            and max_iter is None and not sp.issparse(prob.X)
            and prob.X.shape[1] <= min(_tron.DENSE_HESSIAN_MAX_D, prob.m))


class _PathSearchCV(StoresInitParams, ClassifierMixin, BaseEstimator):
    """Shared machinery; subclasses set the family (see the module docstring)."""

    _base = None             # estimator class of fast.estimators
    _refit_params = {}       # extra parameters of the refit estimator
    _grid = ()               # ((grid attribute, estimator parameter, default values), ...)
    _path = None             # the estimator parameter along which paths run
    _fixed = ()              # non-grid estimator parameters passed to the problem
    _method = None           # fast.solve method along the paths (None: the path's default)

    # ---- grid -------------------------------------------------------------------------
    def _param_grid(self, d=None):
        """The grid by estimator parameter: each ``*s`` attribute, or its default
        (:data:`_grid`: the papers' grid with the plain estimator's default); ``lam`` may
        hold None (``m``); ``gamma`` (``d`` features) for the RBF and polynomial kernels."""
        grid = {}
        for attr, name, default in self._grid:
            vals = getattr(self, attr)
            vals = default if vals is None else vals
            if isinstance(vals, (str, bytes)) or not np.iterable(vals):
                raise ValueError(f"{attr} must be a non-empty sequence of finite numbers; "
                                 f"got {vals!r}")
            vals = list(vals)
            nums = [v for v in vals if not (v is None and name == "lam")]
            arr = np.asarray(nums, dtype=np.float64).ravel() if nums else np.zeros(0)
            if not vals or arr.size != len(nums) or not np.all(np.isfinite(arr)):
                raise ValueError(f"{attr} must be a non-empty sequence of finite numbers"
                                 f"{' (or None: m)' if name == 'lam' else ''}; got {vals!r}")
            grid[name] = ([None] if len(nums) < len(vals) else []) + [float(v) for v in arr]
        gammas = self._gamma_grid(d)
        if gammas is not None:
            grid["gamma"] = gammas
        return grid

    def _gamma_grid(self, d):
        """``gamma``'s grid: ``gammas``, or by default the plain estimator's ``gamma`` and
        seed 002's widths ``{2^-4, 2^-2, 2^0, 2^2, 2^4} / d`` (RBF and polynomial kernels;
        None for the others)."""
        gammas = getattr(self, "gammas", None)
        if self.kernel not in ("rbf", "poly"):
            if gammas is not None:
                raise ValueError(f"gammas must be None with kernel={self.kernel!r} (no gamma)")
            return None
        if gammas is None:
            if d is None:
                return [self.gamma]
            return [self.gamma] + [w / d for w in _SEED002_WIDTHS]
        if isinstance(gammas, (str, bytes)) or not np.iterable(gammas) or not len(gammas):
            raise ValueError(f"gammas must be a non-empty sequence of numbers > 0, 'scale' or "
                             f"'auto'; got {gammas!r}")
        out = []
        for g in gammas:
            if g in ("scale", "auto"):
                out.append(g)
            elif isinstance(g, numbers.Real) and not isinstance(g, bool) and np.isfinite(g) \
                    and g > 0:
                out.append(float(g))
            else:
                raise ValueError(f"gammas must hold numbers > 0, 'scale' or 'auto'; got {g!r}")
        return out

    def _base_params(self, grid=()):
        """The plain estimator's parameters but those of the ``grid``."""
        keep = {"kernel", "gamma", "degree", "coef0", "tol", "max_iter", "random_state"}
        keep -= set(grid)
        keep.update(self._fixed)
        params = {k: getattr(self, k) for k in keep if hasattr(self, k)}
        if "multi_class" in self._base().get_params():
            # the folds' paths score one-vs-rest (one path per class), so the refit does too
            params["multi_class"] = "ovr"
        return params

    def _check_common(self):
        if not (isinstance(self.verbose, numbers.Integral) or isinstance(self.verbose, bool)):
            raise ValueError(f"verbose must be an int; got {self.verbose!r}")
        if self.n_jobs is not None and not isinstance(self.n_jobs, numbers.Integral):
            raise ValueError(f"n_jobs must be None or an int; got {self.n_jobs!r}")

    # ---- fit ----------------------------------------------------------------------------
    def fit(self, X, y):
        """Run the grid by paths on every fold, then refit the best point on all of ``X``."""
        from joblib import Parallel, delayed

        self._check_common()
        grid = self._param_grid()
        proto = self._base(**self._base_params(grid), **{k: v[0] for k, v in grid.items()})
        proto._validate_params()
        X, y = proto._validate_X_fit(X, y)
        grid = self._param_grid(d=X.shape[1])
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(f"y must contain at least two classes; got one class "
                             f"({classes[0]!r}): a classifier can't train on one class")
        check_classification_targets(y)
        cv = check_cv(self.cv, y, classifier=True)
        folds = list(cv.split(X, y))
        n_splits = len(folds)
        path_name = self._path
        path_vals = grid[path_name]
        others = {k: v for k, v in grid.items() if k != path_name}
        other_points = list(ParameterGrid(others)) if others else [{}]
        fixed_extra = {k: getattr(self, k) for k in self._fixed}

        tasks = []
        for f_idx, (tr, te) in enumerate(folds):
            if self.kernel == "precomputed":              # rows and columns of the Gram
                X_tr, X_te = X[np.ix_(tr, tr)], X[np.ix_(te, tr)]
            else:
                X_tr, X_te = X[tr], X[te]
            kernels = {}
            for o_idx, other in enumerate(other_points):
                other = dict(other)
                g = other.pop("gamma", self.gamma)          # a kernel parameter
                if g not in kernels:
                    proto.gamma = g
                    kernels[g] = proto._kernel_object(X_tr)
                tasks.append(((f_idx, o_idx),
                              delayed(_fold_path)(self._base._problem_class, kernels[g], X_tr,
                                                  y[tr], X_te, y[te], classes,
                                                  {**other, **fixed_extra}, path_name,
                                                  path_vals, self._method, self.tol,
                                                  self.max_iter, self.random_state,
                                                  int(self.verbose))))
        if self.verbose:
            print(f"Fitting {n_splits} folds for each of {len(other_points) * len(path_vals)} "
                  f"candidates, as {len(tasks)} warm-started paths of {len(path_vals)} "
                  f"{path_name} values", flush=True)
        t0 = time.perf_counter()
        outs = self._run_tasks(Parallel, [t for _, t in tasks], path_name)
        self.cv_time_ = time.perf_counter() - t0

        # candidates in ParameterGrid order, as GridSearchCV
        candidates = list(ParameterGrid(grid))
        n_cand = len(candidates)
        index = {}
        errors = [out[4] for out in outs if out[4] is not None]
        if all(np.all(np.isnan(out[0])) for out in outs):
            raise ValueError(f"Every fit of the {len(outs)} fold paths failed (a SolverError "
                             f"in each); the first: {errors[0] if errors else 'unknown'}")
        for (f_idx, o_idx), (acc, fit_t, score_t, bad, _) in zip((k for k, _ in tasks), outs):
            for p_idx in range(len(path_vals)):
                index[(f_idx, o_idx, p_idx)] = (acc[p_idx], fit_t[p_idx], score_t[p_idx],
                                                bad[p_idx])
        def key(params):                          # (gamma may be a string, lam None)
            return tuple(sorted((k, repr(v)) for k, v in params.items()))

        other_key = {key(o): i for i, o in enumerate(other_points)}
        split = np.zeros((n_splits, n_cand))
        fit_times = np.zeros((n_splits, n_cand))
        score_times = np.zeros((n_splits, n_cand))
        not_optimal = np.zeros((n_splits, n_cand), dtype=np.int64)
        for c_idx, cand in enumerate(candidates):
            o_idx = other_key[key({k: v for k, v in cand.items() if k != path_name})]
            p_idx = path_vals.index(cand[path_name])
            for f_idx in range(n_splits):
                (split[f_idx, c_idx], fit_times[f_idx, c_idx], score_times[f_idx, c_idx],
                 not_optimal[f_idx, c_idx]) = index[(f_idx, o_idx, p_idx)]
        self.cv_results_ = self._results(candidates, split, fit_times, score_times)
        self.cv_results_["n_fits_not_optimal"] = not_optimal.sum(axis=0)
        self._warn_not_optimal(not_optimal, candidates)
        if errors:
            import warnings

            from sklearn.exceptions import FitFailedWarning

            warnings.warn(f"{type(self).__name__}: {len(errors)} of the {len(outs)} fold paths "
                          f"met a SolverError (at one grid value or more); those candidates "
                          f"score NaN in those folds "
                          f"and rank last, as GridSearchCV's error_score=np.nan. The first: "
                          f"{errors[0]}", FitFailedWarning, stacklevel=2)
        self.best_index_ = int(np.argmin(self.cv_results_["rank_test_score"]))
        self.best_params_ = dict(candidates[self.best_index_])
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        self.n_splits_ = n_splits
        self.classes_ = classes
        if self.refit:
            t0 = time.perf_counter()
            from refmodels import _progress

            with _progress.stage(f"{type(self).__name__}: refit {self.best_params_}",
                                 enabled=self._bar()):
                self.best_estimator_ = self._base(**self._base_params(grid),
                                                  **self.best_params_,
                                                  **self._refit_params).fit(X, y)
            self.refit_time_ = time.perf_counter() - t0
        self.n_features_in_ = X.shape[1]
        return self

    def _bar(self):
        """Whether a progress bar shows: ``0 < verbose < 10`` with ``tqdm`` installed (else
        joblib's text progress, as before; ``verbose >= 10`` prints one line per path)."""
        from refmodels import _progress

        return 0 < int(self.verbose) < 10 and _progress.available()

    def _run_tasks(self, Parallel, tasks, path_name):
        """The fold paths through ``joblib.Parallel``, in order; with :meth:`_bar`, a
        ``tqdm`` bar counts them as they finish (joblib's generator output)."""
        from refmodels import _progress

        if not self._bar():
            return Parallel(n_jobs=self.n_jobs, verbose=int(self.verbose))(tasks)
        bar = _progress.bar(total=len(tasks), unit="path",
                            desc=f"{type(self).__name__}: fold paths of {path_name}")
        try:
            try:
                gen = Parallel(n_jobs=self.n_jobs, return_as="generator")(tasks)
            except TypeError:                      # joblib < 1.3: no generator output
                gen = Parallel(n_jobs=self.n_jobs)(tasks)
            outs = []
            for out in gen:
                outs.append(out)
                bar.update(1)
            return outs
        finally:
            bar.close()

    def _warn_not_optimal(self, not_optimal, candidates):
        """One ``ConvergenceWarning`` for the fold fits that did not reach the certificate's
        tolerance (each fold's own warnings are silenced below ``verbose=10``): their scores
        count in ``cv_results_`` like the others, as in ``GridSearchCV``, and
        ``cv_results_["n_fits_not_optimal"]`` says where they are."""
        total = int(not_optimal.sum())
        if total == 0 or int(self.verbose) >= 10:
            return
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        worst = int(np.argmax(not_optimal.sum(axis=0)))
        warnings.warn(f"{type(self).__name__}: {total} of the fold fits did not reach the "
                      f"certificate's tolerance (status max_iter or inaccurate) in "
                      f"{int(np.count_nonzero(not_optimal.sum(axis=0)))} of {len(candidates)} "
                      f"candidates, most at {dict(candidates[worst])}; their scores are kept "
                      f"(see cv_results_['n_fits_not_optimal']; raise max_iter, or scale the "
                      f"features)", ConvergenceWarning, stacklevel=3)

    @staticmethod
    def _results(candidates, split, fit_times, score_times):
        from scipy.stats import rankdata

        n_splits, n_cand = split.shape
        res = {}
        for name in candidates[0]:
            vals = [c[name] for c in candidates]
            try:
                if any(v is None or isinstance(v, str) for v in vals):
                    raise TypeError           # (None would become NaN): kept as objects
                data = np.asarray(vals, dtype=np.float64)
            except (TypeError, ValueError):
                data = np.empty(n_cand, dtype=object)
                data[:] = vals
            res[f"param_{name}"] = np.ma.MaskedArray(data, mask=False)
        res["params"] = [dict(c) for c in candidates]
        for k in range(n_splits):
            res[f"split{k}_test_score"] = split[k]
        mean = split.mean(axis=0)
        res["mean_test_score"] = mean
        res["std_test_score"] = split.std(axis=0)
        # NaN means (a failed fold path) rank last, as in GridSearchCV
        if np.all(np.isnan(mean)):
            res["rank_test_score"] = np.ones(n_cand, dtype=np.int32)
        else:
            ranked = np.nan_to_num(np.round(mean, 12), nan=np.nanmin(mean) - 1.0)
            res["rank_test_score"] = rankdata(-ranked, method="min").astype(np.int32)
        res["mean_fit_time"] = fit_times.mean(axis=0)
        res["std_fit_time"] = fit_times.std(axis=0)
        res["mean_score_time"] = score_times.mean(axis=0)
        res["std_score_time"] = score_times.std(axis=0)
        return res

    # ---- prediction through the refit estimator -------------------------------------------
    def _best(self):
        check_is_fitted(self, "cv_results_")
        if not self.refit:
            raise AttributeError("refit=False: no best_estimator_ to predict with")
        return self.best_estimator_

    def decision_function(self, X):
        return self._best().decision_function(X)

    def predict(self, X):
        return self._best().predict(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.kernel == "linear"
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags


_CV_DOC = """{family} with its hyperparameters chosen by ``cv``-fold cross-validation over the
    paper's grid (with the plain estimator's defaults added), by warm-started paths (see
    :mod:`fast.cv`).

    Parameters
    ----------
{grids}
    gammas : sequence of numbers > 0, "scale" or "auto", or None; the ``gamma`` grid of the
        RBF and polynomial kernels (None: ``gamma`` and seed 002's ``{{2^-4, 2^-2, 2^0, 2^2,
        2^4}} / d``; must be None for the linear and precomputed kernels)
    kernel, gamma, degree, coef0 : as :class:`fast.{family}Classifier` (default ``"rbf"``,
        ``"scale"``: the plain estimator's; ``degree``, ``coef0`` fixed)
{fixed}    cv : int or splitter, default 5 (``StratifiedKFold``, as ``GridSearchCV``)
    n_jobs : int or None; the folds x grid points run as joblib tasks (``None`` follows an
        active ``joblib.parallel_backend``, e.g. ``"dask"``)
    verbose : int, default 0 (1 to 9: a progress bar of the fold paths and the refit, with
        ``tqdm`` installed, else joblib's progress; ``>= 10`` joblib's and one line per path)
    refit : bool, default True (refit the best point on the whole training set)
    tol, max_iter, random_state : passed to every solve

    Attributes
    ----------
    best_params_, best_score_, best_index_, cv_results_ (as ``GridSearchCV``, with
    ``n_fits_not_optimal``),
    best_estimator_ (a fitted :class:`fast.{family}Classifier`), classes_, n_splits_,
    cv_time_ and refit_time_ (seconds).
    """


class ODMClassifierCV(_PathSearchCV):
    _base = _E.ODMClassifier
    # the refit solves with method="auto" (TRON on the linear kernel: the best lam is often
    # 2^16 to 2^20, where the default DCD crawls)
    _refit_params = {"method": "auto"}
    _grid = (("lams", "lam", _with_default(_POW2_0_20, None)),
             ("mus", "mu", _with_default(_ODM_MU_THETA, 0.5)),
             ("thetas", "theta", _with_default(_ODM_MU_THETA, 0.3)))
    _path = "lam"
    _method = None           # fast.path: "auto" for ODM (TRON on the linear kernel)
    _fixed = ("fit_intercept", "intercept_scaling")

    def __init__(self, lams=None, mus=None, thetas=None, gammas=None, *, fit_intercept=True,
                 intercept_scaling=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, cv=5,
                 n_jobs=None, verbose=0, refit=True, tol=None, max_iter=None, random_state=None):
        self._store_params(locals())


class ODMLClassifierCV(_PathSearchCV):
    _base = _E.ODMLClassifier
    _grid = (("lams", "lam", _with_default(_POW2_0_20, None)),
             ("mu1s", "mu1", _with_default(_POW2_M4_4, 0.1)),
             ("mu2s", "mu2", _with_default(_POW2_M4_4, 0.1)))
    _path = "lam"
    _fixed = ("fit_intercept", "intercept_scaling")

    def __init__(self, lams=None, mu1s=None, mu2s=None, gammas=None, *, fit_intercept=True,
                 intercept_scaling=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, cv=5,
                 n_jobs=None, verbose=0, refit=True, tol=None, max_iter=None, random_state=None):
        self._store_params(locals())


class LDMClassifierCV(_PathSearchCV):
    _base = _E.LDMClassifier
    _grid = (("Cs", "C", _with_default(_SEED001_C, 1.0)),
             ("lam1s", "lam1", _with_default(_POW2_M8_M2, 0.05)),
             ("lam2s", "lam2", _with_default(_POW2_M8_M2, 0.05)))
    _path = "C"
    _fixed = ("fit_intercept", "intercept_scaling")

    def __init__(self, Cs=None, lam1s=None, lam2s=None, gammas=None, *, fit_intercept=True,
                 intercept_scaling=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, cv=5,
                 n_jobs=None, verbose=0, refit=True, tol=None, max_iter=None, random_state=None):
        self._store_params(locals())


class SVMClassifierCV(_PathSearchCV):
    _base = _E.SVMClassifier
    _grid = (("Cs", "C", _with_default(_SEED001_C, 1.0)),)
    _path = "C"
    _fixed = ("fit_intercept",)

    def __init__(self, Cs=None, gammas=None, *, fit_intercept=True, kernel="rbf", gamma="scale",
                 degree=3, coef0=0.0, cv=5, n_jobs=None, verbose=0, refit=True, tol=None,
                 max_iter=None, random_state=None):
        self._store_params(locals())


_INTERCEPT_DOC = ("    fit_intercept : bool, default True; intercept_scaling : float > 0, default "
                  "1.0 (as the plain estimator:\n        a constant feature, regularized)\n")
_LAM_DOC = ("    lams : default {None, 2^0, 2^2, ..., 2^20} (the path; None is m, the plain "
            "estimator's default);\n")
for _cls, _grids, _fixed in (
        (ODMClassifierCV, _LAM_DOC + "        mus : default {0.2, 0.4, 0.5, 0.6, 0.8};  thetas : "
         "default {0.2, 0.3, 0.4, 0.6, 0.8}\n", _INTERCEPT_DOC),
        (ODMLClassifierCV, _LAM_DOC + "        mu1s, mu2s : default {2^-4, 0.1, 2^-2, ..., "
         "2^4}\n", _INTERCEPT_DOC),
        (LDMClassifierCV, "    Cs : default {1, 10, 50, 100} (the path);  lam1s, lam2s : default "
         "{2^-8, ..., 2^-5, 0.05, 2^-4, ..., 2^-2}\n", _INTERCEPT_DOC),
        (SVMClassifierCV, "    Cs : default {1, 10, 50, 100} (the path)\n",
         "    fit_intercept : bool, default True (as SVMClassifier)\n")):
    _cls.__doc__ = _CV_DOC.format(family=_cls._base._problem_class.__name__, grids=_grids,
                                  fixed=_fixed)
