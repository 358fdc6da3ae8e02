"""The certificate's cheap mode: ``prob.certify(sol, mode="cheap")``.

A fast solver's stopping rule is evaluated on its *internal* state (maintained margins
``s = Q alpha``, a whitened copy of the data, a reduced gradient, ...). The point it hands
back is something else: ``coef`` (and ``w``, ``intercept``) computed from that state, and on
badly scaled data the two can part. Before a solver says ``optimal`` it asks this mode, which
judges the *returned* point at a cost small beside the solve:

* the canonical primal objective ``P`` at the returned ``coef`` / ``w`` / ``intercept``,
  recomputed from scratch through kernel products (``G coef``; no feature map);
* the duality gap ``P - D`` against the dual value ``D`` of the solver's own (box-feasible)
  dual point (``sol.info["dual_objective"]``), scaled as the full certificate scales it
  (``|P|`` plus the objective's unit): for these QPs the gap is the sum of the
  complementarity terms, so a small gap certifies optimality (weak duality);
* agreement of the reported objective with ``P``, of ``w`` with ``X^T coef`` (linear kernel),
  of a non-linear map ``coef(dual)`` with its dual point (ODML, LDM), ODM's slack
  stationarity, and finiteness of everything returned.

These residuals are judged at ``CHECK_MARGIN * tol``: they estimate the full certificate's
quantities less exactly (kernel products against its feature-space norms). Where the full
certificate costs little, or where the estimates cannot be trusted, its residuals are used
instead (named ``certificate (...)``) and everything is judged at ``tol``:

* the linear kernel of a binary family, when the solver gave no dual value or the objective
  by kernel products and through the feature map part;
* mcODM and MKLm when the full certificate costs little: the linear kernel, a precomputed
  kernel, MKLm's base Grams, or a solver that worked on the full Gram
  (``sol.info["path"] == "gram"``);
* badly scaled data (features or kernel diagonal far from unit scale) with ``m`` at most
  :data:`refmodels.reference.AUTO_REFERENCE_MAX_M`, or of any size on the linear kernel of a
  binary family;
* estimates that fail only the margin (the worst between ``CHECK_MARGIN * tol`` and
  ``tol``) with ``m`` at most :data:`GRAY_MAX_M` (binary families): they decide nothing
  either way there.

DRR's iterative methods stop on a residual evaluated at the returned point itself (a
subgradient through the exact operator, ``sol.info["residual"]``): that residual is the cheap
certificate. After DRM's closed form, the equation ``(Q_D + beta I) w = K_x`` is re-evaluated
on up to :data:`DRM_CHECK_COLUMNS` test points.

Like the full certificate, the cheap one is a function of ``(problem, point, tol)``: which
evidence it uses is decided by the problem and the point (its ``info``), never by what a
workspace happens to hold. It never computes a reference optimum.
"""
from __future__ import annotations

import numpy as np

from ._numeric import scale_hint
from .certify import DEFAULT_TOL, Certificate
from .workspace import active as _active_workspace

#: the cheap residuals are judged at this fraction of the tolerance: kernel products can
#: differ from the certificate's feature-space residuals (the empirical map drops
#: eigenvalues below 1e-12 of the largest) by a factor of a few on ill-conditioned Grams
CHECK_MARGIN = 0.1

#: estimates that fail only the margin (between ``CHECK_MARGIN * tol`` and ``tol``) are
#: replaced by the full certificate's residuals up to this many points (its empirical map is
#: an m x m eigendecomposition: ~10 s at 3,000 on one core, beside a solve that had to
#: reach the round-off of its kernel products to land there)
GRAY_MAX_M = 5000

#: the prefix of a residual of the full certificate inside a cheap one
FULL = "certificate ("

#: the linear kernel's objective at the returned coef by kernel products against through the
#: feature map (``X^T coef`` first, as the full certificate): above ``CHECK_MARGIN * tol``
#: the full certificate decides
PARTED = "objective (kernel products vs features)"

#: test points whose equation ``(Q_D + beta I) w = K_x`` the cheap mode re-evaluates after a
#: closed-form DRM solve (a Cholesky solve errs alike on every right-hand side)
DRM_CHECK_COLUMNS = 16


