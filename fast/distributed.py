"""Linear ODM and the squared-hinge SVM on data beyond one machine or beyond memory (Dask).

The problem is :mod:`fast._tron`'s, over ``w`` in ``R^d``:

.. math::

    \\min_w\\ f(w) = \\tfrac12\\|w\\|^2 + \\sum_i \\ell(y_i x_i^\\top w),

with ODM's loss (``c [max(0, 1-theta-g)^2 + mu max(0, g-1-theta)^2]``, ``c = lam / (m
(1-theta)^2)``, the objective ``f_O`` of :class:`refmodels.ODM`) or the squared hinge
(``C max(0, 1-g)^2``, LIBLINEAR's ``-s 2``, scikit-learn's ``LinearSVC``). The rows of ``X``
are a Dask array chunked by rows only; they may live on the workers of a cluster or be read
from a file at every pass (:func:`memmap_rows`). Sparse rows stay sparse: a
``scipy.sparse`` matrix is split into CSR row partitions of about :data:`CHUNK_BYTES` of
stored entries, and a Dask array may have CSR chunks (``da.from_array(X, chunks=(rows,
d), asarray=False)``); every term of a partition then costs O(its stored entries), plus
``d^2`` for the formed Hessian. The driver holds ``d``-vectors and one
``d x d`` matrix, never a row.

**One pass per Newton step.** Every sum over the rows that the trust-region Newton method
(:mod:`fast._tron`, LIBLINEAR's TRON) needs is a sum of per-partition terms: the loss, the
gradient ``w + X^T (y ell')``, the bound on the gradient's rounding and, when ``d`` is at
most ``hessian_max_d`` (default :data:`HESSIAN_MAX_D`; :data:`SPARSE_HESSIAN_MAX_D` on
sparse rows), the generalised Hessian ``I + X_S^T
D X_S`` itself. Each partition computes its terms where it lives, the partial sums come back
through a binary tree of additions, and the trust-region CG then runs on the driver against
the formed ``d x d`` matrix, at no cost in passes. The trial point ``w + s`` is evaluated in
the same pass that forms the terms at ``w + s``: the margins ``X w``, ``X s`` and ``X (w +
s)`` come from one product with the three columns, the actual reduction is summed as
differences of the losses (:func:`fast._tron._loss_drop`, accurate to the rounding of the
difference), and if the step is accepted the gradient and Hessian of the new point are
already there. A Newton iteration is therefore exactly one pass over the data, accepted or
not, plus one pass at the start.

**The threshold.** Forming ``X_S^T D X_S`` costs ``d^2 / 2`` multiply-adds a row against
``2 d`` for a Hessian-vector product, so it pays when CG would take more than about ``d / 4``
products a Newton step, and it moves ``d^2`` numbers a partition through the tree sum (32 MB
at ``d = 2048``). CG typically takes tens of products a step, each of which, without the
formed matrix, is a pass: a read of every partition (from disk when the data are out of
core) and a round trip through the scheduler. Up to a few thousand features the formed
matrix is the cheaper; above ``hessian_max_d`` each CG step is one pass computing ``X_S^T
(D_S (X_S v))`` (``D`` recomputed from the margins at ``w`` in the same pass).

The stopping rule, the trust-region constants, the preconditioner (the diagonal of ``H``
mixed with the identity) and the losses are :mod:`fast._tron`'s (imported): ``||g|| <= tol
(1 + ||w||)``, or ``||g||`` below its own rounding error. The point is therefore certified
by ``prob.certify(prob.solution_from(w=result.w))`` for the :class:`refmodels.ODM` built on
the same data, as :func:`fast.solve`'s TRON point is.

Dask is an optional dependency (``pip install 'refmodels[dask]'``); it is imported by the
functions of this module only. Any scheduler works: the default threaded one, or a
``distributed.Client`` when one is active (persist ``X`` on the cluster first, ``X =
X.persist()``, if it fits in the workers' memory: each pass then runs where the chunks live;
otherwise every pass recomputes, i.e. reads, them).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numba import njit

from . import _tron
from ._polish import one_blas_thread
from ._rowfile import _RowFile
from ._tron import _loss, _loss_drop

#: at most this many features (with the intercept's): the Hessian is formed (module docstring)
HESSIAN_MAX_D = 2048
#: ... on sparse rows (CSR partitions): each partition's ``d x d`` block is dense whatever its
#: rows, and the products cost O(stored entries) a pass: at 20,000 x 2,000 with 50 entries a
#: row the formed Hessian took 10.4 s where the products took 1.1 s (validation/decisions.md)
SPARSE_HESSIAN_MAX_D = 256
#: the default chunk of :func:`memmap_rows` and of a NumPy ``X`` wrapped here, in bytes
CHUNK_BYTES = 64 * 2**20


def _dask():
    """``(dask, dask.array)``, or an ImportError saying how to install them."""
    try:
        import dask
        import dask.array as da
    except ImportError as exc:
        raise ImportError("fast.distributed needs dask: pip install 'refmodels[dask]' (or "
                          "pip install 'dask[distributed]')") from exc
    return dask, da


# ---------------------------------------------------------------------------------------
# one partition's terms
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _rows_pass(kind, params, y, zo, zs, zn, coef, dd):
    """The loss terms of one partition at the margins ``y zn`` (``zn = X w_new``), and the
    drop of its losses from ``y zo`` to ``y zn`` summed as differences (``zs = X s``): into
    ``coef = y ell'`` and ``dd = ell''``; returns ``(sum ell, sum drops, sum gamma, sum
    gamma^2, min gamma, max gamma, rows with ell' < 0, rows with ell' > 0)``."""
    f = 0.0
    red = 0.0
    s1 = 0.0
    s2 = 0.0
    lo = np.inf
    hi = -np.inf
    n_lo = 0
    n_hi = 0
    for i in range(y.shape[0]):
        g = y[i] * zn[i]
        red += _loss_drop(kind, y[i] * zo[i], y[i] * zs[i], params)
        val, d1, d2 = _loss(kind, g, params)
        f += val
        coef[i] = d1 * y[i]
        dd[i] = d2
        s1 += g
        s2 += g * g
        lo = min(lo, g)
        hi = max(hi, g)
        if d1 < 0.0:
            n_lo += 1
        elif d1 > 0.0:
            n_hi += 1
    return f, red, s1, s2, lo, hi, n_lo, n_hi


def _margins(X, W, sb):
    """``[X, sb] W`` (the bias feature ``sb`` appended when ``sb > 0``), columns of ``W``."""
    d = X.shape[1]
    Z = X @ W[:d]
    if sb:
        Z += sb * W[d]
    return Z


def _check_block(X, y):
    """The counts that refuse bad data, from the first pass (no second pass over the data):
    non-finite entries of ``X`` (its stored values when sparse), labels not +-1 (or not
    finite), labels +1 and -1."""
    vals = X.data if sp.issparse(X) else X
    return {"bad_x": int(vals.size - np.count_nonzero(np.isfinite(vals))),
            "bad_y": int(np.count_nonzero((y != 1.0) & (y != -1.0))),
            "n_pos": int(np.count_nonzero(y == 1.0)), "n_neg": int(np.count_nonzero(y == -1.0))}


def _part(X, y, W, spec):
    """One partition's terms. ``spec = (kind, params, sb, task, formed, first)``; ``W``'s
    columns: ``[w]`` (the point), ``[w, s, w + s]`` (a trial point: terms at ``w + s``) or,
    for ``task == "hv"``, ``[w, v]`` (``X_S^T (D_S (X_S v))`` at ``w``)."""
    kind, params, sb, task, formed, first = spec
    # (a sparse partition stays sparse: CSR, every product below O(its stored entries))
    X = (sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X)
         else np.asarray(X, dtype=np.float64))
    y = np.asarray(y, dtype=np.float64).ravel()
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y's partition has {y.shape[0]} labels for {X.shape[0]} rows of X")
    out = _check_block(X, y) if first else {}
    if first and (out["bad_x"] or out["bad_y"]):
        return out
    n, d = X.shape
    dp = W.shape[0]
    Z = _margins(X, W, sb)
    coef = np.empty(n)
    dd = np.empty(n)
    zero = np.zeros(n)
    if task == "hv":
        _rows_pass(kind, params, y, Z[:, 0], zero, Z[:, 0], coef, dd)
        t = dd * Z[:, 1]
        hv = np.empty(dp)
        hv[:d] = X.T @ t
        if sb:
            hv[d] = sb * t.sum()
        return {"hv": hv}
    zo, zs, zn = (Z[:, 0], Z[:, 1], Z[:, 2]) if W.shape[1] == 3 else (Z[:, 0], zero, Z[:, 0])
    f, red, s1, s2, lo, hi, n_lo, n_hi = _rows_pass(kind, params, y, zo, zs, zn, coef, dd)
    S = np.flatnonzero(dd)
    XS, cS, dS = X[S], coef[S], dd[S]
    g = np.zeros(dp)
    gabs = np.zeros(dp)
    g[:d] = XS.T @ cS
    rd = np.sqrt(dS)
    sparse = sp.issparse(XS)
    if sparse:
        XS = sp.diags(rd) @ XS              # sqrt(D_S) X_S: H's part is its Gram
    else:
        XS *= rd[:, None]
    if formed:
        H = np.zeros((dp, dp))
        H[:d, :d] = (XS.T @ XS).toarray() if sparse else XS.T @ XS
        if sb:
            H[:d, d] = H[d, :d] = XS.T @ (sb * rd)
    else:
        H = np.zeros(dp)
        H[:d] = (np.asarray(XS.multiply(XS).sum(axis=0)).ravel() if sparse
                 else np.einsum("ij,ij->j", XS, XS))
    if sb:
        g[d] = sb * cS.sum()
        gabs[d] = sb * np.abs(cS).sum()
        H[(d, d) if formed else d] = sb * sb * dS.sum()
    # |X_S|^T |c_S| as |sqrt(D_S) X_S|^T (|c_S| / sqrt(D_S)), in place (no third copy)
    gabs[:d] = (abs(XS) if sparse else np.abs(XS, out=XS)).T @ (np.abs(cS) / rd)
    out.update(f=f, red=red, s1=s1, s2=s2, lo=lo, hi=hi, n_lo=n_lo, n_hi=n_hi, n_act=S.size,
               g=g, gabs=gabs, H=H)
    return out


def _merge(a, b):
    """The sum of two partitions' terms (``lo`` / ``hi``: the smaller / larger)."""
    out = {}
    for k in a.keys() & b.keys():      # (a refused partition carries its counts only)
        v = a[k]
        out[k] = min(v, b[k]) if k == "lo" else max(v, b[k]) if k == "hi" else v + b[k]
    return out


