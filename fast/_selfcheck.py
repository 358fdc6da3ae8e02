"""Every fast solver checks the point it returns ("no silent wrong answer").

A solver's stopping rule is evaluated on its *internal* state (maintained margins
``s = Q alpha``, a whitened copy of the data, a reduced gradient, ...). The point it hands
back is something else: ``coef`` (and ``w``, ``intercept``) computed from that state, and on
badly scaled data the two can part (a cancellation in a recovery map, a gradient that
floating point cannot resolve). :func:`finish` therefore re-evaluates the *returned* point
in the certificate's terms before the status says ``optimal``:

* the canonical primal objective ``P`` at the returned ``coef`` / ``w`` / ``intercept``,
  recomputed from scratch through kernel products (``G coef``; no feature map, so the
  cost is one pass over the kernel, small beside the solve);
* the duality gap ``P - D`` against the dual value ``D`` of the solver's own (box-feasible)
  dual point, scaled as the certificate scales it (``|P|`` plus the objective's unit,
  :func:`refmodels.base.objective_scale`): for these QPs the gap is the sum of the
  complementarity terms, so a small gap certifies optimality (weak duality);
* agreement of the reported objective with ``P``, of ``w`` with ``X^T coef`` (linear kernel),
  and finiteness of everything returned.

Families whose certificate is cheap in full (the linear kernel, where the feature map is
``X``; the stochastic primal methods) are checked by ``prob.certify(sol, reference=False)``
itself; so is a kernel problem on badly scaled data (``scale_hint``) with ``m <= 2000``,
where the kernel-product residuals and the certificate's feature-space ones can part by
more than the margin below (an uncentred cubic kernel with Gram entries ~1e18: gap 1e-7
by kernel products, -1.5e-6 in the certificate). Outcome:

* every check within ``CHECK_MARGIN * CERT_TOL`` (a tenth of the certificate's default
  1e-6), or, where the full certificate was computed, within ``CERT_TOL`` (the certificate
  decides: ``"optimal"`` means exactly that ``prob.certify(sol)`` holds): ``"optimal"``;
* otherwise, after the family's repair hook (e.g. a stable recomputation of ``coef``) has
  been tried: ``"converged"`` if the caller asked for a looser ``tol`` (the solver met the
  tolerance asked, not the certificate's; no warning), else ``"inaccurate"`` with a
  ``ConvergenceWarning`` naming the residual, the tolerance and, when the data are badly
  scaled, the scale (``features span 1e5: scale them``).

``sol.info["self_check"]`` records what was checked and the values found.
"""
from __future__ import annotations

import numpy as np

from refmodels.certify import DEFAULT_TOL as CERT_TOL

from ._common import drop, not_converged_warning, peek, scale_hint


def _binary_check(prob, sol):
    """Residuals of a binary problem's returned point (see the module docstring)."""
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
        rows = peek(sol, "kernel_rows")                  # the solver's exact kernel rows
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
    # the certificate's scale at this point (|P| + its objective unit, round-off included)
    scale = abs(P) + prob.unit_at((wpt, b), sol)
    res["reported objective"] = abs(float(sol.objective) - P) / scale
    if P_report is not P:
        # the same point's objective by kernel products (P, the gap's) and through the
        # feature map (the certificate's): when they part, neither is evidence (see check)
        res[PARTED] = abs(P_report - P) / scale
    D = sol.info.get("dual_objective")
    if D is not None and np.isfinite(D):
        res["duality gap"] = abs(P - float(D)) / scale
    dual = {k: sol.variables.get(k) for k in prob.dual_names}
    caps = prob.capabilities
    if coef is not None and "stationarity_from_gram" in caps and dual and all(
            v is not None for v in dual.values()):
        # coef is a map of the dual that is not linear (ODML / LDM): check it is the point
        # the dual variables give, in the certificate's feature-space norm
        g, sc = prob.stationarity_from_gram(coef, dual, Gc)
        res["stationarity"] = g / sc
    if "slack_stationarity" in caps and dual and all(v is not None for v in dual.values()):
        # ODM: the gap is quadratic in this residual, so it is checked on its own
        g, sc = prob.slack_stationarity(*prob._slacks(gamma), dual)
        res["stationarity (slacks)"] = g / sc
    return res, P_report


def _certificate_is_cheap(prob):
    """Whether ``prob.certify`` costs little beside the solve: the Gram (or MKLm's base
    Grams) is already built, or the kernel is linear with a binary problem (feature map X).
    A matrix-free solve (DRR's linear PPA) is not undone by forming an n x n Gram here.
    A relaxed mcODM QP built by ``McODM.relaxed(M)`` keeps its Gram (and feature map) in
    its parent's cache: that counts (before, such a kernel QP on well-scaled data was judged
    only by the BCD's own gap and KKT residuals of its state, never at the returned point)."""
    from ._kernels import gram_if_built

    caps = prob.capabilities
    if prob.kernel is not None and gram_if_built(prob) is not None:
        return True
    if "base_kernels" in caps and peek(prob, "grams", on=prob.data_key) is not None:
        return True
    return prob.kernel is not None and prob.kernel.is_linear and "test_points" not in caps


