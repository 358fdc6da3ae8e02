"""Fast solvers of DRR and DRM (SPEC §8; seed 004 eqs. 8, 12–17, 24–27, Algs. 2–6).

DRR (seed 004 eq. 8), one problem per test point ``x`` (a column of ``W``):

.. math::

    \\min_w\\ \\tfrac12 w^\\top Q_D w - K_x^\\top w + \\beta R(w),\\qquad Q_D = K + \\alpha(H - B),

with ``R = rho(||w|C||_{q,r})`` (:class:`refmodels.regularizers.GroupNorm`) or any user
:class:`refmodels.regularizers.Regularizer` (used only through ``prox`` and ``value``).
DRM is ``R = 1/2 ||w||^2``: ``W = (Q_D + beta I)^{-1} K_x`` (eq. 13).

Methods (``fast.solve(prob, method=...)``):

``"closed_form"`` (Alg. 2, DRM only; the default for DRM)
    one Cholesky factorisation of ``Q_D + beta I`` (built in place from the Gram, ``H`` and
    ``B`` never formed as matrices), then triangular solves with all test points as
    right-hand sides; never an explicit inverse.
``"gd"`` (Alg. 3, DRM only: needs a smooth objective)
    gradient descent on ``f(w) = 1/2 w^T (Q_D + beta I) w - K_x^T w`` with the exact step
    of eq. 15.
``"ppa"`` (Alg. 4) / ``"linear_ppa"`` (Alg. 5, linear kernel, matrix-free)
    ``w <- prox_{beta R / c}(w - (Q_D w - K_x)/c)``, ``c >= sigma_max(Q_D)`` (Lanczos,
    ``scipy.sparse.linalg.eigsh``, times ``1 + 1e-6``; option ``c``). For DRM the prox is
    ``u / (1 + beta/c)`` and the step is exactly eq. 17; for other regularizers it is the
    same proximal-point majorisation (``F(w; w_t)`` of §VI-C with ``beta R`` kept exact),
    i.e. a proximal-gradient step of length ``1/c``. SPEC §8: it converges iff
    ``c > (sigma_max - beta)/2`` (DRM), and the seed's rate needs ``c >= sigma_max``.
    ``linear_ppa`` applies ``Q_D v = X(X^T v) + alpha h*v - alpha [X_c(X_c^T v_c)/n_c]_c``
    (eqs. 21–23) and never forms an ``m x m`` matrix: O(m d) per iteration and column.
``"apg"`` (Alg. 6; the default for DRR)
    accelerated proximal gradient (FISTA) with the backtracking of step 4: ``b`` is
    multiplied by ``eta`` (option, 2) until ``d^T Q d <= b ||d||^2`` for the step ``d``
    (eq. 25 for DRM, where ``f`` includes ``beta/2 ||w||^2``; the standard majorisation
    test for a general ``R``). Starts at ``b0`` = the Lanczos estimate of
    ``sigma_max(Q_D)`` (option ``b0``). With ``restart=True`` (default; an addition to
    Alg. 6) the momentum is reset when ``(v - w_{t+1})^T (w_{t+1} - w_t) > 0`` (O'Donoghue and
    Candès' gradient restart), which restores linear convergence on strongly convex
    instances; ``restart=False`` is Alg. 6 as printed. For the linear kernel it is
    matrix-free like ``linear_ppa`` (option ``operator="linear"``, the default there).
    At the default ``max_iter`` on a dense ``Q_D`` of at most 2,000 points, the test points
    it leaves unsolved after 5,000 iterations go to ADMM (:mod:`fast._drr_admm`: the
    smooth part solved exactly through ``Q_D``'s eigendecomposition), which an
    ill-conditioned ``Q_D`` (a polynomial kernel on raw features) does not slow as it does
    APG; ``info["admm_iterations"]`` counts its iterations.

Stopping (every iterative method, per test point): the seed stops on ``||w_{t+1}-w_t|| <= eps``;
we use the scaled optimality residual, comparable across problems and with
``prob.certify``: ``||r|| <= tol (1 + ||K_x|| + ||Q_D w||)`` where ``r`` is an element of
the subdifferential of the objective at the returned point (``r = grad f(w)`` for a smooth
method; ``r = (b I - Q_D)(v - w_{t+1})`` after a proximal step from ``v``). Columns that have
converged are frozen. ``status`` is ``"optimal"`` when every column converged, else
``"max_iter"`` with a ``ConvergenceWarning`` stating the worst residual and ``tol``.

Memory. The kernel path holds the Gram (``m^2`` doubles) and, for ``closed_form``, its
Cholesky factor in a second ``m^2`` array; above 20,000 points (``LARGE_M``) only ``Q_D``,
built from kernel blocks and factored in place by panels, with a progress bar. Test points are processed in batches of
``batch_size`` columns (option; default: all while ``m * n_test <= 2^24``, else
``2^24 // m``): the work arrays are ``O(m * batch_size)`` (``K_x``, gradient, momentum,
about six of them for APG), and the returned ``W`` (``m x n_test``) grows linearly with the
number of test points. The matrix-free linear path needs ``O(m d)`` besides.
"""
from __future__ import annotations