# ---------------------------------------------------------------------------------------
# the passes
# ---------------------------------------------------------------------------------------
class _Passes:
    """The passes over the partitions of ``X`` (and ``y``): each a graph of one task a
    partition and a binary tree of :func:`_merge`, computed by the active Dask scheduler."""

    def __init__(self, X, y, kind, params, sb, formed):
        dask, _ = _dask()
        self.dask = dask
        self.blocks = list(X.to_delayed(optimize_graph=True).ravel())
        self.ys = y
        self.kind, self.params, self.sb, self.formed = kind, params, sb, formed
        self.count = 0
        self.part = dask.delayed(_part, pure=True)
        self.merge = dask.delayed(_merge, pure=True)

    def run(self, W, task, first=False):
        W = np.ascontiguousarray(W, dtype=np.float64)
        Wd = self.dask.delayed(W, pure=True)
        spec = (self.kind, self.params, self.sb, task, self.formed, first)
        parts = [self.part(b, yb, Wd, spec) for b, yb in zip(self.blocks, self.ys)]
        while len(parts) > 1:
            parts = [self.merge(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                     for i in range(0, len(parts), 2)]
        # the parallelism is across partitions: one BLAS thread a task (in this process:
        # the threaded scheduler, in-process workers) rather than threads that wait for
        # each other on busy cores (fast._polish.one_blas_thread)
        with one_blas_thread():
            (out,) = self.dask.compute(parts[0])
        self.count += 1
        return out


def _label_pieces(y, X, dask):
    """``y`` as one piece a partition of ``X``: NumPy slices (scattered once to the workers
    when a ``distributed.Client`` is the scheduler), or the blocks of a Dask array chunked
    as ``X``'s rows. Returns ``(pieces, checked)``: ``checked`` when the labels were checked
    here (NumPy) rather than in the first pass."""
    m = X.shape[0]
    if hasattr(y, "to_delayed") and hasattr(y, "chunks"):
        if y.ndim != 1 or y.shape[0] != m:
            raise ValueError(f"y must be a vector of {m} labels (one per row of X); got shape "
                             f"{y.shape}")
        if tuple(y.chunks[0]) != tuple(X.chunks[0]):
            raise ValueError(f"y must be chunked as X's rows ({X.chunks[0][:4]}...); got "
                             f"{y.chunks[0][:4]}...: y.rechunk((X.chunks[0],))")
        return list(y.to_delayed(optimize_graph=True).ravel()), False
    try:
        yv = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"y must be a numeric vector of labels +1 / -1: {exc}") from None
    if yv.ndim == 2 and 1 in yv.shape:
        yv = yv.ravel()
    if yv.shape != (m,):
        raise ValueError(f"y must be a vector of {m} labels (one per row of X); got shape "
                         f"{yv.shape}")
    _check_labels(_check_block(np.zeros((0, 0)), yv))
    cuts = np.cumsum((0,) + tuple(X.chunks[0]))
    pieces = [yv[a:b] for a, b in zip(cuts[:-1], cuts[1:])]
    client = _active_client(dask)
    if client is not None:
        pieces = client.scatter(pieces, hash=False)   # (own keys: no race with a
        # previous solve's pieces of the same labels being released)
    return pieces, True


