"""A user's regularizer in a fast DRR solve: ``optimal`` only when the point is shown to be
the optimum, not a fixed point of a wrong prox (:func:`user_regularizer_check`)."""
from __future__ import annotations

import warnings

import numpy as np

from refmodels import regularizers as _regularizers


def user_regularizer_check(prob, sol, method):
    """A user's regularizer: ``optimal`` only when the certificate holds. The iterations
    stop at a fixed point of ``prox``, which is the optimum only if the prox is right: a prox
    that fails :func:`refmodels.regularizers.check` makes the point ``inaccurate`` at once
    (a ``ConvergenceWarning`` naming the prox); otherwise ``prob.certify`` decides (with the
    reference optimum where ``m <= AUTO_REFERENCE_MAX_M`` when the regularizer has no checked
    conjugate). Where the certificate rests on the prox alone (no checked conjugate, and no
    reference optimum: ``m`` above the threshold, or the reference unavailable), the prox is
    tested again at this point's own vectors (:func:`prox_spot_check`): a prox that fails
    there makes the point ``inaccurate`` (a ``ConvergenceWarning`` naming the prox and the
    error). Sets ``sol.status`` (and ``sol.info["self_check"]``)."""
    from sklearn.exceptions import ConvergenceWarning

    reg = prob.regularizer
    report = _regularizers.verdict(reg)
    if report is None:
        return
    # (the closed form and gradient descent never call the prox)
    bad_prox = _regularizers.failed(report, _regularizers.PROX_CHECKS) \
        if method not in ("closed_form", "gd") else []
    if bad_prox:
        r = bad_prox[0]
        sol.status = "inaccurate"
        sol.info["self_check"] = {"regularizer": f"prox fails {r.name!r}"}
        warnings.warn(f"fast DRR solver method={method!r}: regularizer.prox of {reg!r} fails "
                      f"rm.regularizers.check's {r.name!r} (error {r.max_error:.3g}, tolerance "
                      f"{r.tolerance:.1g}): the point returned is a fixed point of that prox, "
                      f"not the optimum of the problem; status 'inaccurate'",
                      ConvergenceWarning, stacklevel=4)
        return
    good_conj = reg.has_conjugate and not _regularizers.bad_conjugate(report)
    cert = prob.certify(sol, reference=False if good_conj else "auto")
    checked = sol.info["self_check"] = {"certificate": cert.worst}
    if good_conj:
        checked["prox_spot_check"] = "not run: the duality gap through the checked conjugate"
    elif cert.values.get("reference_objective") is not None:
        checked["prox_spot_check"] = "not run: the objective gap to the reference optimum"
    else:
        from refmodels import reference as _reference

        limit = _reference.AUTO_REFERENCE_MAX_M         # (read at call time)
        why = (f"m = {prob.m} above {limit}" if prob.m > limit
               else "the reference optimum unavailable")
        spot = checked["prox_spot_check"] = prox_spot_check(prob, sol.coef)
        if not spot["passed"]:
            sol.status = "inaccurate"
            warnings.warn(f"fast DRR solver method={method!r}: regularizer.prox of {reg!r} "
                          f"fails the spot check at the returned point ({spot['check']!r}: "
                          f"error {spot['error']:.3g}, tolerance {spot['tolerance']:.1g}; "
                          f"{spot['note']}): with no checked conjugate and no reference "
                          f"optimum ({why}) only the prox vouches for the point; status "
                          "'inaccurate' (a conjugate on the regularizer gives a duality gap; "
                          "prob.certify(sol, reference=True) compares with the reference "
                          "optimum)", ConvergenceWarning, stacklevel=4)
            return
    if not cert.ok:
        name, value = cert.worst
        sol.status = "inaccurate"
        warnings.warn(f"fast DRR solver method={method!r} with the regularizer {reg!r}: the "
                      f"returned point fails its certificate ({name} {value:.3e} above "
                      f"{cert.tol:g}); status 'inaccurate'", ConvergenceWarning, stacklevel=4)


#: test points (columns of W) at which :func:`prox_spot_check` tests a user's prox
PROX_SPOT_COLUMNS = 3


def prox_spot_check(prob, W):
    """A user's prox tested at the vectors its certificate rests on.

    Without a checked conjugate and without a reference optimum, DRR's certificate is the
    prox-gradient residual ``||w - prox_{s R}(v)|| / t`` with ``v = w - t (Q_D w - K_x)``,
    ``t = 1/sigma_max(Q_D)``, ``s = t beta`` (:meth:`refmodels.drr.DRR.prox_gradient_argument`):
    a small residual proves ``w`` optimal only if ``prox`` is right at that very ``v``.
    :func:`refmodels.regularizers.check` tested it on random six-entry vectors; ``v`` has one
    entry per training point, its own norm and the problem's groups. So the prox is tested
    at ``v`` itself (:func:`refmodels.regularizers.check_prox_at`: ``F(prox) - F(x_cvx) <=
    0.1 tol (1 + |F|)`` against CVXPY on the whole vector, the objective test because CVXPY's
    point is accurate in objective but only to its square root in distance). This is the
    argument the certificate evaluates, rather than the solver's last one (``ppa``'s step
    ``1/c``, ``apg``'s ``1/b``): a prox right at the certificate's ``v`` makes its residual
    the true one, whatever the iterations did. The whole vector, never a part: a part is
    the prox of nothing unless ``R`` separates over it, which a user's ``expr`` does not
    say.

    Columns: up to :data:`PROX_SPOT_COLUMNS`, those whose ``v`` has the largest max-norm,
    Euclidean norm and l1 norm (a prox wrong above some entry size, some norm, or on
    many entries at once), then by Euclidean norm. Cost: one product ``Q_D W`` (the
    certificate has already made two per column) and, per column checked, one CVXPY/Clarabel
    solve of the prox problem in ``m`` variables (no ``m x m`` matrix).

    Returns the record kept in ``sol.info["self_check"]["prox_spot_check"]``.
    """
    reg = prob.regularizer
    W = np.asarray(W, dtype=np.float64).reshape(prob.m, -1)
    n = W.shape[1]
    V, step = prob.prox_gradient_argument(W, slice(None))
    cols = []
    if np.all(np.isfinite(V)):
        A = np.abs(V)
        l2 = np.linalg.norm(V, axis=0)
        for score in (A.max(axis=0), l2, A.sum(axis=0)):
            j = int(np.argmax(score))
            if j not in cols:
                cols.append(j)
        for j in np.argsort(-l2, kind="stable"):
            if len(cols) >= min(PROX_SPOT_COLUMNS, n):
                break
            if int(j) not in cols:
                cols.append(int(j))
        cols = cols[:PROX_SPOT_COLUMNS]
    record = {"columns": cols, "step": float(step),
              "argument": "v = w - t (Q_D w - K_x), t = 1/sigma_max(Q_D) (the certificate's)"}
    if not cols:
        record.update(check=_regularizers.PROX_AT_POINT, passed=False, error=np.inf,
                      tolerance=np.nan, note="the prox argument is not finite")
        return record
    # each column's argument exactly as the certificate computed it
    Vc = np.column_stack([prob.prox_gradient_argument(W[:, j], j)[0] for j in cols])
    res = _regularizers.check_prox_at(reg, Vc, float(step), prob.groups,
                                      names=[f"test point {j}" for j in cols])
    record.update(check=res.name, passed=res.passed, error=res.max_error,
                  tolerance=res.tolerance, note=res.note)
    return record