import numbers
import time
import warnings

import numpy as np
from scipy.linalg import cho_solve

from refmodels import regularizers as _regularizers
from refmodels._validation import check_prox
from refmodels.regularizers import GroupNorm
from refmodels.solution import Solution, SolverError

from . import _chunk, _common, _drr_user, _methods, _prox
from . import _drr_admm as _admm

DEFAULT_TOL = 1e-10
DEFAULT_MAX_ITER = {"gd": 100000, "ppa": 100000, "linear_ppa": 100000, "apg": 50000}
#: above this many points Q_D is built from kernel blocks without keeping the Gram beside it,
#: and the closed form factors it by panels of columns with a progress bar (Ctrl-C between
#: panels); below, Q_D is a copy of the Gram and the factorisation one LAPACK call (in a
#: worker thread, so that Ctrl-C is answered at once: :func:`fast._chunk.cholesky_lower`)
LARGE_M = 20000
CHOLESKY_PANEL = 256
_BATCH_ELEMENTS = 2 ** 24


# ---------------------------------------------------------------------------------------
# Q_D as an operator
# ---------------------------------------------------------------------------------------
class DenseQ:
    """``Q_D = K + alpha (H - B)`` built once (``H``, ``B`` never formed): a copy of the
    Gram, or above :data:`LARGE_M` points (the Gram not already built) the kernel's blocks
    written into ``Q_D``'s own array, modified in place: one ``m x m`` array in all."""

    kind = "dense"

    def __init__(self, prob):
        K = prob.gram_if_built
        if K is None and prob.m > LARGE_M:
            from refmodels._numeric import guard_dense

            guard_dense(prob.m, "DRM's matrix Q_D = K + alpha (H - B)", copies=1)
            Q = prob._finite_kernel(prob.kernel.gram(prob.X))       # not kept: Q_D is it
        else:
            Q = np.array(prob.gram if K is None else K, dtype=np.float64, copy=True)
        if prob.alpha != 0.0:
            # Q_ij = K_ij - (alpha/n_g) K_ij within a group g, Q_ii = K_ii + alpha K_ii -
            # (alpha/n_g) K_ii: by blocks of rows, in place
            d = np.diag(Q).copy()
            cd = np.zeros(Q.shape[0])
            for g in prob.groups:
                cg = prob.alpha / g.size
                cd[g] = cg
                for s in range(0, g.size, 256):
                    blk = Q[np.ix_(g[s:s + 256], g)]
                    blk -= cg * blk
                    Q[np.ix_(g[s:s + 256], g)] = blk
            Q[np.diag_indices_from(Q)] = (d + prob.alpha * d) - cd * d
        self.Q = Q
        self.m = Q.shape[0]

    def matvec(self, V):
        return self.Q @ V

    def sigma_max(self):
        m = self.m
        if m <= 400:
            return float(np.linalg.eigvalsh(self.Q)[-1])
        from scipy.sparse.linalg import eigsh
        return float(eigsh(self.Q, k=1, which="LA", tol=1e-8, return_eigenvectors=False)[0])