def _active_client(dask):
    """The ``distributed.Client`` that ``dask.compute`` uses, else None."""
    get = dask.base.get_scheduler()
    owner = getattr(get, "__self__", None)
    try:
        from distributed import Client
    except ImportError:                           # pragma: no cover (dask without distributed)
        return None
    return owner if isinstance(owner, Client) else None


def _check_labels(c):
    if c["bad_y"]:
        raise ValueError(f"y must hold the labels +1 and -1 only; {c['bad_y']} labels are "
                         "other values (map two classes to +-1 first)")
    if not (c["n_pos"] and c["n_neg"]):
        raise ValueError(f"y must hold two classes, +1 and -1; got {c['n_pos']} labels +1 "
                         f"and {c['n_neg']} labels -1")


# ---------------------------------------------------------------------------------------
# the method
# ---------------------------------------------------------------------------------------
def _trcg(hv, g, M, delta, cg_tol, max_cg):
    """Preconditioned Steihaug CG for ``H s = -g`` in ``||s||_M <= delta``
    (:func:`fast._tron_cg._trcg`'s steps, with products by ``hv``). Returns ``(s, r, steps)``
    with ``r = -g - H s``."""
    s = np.zeros_like(g)
    r = -g
    z = r / M
    dv = z.copy()
    zTr = z @ r
    it = 0
    while it < max_cg and np.sqrt(r @ r) > cg_tol:
        it += 1
        Hd = hv(dv)
        dHd = dv @ Hd
        if dHd <= 0.0:
            break
        alpha = zTr / dHd
        snew = s + alpha * dv
        if snew @ (M * snew) > delta * delta:
            # back to the boundary: ||s + tau d||_M = delta, tau >= 0
            sMs, sMd, dMd = s @ (M * s), s @ (M * dv), dv @ (M * dv)
            dsq = delta * delta
            rad = np.sqrt(max(sMd * sMd + dMd * (dsq - sMs), 0.0))
            if sMd >= 0.0:
                tau = (dsq - sMs) / (sMd + rad) if sMd + rad > 0.0 else 0.0
            else:
                tau = (rad - sMd) / dMd
            return s + tau * dv, r - tau * Hd, it
        s = snew
        r = r - alpha * Hd
        z = r / M
        zTr_new = z @ r
        dv = z + (zTr_new / zTr) * dv
        zTr = zTr_new
    return s, r, it