def certify_cheap(prob, sol, tol=DEFAULT_TOL):
    """The cheap certificate of ``sol`` (see the module docstring); run inside the
    workspace of the call (:meth:`refmodels.base.Problem.certify` enters it)."""
    caps = prob.capabilities
    solver_rule = False
    if "test_points" in caps:
        res, P = _drr_check(prob, sol, tol)
        solver_rule = not res
    elif "margins" in caps:
        res, P = _binary(prob, sol, tol)
    elif _badly_scaled(prob) or _gram_at_hand(prob, sol):
        # mcODM / MKLm: on badly scaled data their own stopping rule is not evidence (a
        # relaxed mcODM, quadratic kernel on features ~1e6, Gram ~1e22: BCD gap 1.6e-21, the
        # certificate's primal feasibility 1.5e-5 at the returned point)
        res, P = _full(prob, sol, tol), None
    else:
        res, P = {}, None
    full = any(k.startswith(FULL) for k in res)
    cert = Certificate(prob.family, tol if full or solver_rule else CHECK_MARGIN * tol)
    cert.values["mode"] = "cheap"
    if solver_rule:
        cert.add("solver residual at the returned point", float(sol.info["residual"]))
        cert.notes.append("the solver's residual at the returned point (a subgradient through "
                          "the exact operator) decides; prob.certify(sol) forms the empirical "
                          "map")
    elif not res:
        # a kernel mcODM whose Gram the solver kept to itself: no residual is cheap here
        cert.notes.append("no cheap evidence at this point beyond the solver's own stopping "
                          "rule; prob.certify(sol) decides")
    for k, v in res.items():
        cert.add(k, v)
    if P is not None:
        cert.values["objective"] = P
    return cert


def _gram_at_hand(prob, sol):
    """Whether the full certificate costs little beside the solve: the linear kernel (its
    feature map is ``X``), a precomputed kernel, MKLm's base Grams (the solve builds them as
    the problem's own), or a solver that worked on the full Gram (``path == "gram"``)."""
    kernel = prob.kernel
    if "base_kernels" in prob.capabilities or kernel is None:
        return "base_kernels" in prob.capabilities
    return kernel.is_linear or kernel.is_precomputed or sol.info.get("path") == "gram"


def _badly_scaled(prob):
    """Data or kernel far from unit scale, with ``m`` small enough for the full certificate:
    there the kernel-product residuals and the certificate's feature-space ones can part by
    more than ``CHECK_MARGIN`` (an uncentred cubic kernel, Gram entries ~1e18: gap 1e-7 by
    kernel products, -1.5e-6 in the certificate), so the certificate itself decides."""
    from .reference import AUTO_REFERENCE_MAX_M

    return prob.m <= AUTO_REFERENCE_MAX_M and bool(scale_hint(prob))


def _full(prob, sol, tol):
    """The full certificate's residuals (no reference optimum), named with :data:`FULL`."""
    cert = prob.certify(sol, tol, reference=False)
    return {FULL + k + ")": abs(s) for k, (_, s) in cert.residuals.items()}


def _full_worst(prob, sol, tol):
    name, value = prob.certify(sol, tol, reference=False).worst
    return {FULL + name + ")": abs(value)}


def _solver_rows(sol):
    """The solver's exact kernel rows of ``sol``, if it left them in the workspace."""
    ws = _active_workspace()
    return None if ws is None else ws.peek("kernel_rows", (sol,))