class LinearQ:
    """Matrix-free ``Q_D v`` for the linear kernel (seed 004 eqs. 21–23): O(m d) per column.

    ``K v = X (X^T v)``, ``H v = h * v`` with ``h_i = ||x_i||^2``,
    ``B v = [X_c (X_c^T v_c) / n_c]_c``. The Gram is never formed.
    """

    kind = "linear"

    def __init__(self, prob):
        X = prob.X
        self.X = X
        self.m = X.shape[0]
        self.alpha = prob.alpha
        self.h = np.asarray(prob.kernel.diag(X), dtype=np.float64)
        self.groups = prob.groups
        self.Xg = [X[g] for g in prob.groups] if prob.alpha != 0.0 else None

    def matvec(self, V):
        X = self.X
        out = np.asarray(X @ (X.T @ V))
        if self.alpha != 0.0:
            V2 = V if V.ndim == 2 else V[:, None]
            out2 = out if out.ndim == 2 else out[:, None]
            out2 += self.alpha * self.h[:, None] * V2
            for g, Xg in zip(self.groups, self.Xg):
                out2[g] -= (self.alpha / g.size) * np.asarray(Xg @ (Xg.T @ V2[g]))
        return out

    def sigma_max(self):
        from scipy.sparse.linalg import LinearOperator, eigsh
        m = self.m
        if not np.any(self.h):
            return 0.0            # every x_i = 0: K, H and B vanish, Q_D = 0 (ARPACK refuses it)
        if m <= 3:
            return float(np.linalg.eigvalsh(self.matvec(np.eye(m)))[-1])
        op = LinearOperator((m, m), matvec=lambda v: self.matvec(np.asarray(v).reshape(-1)),
                            dtype=np.float64)
        v0 = np.ones(m) / np.sqrt(m)
        return float(eigsh(op, k=1, which="LA", tol=1e-8, v0=v0,
                           return_eigenvectors=False)[0])


# ---------------------------------------------------------------------------------------
# the regularizer, batched
# ---------------------------------------------------------------------------------------
class _Reg:
    """``beta R`` on matrices whose columns are test points: ``prox`` and ``value``."""

    def __init__(self, prob):
        self.reg = prob.regularizer
        self.groups = prob.groups
        self.beta = prob.beta
        # (the package's batched prox for GroupNorm itself; a subclass may have its own)
        self.group_norm = type(self.reg) is GroupNorm
        if self.group_norm:
            self.layout = _prox.group_layout(self.groups, self.reg.q, self.reg.r)

    def prox(self, V, step):
        """``prox_{step beta R}`` of every column; ``step`` scalar or per column."""
        steps = np.broadcast_to(np.asarray(step, float) * self.beta, (V.shape[1],))
        if self.group_norm:
            r = self.reg
            return _prox.group_norm_prox(V, steps, r.q, r.r, r.p, self.groups, self.layout)
        out = np.empty_like(V)
        for j in range(V.shape[1]):
            out[:, j] = check_prox(self.reg.prox(V[:, j].copy(), float(steps[j]), self.groups),
                                   V[:, j])
        # a prox that maps finite points to NaN or inf is the user's error; iterates that
        # overflowed before it are the solver's (SolverError from the residual's check)
        if not np.all(np.isfinite(out[:, np.all(np.isfinite(V), axis=0)])):
            raise ValueError(f"regularizer.prox of {self.reg!r} must return finite values at "
                             f"finite points; it returned NaN or inf (step "
                             f"{float(np.max(steps)):.3g})")
        return out

    def value(self, W):
        """``R`` of every column (without ``beta``)."""
        if self.group_norm:
            return np.atleast_1d(np.asarray(self.reg.value(W, self.groups), float))
        return np.array([float(self.reg.value(W[:, j], self.groups))
                         for j in range(W.shape[1])])


# ---------------------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------------------
def _check_tol(tol):
    if tol is None:
        return DEFAULT_TOL
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not np.isfinite(tol) \
            or tol <= 0:
        raise ValueError(f"tol must be a finite number > 0; got {tol!r}")
    return float(tol)


def _check_max_iter(max_iter, method):
    if max_iter is None:
        return DEFAULT_MAX_ITER.get(method, 1)
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}")
    return int(max_iter)


def _positive_opt(options, name, default):
    v = options.pop(name, default)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0; got {v!r}")
    return float(v)


def choose_method(prob, options=()):
    """DRR's rule (``method=None``): ``closed_form`` for DRM (a smooth objective), else
    ``apg``."""
    return "closed_form" if prob.has_closed_form else "apg"