class _Point:
    """What a pass tells of a point: ``f``, the gradient, its rounding bound, the Hessian
    (formed, or its diagonal), the margins' summary."""

    def __init__(self, w, t, formed):
        self.w = w
        self.f = 0.5 * float(w @ w) + t["f"]
        self.g = w + t["g"]
        self.gabs = np.abs(w) + t["gabs"]
        if formed:
            self.H = t["H"] + np.eye(w.shape[0])
            hdiag = np.diag(self.H)
        else:
            self.H = None
            hdiag = 1.0 + t["H"]
        self.M = (1.0 - _tron._ALPHA_PCG) + _tron._ALPHA_PCG * hdiag
        self.red = t["red"]
        self.gnorm = float(np.sqrt(self.g @ self.g))
        self.wnorm = float(np.sqrt(w @ w))
        self.t = t

    def stops(self, tol):
        """:func:`fast._tron._stops`: ``||g|| <= tol (1 + ||w||)`` or below its rounding."""
        return (self.gnorm <= tol * (1.0 + self.wnorm)
                or self.gnorm <= _tron._FLOOR * float(np.sqrt(self.gabs @ self.gabs)))

    def finite(self):
        return bool(np.isfinite(self.f) and np.isfinite(self.gnorm))


def _minimize(ps, w, tol, max_iter, max_cg):
    """TRON (:mod:`fast._tron`'s steps and constants) with the sums of :class:`_Passes`."""
    t = ps.run(w[:, None], "point", first=True)
    if "bad_x" in t:
        if t["bad_x"]:
            raise ValueError(f"X must contain only finite values; {t['bad_x']} entries are NaN "
                             "or infinite")
        _check_labels(t)
    P = _Point(w, t, ps.formed)
    delta = float(np.sqrt(P.g @ (P.g / P.M)))
    it = cg_total = 0
    converged = P.stops(tol)
    stop = "tol" if converged else "max_iter"
    if not converged and not P.finite():
        stop = "not finite"
    while stop == "max_iter" and it < max_iter:
        it += 1
        eta = min(0.1, np.sqrt(P.gnorm / (1.0 + P.wnorm)))
        if ps.formed:
            H = P.H
            eta *= 1e-3                # a CG step costs O(d^2): solve the system closely
            hv = H.__matmul__
        else:
            wp = P.w

            def hv(v):
                return v + ps.run(np.column_stack([wp, v]), "hv")["hv"]
        s, r, ncg = _trcg(hv, P.g, P.M, delta, eta * P.gnorm, max_cg)
        cg_total += ncg
        wn = P.w + s
        T = _Point(wn, ps.run(np.column_stack([P.w, s, wn]), "trial"), ps.formed)
        gs = float(P.g @ s)
        prered = -0.5 * (gs - float(s @ r))
        actred = -float(s @ (P.w + 0.5 * s)) + T.red
        fnew = P.f - actred
        snorm = float(np.sqrt(s @ (P.M * s)))
        if it == 1:
            delta = min(delta, snorm)
        if fnew - P.f - gs <= 0.0:
            alpha = _tron._SIGMA3
        else:
            alpha = max(_tron._SIGMA1, -0.5 * (gs / (fnew - P.f - gs)))
        if actred < _tron._ETA0 * prered:
            delta = min(alpha * snorm, _tron._SIGMA2 * delta)
        elif actred < _tron._ETA1 * prered:
            delta = max(_tron._SIGMA1 * delta, min(alpha * snorm, _tron._SIGMA2 * delta))
        elif actred < _tron._ETA2 * prered:
            delta = max(_tron._SIGMA1 * delta, min(alpha * snorm, _tron._SIGMA3 * delta))
        else:
            delta = max(delta, min(alpha * snorm, _tron._SIGMA3 * delta))
        if actred > _tron._ETA0 * prered or (actred >= 0.0 and prered <= 0.0):
            P = T
            if P.stops(tol):
                converged, stop = True, "tol"
                break
        if not P.finite():
            stop = "not finite"
        elif (prered <= 0.0 and actred <= 0.0) or delta <= 1e-300 \
                or np.sqrt(s @ s) <= 1e-15 * (1.0 + P.wnorm):
            stop = "stalled"           # no reduction left above rounding
    return P, {"n_iter": it, "cg_iter": cg_total, "stop": stop, "converged": converged}


