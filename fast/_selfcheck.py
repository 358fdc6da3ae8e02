"""The status policy of the fast solvers ("no silent wrong answer").

A solver that stopped by its own rule asks the certificate's cheap mode
(``prob.certify(sol, mode="cheap")``, :mod:`refmodels.cheap`) about the point it returns, and
only then says what it is:

* the cheap certificate holds: ``"optimal"``;
* otherwise ``"converged"`` if the caller asked for a looser ``tol`` (the solver met the
  tolerance asked, not the certificate's; no warning; no second chance is spent on it);
  else, after the repair (:func:`fast.solve`'s: the family's hook, e.g. a stable
  recomputation of ``coef``, and a warm-started tighter solve) has been tried,
  ``"inaccurate"`` with a
  ``ConvergenceWarning`` naming the residual, the tolerance and, when the data are badly
  scaled, the scale (``features span 1e5: scale them``);
* the cheap mode has no evidence beyond the solver's own rule (a kernel mcODM whose Gram the
  solver kept to itself): the solver's status stands, and ``info`` says so.

``sol.info["self_check"]`` records the cheap certificate's residuals, its worst one and the
tolerance it was judged at (beside what the solver's own check of its point recorded there);
``sol.objective`` becomes the objective of the point returned.
"""
from __future__ import annotations

import numpy as np

from refmodels.certify import DEFAULT_TOL as CERT_TOL
from refmodels.cheap import CHECK_MARGIN, FULL  # noqa: F401 (the policy's vocabulary)

from ._common import drop, not_converged_warning, scale_hint


def check(prob, sol):
    """The cheap certificate of ``sol`` (:mod:`refmodels.cheap`)."""
    return prob.certify(sol, CERT_TOL, mode="cheap")


def _worst(cert):
    """The worst scaled residual in units of the certificate's tolerance (0 without any)."""
    if not cert.residuals:
        return 0.0
    name, value = cert.worst
    return abs(value) / cert.tol if np.isfinite(value) else np.inf


def finish(prob, sol, user_tol=None, repair=None, recheck_cap=False):
    """Check ``sol`` (see the module docstring); return it with an honest ``status``.

    ``user_tol``: the tolerance the caller passed (None: the solver's default, which aims
    at the certificate). ``repair(prob, sol) -> Solution or None``: a family's second
    chance (a stable recomputation of the returned point). ``recheck_cap``: a ``"max_iter"``
    point is checked (and repaired) too, and becomes ``"optimal"`` if it then meets the
    certificate; else it is returned as it came. For a call at the defaults (no ``tol``, no
    ``max_iter``), whose cap is the solver's and whose target is the certificate: an SMO on a
    Gram of 1e10 runs out of iterations with its violation at the round-off (3e-8) while the
    point's duality gap is 1e-7.
    """
    try:
        return _finish(prob, sol, user_tol, repair, recheck_cap)
    finally:
        drop(sol, "kernel_rows")             # the solver's row cache: read, not kept


def _finish(prob, sol, user_tol, repair, recheck_cap=False):
    capped = recheck_cap and sol.status == "max_iter"
    if sol.status != "optimal" and not capped:
        return sol
    given = sol
    cert = check(prob, sol)
    if capped and not cert.residuals:
        return sol
    if not cert.residuals:
        sol.info["self_check"] = {"solver_rule": "the solver's own stopping rule (duality gap "
                                                 "and KKT residuals of its state) decided; "
                                                 "prob.certify(sol) is the full certificate"}
        return sol
    worst = _worst(cert)
    if not (worst <= 1.0) and repair is not None:
        fixed = repair(prob, sol)
        if fixed is not None:
            cert2 = check(prob, fixed)
            worst2 = _worst(cert2)
            if fixed.status in ("optimal", "max_iter") and (worst2 < worst
                                                             or not np.isfinite(worst)):
                sol, cert, worst = fixed, cert2, worst2
                sol.info["repaired"] = True
    if capped and not worst <= 1.0:
        return given
    name, value = cert.worst
    record = {"residuals": {k: s for k, (_, s) in cert.residuals.items()},
              "worst": abs(value), "tol": cert.tol, "notes": list(cert.notes)}
    previous = sol.info.get("self_check")
    if isinstance(previous, dict):      # the solver's own check of its point (DRR with a
        record = {**previous, **record}  # user's regularizer) stays in the record
    sol.info["self_check"] = record
    P = cert.values.get("objective")
    if P is not None and np.isfinite(P) and np.ndim(sol.objective) == 0:
        sol.info["reported_objective"] = float(sol.objective)
        sol.objective = float(P)              # the objective of the point returned
    if worst <= 1.0:
        if capped:
            sol.info["note"] = ("stopped at the solver's default iteration cap short of its own "
                                "tolerance; the point returned meets the certificate")
        sol.status = "optimal"
        return sol
    if user_tol is not None:
        sol.status = "converged"
        sol.info["note"] = (f"stopped at the tolerance asked (tol={user_tol:g}); the point does "
                            f"not meet the certificate's {cert.tol:g} ({name} {abs(value):.2e})")
        return sol
    sol.status = "inaccurate"
    not_converged_warning(
        f"{type(prob).__name__} ({sol.solver}): the returned point fails its own check: "
        f"{name} {abs(value):.3e} above the certificate's tolerance {cert.tol:.0e}"
        f"{scale_hint(prob)}; status 'inaccurate'")
    return sol