def _full_check(prob, sol):
    if not _certificate_is_cheap(prob):
        return None, None
    cert = prob.certify(sol, reference=False)
    return {FULL + k + ")": abs(s) for k, (_, s) in cert.residuals.items()}, None


#: the prefix of a residual of the full certificate, judged at its own ``CERT_TOL``
FULL = "certificate ("
#: the linear kernel's objective at the returned coef by kernel products against through the
#: feature map (``X^T coef`` first, as the certificate): above ``CHECK_MARGIN * CERT_TOL``
#: the full certificate decides
PARTED = "objective (kernel products vs features)"


def _ratio(res, tol):
    """Each residual over its limit: ``tol``, or ``CERT_TOL`` for the full certificate's.
    Where the certificate was computed, it decides: the cheap residuals beside it (kernel
    products, the solver's dual value) are judged at ``CERT_TOL`` too, since they estimate
    the same quantities less exactly (raw australian, linear ODML: gap 2e-7 by the
    solver's dual value, the certificate holding at 1e-6, reported ``inaccurate``)."""
    if any(k.startswith(FULL) for k in res):
        return {k: v / CERT_TOL for k, v in res.items()}
    return {k: v / tol for k, v in res.items()}


def _certificate_worst(prob, sol):
    """The full certificate's worst residual, named with :data:`FULL` (judged at
    ``CERT_TOL``)."""
    name, value = prob.certify(sol, reference=False).worst
    return {FULL + name + ")": abs(value)}


def _badly_scaled(prob):
    """Data or kernel far from unit scale, with ``m`` small enough for the full certificate
    (``AUTO_REFERENCE_MAX_M``): there the kernel-product residuals of :func:`_binary_check`
    and the certificate's feature-space ones can part by more than ``CHECK_MARGIN`` (an
    uncentred cubic kernel, Gram entries ~1e18: gap 1e-7 here, -1.5e-6 in the certificate),
    so the certificate itself decides."""
    from refmodels.base import AUTO_REFERENCE_MAX_M

    return prob.m <= AUTO_REFERENCE_MAX_M and bool(scale_hint(prob))


#: test points whose equation ``(Q_D + beta I) w = K_x`` the check re-evaluates after a
#: closed-form DRM solve (a Cholesky solve errs alike on every right-hand side)
DRM_CHECK_COLUMNS = 16


def _drr_check(prob, sol):
    """DRR / DRM. On badly scaled data (``m <= 2000``) the full certificate decides, as for
    the binary families. Otherwise an iterative method's stop is a residual evaluated at the
    returned ``W``
    through the exact operator (its ``info["residual"]``): that decides (``None``). After the
    closed form (DRM), the residual of ``(Q_D + beta I) w = K_x`` on up to
    ``DRM_CHECK_COLUMNS`` test points, scaled by ``1 + ||K_x|| + ||(Q_D + beta I) w||``:
    ``O(m^2)`` per point, where the certificate's empirical map would cost an ``m^3``
    eigendecomposition (six times the solve at m = 4,000)."""
    if _badly_scaled(prob):
        return _certificate_worst(prob, sol), None
    if sol.info.get("residual") is not None and np.isfinite(sol.info["residual"]):
        return None, None
    W = np.asarray(sol.coef, float)
    if not np.all(np.isfinite(W)):
        return {"finite": np.inf}, None
    n = W.shape[1]
    cols = np.unique(np.linspace(0, n - 1, min(DRM_CHECK_COLUMNS, n)).astype(int))
    K, Wc = prob.gram, W[:, cols]          # built by the solve; H and B are never formed
    QW = K @ Wc + prob.beta * Wc
    if prob.alpha != 0.0:                  # alpha (H - B) Wc, H = diag K, B = blocks K_c / n_c
        QW += prob.alpha * np.diag(K)[:, None] * Wc
        for g in prob.groups:
            QW[g] -= (prob.alpha / g.size) * (K[np.ix_(g, g)] @ Wc[g])
    Kx = prob.K_x[:, cols]
    r = np.linalg.norm(QW - Kx, axis=0) / (1.0 + np.linalg.norm(Kx, axis=0)
                                            + np.linalg.norm(QW, axis=0))
    return {f"(Q_D + beta I) w = K_x ({cols.size} test points)": float(np.max(r))}, None