# ---------------------------------------------------------------------------------------
# the public functions
# ---------------------------------------------------------------------------------------
@dataclass
class Result:
    """A solve's answer. ``w``: the weights of the feature map (``d`` of them, ``d + 1``
    with ``fit_intercept``, the bias feature's ``w_b`` last, as
    ``refmodels.Solution.variables["w"]``; ``prob.solution_from(w=result.w)`` takes it);
    ``intercept = s w_b`` (0 without); ``objective`` ``f(w)``; ``residual = ||grad|| / (1 +
    ||w||)`` against ``tol``; ``status`` ``"optimal"``, ``"max_iter"``, ``"stalled"`` or
    ``"inaccurate"`` (stopped at the gradient's rounding error above a ``tol`` asked, or
    above the certificate's level: at the default ``tol`` a stop there within it is
    ``"optimal"``, with ``info["note"]``);
    ``passes`` over the data (each reads every partition once); ``margins``: the mean,
    standard deviation, min and max of ``y_i x_i^T w`` and the rows below the band (``ell' <
    0``) and above it (``ell' > 0``)."""

    w: np.ndarray
    intercept: float
    objective: float
    grad_norm: float
    residual: float
    tol: float
    status: str
    n_iter: int
    cg_iter: int
    passes: int
    hessian: str
    margins: dict
    loss: str
    params: dict
    time: float
    info: dict = field(default_factory=dict)


