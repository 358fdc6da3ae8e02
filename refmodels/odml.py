"""ODML (ODM^L) and LDM: margin mean and margin variance on top of the hinge loss.

ODML (SPEC §2; seed 002 §3.1 eqs. 4–10; seed 000 §3.1 and §4.1.1, where
:math:`\\lambda_1=\\mu_1`, :math:`\\lambda_2=\\mu_2`, :math:`C=\\lambda`):

.. math::

    \\min_{w,\\xi}\\ \\tfrac12\\|w\\|^2 + \\mu_1\\gamma_v - \\mu_2\\gamma_m
    + \\frac{\\lambda}{m}\\sum_i\\xi_i
    \\quad\\text{s.t.}\\quad y_i w^\\top\\phi(x_i) \\ge 1-\\xi_i,\\ \\xi\\ge0,

with margins :math:`\\gamma = YFw`, mean :math:`\\gamma_m=\\frac1m e^\\top\\gamma` and
variance :math:`\\gamma_v=\\frac1m\\|\\gamma-\\gamma_m e\\|^2=\\frac1m w^\\top F^\\top PFw`,
:math:`P=I-\\frac1m yy^\\top` (seed 002 eq. 5).

Dual (seed 002 eq. 8/10, with the constant the seeds drop put back): with
:math:`v=\\frac{\\mu_2}{m}e+\\alpha`,

.. math::

    \\min_{0\\le\\alpha\\le\\lambda/m}\\ \\tfrac12 v^\\top Hv - e^\\top\\alpha,\\qquad
    H = YG(I+AG)^{-1}Y,\\quad A=\\frac{2\\mu_1}{m}P,

so that :math:`P^\\star=-D^\\star`; recovery :math:`\\nu=(I+AG)^{-1}Yv`.

Woodbury erratum (SPEC §2): seed 000 Lemma 1 and seed 002 before eq. 9 invert
:math:`A`, which is singular (:math:`Ay=0`). The conclusion
:math:`Q^{-1}X=X(I+AG)^{-1}` still holds by the push-through identity; we compute
:math:`G(I+AG)^{-1}` by the stable symmetric form :func:`woodbury_H` (never
inverting :math:`A` or an m x m non-SPD matrix).

LDM (SPEC §3; seed 001 eqs. 3–12) is the same problem reparametrised:
LDM(C, λ1, λ2) = ODML(λ = mC, μ1 = 2λ1, μ2 = λ2).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ._intercept import BiasFeature, bias_inputs
from ._validation import check_vector, nonnegative, positive
from .base import (BinaryProblem, TIE_THRESHOLDS, derive_box_duals, objective_scale, quad,
                   run_cvxpy)
from .certify import box_violation, complementarity, project_boxes
from .representer import FeatureVector, fnorm, stationarity_system


# ---------------------------------------------------------------------------------------
# Woodbury, the stable symmetric form of SPEC §2
# ---------------------------------------------------------------------------------------
def _check_woodbury_args(G, y, coef):
    G = np.asarray(G, dtype=np.float64)
    if G.ndim != 2 or G.shape[0] != G.shape[1] or G.shape[0] == 0:
        raise ValueError(f"G must be a non-empty square Gram matrix; got shape {G.shape}")
    if not np.all(np.isfinite(G)):
        raise ValueError("G must contain only finite values")
    y = check_vector(y, G.shape[0], "y")
    if not np.all(np.abs(y) == 1.0):
        raise ValueError("y must contain labels in {-1, +1}")
    coef = nonnegative(coef, "coef")
    return 0.5 * (G + G.T), y, coef


def _woodbury_factor(G, y, coef):
    """``(PG, L)``: ``P G`` and the Cholesky factor ``L`` of ``I + R G R`` (``R = sqrt(coef) P``).

    ``P = I - yy^T/m`` is never formed; ``I + RGR = I + coef * PGP`` is SPD for PSD ``G``.
    """
    m = G.shape[0]
    PG = G - np.outer(y, y @ G) / m                       # P G
    PGP = PG - np.outer(PG @ y, y) / m                    # P G P
    M = np.eye(m) + coef * 0.5 * (PGP + PGP.T)
    L = np.linalg.cholesky(M)
    return PG, L


def woodbury_H(G, y, coef):
    """``H = Y G (I + A G)^{-1} Y`` with ``A = coef * P``, ``P = I - yy^T/m`` (SPEC §2).

    Stable symmetric form: with ``R = sqrt(coef) P`` (``R^2 = A``, ``P`` is a projector),
    ``G (I + AG)^{-1} = G - G R (I + RGR)^{-1} R G`` and ``I + RGR`` is SPD, factored by
    Cholesky. ``A`` itself is singular (``A y = 0``) and is never inverted; neither is any
    non-SPD m x m matrix. ``coef = 0`` gives ``YGY`` (the SVM). O(m^3), once per problem.
    """
    G, y, coef = _check_woodbury_args(G, y, coef)
    if coef == 0.0:
        return _woodbury_H_from(G, y, coef, None, None)
    return _woodbury_H_from(G, y, coef, *_woodbury_factor(G, y, coef))


def _woodbury_H_from(G, y, coef, PG, L):
    """:func:`woodbury_H` from the symmetrised ``G`` and :func:`_woodbury_factor`'s ``(PG, L)``
    (``None`` for ``coef = 0``)."""
    if coef == 0.0:
        K = G
    else:
        Zt = sla.solve_triangular(L, np.sqrt(coef) * PG, lower=True)   # L^{-1} R G
        K = G - Zt.T @ Zt                                                # G - GR M^{-1} RG
    H = y[:, None] * K * y[None, :]
    return 0.5 * (H + H.T)


def woodbury_solve(G, y, coef, u):
    """``(I + A G)^{-1} u`` with ``A = coef * P`` (SPEC §2), ``u`` a vector or an m x k matrix.

    ``(I + AG)^{-1} = I - R (I + RGR)^{-1} R G`` with ``R = sqrt(coef) P``: one Cholesky
    of the SPD ``I + RGR``; ``A`` is never inverted.
    """
    G, y, coef = _check_woodbury_args(G, y, coef)
    u = np.asarray(u, dtype=np.float64)
    if u.shape[0] != G.shape[0]:
        raise ValueError(f"u must have {G.shape[0]} rows; got shape {u.shape}")
    if coef == 0.0:
        return u.copy()
    PG, L = _woodbury_factor(G, y, coef)
    return _woodbury_apply(PG @ u, y, coef, L, u)


def _woodbury_apply(PGu, y, coef, L, u):
    """``(I + AG)^{-1} u = u - coef P M^{-1} (P G u)`` given ``PGu = P G u`` and the Cholesky
    factor ``L`` of ``M = I + RGR`` (:func:`_woodbury_factor`)."""
    m = y.shape[0]
    t = sla.cho_solve((L, True), PGu)                             # M^{-1} P G u
    t = t - (np.outer(y, y @ t) / m if t.ndim == 2 else y * (y @ t) / m)   # P ...
    return u - coef * t


#: the certificate of a linear ODML / LDM on sparse features of more than this many columns
#: takes the split dual value (:meth:`_MarginDistributionProblem.split_dual_value`) instead
#: of the exact one through the dense d x d ``I + F^T A F`` (128 MB at this size)
SPLIT_CERT_MIN_D = 4096


# ---------------------------------------------------------------------------------------
# The shared machinery of ODML and LDM (one problem, two parametrisations)
# ---------------------------------------------------------------------------------------
class _MarginDistributionProblem(BiasFeature, BinaryProblem):
    """ODML / LDM in one scaling-free form.

    Subclasses set, in ``__init__``: ``_upper`` (box of the multipliers, = weight of
    ``sum xi``), ``_A_coef`` (``A = _A_coef * P``, also the weight of ``w^T F^T P F w``
    in the stationarity condition) and ``_mean_coef`` (``v = _mean_coef * e + mult``),
    and the class attribute ``dual_names = (name of the multiplier,)``; they state their
    paper's objective in ``_primal_objective`` (the constraints are common) and its dual in
    ``_solve_dual``.
    """

    capabilities = frozenset({"margins", "stationarity_from_gram", "bias_feature"})

    # ---- helpers over the feature map (O(m r^2) at most) ---------------------------
    def _Ft(self, u):
        """``F^T u``."""
        return np.asarray(self.F.T @ u).ravel()

    def _Fty(self):
        return self._cached("Fty", lambda: self._Ft(self.y))

    def _FtPF_w(self, w):
        """``F^T P F w`` without forming ``P`` (m x m); a :class:`FeatureVector` for one."""
        if isinstance(w, FeatureVector):
            return FeatureVector(self, w.Gc - self.y * (self.y @ w.Gc) / self.m)
        Fw = np.asarray(self.F @ w).ravel()
        return self._Ft(Fw) - self._Fty() * (self.y @ Fw) / self.m

    def _feature_chol(self):
        """Cholesky of ``I + F^T A F`` (r x r, SPD): the feature-space form of ``H``.

        ``H = Y F (I + F^T A F)^{-1} F^T Y`` equals ``Y G (I+AG)^{-1} Y`` by push-through.
        """
        def build():
            F = self.F
            FtF = F.T @ F
            FtF = np.asarray(FtF.toarray() if sp.issparse(FtF) else FtF)
            Fty = self._Fty()
            M = np.eye(FtF.shape[0]) + self._A_coef * (FtF - np.outer(Fty, Fty) / self.m)
            return np.linalg.cholesky(0.5 * (M + M.T))
        return self._cached("feature_chol", build)

    @property
    def H(self):
        """``H = Y G (I + A G)^{-1} Y`` by the stable Woodbury form (:func:`woodbury_H`)."""
        return self._cached("H", lambda: woodbury_H(self.gram, self.y, self._A_coef))

    def _v(self, mult):
        return self._mean_coef + np.asarray(mult, float)

    @property
    def box_dual(self):
        """The dual as the box QP of :class:`refmodels._box.BoxDual`, in the variables the
        dual solvers run: one copy, the multiplier ``mult`` of the margins (ODML's
        ``alpha``, seed 002 eqs. 8-10; LDM's ``beta``, seed 001 eq. 12), sign +1,
        ``p = -1``, no diagonal, box ``[0, upper]`` (``lam/m``; LDM's ``C``), and
        ``u = Y v`` with ``v = mult + offset e``, ``offset = mu2/m`` (LDM's ``lam2/m``).
        Its Gram is ``K = G (I + A G)^{-1}``, ``A = metric * P``, ``metric = 2 mu1/m``
        (LDM's ``4 lam1/m``), so that ``1/2 u^T K u = 1/2 v^T H v`` with ``H = Y K Y``
        (:attr:`H`). On the linear kernel ``K = Z Z^T`` with the whitened data
        ``Z = X L^{-T}``, ``L L^T = I + X^T A X`` (push-through), and the solver keeps
        ``Z^T u`` (``w = L^{-T} Z^T u``).

        The offset keeps the constant ``1/2 offset^2 e^T H e`` that the seeds drop when
        they expand ``1/2 v^T H v`` (seed 002 eq. 10, seed 001 eq. 12 and its footnote;
        ``refmodels/derive/odml.py``): the QP is exactly ``-``:meth:`dual_value`. A solver
        that takes the expanded form (the SMO: ``p = -e + offset H e``, no offset) works on
        it minus that constant."""
        from ._box import BoxDual

        return BoxDual(self.dual_names, np.array([1.0]), np.array([-1.0]), np.array([0.0]),
                       np.array([self._upper]), offset=self._mean_coef, metric=self._A_coef)

    # ---- values and maps ------------------------------------------------------------
    def _mult(self, dual):
        return np.asarray(dual[self.dual_names[0]], float)

    def feasible_dual(self, dual):
        """The multiplier in its box ``[0, _upper]``."""
        name = self.dual_names[0]
        return {name: project_boxes(self.y, [(dual[name], self._upper, 1.0)])[0]}

    def dual_value(self, dual):
        """``D_max = e^T mult - 1/2 v^T H v``, constant ``1/2 (mean/m)^2 e^T H e`` included.

        ``v^T H v`` is evaluated through the Gram for a kernel, ``(Yv)^T G (I + AG)^{-1} Y v``
        (:func:`woodbury_solve`), and in feature space for the linear kernel (``F = X``, no
        truncation), ``||L^{-1} F^T Y v||^2`` with ``L L^T = I + F^T A F`` (d x d): the
        same number as with :attr:`H`.
        """
        a = self._mult(dual)
        if not self.kernel.is_linear:
            # through the Gram, v^T H v = (Yv)^T G nu with nu = (I + AG)^{-1} Y v: the
            # empirical feature map drops the eigenvalues of G below 1e-12 of the largest,
            # and with ||v|| ~ C what they carry, ~1e-12 lambda_max ||v||^2, is not small:
            # on ecoli1 (RBF, 175 of 336 eigenvalues dropped) D came out 2.2e-8 (C = 2^12)
            # to 6.6e-6 (C = 2^20) above P, failing the certificate of an optimal point
            Yv = self.y * self._v(a)
            nu = woodbury_solve(self.gram, self.y, self._A_coef, Yv)
            return float(np.sum(a) - 0.5 * Yv @ (self.gram @ nu))
        u = self._FtYv(self._v(a))
        z = sla.solve_triangular(self._feature_chol(), u, lower=True)
        return float(np.sum(a) - 0.5 * z @ z)

    def coef_from_dual(self, dual):
        """``nu = (I + A G)^{-1} Y v`` (SPEC §2/§3), by :func:`woodbury_solve`."""
        v = self._v(self._mult(dual))
        return woodbury_solve(self.gram, self.y, self._A_coef, self.y * v), None

    def _stationarity_target(self, w):
        """The non-multiplier part of grad_w L: ``w + A-term - (mean) F^T y``.

        grad_w L = w + _A_coef F^T P F w - _mean_coef F^T y - F^T Y mult  (= 0 at the optimum).
        """
        return w + self._A_coef * self._FtPF_w(w) - self._mean_coef * self._Fty_like(w)

    def _Fty_like(self, w):
        """``F^T y`` in the form of the point ``w``."""
        return FeatureVector(self, self.y) if isinstance(w, FeatureVector) else self._Fty()

    def _solve_primal(self, solver, verbose, opts):
        """The family's primal (objective :meth:`_primal_objective`) over ``w`` in feature
        space, under ``y_i w^T phi(x_i) >= 1 - xi_i``, ``xi >= 0``; the dual variable is the
        multiplier of the margin constraints."""
        import cvxpy as cp

        w, xi = cp.Variable(self.F.shape[1]), cp.Variable(self.m)
        gamma = cp.multiply(self.y, self.F @ w)                # margins
        constraints = [gamma >= 1 - xi, xi >= 0]
        problem = cp.Problem(cp.Minimize(self._primal_objective(w, xi, gamma)), constraints)
        t = run_cvxpy(problem, solver, verbose, **opts)
        mult = np.asarray(constraints[0].dual_value, float)   # multipliers of the margins
        return self._finish(mult, w.value, solver, "primal", t, problem.value)

    def _finish(self, mult, w_cvxpy, solver, form, elapsed, cvxpy_value):
        """The Solution from CVXPY's multipliers, polished (:meth:`polish_dual`).

        ``coef = nu`` by the recovery map and ``w = F^T nu``. ``info`` keeps what CVXPY
        returned: ``cvxpy_value`` (optimal value of the problem solved: ``P*`` for the primal,
        ``D_min* = -P*`` for the dual), ``cvxpy_point`` and ``polished``.
        """
        name = self.dual_names[0]
        raw = {name: np.asarray(mult, float)}
        if w_cvxpy is not None:
            raw["w"] = np.asarray(w_cvxpy, float)
        mult, polished = self.polish_dual(np.asarray(mult, float), w_cvxpy)
        coef, _ = self.coef_from_dual({name: mult})
        w = self.w_from_coef(coef)
        if w_cvxpy is not None and not polished:
            w = np.asarray(w_cvxpy, float)      # the primal solve's own w
        xi = np.maximum(0.0, 1.0 - self.margins(w))
        return self._solution(w=w, b=0.0, coef=coef, variables={"xi": xi, name: mult},
                              solver=solver, form=form, elapsed=elapsed,
                              extra={"polished": polished, "cvxpy_value": float(cvxpy_value),
                                     "cvxpy_point": raw})

    def _kkt_score(self, w, mult):
        """Worst scaled KKT residual (duality gap included) of ``(w, mult)``."""
        dual = {self.dual_names[0]: mult}
        r = self.kkt_residuals((w, 0.0), dual)
        P = self.primal_value(w)
        r["duality gap"] = (P - self.dual_value(dual), objective_scale(self, P))
        return max(abs(a) / s if s > 0 else abs(a) for a, s in r.values())

    def polish_dual(self, mult, w=None):
        """Polish an interior-point optimum by solving its active-set KKT system.

        Interior-point multipliers sit a little inside their box, which leaves ``w``
        accurate to ~1e-8 only; a certificate derived from ``w`` alone then misses 1e-6 on
        ill-conditioned instances. With ``gamma = H v`` (the margins of the recovered ``w``),
        the sets ``L = {gamma > 1 + t}`` (mult = 0), ``U = {gamma < 1 - t}`` (mult = upper)
        and the rest ``S`` (margin exactly 1) give ``H_SS mult_S = e - H_S. v_fixed``, solved
        by least squares. Several ``t`` are tried; a candidate is kept only if it stays in the
        box and lowers the worst KKT residual. Returns ``(mult, polished)``.
        """
        H, up = self.H, self._upper
        best_mult = mult
        w0 = w if w is not None else self.w_from_coef(self.coef_from_dual(
            {self.dual_names[0]: mult})[0])
        best = self._kkt_score(w0, mult)
        gamma = H @ self._v(mult)
        polished = False
        for t in (1e-9, 1e-7, 1e-5, 1e-3):
            L, U = gamma > 1 + t, gamma < 1 - t
            S = ~(L | U)
            a = np.where(U, up, 0.0)
            if S.any():
                rhs = 1.0 - H[S] @ self._v(a)
                a_S = np.linalg.lstsq(H[np.ix_(S, S)], rhs, rcond=1e-12)[0]
                if np.any(a_S < -1e-12 * up) or np.any(a_S > up * (1 + 1e-12)):
                    continue
                a[S] = np.clip(a_S, 0.0, up)
            coef, _ = self.coef_from_dual({self.dual_names[0]: a})
            score = self._kkt_score(self.w_from_coef(coef), a)
            if score < best:
                best, best_mult, polished = score, a, True
        return best_mult, polished

    def stationarity_from_gram(self, coef, dual, Gc):
        """``(||grad_w L||, scale)`` of :meth:`kkt_residuals` through kernel products only.

        Every term of ``grad_w L`` is ``F^T`` of a coefficient vector (``w = F^T coef``,
        ``F^T P F w = F^T P G coef``), so ``grad_w L = F^T z`` and ``||grad_w L||^2 =
        z^T G z``: no feature map is needed (the fast solvers' self-check).
        """
        g, scale, _ = self._stationarity(FeatureVector(self, coef, Gc), self._mult(dual))
        return g, scale

    def _stationarity(self, w, a):
        """``(||grad_w L||, scale, grad_w L)`` at ``w`` (an array, or a
        :class:`FeatureVector`) and the multipliers ``a``."""
        w_mult = self._FtYv(a, w)
        grad = self._stationarity_target(w) - w_mult
        scale = (1.0 + fnorm(w) + fnorm(self._A_coef * self._FtPF_w(w))
                 + fnorm(self._mean_coef * self._Fty_like(w)) + fnorm(w_mult))
        return fnorm(grad), scale, grad

    # ---- KKT ---------------------------------------------------------------------------
    def _split_dual_applies(self):
        """Whether the certificate takes :meth:`split_dual_value`: the linear kernel on sparse
        features of more than :data:`SPLIT_CERT_MIN_D` columns, where :meth:`dual_value`'s
        dense d x d ``I + F^T A F`` and its Cholesky would dwarf the data (rcv1's 47,000
        features: 18 GB). Elsewhere the exact ``D_max`` stays."""
        return (self.kernel.is_linear and sp.issparse(self.F)
                and self.F.shape[1] > SPLIT_CERT_MIN_D)

    def split_dual_value(self, w, dual):
        """A dual value at the primal point ``w`` without a d x d or m x m array, O(nnz):
        the split dual (the margin variance ``1/2 ||s||^2``, ``s = R F w``, ``R = sqrt(c) P``,
        ``c`` = ``_A_coef``, with the equality ``s = R F w`` dualized by a free multiplier
        ``rho``; :mod:`fast._odml_split` derives it)

        ``D(mult, rho) = e^T mult - 1/2 ||F^T (Yv - R rho)||^2 - 1/2 ||rho||^2``

        at ``rho = R F w``, the variance multiplier the point gives:
        ``D = e^T mult - 1/2 ||F^T (Yv - c P F w)||^2 - c/2 ||P F w||^2``. For every ``mult``
        in the box and every ``rho`` it is a lower bound of the primal optimum (weak duality:
        it is the Lagrangian minimised over ``w``, the slacks and ``s``), at most
        :meth:`dual_value` (its maximum over ``rho``), and equal to it when ``w`` is the
        point ``mult`` gives (the optimum). A pure function of (problem, point, dual)."""
        a = self._mult(dual)
        F, y, m, c = self.F, self.y, self.m, self._A_coef
        Fw = np.asarray(F @ np.asarray(w, dtype=float)).ravel()
        pfw = Fw - y * (y @ Fw) / m                                # P F w
        wd = np.asarray(F.T @ (y * self._v(a) - c * pfw)).ravel()
        return float(np.sum(a) - 0.5 * float(wd @ wd) - 0.5 * c * float(pfw @ pfw))

    def _dual_value_at(self, point, dual):
        """With many sparse features (:meth:`_split_dual_applies`), the split dual value at
        the point (:meth:`split_dual_value`). In the representer form, a lower bound of the dual function instead of ``D_max``
        (which needs ``(I + AG)^{-1}``, O(m^3)): ``L(w, mult) - 1/2 ||grad_w L||^2``, since
        ``L`` is quadratic in ``w`` with Hessian ``I + _A_coef F^T P F >= I``; it equals
        ``D_max`` at a stationary ``w``. ``L(w, mult) = P(w) - _upper sum xi + mult^T (e -
        gamma)`` (the slacks' terms cancel for ``mult`` in its box)."""
        w = point[0]
        if not isinstance(w, FeatureVector) and self._split_dual_applies():
            return self.split_dual_value(w, dual)
        if not isinstance(w, FeatureVector):
            return self._dual_value(dual)
        a = self._mult(dual)
        gamma = self.margins(w)
        grad = self._stationarity(w, a)[2]
        L = (self.primal_value(*point) - self._upper * float(np.sum(np.maximum(0.0, 1.0 - gamma)))
             + float(a @ (1.0 - gamma)))
        return L - 0.5 * grad.norm2()

    def kkt_residuals(self, point, dual, sol=None):
        """Primal/dual feasibility, complementarity and stationarity in ``w``.

        Stationarity of the Lagrangian in ``w`` (derived from seed 002 eq. 6):
        ``w + _A_coef F^T P F w - _mean_coef F^T y - F^T Y mult = 0``, i.e. for ODML
        ``w + (2 mu1/m) F^T P F w - (mu2/m) F^T y - F^T Y alpha = 0``.
        """
        w, b = point
        a = self._mult(dual)
        gamma = self.margins(w)
        xi = np.maximum(0.0, 1.0 - gamma)
        if sol is not None and np.shape(sol.variables.get("xi")) == (self.m,):
            xi = np.asarray(sol.variables["xi"], float)
        g, scale, _ = self._stationarity(w, a)
        return {
            "primal feasibility": (self._slack_violation(gamma, sol), 1.0 + np.max(np.abs(gamma))),
            "dual feasibility": (box_violation(a, 0.0, self._upper), 1.0 + self._upper),
            "complementarity": (max(complementarity(a, gamma - 1.0 + xi),
                                    complementarity(self._upper - a, xi)),
                                objective_scale(self, self.primal_value(w, b), sol)),
            "stationarity": (g, scale),
        }

    def dual_candidates(self, point, sol=None):
        """Multipliers from complementarity; ties by bounded least squares on stationarity."""
        w, b = point
        gamma = self.margins(w)
        FtY, target = stationarity_system(self, self._stationarity_target(w), self._FtY)
        for t in TIE_THRESHOLDS:
            (a,) = derive_box_duals([(gamma - 1.0, self._upper, FtY)], target, t)
            yield {self.dual_names[0]: a}


class ODML(_MarginDistributionProblem):
    """ODM^L (ODML): hinge loss plus margin variance and margin mean (SPEC §2).

    Seed 002 eq. 4 (seed 000 §3.1 with :math:`\\lambda_1=\\mu_1`, :math:`\\lambda_2=\\mu_2`,
    :math:`C=\\lambda`):

    .. math::

        \\min_{w,\\xi}\\ \\tfrac12\\|w\\|^2+\\mu_1\\gamma_v-\\mu_2\\gamma_m+\\frac{\\lambda}{m}\\sum_i\\xi_i
        \\quad\\text{s.t.}\\quad y_iw^\\top\\phi(x_i)\\ge1-\\xi_i,\\ \\xi\\ge0.

    Dual (eq. 8/10, constant kept): :math:`\\min_{0\\le\\alpha\\le\\lambda/m}\\tfrac12v^\\top Hv-e^\\top\\alpha`,
    :math:`v=\\frac{\\mu_2}{m}e+\\alpha`, :math:`H=YG(I+AG)^{-1}Y`, :math:`A=\\frac{2\\mu_1}{m}P`,
    :math:`\\nu=(I+AG)^{-1}Yv`.

    Parameters
    ----------
    X : array (m, d)
        The training points (or the m x m Gram with ``kernel=Precomputed()``).
    y : array (m,)
        Labels, two classes (the larger sorted label is +1).
    lam : float > 0
        Weight :math:`\\lambda` of the mean hinge loss.
    mu1 : float >= 0
        Weight of the margin variance.
    mu2 : float >= 0
        Weight of the margin mean.
    kernel : Kernel or name, default linear

    fit_intercept : bool, default False
        Add a constant feature ``intercept_scaling``, its weight regularized like the others
        (:mod:`refmodels._intercept`): the kernel becomes ``k + s^2`` and the solution
        reports ``intercept = s w_b``. False is the seed's ODML, without intercept.
    intercept_scaling : float > 0, default 1.0
        The value ``s`` of the constant feature.

    Notes
    -----
    ``mu1 = mu2 = 0`` is allowed on purpose: it is the SVM limit (ODML(λ, 0, 0) = SVM with
    ``C = λ/m``), a useful check, and the dual stays well defined (``H = YGY``).

    Variables (SPEC names): ``w``, ``xi``, ``alpha``.
    """

    family = "ODML"
    dual_names = ("alpha",)
    #: eq. 4's margin terms: variance, mean and hinge (the reference's rescaled rung,
    #: :meth:`BinaryProblem._rescaled`)
    rescale_params = ("lam", "mu1", "mu2")

    def __init__(self, X, y, lam=1.0, mu1=0.0, mu2=0.0, kernel=None, fit_intercept=False,
                 intercept_scaling=1.0):
        X, kernel = bias_inputs(X, kernel, fit_intercept, intercept_scaling)
        super().__init__(X, y, kernel)
        self.lam = positive(lam, "lam")
        self.mu1 = nonnegative(mu1, "mu1")
        self.mu2 = nonnegative(mu2, "mu2")
        self._upper = self.lam / self.m
        self._A_coef = 2.0 * self.mu1 / self.m
        self._mean_coef = self.mu2 / self.m

    @property
    def odml_params(self):
        """``(lam, mu1, mu2, upper, dual name)``: the problem in ODML's parametrisation, as
        the fast solvers read it."""
        return self.lam, self.mu1, self.mu2, self.lam / self.m, "alpha"

    # ---- the formulation, as in SPEC §2 ------------------------------------------------
    def _primal_objective(self, w, xi, gamma):
        """Seed 002 eq. 4 (CVXPY; ``gamma`` the margins); ``alpha`` = multipliers of the
        margins (:meth:`_solve_primal`)."""
        import cvxpy as cp

        m = self.m
        gamma_m = cp.sum(gamma) / m                            # margin mean
        gamma_v = cp.sum_squares(gamma - gamma_m) / m          # margin variance
        return (0.5 * cp.sum_squares(w) + self.mu1 * gamma_v - self.mu2 * gamma_m
                + self.lam / m * cp.sum(xi))

    def _solve_dual(self, solver, verbose, opts):
        """``min 1/2 v^T H v - e^T alpha``, ``v = (mu2/m) e + alpha``, ``0 <= alpha <= lam/m``.

        ``1/2 v^T H v`` contains the constant ``1/2 (mu2/m)^2 e^T H e`` that seed 002 eq. 10
        drops; with it, ``P* = -D*``. ``H`` by the stable Woodbury form.
        """
        import cvxpy as cp

        m = self.m
        alpha = cp.Variable(m)
        v = self.mu2 / m + alpha
        problem = cp.Problem(cp.Minimize(0.5 * quad(v, self.H) - cp.sum(alpha)),
                             [alpha >= 0, alpha <= self.lam / m])
        t = run_cvxpy(problem, solver, verbose, **opts)
        return self._finish(alpha.value, None, solver, "dual", t, problem.value)

    # ---- values ------------------------------------------------------------------------
    def primal_value(self, w, b=0.0):
        """Seed 002 eq. 4 with the smallest feasible slacks ``xi = max(0, 1 - gamma)``."""
        return self.objective_from_margins(self.margins(w), self._norm2(w))

    def objective_from_margins(self, gamma, wnorm2):
        """Seed 002 eq. 4 from the margins and ``||w||^2``."""
        gamma_m = float(np.mean(gamma))
        gamma_v = float(np.mean((gamma - gamma_m) ** 2))
        xi = np.maximum(0.0, 1.0 - gamma)
        return (0.5 * wnorm2 + self.mu1 * gamma_v - self.mu2 * gamma_m
                + self.lam / self.m * float(np.sum(xi)))


class LDM(_MarginDistributionProblem):
    """Large margin Distribution Machine (SPEC §3; seed 001 eqs. 3–12).

    Seed 001 defines the margin variance pairwise (eq. 4),
    :math:`\\hat\\gamma=\\frac1{m^2}\\sum_{i,j}(\\gamma_i-\\gamma_j)^2=2\\gamma_v`,
    and the margin mean :math:`\\bar\\gamma` (eq. 3); soft-margin LDM (eq. 5):

    .. math::

        \\min_{w,\\xi}\\ \\tfrac12\\|w\\|^2+\\lambda_1\\hat\\gamma-\\lambda_2\\bar\\gamma+C\\sum_i\\xi_i
        \\quad\\text{s.t.}\\quad y_iw^\\top\\phi(x_i)\\ge1-\\xi_i,\\ \\xi\\ge0.

    Dual (eq. 12, constant kept):

    .. math::

        \\min_{0\\le\\beta\\le C}\\ \\tfrac12\\beta^\\top H\\beta+\\Big(\\frac{\\lambda_2}{m}He-e\\Big)^\\top\\beta
        +\\tfrac12\\Big(\\frac{\\lambda_2}{m}\\Big)^2e^\\top He,

    :math:`H=YGQ^{-1}GY`, :math:`Q=G+\\frac{4\\lambda_1}{m^2}(mG^2-Gyy^\\top G)=G(I+A_LG)`,
    :math:`A_L=\\frac{4\\lambda_1}{m}P`. ``Q`` is singular whenever ``G`` is (linear kernel,
    d < m), so ``H`` is computed "with Woodbury", :math:`H=YG(I+A_LG)^{-1}Y`
    (:func:`woodbury_H`), equal to the seed's wherever ``Q`` is invertible and always defined.
    Recovery: :math:`\\nu=(I+A_LG)^{-1}Y(\\beta+\\frac{\\lambda_2}{m}e)`.

    Equivalence: LDM(C, λ1, λ2) = ODML(λ = mC, μ1 = 2λ1, μ2 = λ2): same ``w``, same optimal
    value; the canonical objective is LDM's primal value above.

    Parameters
    ----------
    X, y, kernel, fit_intercept, intercept_scaling
        As for :class:`ODML`.
    C : float > 0
        Weight of the sum of slacks.
    lam1 : float >= 0
        Weight of the (pairwise) margin variance.
    lam2 : float >= 0
        Weight of the margin mean (``lam1 = lam2 = 0`` is the SVM with ``C``).

    Notes
    -----
    Variables (SPEC names): ``w``, ``xi``, ``beta``.
    """

    family = "LDM"
    dual_names = ("beta",)
    #: eq. 5's margin terms: pairwise variance, mean and hinge (the reference's rescaled
    #: rung, :meth:`BinaryProblem._rescaled`)
    rescale_params = ("C", "lam1", "lam2")

    def __init__(self, X, y, C=1.0, lam1=0.0, lam2=0.0, kernel=None, fit_intercept=False,
                 intercept_scaling=1.0):
        X, kernel = bias_inputs(X, kernel, fit_intercept, intercept_scaling)
        super().__init__(X, y, kernel)
        self.C = positive(C, "C")
        self.lam1 = nonnegative(lam1, "lam1")
        self.lam2 = nonnegative(lam2, "lam2")
        self._upper = self.C
        self._A_coef = 4.0 * self.lam1 / self.m          # A_L = (4 lam1/m) P
        self._mean_coef = self.lam2 / self.m

    @property
    def odml_params(self):
        """``(lam, mu1, mu2, upper, dual name)``: LDM in ODML's parametrisation (the map of
        SPEC §3: ``lam = m C``, ``mu1 = 2 lam1``, ``mu2 = lam2``), as the fast solvers
        read it."""
        return self.m * self.C, 2.0 * self.lam1, self.lam2, self.C, "beta"

    def _primal_objective(self, w, xi, gamma):
        """Seed 001 eq. 5 (CVXPY; ``gamma`` the margins); ``beta`` = multipliers of the
        margins (:meth:`_solve_primal`)."""
        import cvxpy as cp

        m = self.m
        gamma_bar = cp.sum(gamma) / m                                  # eq. 3
        gamma_hat = 2.0 * cp.sum_squares(gamma - gamma_bar) / m        # eq. 4 (pairwise form)
        return (0.5 * cp.sum_squares(w) + self.lam1 * gamma_hat - self.lam2 * gamma_bar
                + self.C * cp.sum(xi))

    def _solve_dual(self, solver, verbose, opts):
        """Seed 001 eq. 12 with ``H`` by Woodbury and the constant kept."""
        import cvxpy as cp

        m, H = self.m, self.H
        e = np.ones(m)
        beta = cp.Variable(m)
        const = 0.5 * (self.lam2 / m) ** 2 * float(e @ H @ e)
        objective = 0.5 * quad(beta, H) + (self.lam2 / m * (H @ e) - e) @ beta + const
        problem = cp.Problem(cp.Minimize(objective), [beta >= 0, beta <= self.C])
        t = run_cvxpy(problem, solver, verbose, **opts)
        return self._finish(beta.value, None, solver, "dual", t, problem.value)

    def primal_value(self, w, b=0.0):
        """Seed 001 eq. 5 with ``xi = max(0, 1 - gamma)`` and the pairwise variance."""
        return self.objective_from_margins(self.margins(w), self._norm2(w))

    def objective_from_margins(self, gamma, wnorm2):
        """Seed 001 eq. 5 from the margins and ``||w||^2`` (pairwise variance)."""
        gamma_bar = float(np.mean(gamma))
        # (1/m^2) sum_{i,j} (gamma_i - gamma_j)^2 = (2/m^2)(m gamma^T gamma - (e^T gamma)^2),
        # evaluated in the cancellation-free centred form.
        gamma_hat = 2.0 * float(np.mean((gamma - gamma_bar) ** 2))
        xi = np.maximum(0.0, 1.0 - gamma)
        return (0.5 * wnorm2 + self.lam1 * gamma_hat - self.lam2 * gamma_bar
                + self.C * float(np.sum(xi)))
