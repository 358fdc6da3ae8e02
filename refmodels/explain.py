"""The likely causes of a failing certificate, in words (:meth:`Certificate.explain`).

Heuristics read from the residuals and from where the point came from
(``sol.info["source"]``, set by :func:`refmodels.from_sklearn`, the model-file readers and
``solution_from``): a cause specific to one library is offered only for that library's
points (LIBSVM keeps its kernel values in single precision; LIBLINEAR regularises its
intercept), a cause about dual variables only when the user gave dual variables. A holding
certificate says how tightly it holds. :func:`grouped` gathers the residuals one cause
explains, so that the text prints each cause once.
"""
from __future__ import annotations

import numpy as np

from .certify import FLOOR_FACTOR, OBJECTIVE_RESIDUALS

#: the residuals measured against the objective (a small one: the point is nearly optimal)
GAP_RESIDUALS = ("duality gap", "complementarity", "objective gap")
#: consistency residuals between ``coef`` and ``w`` (McODM: scores)
CONSISTENCY = ("w = F^T coef", "decision values (coef vs w)", "scores (coef vs W)",
               "objective at coef")
#: a point whose objective-valued residuals are all below this (scaled) is "close": its
#: failures look like a solver stopped early rather than a different problem
CLOSE = 1e-2

#: library of each point source
_LIBRARY = {"libsvm": "libsvm", "sklearn.SVC": "libsvm", "sklearn.NuSVC": "libsvm",
            "liblinear": "liblinear", "sklearn.LinearSVC": "liblinear", "libodm": "libodm"}


def library(cert):
    """``"libsvm"``, ``"liblinear"``, ``"libodm"`` or None: the library the point came from."""
    return _LIBRARY.get(str(cert.source)) if cert.source is not None else None


def dual_given(cert):
    """Whether the certified solution carried its own dual variables."""
    return any("solution's own dual variables" in n for n in cert.notes)


def _scaled(cert):
    return {k: abs(s) for k, (_, s) in cert.residuals.items()}


def explain(cert):
    """``{residual: cause}`` for each failing residual, or ``{"certificate": ...}`` when the
    certificate holds (see the module docstring)."""
    res = _scaled(cert)
    if cert.ok:
        name, worst = cert.worst
        ratio = cert.tol / abs(worst) if worst else np.inf
        how = (f"{ratio:.2g} times below the tolerance" if np.isfinite(ratio)
               else "every residual is exactly 0")
        return {"certificate": (f"holds at tol={cert.tol:g}: the largest scaled residual is "
                                f"{abs(worst):.1e} ({name}), {how}")}
    lib, given = library(cert), dual_given(cert)
    feasible = res.get("dual feasibility", 0.0) <= cert.tol and \
        res.get("primal feasibility", 0.0) <= cert.tol
    gaps = [res[k] for k in GAP_RESIDUALS if k in res]
    close = feasible and bool(gaps) and max(gaps) <= CLOSE
    failing = set(cert.failing)
    floor = cert.roundoff_floor()
    out = {}
    # (how much of a failing gap the dual point's leaving its box accounts for)
    claimed = (float(cert.values["dual_objective_given"] - cert.values["dual_objective"])
               if "dual_objective_given" in cert.values else -np.inf)
    for name in cert.failing:
        v = res[name]
        if name == "duality gap" and claimed > max(floor or 0.0,
                                                    0.25 * abs(cert.residuals[name][0])):
            out[name] = (f"the dual point leaves its feasible set (dual feasibility "
                         f"{cert.residuals['dual feasibility'][0]:.1e}, absolute): at the "
                         f"nearest feasible one the dual value is "
                         f"{cert.values['dual_objective']:.6g}, a lower bound of the optimum, "
                         f"and the gap is {cert.residuals[name][0]:.1e}; the point as given "
                         f"claims {cert.values['dual_objective_given']:.6g}, which weak "
                         f"duality does not back. The primal point is at most the gap from "
                         f"the optimum, and may be that far (a solver's multipliers off their "
                         f"box by its tolerance: solve to a tighter one)")
        elif floor is not None and name in OBJECTIVE_RESIDUALS and \
                abs(cert.residuals[name][0]) <= FLOOR_FACTOR * floor:
            out[name] = cert._floor_cause(name, floor)
        elif name == "dual feasibility":
            out[name] = ("a dual variable lies outside its box or off the equality: check "
                         "the box's scaling (C here is SPEC's: LIBSVM's C; seed 002 writes "
                         "lambda/m, so a box m times too large or too small is a C scaled "
                         "by m) and the sign convention of the multipliers")
        elif name == "primal feasibility":
            out[name] = ("the given slack variables violate a constraint (or the margins do): "
                         "omit the slacks to use the smallest feasible ones")
        elif name in CONSISTENCY:
            out[name] = ("coef (used for predictions) and w (used for the residuals) are not "
                         "the same point: a sign, a missing y_i factor or a scaling of coef")
        elif name == "objective gap" and cert.residuals[name][1] < 0:
            out[name] = ("the point is below the reference optimum: it is infeasible, or the "
                         "reference is inaccurate (compare with reference=False)")
        elif name in GAP_RESIDUALS and feasible and v <= CLOSE:
            out[name] = _stopped_early(cert, lib)
        elif name.startswith("stationarity") and given and feasible and not (
                failing & {"duality gap", "complementarity"}):
            out[name] = ("the coefficients are not the map of the dual variables given "
                         "(e.g. coef = y * alpha for the SVM), or the dual variables belong "
                         "to another scaling of the problem")
            if lib == "liblinear":
                out[name] += ("; LIBLINEAR regularises its intercept (the weight of a constant "
                              "feature): certify on the augmented data")
        elif name.startswith("stationarity") and close:
            out[name] = _stopped_early(cert, lib)
        else:
            out[name] = ("far from optimal for this problem: a different problem "
                         "(hyperparameters, kernel, scaling of the loss or of the data, "
                         "intercept on/off) or a solver that did not converge; "
                         "cert.diagnose() (refmodels certify --diagnose) searches the nearby "
                         "problems the point does solve")
    return out


def _stopped_early(cert, lib):
    text = (f"stopped early: the point is feasible and close (the objective-valued residuals "
            f"are at most {max(_scaled(cert).get(k, 0.0) for k in GAP_RESIDUALS):.1e}); the "
            "solver's own tolerance was looser than the certificate's")
    if lib == "libsvm":
        text += (", or its arithmetic allows no better (LIBSVM keeps kernel values in single "
                 "precision: with a large C or kernel scale its fits stall near 1e-6..1e-3 "
                 "whatever tol is asked)")
    return (text + f". Solve to a tighter tolerance where the solver can, or certify with "
            f"tol >= {cert.holds_at:.1g}")


def grouped(cert):
    """``[(residual names, cause)]``: each cause of :func:`explain` once, with the residuals
    it explains, in the order of their first failing residual."""
    out = {}
    for name, why in explain(cert).items():
        out.setdefault(why, []).append(name)
    return [(names, why) for why, names in out.items()]