def solve_odm(X, y, lam=1.0, mu=1.0, theta=0.0, *, fit_intercept=False, intercept_scaling=1.0,
              tol=None, max_iter=None, w0=None, max_cg=None, hessian_max_d=None):
    """Linear ODM (:class:`refmodels.ODM`'s ``f_O``, the same ``lam``, ``mu``, ``theta``,
    ``fit_intercept``, ``intercept_scaling``) by TRON over the row partitions of ``X``.

    Parameters
    ----------
    X : Dask array (m, d) chunked by rows only (a NumPy array is wrapped in one, a
        ``scipy.sparse`` matrix split into CSR row partitions; chunks may be CSR), real
        entries; :func:`memmap_rows` reads one from a raw float64 file at every pass
    y : labels +1 / -1, both present: a NumPy vector or a Dask vector chunked as X's rows
    lam, mu, theta : ODM's parameters (``lam > 0``, ``mu >= 0``, ``0 <= theta < 1``)
    fit_intercept, intercept_scaling : the constant feature ``s`` appended to every row, its
        weight regularised (LIBODM's ``-b``); added inside each partition, never stored
    tol : stop at ``||grad f|| <= tol (1 + ||w||)`` (default 1e-9, :mod:`fast._tron`'s)
    max_iter : Newton iterations (default 1000); ``w0``: a start (``d`` or ``d + 1`` weights)
    max_cg : CG steps per Newton step (default ``max(2 d, 10)``)
    hessian_max_d : form the Hessian up to this many features (default
        :data:`HESSIAN_MAX_D`, :data:`SPARSE_HESSIAN_MAX_D` on sparse rows; 0:
        Hessian-vector products, one pass each)

    Returns
    -------
    :class:`Result`; a ``ConvergenceWarning`` when it is not optimal.
    """
    from refmodels._validation import in_interval, nonnegative, positive

    lam = positive(lam, "lam")
    mu = nonnegative(mu, "mu")
    theta = in_interval(theta, "theta", 0.0, 1.0, lo_closed=True, hi_closed=False)
    return _solve(X, y, "odm", {"lam": lam, "mu": mu, "theta": theta}, fit_intercept,
                  intercept_scaling, tol, max_iter, w0, max_cg, hessian_max_d)


def solve_svm(X, y, C=1.0, *, loss="squared_hinge", fit_intercept=False,
              intercept_scaling=1.0, tol=None, max_iter=None, w0=None, max_cg=None,
              hessian_max_d=None):
    """The L2-loss linear SVM ``1/2 ||w||^2 + C sum_i max(0, 1 - y_i x_i^T w)^2`` (LIBLINEAR
    ``-s 2``, ``LinearSVC(loss="squared_hinge", dual=False)``; with ``fit_intercept`` its
    ``-B s``) by TRON over the row partitions of ``X``. It is :class:`refmodels.ODM` at ``lam
    = C m``, ``mu = 0``, ``theta = 0`` (certify it there). ``loss`` must be
    ``"squared_hinge"``: the hinge is not differentiable, Newton's method does not apply.
    The other arguments are :func:`solve_odm`'s."""
    from refmodels._validation import positive

    if loss != "squared_hinge":
        raise ValueError(f"loss must be 'squared_hinge' (the hinge loss is not "
                         f"differentiable: use fast.solve(refmodels.SVM(...))); got {loss!r}")
    C = positive(C, "C")
    return _solve(X, y, "squared_hinge", {"C": C}, fit_intercept, intercept_scaling, tol,
                  max_iter, w0, max_cg, hessian_max_d)