def check(prob, sol):
    """``(residuals, P)``: scaled residuals of the returned point, and its objective."""
    caps = prob.capabilities
    if "test_points" in caps:
        return _drr_check(prob, sol)
    linear = prob.kernel is not None and prob.kernel.is_linear
    if "margins" in caps and not (
            linear and sol.coef is None and not sol.info.get("dual_objective")):
        res, P = _binary_check(prob, sol)
        if linear and ("duality gap" not in res
                       or res.get(PARTED, 0.0) > CHECK_MARGIN * CERT_TOL):
            # (SVMm, two raw points ~1e2, C1 = 1e6: the SMO's gap by kernel products 0.0,
            # the objective through X^T coef 2.4e-6 above it, the certificate's gap 2.2e-6:
            # forming w sums terms |x| |coef| ~ 3e3 whose round-off C1 amplifies); the
            # parting itself is then only what sent the point there (two points ~1e6, C = 1:
            # coef^T K c off by 1.1e-5 with Gram entries 1e12, the certificate holding)
            full = _full_check(prob, sol)[0]
            if full:
                res.pop(PARTED, None)
                res.update(full)
        elif np.all(np.isfinite(list(res.values()))) and _badly_scaled(prob):
            # the linear kernel too: an SMO's own dual value on features ~1e5 (Gram ~1e10)
            # gave a gap of 2.6e-12 where the certificate's is 1.07e-6 (P 6.8e-7 above the
            # optimum; tests/test_fast_svm.py::test_svm_intercept_raw_scale_is_honest)
            res.update(_certificate_worst(prob, sol))
        return res, P
    if _badly_scaled(prob):
        # mcODM / MKLm with a kernel whose Gram the solver kept to itself: on badly scaled
        # data its own stopping rule is not evidence (a relaxed mcODM, quadratic
        # kernel on features ~1e6, Gram ~1e22: BCD gap 1.6e-21, the certificate's primal
        # feasibility 1.5e-5 at the returned point), so the certificate decides
        return _certificate_worst(prob, sol), None
    return _full_check(prob, sol)


#: the check asks ``CHECK_MARGIN * CERT_TOL``: its kernel-product residuals can differ from
#: the certificate's feature-space ones (the empirical map drops eigenvalues below
#: 1e-12 of the largest) by a factor of a few on ill-conditioned Grams
CHECK_MARGIN = 0.1


def finish(prob, sol, user_tol=None, repair=None, tol=CHECK_MARGIN * CERT_TOL):
    """Check ``sol`` (see the module docstring); return it with an honest ``status``.

    ``user_tol``: the tolerance the caller passed (None: the solver's default, which aims
    at the certificate). ``repair(prob, sol) -> Solution or None``: a family's second
    chance (a stable recomputation of the returned point).
    """
    try:
        return _finish(prob, sol, user_tol, repair, tol)
    finally:
        drop(sol, "kernel_rows")             # the solver's row cache: read, not kept


def _finish(prob, sol, user_tol, repair, tol):
    if sol.status != "optimal":
        return sol
    res, P = check(prob, sol)
    if res is None:
        # DRR's iterative methods: their stop is a residual evaluated at the returned point
        # itself (a subgradient of the objective at W, through the exact operator); the
        # certificate's empirical map would cost an m^3 eigendecomposition here
        rule = (f"the solver's residual at the returned point ({sol.info['residual']:.3g})"
                if sol.info.get("residual") is not None else
                "the solver's own stopping rule (duality gap and KKT residuals of its state)")
        sol.info["self_check"] = {"solver_residual": f"{rule} decided; prob.certify(sol) "
                                                     "forms the empirical map"}
        return sol
    worst = max(_ratio(res, tol).values()) if res else 0.0     # in units of the limits
    if not (worst <= 1.0) and repair is not None:
        fixed = repair(prob, sol)
        if fixed is not None:
            res2, P2 = check(prob, fixed)
            worst2 = max(_ratio(res2, tol).values()) if res2 else 0.0
            if fixed.status in ("optimal", "max_iter") and (worst2 < worst
                                                             or not np.isfinite(worst)):
                sol, res, P, worst = fixed, res2, P2, worst2
                sol.info["repaired"] = True
    ratio = _ratio(res, tol)
    name = max(ratio, key=ratio.get) if ratio else None
    sol.info["self_check"] = {"residuals": res, "worst": res[name] if name else 0.0,
                              "tol": tol}
    if P is not None and np.isfinite(P) and np.ndim(sol.objective) == 0:
        sol.info["reported_objective"] = float(sol.objective)
        sol.objective = float(P)              # the objective of the point returned
    if worst <= 1.0:
        sol.status = "optimal"
        return sol
    limit = CERT_TOL if any(k.startswith(FULL) for k in res) else tol
    if user_tol is not None:
        sol.status = "converged"
        sol.info["note"] = (f"stopped at the tolerance asked (tol={user_tol:g}); the point does "
                            f"not meet the certificate's {limit:g} ({name} {res[name]:.2e})")
        return sol
    sol.status = "inaccurate"
    not_converged_warning(
        f"{type(prob).__name__} ({sol.solver}): the returned point fails its own check: "
        f"{name} {res[name]:.3e} above the certificate's tolerance {limit:.0e}"
        f"{scale_hint(prob)}; status 'inaccurate'")
    return sol