def _binary_residuals(prob, sol):
    """``(residuals, P)``: the scaled cheap residuals of a binary problem's returned point."""
    res = {}
    coef, b = sol.coef, float(sol.intercept or 0.0)
    w = sol.variables.get("w")
    finite = all(np.all(np.isfinite(np.asarray(v, float))) for v in
                 ([coef] if coef is not None else []) + ([w] if w is not None else []))
    if not finite or not np.isfinite(b):
        return {"finite": np.inf}, np.nan

    def through_features(v):
        """The objective at ``w = v`` through the feature map ``X`` (the certificate's way),
        and the margins."""
        gv = prob.y * (np.asarray(prob.X @ v).ravel() + (b if prob.has_intercept else 0.0))
        return prob.objective_from_margins(gv, float(v @ v)), gv

    wpt = w
    if coef is not None:
        rows = _solver_rows(sol)
        Gc = rows.times(coef) if rows is not None else None
        P, gamma, Gc = prob.objective_at(coef, b, Gc=Gc)
        P_report = P
        if prob.kernel.is_linear:
            wc = np.asarray(prob.X.T @ coef).ravel()
            wpt = wc if w is None else w
            if w is not None:
                res["w = X^T coef"] = float(np.linalg.norm(w - wc)) / (1.0 + np.linalg.norm(w))
            # the objective reported: through the feature map, as the certificate evaluates
            # it. coef^T K coef loses ~eps max|K| |coef|^2 (two points, one feature ~1e6: the
            # SMO's objective 1.1e-5 off the exact value at its point, the certificate's 3e-10)
            P_report = through_features(wc)[0]
    else:                                     # a primal method on the linear kernel
        P, gamma = through_features(w)
        P_report = P
    if not np.isfinite(P):
        return {"objective": np.inf}, P
    scale = abs(P) + prob.unit_at((wpt, b), sol)     # the certificate's scale at this point
    res["reported objective"] = abs(float(sol.objective) - P) / scale
    if P_report is not P:
        # the same point's objective by kernel products (P, the gap's) and through the
        # feature map (the certificate's): when they part, neither is evidence
        res[PARTED] = abs(P_report - P) / scale
    D = sol.info.get("dual_objective")
    if D is not None and np.isfinite(D):
        res["duality gap"] = abs(P - float(D)) / scale
    dual = {k: sol.variables.get(k) for k in prob.dual_names}
    caps = prob.capabilities
    have_dual = bool(dual) and all(v is not None for v in dual.values())
    if coef is not None and "stationarity_from_gram" in caps and have_dual:
        # coef is a map of the dual that is not linear (ODML / LDM): check it is the point
        # the dual variables give, in the certificate's feature-space norm
        g, sc = prob.stationarity_from_gram(coef, dual, Gc)
        res["stationarity"] = g / sc
    if "slack_stationarity" in caps and have_dual:
        # ODM: the gap is quadratic in this residual, so it is checked on its own
        g, sc = prob.slack_stationarity(*prob._slacks(gamma), dual)
        res["stationarity (slacks)"] = g / sc
    return res, P_report


def _binary(prob, sol, tol):
    linear = prob.kernel is not None and prob.kernel.is_linear
    if linear and sol.coef is None and not sol.info.get("dual_objective"):
        return _full(prob, sol, tol), None        # a primal method: X is the feature map
    res, P = _binary_residuals(prob, sol)
    if linear and ("duality gap" not in res or res.get(PARTED, 0.0) > CHECK_MARGIN * tol):
        # (SVMm, two raw points ~1e2, C1 = 1e6: the SMO's gap by kernel products 0.0, the
        # objective through X^T coef 2.4e-6 above it, the certificate's gap 2.2e-6: forming
        # w sums terms |x| |coef| ~ 3e3 whose round-off C1 amplifies); the parting itself is
        # then only what sent the point there
        res.pop(PARTED, None)
        res.update(_full(prob, sol, tol))
    elif np.all(np.isfinite(list(res.values()))) and (
            _badly_scaled(prob) or (linear and bool(scale_hint(prob)))
            or _gray(prob, res, tol)):
        # an SMO's own dual value on features ~1e5 (Gram ~1e10) gave a gap of 2.6e-12 where
        # the certificate's is 1.07e-6; and the other way round, ODML / LDM's stationarity
        # by kernel products (the round-off of G coef, Gram ~1e12) 1.7e-4 where the
        # certificate's, in the feature space, holds: the certificate's residuals replace
        # the estimates of what it measures. On the linear kernel at any m (its map is X:
        # LDM on raw spambase, 3,000 rows, C = 256: stationarity by kernel products 1.5e-6,
        # the certificate's worst 5.4e-7)
        try:
            full = _full(prob, sol, tol)
        except MemoryError:           # no room for the empirical map: the estimates stand
            full = None
        if full is not None:
            res = {k: v for k, v in res.items() if k == "reported objective"}
            res.update(full)
    return res, P