def _as_rows(X, da):
    """``X`` as a Dask array chunked by rows only (a NumPy array wrapped), checked."""
    if not (hasattr(X, "to_delayed") and hasattr(X, "chunks")) and sp.issparse(X):
        # row partitions of about CHUNK_BYTES of stored entries, never densified
        X = sp.csr_matrix(X)
        per_row = 12.0 * max(X.nnz, 1) / max(X.shape[0], 1)
        rows = int(max(1, CHUNK_BYTES // max(per_row, 1.0)))
        X = da.from_array(X, chunks=(rows, X.shape[1]), asarray=False)
    elif not (hasattr(X, "to_delayed") and hasattr(X, "chunks")):
        X = np.asarray(X)
        if X.ndim == 2:
            rows = max(1, CHUNK_BYTES // (8 * max(X.shape[1], 1)))
            X = da.from_array(X, chunks=(rows, X.shape[1]))
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional (m rows, d features); got {X.ndim} "
                         "dimensions")
    if not (np.issubdtype(X.dtype, np.floating) or np.issubdtype(X.dtype, np.integer)) \
            or X.dtype == np.bool_:
        raise ValueError(f"X must hold real numbers (float or int); got dtype {X.dtype}")
    if any(np.isnan(c) for cs in X.chunks for c in cs):
        raise ValueError("X must have known chunk sizes (X.compute_chunk_sizes() first)")
    if X.numblocks[1] != 1:
        raise ValueError(f"X must be chunked by rows only (one chunk along the columns); got "
                         f"{X.numblocks[1]} column chunks: X.rechunk({{1: -1}})")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must have at least one row and one column; got shape {X.shape}")
    return X


def _solve(X, y, loss, params, fit_intercept, intercept_scaling, tol, max_iter, w0, max_cg,
           hessian_max_d):
    from refmodels._validation import positive, positive_int

    from refmodels.certify import DEFAULT_TOL as CERT_TOL
    from refmodels.cheap import CHECK_MARGIN

    from ._common import convergence_warning, not_converged_warning

    dask, da = _dask()
    t0 = time.perf_counter()
    X = _as_rows(X, da)
    m, d = X.shape
    if not isinstance(fit_intercept, (bool, np.bool_)):
        raise ValueError(f"fit_intercept must be True or False; got {fit_intercept!r}")
    sb = positive(intercept_scaling, "intercept_scaling") if fit_intercept else 0.0
    dp = d + (1 if fit_intercept else 0)
    default_tol = tol is None
    tol = _tron.DEFAULT_TOL if default_tol else positive(tol, "tol")
    max_iter = _tron.DEFAULT_MAX_ITER if max_iter is None else positive_int(max_iter,
                                                                            "max_iter")
    max_cg = max(2 * dp, 10) if max_cg is None else positive_int(max_cg, "max_cg")
    sparse = sp.issparse(getattr(X, "_meta", None))
    hmax = (SPARSE_HESSIAN_MAX_D if sparse else HESSIAN_MAX_D) if hessian_max_d is None \
        else hessian_max_d
    if isinstance(hmax, bool) or not isinstance(hmax, (int, np.integer)) or hmax < 0:
        raise ValueError(f"hessian_max_d must be an integer >= 0; got {hessian_max_d!r}")
    if loss == "odm":
        a = m * (1.0 - params["theta"]) ** 2 / (2.0 * params["lam"])
        if not np.isfinite(a):
            raise ValueError(f"lam must be at least m (1 - theta)^2 / (2 * 1.8e308) here, so "
                             f"that ODM's constant a is finite; got {params['lam']:.3g}")
        kparams = (1.0 / (2.0 * a), params["mu"], params["theta"])      # c = 1 / (2 a)
    else:
        kparams = (params["C"],)
    w = np.zeros(dp)
    if w0 is not None:
        w0 = np.asarray(w0, dtype=np.float64).ravel()
        if fit_intercept and w0.shape == (d,):
            w0 = np.append(w0, 0.0)
        if w0.shape != (dp,) or not np.all(np.isfinite(w0)):
            raise ValueError(f"w0 must be {dp} finite weights (the features'"
                             f"{' and the bias feature last' if fit_intercept else ''}); got "
                             f"shape {w0.shape}")
        w = w0.copy()
    ys, _ = _label_pieces(y, X, dask)
    formed = dp <= hmax
    ps = _Passes(X, ys, _tron.LOSS_KINDS[loss], np.asarray(kparams, dtype=np.float64), sb,
                 formed)
    P, info = _minimize(ps, w, tol, max_iter, max_cg)
    if info["stop"] == "not finite":
        from refmodels.solution import SolverError

        raise SolverError(f"distributed TRON: the objective or its gradient is not finite "
                          f"(overflow) after {info['n_iter']} Newton iterations (f = {P.f!r}, "
                          f"||grad|| = {P.gnorm!r}): the data's numbers are beyond float64 "
                          f"at this scale")
    t = P.t
    mean = t["s1"] / m
    margins = {"mean": mean, "std": float(np.sqrt(max(t["s2"] / m - mean * mean, 0.0))),
               "min": t["lo"], "max": t["hi"], "below": int(t["n_lo"]),
               "above": int(t["n_hi"])}
    residual = P.gnorm / (1.0 + P.wnorm)
    status = {"tol": "optimal", "max_iter": "max_iter", "stalled": "stalled"}[info["stop"]]
    what = f"distributed TRON ({loss}, ||grad f|| / (1 + ||w||))"
    floor = status == "optimal" and residual > tol
    note = None
    if floor and default_tol and residual <= CHECK_MARGIN * CERT_TOL:
        # stopped at the gradient's rounding floor (a sum over m rows: it grows with m),
        # above the default tol but within the self-check's level of the certificate, whose
        # stationarity residual and duality gap are ||grad|| and ||grad||^2 / 2 here
        note = (f"stopped at the gradient's rounding error, residual {residual:.1e}: above "
                f"the default tol {tol:.0e}, within the certificate's "
                f"{CHECK_MARGIN * CERT_TOL:.0e}")
    elif floor:
        status = "inaccurate"
        not_converged_warning(f"{what}: the gradient reached its rounding error (a sum over "
                              f"{m:,} rows) with residual {residual:.3e} above the tolerance "
                              f"tol={tol:.3e} asked; float64 resolves no more here: ask a "
                              "larger tol, or scale the features (e.g. StandardScaler) if "
                              "they are badly scaled")
    if status == "max_iter":
        convergence_warning(what, residual, tol, info["n_iter"], unit="Newton iterations")
    elif status == "stalled":
        not_converged_warning(f"{what} stalled after {info['n_iter']} Newton iterations (the "
                              f"trust region collapsed or the reduction fell below rounding) "
                              f"with residual {residual:.3e} above the tolerance tol={tol:.3e}"
                              " asked; the point is not optimal to that tolerance")
    return Result(w=P.w, intercept=float(sb * P.w[-1]) if fit_intercept else 0.0,
                  objective=float(P.f), grad_norm=P.gnorm, residual=residual, tol=tol,
                  status=status, n_iter=info["n_iter"], cg_iter=info["cg_iter"],
                  passes=ps.count, hessian="formed" if formed else "products",
                  margins=margins, loss=loss, params=dict(params),
                  time=time.perf_counter() - t0,
                  info={"stop": info["stop"], "partitions": len(ps.blocks),
                        "active_rows": int(t["n_act"]), **({"note": note} if note else {})})


# ---------------------------------------------------------------------------------------
# data beyond memory (the file's rows: :class:`fast._rowfile._RowFile`)
# ---------------------------------------------------------------------------------------
def memmap_rows(path, d, chunk_rows=None, dtype=np.float64, offset=0):
    """A Dask array of the rows stored in a raw C-order file (``m x d`` values of ``dtype``
    after ``offset`` bytes; ``m`` from the file's size), chunked by ``chunk_rows`` rows
    (default: about 64 MB a chunk). Each chunk is read from the file when a pass needs it
    and released after, so that :func:`solve_odm` on it streams the file: the memory held is
    a few chunks and the ``d x d`` Hessian, whatever the file's size. (``dask.array.from_array
    (np.memmap(...))`` works too on the threaded scheduler, but its pages stay mapped in the
    process and count in its resident size.)"""
    from refmodels._validation import positive_int

    _, da = _dask()
    d = positive_int(d, "d")
    dtype = np.dtype(dtype)
    if not (np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.integer)):
        raise ValueError(f"dtype must be a real number type; got {dtype}")
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)) or offset < 0:
        raise ValueError(f"offset must be an integer >= 0 (bytes); got {offset!r}")
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        raise ValueError(f"path must name a readable file: {exc}") from None
    row = d * dtype.itemsize
    if size < offset or (size - offset) % row:
        raise ValueError(f"path's size {size} bytes after offset {offset} must be a multiple "
                         f"of a row's {row} bytes (d = {d} values of {dtype})")
    m = (size - offset) // row
    if m < 1:
        raise ValueError(f"path holds no row of {d} values after offset {offset}")
    if chunk_rows is None:
        chunk_rows = max(1, CHUNK_BYTES // row)
    chunk_rows = positive_int(chunk_rows, "chunk_rows")
    src = _RowFile(path, m, d, offset, dtype)
    return da.from_array(src, chunks=(min(chunk_rows, m), d), asarray=True, fancy=False,
                         meta=np.empty((0, 0), dtype=dtype))
