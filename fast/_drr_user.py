"""A user's regularizer in a fast DRR solve: ``optimal`` only when the point is shown to be
the optimum, not a fixed point of a wrong prox (:func:`user_regularizer_check`)."""
from __future__ import annotations

import warnings

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
    elif cert.values.get("prox_spot_check") is not None:
        # the certificate ran the spot check (refmodels._regcheck.prox_spot_check; not
        # where the prox failed rm.regularizers.check, whose residual then fails it)
        from refmodels import reference as _reference

        limit = _reference.AUTO_REFERENCE_MAX_M         # (read at call time)
        why = (f"m = {prob.m} above {limit}" if prob.m > limit
               else "the reference optimum unavailable")
        spot = checked["prox_spot_check"] = cert.values["prox_spot_check"]
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