def _gray(prob, res, tol):
    """Whether the estimates fail only the margin: the worst lies between
    ``CHECK_MARGIN * tol`` and ``tol``, and the full certificate is affordable (``m`` at most
    :data:`GRAY_MAX_M`). There the estimates cannot decide either way, and the certificate
    does (LDM, RBF kernel, 3,000 spambase rows, C = 2^20: the duality gap by kernel products
    1.7e-7, the certificate's within its tolerance)."""
    worst = max(res.values(), default=0.0)
    return prob.m <= GRAY_MAX_M and CHECK_MARGIN * tol < worst <= tol


def _drr_check(prob, sol, tol):
    """DRR / DRM: on badly scaled data the full certificate decides; an iterative method's
    own residual at the returned point otherwise (``{}``: see :func:`certify_cheap`); after
    the closed form (DRM), the residual of ``(Q_D + beta I) w = K_x`` on up to
    ``DRM_CHECK_COLUMNS`` test points, scaled by ``1 + ||K_x|| + ||(Q_D + beta I) w||``:
    ``O(m^2)`` per point, where the certificate's empirical map costs an ``m^3``
    eigendecomposition."""
    if _badly_scaled(prob):
        return _full_worst(prob, sol, tol), None
    if sol.info.get("residual") is not None and np.isfinite(sol.info["residual"]):
        return {}, None
    W = np.asarray(sol.coef, float)
    if not np.all(np.isfinite(W)):
        return {"finite": np.inf}, None
    n = W.shape[1]
    cols = np.unique(np.linspace(0, n - 1, min(DRM_CHECK_COLUMNS, n)).astype(int))
    Wc = W[:, cols]
    QW = _drm_times(prob, Wc) + prob.beta * Wc
    Kx = prob.K_x[:, cols]
    r = np.linalg.norm(QW - Kx, axis=0) / (1.0 + np.linalg.norm(Kx, axis=0)
                                            + np.linalg.norm(QW, axis=0))
    return {f"(Q_D + beta I) w = K_x ({cols.size} test points)": float(np.max(r))}, None


def _drm_times(prob, V):
    """``Q_D V = K V + alpha (H - B) V`` (``H = diag K``, ``B`` the blocks ``K_c / n_c``; neither
    formed). Up to :data:`refmodels.reference.AUTO_REFERENCE_MAX_M` points, or on a
    precomputed kernel, from the Gram (the closed form built it); above, in one pass over
    blocks of kernel rows, ``O(m x block)`` memory: the Gram of a large DRM is never built
    (the closed form works in ``Q_D``'s own array). The way depends on the size alone."""
    from .reference import AUTO_REFERENCE_MAX_M

    m, alpha = prob.m, prob.alpha
    if m <= AUTO_REFERENCE_MAX_M or prob.kernel.is_precomputed:
        K = prob.gram
        QV = K @ V
        if alpha != 0.0:
            QV += alpha * np.diag(K)[:, None] * V
            for g in prob.groups:
                QV[g] -= (alpha / g.size) * (K[np.ix_(g, g)] @ V[g])
        return QV
    label = np.empty(m, dtype=np.intp)
    for i, g in enumerate(prob.groups):
        label[g] = i
    QV = np.empty_like(V)
    step = max(1, 2 ** 22 // m)                 # a block of kernel rows: at most 32 MB
    for s in range(0, m, step):
        r = np.arange(s, min(m, s + step))
        Kb = prob._finite_kernel(np.asarray(prob.kernel.cross(prob.X[r], prob.X)))
        QV[r] = Kb @ V
        if alpha != 0.0:
            QV[r] += alpha * Kb[np.arange(r.size), r][:, None] * V[r]
            for i in np.unique(label[r]):
                rows, g = np.flatnonzero(label[r] == i), prob.groups[i]
                QV[r[rows]] -= (alpha / g.size) * (Kb[np.ix_(rows, g)] @ V[g])
    return QV