def _method(name):
    """The table's entry for ``name``: a user's regularizer checked once (refused when not
    the convex function it states), then :func:`_solve`; a failure of the iteration says
    whose fault it is when the regularizer's prox fails its check."""
    def run(prob, tol, max_iter, random_state, warm_start, **options):
        report = _regularizers.require_usable(prob.regularizer)
        try:
            return _solve(prob, name, tol, max_iter, warm_start, options)
        except SolverError as exc:
            bad = _regularizers.failed(report, _regularizers.PROX_CHECKS)
            if not bad:
                raise
            # the iteration of a wrong prox may diverge
            raise SolverError(f"{exc}. regularizer.prox of {prob.regularizer!r} fails "
                              f"rm.regularizers.check's {bad[0].name!r} (error "
                              f"{bad[0].max_error:.3g}): its iteration is not the "
                              f"problem's") from None

    run.__name__ = run.__qualname__ = f"_{name}"
    return run


def _solve(prob, method, tol, max_iter, warm_start, options):
    """``method`` (see the module docstring) once the regularizer passed
    :func:`refmodels.regularizers.require_usable`. ``tol``: default 1e-10 (scaled
    optimality residual per test point); ``max_iter``: iterations (unused by
    ``closed_form``); ``warm_start``: a DRR Solution (or an array ``W`` of shape
    (m, n_test)); options ``batch_size`` (columns per batch), ``c`` (PPA constant), ``b0``,
    ``eta``, ``restart`` (APG), ``operator`` (``"dense"`` or ``"linear"``, for
    gd/ppa/apg), ``progress`` (True/False; None: a bar for the closed form above
    :data:`LARGE_M` points). Every method is deterministic."""
    t0 = time.perf_counter()
    smooth = bool(prob.has_closed_form)
    if method in ("closed_form", "gd") and not smooth:
        raise ValueError(f"method={method!r} needs DRM (q = r = 2, rho = 'half_square': a smooth "
                         f"objective); this problem has {prob.regularizer!r}: use method='apg' "
                         "or 'ppa'")
    if method == "linear_ppa" and not prob.kernel.is_linear:
        raise ValueError(f"method='linear_ppa' needs the linear kernel (seed 004 Alg. 5); got "
                         f"{prob.kernel!r}: use method='ppa'")
    tol = _check_tol(tol)
    fallback = max_iter is None and method == "apg"   # ADMM after a short APG (below)
    max_iter = _check_max_iter(max_iter, method)
    progress = options.pop("progress", None)
    if progress is None:
        progress = prob.m > LARGE_M
    elif not isinstance(progress, (bool, np.bool_)):
        raise ValueError(f"progress must be True, False or None (a bar above {LARGE_M:,} "
                         f"points); got {progress!r}")
    m, n_test = prob.m, prob.n_test
    bs = options.pop("batch_size", None)
    if bs is None:
        bs = n_test if m * n_test <= _BATCH_ELEMENTS else max(1, _BATCH_ELEMENTS // m)
    elif isinstance(bs, bool) or not isinstance(bs, numbers.Integral) or bs < 1:
        raise ValueError(f"batch_size must be an integer >= 1; got {bs!r}")
    bs = int(min(bs, n_test))
    W0 = _warm(prob, warm_start)
    info = {"method": method, "batch_size": bs,
            "memory": f"W is {m} x {n_test}; work arrays O({m} x {bs}) per batch"}

    if method == "closed_form":
        if options:
            raise ValueError(f"unknown options {sorted(options)} for method='closed_form'")
        A = DenseQ(prob).Q
        A[np.diag_indices_from(A)] += prob.beta
        if m > LARGE_M:
            factor = _cholesky_panels(A, progress)
        else:
            # A is symmetric: its transpose is the same matrix in Fortran order, which
            # LAPACK factors in place (no m x m copy), in a call that Ctrl-C interrupts
            failed = _chunk.cholesky_lower(A.T)
            if failed:
                raise SolverError(_not_pd(failed - 1, failed - 1))
            factor = (A.T, True)
        W = np.empty((m, n_test))
        obj = np.empty(n_test)
        for sl in _batches(n_test, bs):
            Kx = _Kx(prob, sl)
            Wb = cho_solve(factor, Kx, check_finite=False)
            W[:, sl] = Wb
            obj[sl] = _objective_smooth(factor, Wb, Kx)
        info["memory"] += f"; Cholesky factor {m} x {m}"
        return _finish(prob, W, obj, "closed_form", "optimal", None, info, t0, np.nan, tol)

    op_name = options.pop("operator", None)
    if op_name is None:
        op_name = "linear" if (method == "linear_ppa" or (prob.kernel.is_linear and method != "ppa")
                               ) else "dense"
    if op_name not in ("dense", "linear"):
        raise ValueError(f"operator must be 'dense' or 'linear'; got {op_name!r}")
    if op_name == "linear" and not prob.kernel.is_linear:
        raise ValueError(f"operator='linear' needs the linear kernel; got {prob.kernel!r}")
    if method == "linear_ppa" and op_name != "linear":
        raise ValueError("method='linear_ppa' is matrix-free: operator must be 'linear'")
    op = LinearQ(prob) if op_name == "linear" else DenseQ(prob)
    info["operator"] = op.kind
    reg = _Reg(prob)
    c = _positive_opt(options, "c", None)
    b0 = _positive_opt(options, "b0", None)
    eta = options.pop("eta", 2.0)
    if isinstance(eta, bool) or not isinstance(eta, numbers.Real) or not eta > 1:
        raise ValueError(f"eta must be a number > 1 (backtracking factor); got {eta!r}")
    restart = options.pop("restart", True)
    if not isinstance(restart, (bool, np.bool_)):
        raise ValueError(f"restart must be True or False; got {restart!r}")
    if options:
        raise ValueError(f"unknown options {sorted(options)} for method={method!r}")
    need_sigma = method in ("ppa", "linear_ppa") and c is None or method == "apg" and b0 is None
    if need_sigma:
        sig = op.sigma_max()
        info["sigma_max_estimate"] = sig
    W = np.empty((m, n_test))
    obj = np.empty(n_test)
    n_iter, worst = 0, 0.0
    converged_all = True
    for sl in _batches(n_test, bs):
        Kx = _Kx(prob, sl)
        Wb = W0[:, sl].copy() if W0 is not None else np.zeros((m, Kx.shape[1]))
        if method == "gd":
            Wb, QW, it, res, conv = _gd(op, prob.beta, Kx, Wb, tol, max_iter)
        elif method in ("ppa", "linear_ppa"):
            cc = c if c is not None else max(sig * (1.0 + 1e-6), 1e-300)
            info["c"] = cc
            Wb, QW, it, res, conv = _ppa(op, reg, smooth, prob.beta, Kx, Wb, cc, tol, max_iter)
        else:
            bb = b0 if b0 is not None else max(sig, 1e-12 * (1.0 + np.abs(Kx).max()))
            # at the default max_iter on a dense Q_D of at most ADMM_MAX_M points, APG runs
            # APG_FIRST iterations and ADMM finishes what it left (an ill-conditioned Q_D)
            admm_next = fallback and op.kind == "dense" and m <= _admm.ADMM_MAX_M
            Wb, QW, it, res, conv, Lmax = _apg(
                op, reg, smooth, prob.beta, Kx, Wb, bb, float(eta), bool(restart), tol,
                min(max_iter, _admm.APG_FIRST) if admm_next else max_iter)
            info["b0"] = bb
            info["lipschitz_estimate"] = max(info.get("lipschitz_estimate", 0.0), Lmax)
            if not conv and admm_next:
                Wb, QW, it2, res, conv = _admm.admm(
                    op.Q, reg, Kx, Wb, tol, _scale,
                    lambda r, sc, i, Z: _open(r, sc, tol, "apg (ADMM)", i, Z),
                    _admm.default_max_iter(m, Kx.shape[1]))
                info["admm_iterations"] = info.get("admm_iterations", 0) + it2
                it += it2
        W[:, sl] = Wb
        obj[sl] = (0.5 * np.einsum("ij,ij->j", Wb, QW) - np.einsum("ij,ij->j", Kx, Wb)
                   + prob.beta * reg.value(Wb))
        n_iter = max(n_iter, it)
        worst = max(worst, res)
        converged_all &= conv
    status = "optimal" if converged_all else "max_iter"
    return _finish(prob, W, obj, method, status, n_iter, info, t0, worst, tol)


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------
def _batches(n, bs):
    return [slice(i, min(i + bs, n)) for i in range(0, n, bs)]


def _Kx(prob, sl):
    """``K_x`` of the test points ``sl`` (m x len(sl)), a fresh array in Fortran order (what
    LAPACK's solves take without a copy)."""
    cached = _common.peek(prob, "K_x", on=prob.data_key + (prob.X_test,))
    if cached is not None:
        return np.array(cached[:, sl], dtype=np.float64, order="F")
    if prob.kernel.is_precomputed:
        return np.array(prob.kernel.cross(prob.X, prob.X_test[sl]), dtype=np.float64, order="F")
    # k(x, z) = k(z, x) for our kernels: cross(X_test, X).T is K_x in Fortran order
    return np.asfortranarray(prob.kernel.cross(prob.X_test[sl], prob.X).T, dtype=np.float64)


def _warm(prob, warm_start):
    if warm_start is None:
        return None
    W = warm_start.coef if isinstance(warm_start, Solution) else warm_start
    try:
        W = np.asarray(W, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("warm_start must be a DRR Solution or an array W of shape "
                         f"(n_train, n_test) = ({prob.m}, {prob.n_test})") from None
    if W.ndim == 1 and prob.n_test == 1:
        W = W[:, None]
    if W.shape != (prob.m, prob.n_test) or not np.all(np.isfinite(W)):
        raise ValueError(f"warm_start must be finite with shape (n_train, n_test) = "
                         f"({prob.m}, {prob.n_test}); got {W.shape}")
    return W


def _objective_smooth(factor, W, Kx):
    """Eq. 8 for DRM at ``W``: ``1/2 w^T (Q + beta I) w - K_x^T w``, with
    ``w^T A w = ||L^T w||^2`` from the factor ``L L^T = A`` while ``m^2 n_test <= 2^33``;
    beyond that (a cost comparable to the solve itself) the value at the optimum,
    ``-1/2 K_x^T w`` (``A w = K_x``), which differs by the solve's backward error only."""
    Lc, lower = factor
    m, k = W.shape
    if m * m * k > 2 ** 33 or m > LARGE_M:
        return -0.5 * np.einsum("ij,ij->j", Kx, W)
    LtW = np.triu(Lc.T) @ W if lower else np.triu(Lc) @ W
    return 0.5 * np.einsum("ij,ij->j", LtW, LtW) - np.einsum("ij,ij->j", Kx, W)


def _not_pd(first, last):
    where = f"column {first}" if first == last else f"columns {first} to {last}"
    return (f"DRM: Q_D + beta I is not numerically positive definite (its Cholesky "
            f"factorisation failed in {where}): increase beta or scale the data")


def _cholesky_panels(A, progress):
    """``A = L L^T`` in place (``L`` in the lower triangle of the C-ordered ``A``), panel of
    :data:`CHOLESKY_PANEL` columns after panel (left-looking: the panel is updated by the
    columns already factored, a matrix product, then factored and solved against), with a
    progress bar by work done; Python runs between panels, so Ctrl-C stops it there.
    Returns ``(A.T, False)``, the factor as :func:`scipy.linalg.cho_solve` reads it without a
    copy (``A.T`` is Fortran-ordered, ``L^T`` in its upper triangle)."""
    from scipy.linalg import solve_triangular

    from refmodels import _progress

    m = A.shape[0]
    nb = CHOLESKY_PANEL
    total = m ** 3 / 3.0
    done = 0.0
    with _progress.bar(total=100, desc=f"DRM: Cholesky of Q_D + beta I ({m:,} x {m:,})",
                       enabled=progress, unit="%") as bar:
        for k in range(0, m, nb):
            e = min(m, k + nb)
            if k:
                A[k:, k:e] -= A[k:, :k] @ A[k:e, :k].T
            try:
                L11 = np.linalg.cholesky(A[k:e, k:e])
            except np.linalg.LinAlgError:
                raise SolverError(_not_pd(k, e - 1)) from None
            A[k:e, k:e] = L11
            if e < m:
                A[e:, k:e] = solve_triangular(L11, A[e:, k:e].T, lower=True,
                                              check_finite=False).T
            work = (m - k) * k * (e - k) + (m - e) * (e - k) ** 2 / 2.0 + (e - k) ** 3 / 3.0
            shown = int(100.0 * done / total)
            done += work
            bar.update(min(100, int(100.0 * done / total)) - shown)
    return A.T, False


def _scale(Kx, QW):
    return 1.0 + np.linalg.norm(Kx, axis=0) + np.linalg.norm(QW, axis=0)


def _open(res, sc, tol, method, it, W):
    """The columns still to solve: ``res > tol sc``, written ``not res <= tol sc`` so that a
    NaN is never "converged"; a residual or scale that is not finite (the iterates
    overflowed: a divergent iteration, e.g. a user prox that is not the prox of a convex
    function) raises ``SolverError`` naming the columns, never a point called optimal."""
    bad = ~(np.isfinite(res) & np.isfinite(sc))
    if bad.any():
        cols = np.flatnonzero(bad)
        big = float(np.max(np.abs(W[:, cols]), initial=0.0))
        raise SolverError(f"fast DRR solver method={method!r}: the optimality residual of "
                          f"test point(s) {cols[:5].tolist()} is not finite (NaN or overflow) "
                          f"at iteration {it} (|W| up to {big:.3e}): the iteration diverged "
                          "(a regularizer's prox that is not the prox of a convex function, "
                          "or numbers beyond float64)")
    return ~(res <= tol * sc)


def _gd(op, beta, Kx, W, tol, max_iter):
    """Seed 004 Alg. 3: ``w <- w - d grad``, ``d`` of eq. 15 (exact line search), per column."""
    QW = op.matvec(W)
    active = np.arange(W.shape[1])
    res_all = np.zeros(W.shape[1])
    it = 0
    while True:
        G = QW[:, active] + beta * W[:, active] - Kx[:, active]
        res = np.linalg.norm(G, axis=0)
        sc = _scale(Kx[:, active], QW[:, active])
        res_all[active] = res / sc
        keep = _open(res, sc, tol, "gd", it, W[:, active])
        active, G = active[keep], G[:, keep]
        if active.size == 0 or it >= max_iter:
            break
        QG = op.matvec(G)
        AG = QG + beta * G
        d = np.einsum("ij,ij->j", G, G) / np.einsum("ij,ij->j", G, AG)
        W[:, active] -= d * G
        QW[:, active] -= d * QG
        it += 1
        if it % 50 == 0:          # refresh Q W against drift of the recursive update
            QW[:, active] = op.matvec(W[:, active])
    return W, op.matvec(W), it, float(res_all.max(initial=0.0)), active.size == 0


def _ppa(op, reg, smooth, beta, Kx, W, c, tol, max_iter):
    """Seed 004 Algs. 4/5: ``w <- prox_{beta R/c}(w - (Q w - K_x)/c)`` (eq. 17 for DRM)."""
    QW = op.matvec(W)
    active = np.arange(W.shape[1])
    res_all = np.zeros(W.shape[1])
    it = 0
    while active.size and it < max_iter:
        V = W[:, active] - (QW[:, active] - Kx[:, active]) / c
        Wn = V / (1.0 + beta / c) if smooth else reg.prox(V, 1.0 / c)
        D = W[:, active] - Wn
        QD = op.matvec(D)
        QWn = QW[:, active] - QD
        # c (w - w+) - Q (w - w+) is in the subdifferential of the objective at w+
        R = c * D - QD
        res = np.linalg.norm(R, axis=0)
        sc = _scale(Kx[:, active], QWn)
        W[:, active] = Wn
        QW[:, active] = QWn
        res_all[active] = res / sc
        it += 1
        if it % 100 == 0:
            QW[:, active] = op.matvec(W[:, active])
        active = active[_open(res, sc, tol, "ppa", it, Wn)]
    return W, op.matvec(W), it, float(res_all.max(initial=0.0)), active.size == 0


def _apg(op, reg, smooth, beta, Kx, W, b0, eta, restart, tol, max_iter):
    """Seed 004 Alg. 6 (FISTA with backtracking), per column; see the module docstring.

    DRM: the smooth part is ``f = 1/2 w^T (Q + beta I) w - K_x^T w`` and the step is eq. 26;
    otherwise the step is ``w+ = prox_{beta R / b}(v - grad f(v) / b)``.
    """
    k = W.shape[1]
    shift = beta if smooth else 0.0
    QW = op.matvec(W)
    V, QV = W.copy(), QW.copy()
    d = np.ones(k)
    b = np.full(k, float(b0))
    active = np.arange(k)
    res_all = np.full(k, np.inf)
    it = 0
    while active.size and it < max_iter:
        a = active
        Va, QVa, ba = V[:, a], QV[:, a], b[a]
        G = QVa + shift * Va - Kx[:, a]
        todo = np.arange(a.size)
        Wn = np.empty_like(Va)
        QD = np.empty_like(Va)
        for _ in range(200):                       # backtracking (step 4), per column
            U = Va[:, todo] - G[:, todo] / ba[todo]
            Wt = U if smooth else reg.prox(U, 1.0 / ba[todo])
            Dt = Wt - Va[:, todo]
            QDt = op.matvec(Dt)
            lhs = np.einsum("ij,ij->j", Dt, QDt) + shift * np.einsum("ij,ij->j", Dt, Dt)
            ok = lhs <= ba[todo] * np.einsum("ij,ij->j", Dt, Dt) * (1.0 + 1e-12) + 1e-300
            Wn[:, todo[ok]] = Wt[:, ok]
            QD[:, todo[ok]] = QDt[:, ok]
            todo = todo[~ok]
            if todo.size == 0:
                break
            ba[todo] *= eta
        if todo.size:
            # (a finite problem meets the test once b passes sigma_max(Q): only NaN or
            # overflow get here, and their columns have no step)
            raise SolverError(f"fast DRR solver method='apg': no step of test point(s) "
                              f"{a[todo][:5].tolist()} passed the backtracking test in 200 "
                              f"tries (b up to {float(np.max(ba[todo])):.3e}) at iteration "
                              f"{it}: the iterates or the prox are not finite (NaN or "
                              "overflow)")
        b[a] = ba
        QWn = QVa + QD
        Dv = Va - Wn                               # v - w+
        # (b I - Q - shift I)(v - w+) is in the subdifferential of the objective at w+
        R = ba * Dv + QD - shift * Dv
        res = np.linalg.norm(R, axis=0)
        sc = _scale(Kx[:, a], QWn)
        res_all[a] = res / sc
        dn = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * d[a] ** 2))
        Wold = W[:, a]
        step = Wn - Wold
        mom = (d[a] - 1.0) / dn
        if restart:
            rs = np.einsum("ij,ij->j", Dv, step) > 0.0
            mom = np.where(rs, 0.0, mom)
            dn = np.where(rs, 1.0, dn)
        V[:, a] = Wn + mom * step
        QV[:, a] = QWn + mom * (QWn - QW[:, a])
        W[:, a] = Wn
        QW[:, a] = QWn
        d[a] = dn
        it += 1
        if it % 100 == 0:
            QW[:, a] = op.matvec(W[:, a])
            QV[:, a] = op.matvec(V[:, a])
        active = a[_open(res, sc, tol, "apg", it, Wn)]
    return W, op.matvec(W), it, float(res_all.max(initial=0.0)), active.size == 0, \
        float(b.max())


def _finish(prob, W, obj, method, status, n_iter, info, t0, residual, tol):
    info["residual"] = residual
    info["tol"] = tol
    sol = Solution(objective=obj, coef=W, intercept=0.0, variables={"W": W}, status=status,
                   solver=f"fast:{method}", form="fast", time=0.0, n_iter=n_iter, info=info)
    if status == "optimal":
        _drr_user.user_regularizer_check(prob, sol, method)
    if status != "optimal":
        from sklearn.exceptions import ConvergenceWarning
        warnings.warn(f"fast DRR solver method={method!r} stopped at max_iter={n_iter} "
                      f"iterations with scaled residual {residual:.3e} above the tolerance "
                      f"tol={tol:.3e} asked; the point is not optimal to that tolerance "
                      "(increase max_iter or tol)", ConvergenceWarning, stacklevel=3)
    sol.time = time.perf_counter() - t0
    return sol


METHODS = {name: _method(name) for name in ("closed_form", "gd", "ppa", "linear_ppa", "apg")}
SOLVERS = _methods.Solvers(METHODS, choose_method)
