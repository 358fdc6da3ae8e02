"""Optimal margin Distribution Machine, ODM (SPEC §4; seed 002 eqs. 12–15, 18; seed 000 eqs. 7, 19).

Primal (seed 002 eq. 12), :math:`\\lambda>0`, :math:`\\mu>0` (we also allow :math:`\\mu=0`:
no loss above the band, ``beta = 0``), :math:`0\\le\\theta<1`:

.. math::

    \\min_{w,\\xi,\\epsilon}\\ \\tfrac12\\|w\\|^2
    + \\frac{\\lambda}{m(1-\\theta)^2}\\sum_i(\\xi_i^2+\\mu\\epsilon_i^2)
    \\quad\\text{s.t.}\\quad y_iw^\\top\\phi(x_i)\\ge1-\\theta-\\xi_i,\\
    y_iw^\\top\\phi(x_i)\\le1+\\theta+\\epsilon_i.

Seed 000 eq. 7 writes the same problem as :math:`\\tfrac12 w^\\top w+\\frac1m\\sum_i(C_1\\xi_i^2+C_2\\epsilon_i^2)`
with :math:`C_1=\\lambda/(1-\\theta)^2`, :math:`C_2=\\lambda\\mu/(1-\\theta)^2`, :math:`D=\\theta`
(:meth:`ODM.from_seed000`).

Dual (seed 002 eq. 15; seed 000 eq. 19), :math:`a=\\frac{m(1-\\theta)^2}{2\\lambda}`, :math:`Q=YGY`:

.. math::

    \\min_{\\alpha=[\\zeta;\\beta]\\ge0}\\ \\tfrac12\\alpha^\\top
    \\begin{bmatrix}Q+aI&-Q\\\\-Q&Q+\\frac a\\mu I\\end{bmatrix}\\alpha
    +\\begin{bmatrix}(\\theta-1)e\\\\(\\theta+1)e\\end{bmatrix}^\\top\\alpha,

:math:`\\nu=Y(\\zeta-\\beta)` (eq. 14: :math:`w=XY(\\zeta-\\beta)`, :math:`\\xi=a\\zeta`,
:math:`\\epsilon=a\\beta/\\mu`), :math:`P^\\star=-D^\\star`.
"""
from __future__ import annotations

import numpy as np

from ._intercept import BiasFeature, bias_inputs
from ._validation import in_interval, nonnegative, positive
from .base import BinaryProblem, given_slacks, objective_scale, run_cvxpy
from .certify import box_violation, complementarity, project_boxes
from .representer import fnorm


def weighted_sq(s, v):
    """``s ||v||^2`` as ``||sqrt(s) v||^2``: at ``lam = 1e-300`` the multipliers are ~1e-302
    and ``a`` ~1e302, so ``||v||^2`` alone underflows to 0 while the term is ~1e-300."""
    u = np.sqrt(s) * np.asarray(v, dtype=float)
    return float(u @ u)


class ODM(BiasFeature, BinaryProblem):
    """Optimal margin Distribution Machine (SPEC §4; seed 002 eq. 12).

    .. math::

        \\min_{w,\\xi,\\epsilon}\\ \\tfrac12\\|w\\|^2+\\frac{\\lambda}{m(1-\\theta)^2}\\sum_i(\\xi_i^2+\\mu\\epsilon_i^2)
        \\ \\text{s.t.}\\ y_iw^\\top\\phi(x_i)\\ge1-\\theta-\\xi_i,\\ y_iw^\\top\\phi(x_i)\\le1+\\theta+\\epsilon_i.

    Its unconstrained form (eq. 18) is the canonical objective :meth:`primal_value`:
    :math:`f_O(w)=\\tfrac12\\|w\\|^2+\\frac{\\lambda}{m(1-\\theta)^2}\\sum_i[\\max(0,1-\\theta-\\gamma_i)^2
    +\\mu\\max(0,\\gamma_i-1-\\theta)^2]`.

    Parameters
    ----------
    X : array (m, d) (or the m x m Gram with ``kernel=Precomputed()``)
    y : labels, two classes (the larger sorted label is +1)
    lam : float > 0
    mu : float >= 0, weight of the loss above the margin band. ``mu = 0`` (no loss above it,
        the multipliers ``beta`` fixed at 0) with ``theta = 0`` is the squared hinge, the
        L2-loss SVM of LIBLINEAR (``-s 1``, ``-s 2``) and ``LinearSVC``'s default, with
        ``lam = C m``
    theta : float in [0, 1), half-width of the insensitive band around margin 1
    kernel : Kernel or name, default linear
    fit_intercept : bool, default False
        Add a constant feature ``intercept_scaling`` to every point, its weight regularized
        like the others (LIBODM's ``-b``, LIBLINEAR's ``-B``; :mod:`refmodels._intercept`):
        the kernel becomes ``k + s^2`` and the solution reports ``intercept = s w_b``.
        False (the default) is seed 002's ODM, without intercept.
    intercept_scaling : float > 0, default 1.0
        ``s``, the value of the constant feature.

    Variables (SPEC names): ``w``, ``xi``, ``eps`` (primal slacks), ``zeta``, ``beta``
    (multipliers of the lower and the upper margin constraints).
    """

    family = "ODM"
    capabilities = frozenset({"margins", "slack_stationarity", "dual_from_gram", "bias_feature"})
    dual_names = ("zeta", "beta")
    #: eq. 18's loss terms are weighed by ``lam / (m (1-theta)^2)`` (``mu`` is a ratio between
    #: them, ``theta`` a margin) (the reference's rescaled rung, :meth:`BinaryProblem._rescaled`)
    rescale_params = ("lam",)
    primal_slack_names = ("xi", "eps")

    def __init__(self, X, y, lam=1.0, mu=1.0, theta=0.0, kernel=None, fit_intercept=False,
                 intercept_scaling=1.0):
        X, kernel = bias_inputs(X, kernel, fit_intercept, intercept_scaling)
        super().__init__(X, y, kernel)
        self.lam = positive(lam, "lam")
        self.mu = nonnegative(mu, "mu")
        self.theta = in_interval(theta, "theta", 0.0, 1.0, lo_closed=True, hi_closed=False)
        # the dual's constant a = m (1-theta)^2 / (2 lam) (eq. 15) must be a float64 number
        if not np.isfinite(self.m * (1.0 - self.theta) ** 2 / (2.0 * self.lam)):
            low = self.m * (1.0 - self.theta) ** 2 / (2.0 * np.finfo(float).max)
            raise ValueError(f"lam must be at least m (1 - theta)^2 / (2 * 1.8e308) = {low:.3g} "
                             f"here, so that the dual's constant a = m (1 - theta)^2 / (2 lam) "
                             f"is finite; got {self.lam:.3g}")

    @classmethod
    def from_seed000(cls, X, y, C1, C2, D, kernel=None, **intercept):
        """ODM in seed 000's parameters (eq. 7): ``1/2 w^T w + (1/m) sum(C1 xi^2 + C2 eps^2)``,
        band ``[1 - D, 1 + D]``.

        SPEC §4's map: ``C1 = lam/(1-theta)^2``, ``C2 = lam*mu/(1-theta)^2``, ``D = theta``,
        i.e. ``lam = C1 (1-D)^2``, ``mu = C2/C1``, ``theta = D``. Same objective, no factor.
        """
        C1 = positive(C1, "C1")
        C2 = nonnegative(C2, "C2")
        D = in_interval(D, "D", 0.0, 1.0, lo_closed=True, hi_closed=False)
        return cls(X, y, lam=C1 * (1.0 - D) ** 2, mu=C2 / C1, theta=D, kernel=kernel,
                   **intercept)

    # ---- constants of the formulation ---------------------------------------------------
    @property
    def margin_loss(self):
        """Eq. 18's loss of the margins as :class:`refmodels._box.MarginLoss`: ``"odm"`` with
        ``(c, mu, theta)``, ``ell(g) = c [max(0, 1-theta-g)^2 + mu max(0, g-1-theta)^2]``;
        what the primal Newton methods (TRON, the kernel Newton) minimise with ``1/2 ||w||^2``."""
        return self.margin_loss_at(self.lam)

    def margin_loss_at(self, lam):
        """:attr:`margin_loss` with ``lam`` in place of this problem's (a path over ``lam`` on
        the same data: :func:`fast.odm.linear_tron_path`)."""
        from ._box import MarginLoss

        return MarginLoss("odm", (lam / (self.m * (1.0 - self.theta) ** 2), self.mu,
                                  self.theta))

    @property
    def c(self):
        """Weight of ``sum xi^2``: ``lam / (m (1 - theta)^2)`` (:attr:`margin_loss`'s first
        parameter)."""
        return self.margin_loss.params[0]

    def _beta_term(self, bt):
        """``a/(2 mu) ||beta||^2`` of the dual: with ``mu = 0`` the multipliers of the upper
        margin constraints are fixed at 0 (their loss weight vanishes), so the term is 0 at
        ``beta = 0`` and ``inf`` elsewhere."""
        if self.mu == 0.0:
            return 0.0 if not np.any(bt) else np.inf
        return weighted_sq(self.a / (2 * self.mu), bt)

    @property
    def a(self):
        """``a = m (1 - theta)^2 / (2 lam)`` of eq. 15 (``= 1/(2 c)``)."""
        return self.m * (1.0 - self.theta) ** 2 / (2.0 * self.lam)

    # ---- the formulation, as in SPEC §4 --------------------------------------------------
    def _solve_primal(self, solver, verbose, opts):
        """Seed 002 eq. 12 over ``w`` in feature space; ``zeta``, ``beta`` = its multipliers."""
        import cvxpy as cp

        F, y, m, th = self.F, self.y, self.m, self.theta
        w, xi, eps = cp.Variable(F.shape[1]), cp.Variable(m), cp.Variable(m)
        gamma = cp.multiply(y, F @ w)
        objective = 0.5 * cp.sum_squares(w) + self.c * (cp.sum_squares(xi)
                                                         + self.mu * cp.sum_squares(eps))
        constraints = [gamma >= 1 - th - xi, gamma <= 1 + th + eps]
        problem = cp.Problem(cp.Minimize(objective), constraints)
        t = run_cvxpy(problem, solver, verbose, **opts)
        raw = {"w": w.value, "xi": xi.value, "eps": eps.value,
               "zeta": constraints[0].dual_value, "beta": constraints[1].dual_value}
        return self._finish(np.asarray(w.value, float), solver, "primal", t,
                            problem.value, raw)

    def _solve_dual(self, solver, verbose, opts):
        """Seed 002 eq. 15 over ``alpha = [zeta; beta] >= 0``.

        ``1/2 alpha^T [[Q + aI, -Q], [-Q, Q + (a/mu) I]] alpha`` is written as
        ``1/2 ||F^T Y (zeta - beta)||^2 + a/2 ||zeta||^2 + a/(2 mu) ||beta||^2``
        (``Q = YGY = (F^T Y)^T (F^T Y)``), which never forms the 2m x 2m block matrix.
        """
        import cvxpy as cp

        m, th, a = self.m, self.theta, self.a
        zeta, beta = cp.Variable(m), cp.Variable(m)
        FtY = self._FtY()
        beta_term = (a / (2 * self.mu) * cp.sum_squares(beta) if self.mu > 0 else 0.0)
        objective = (0.5 * cp.sum_squares(FtY @ (zeta - beta))
                     + a / 2 * cp.sum_squares(zeta) + beta_term
                     + (th - 1) * cp.sum(zeta) + (th + 1) * cp.sum(beta))
        # mu = 0: no loss above the band, its multipliers are 0 (beta_term is their box)
        problem = cp.Problem(cp.Minimize(objective),
                             [zeta >= 0, beta >= 0] if self.mu > 0 else [zeta >= 0, beta == 0])
        t = run_cvxpy(problem, solver, verbose, **opts)
        z, bt = np.asarray(zeta.value, float), np.asarray(beta.value, float)
        coef, _ = self.coef_from_dual({"zeta": z, "beta": bt})     # nu = Y (zeta - beta)
        return self._finish(self.w_from_coef(coef), solver, "dual", t, problem.value,
                            {"zeta": z, "beta": bt})

    def _finish(self, w0, solver, form, elapsed, cvxpy_value, raw):
        """Polish the CVXPY point (exact Newton on the piecewise quadratic ``f_O``) and
        return it with the multipliers of eq. 14, which ``w`` determines uniquely:
        ``xi = max(0, 1-theta-gamma)``, ``eps = max(0, gamma-1-theta)``, ``zeta = xi/a``,
        ``beta = mu eps/a``, ``nu = Y (zeta - beta)``.

        Why: the dual point of ODM is a function of ``w`` with Lipschitz constant
        ``~ 2c ||F||^2``, so a CVXPY optimum accurate to 1e-8 in value can miss the
        1e-6 certificate when only its ``w`` is handed over. ``info`` keeps what CVXPY
        returned: ``cvxpy_value`` (the optimal value of the problem solved: ``P*`` for the
        primal, ``D_min* = -P*`` for the dual), ``cvxpy_point`` (its variables by SPEC name)
        and ``newton_polish_steps``.
        """
        w, steps = self.polish(w0)
        xi, eps = self._slacks(self.margins(w))
        zeta, beta = xi / self.a, self.mu * eps / self.a
        coef, _ = self.coef_from_dual({"zeta": zeta, "beta": beta})
        return self._solution(w=w, b=0.0, coef=coef,
                              variables={"xi": xi, "eps": eps, "zeta": zeta, "beta": beta},
                              solver=solver, form=form, elapsed=elapsed,
                              extra={"newton_polish_steps": steps,
                                     "cvxpy_value": float(cvxpy_value),
                                     "cvxpy_point": {k: np.asarray(v, float)
                                                     for k, v in raw.items()}})

    def gradient(self, w):
        """``grad f_O(w) = w - F^T Y (2c xi(w) - 2c mu eps(w))``, ``c = lam/(m(1-theta)^2)``."""
        xi, eps = self._slacks(self.margins(w))
        return w - self._FtYv(2 * self.c * (xi - self.mu * eps))

    def polish(self, w, max_steps=20, max_move=1e-3):
        """Exact Newton steps on ``f_O`` (piecewise quadratic, eq. 18) from ``w``.

        With the index sets ``lo = {gamma_i < 1-theta}`` and ``hi = {gamma_i > 1+theta}`` of
        the current point (and of variants that move points within ``t`` of a kink to the
        other side), ``f_O`` is the quadratic whose minimiser solves
        ``(I + 2c F_lo^T F_lo + 2c mu F_hi^T F_hi) w = 2c (1-theta) F_lo^T y_lo
        + 2c mu (1+theta) F_hi^T y_hi`` (r x r, SPD). A step is kept only if it lowers
        ``||grad f_O||`` without raising ``f_O``; near the optimum the sets are right and one
        step lands on the optimum to rounding error. Polishing refines, never replaces: the
        total move stays within ``max_move * (1 + ||w0||)``. Returns ``(w, steps kept)``.
        """
        import scipy.sparse as sp

        F, y, c, mu, th = self.F, self.y, self.c, self.mu, self.theta
        w = w0 = np.asarray(w, float)
        radius = max_move * (1.0 + np.linalg.norm(w0))
        f, gn = self.primal_value(w), np.linalg.norm(self.gradient(w))
        eye = np.eye(F.shape[1])

        def newton(lo, hi):
            Fl, Fh = F[lo], F[hi]
            M = 2 * c * (Fl.T @ Fl) + 2 * c * mu * (Fh.T @ Fh)
            M = np.asarray(M.toarray() if sp.issparse(M) else M) + eye
            rhs = (2 * c * (1 - th) * np.asarray(Fl.T @ y[lo]).ravel()
                   + 2 * c * mu * (1 + th) * np.asarray(Fh.T @ y[hi]).ravel())
            return np.linalg.solve(0.5 * (M + M.T), rhs)

        kept = 0
        for _ in range(max_steps):
            gamma = self.margins(w)
            best = None
            seen = set()
            # the sets of the current point, and variants that move the points next to a
            # kink (|gamma_i - (1 -+ theta)| <= t) to the other side; a variant with the
            # same sets as one tried gives the same step (near the optimum most do)
            for t in (0.0, 1e-9, -1e-9, 1e-7, -1e-7, 1e-5, -1e-5, 1e-3, -1e-3):
                lo, hi = gamma < 1 - th + t, gamma > 1 + th - t
                key = (lo.tobytes(), hi.tobytes())
                if key in seen:
                    continue
                seen.add(key)
                try:
                    w_new = newton(lo, hi)
                except np.linalg.LinAlgError:
                    continue
                f_new, gn_new = self.primal_value(w_new), np.linalg.norm(self.gradient(w_new))
                if (gn_new < (gn if best is None else best[2]) and f_new <= f + 1e-14 * (1 + abs(f))
                        and np.linalg.norm(w_new - w0) <= radius):
                    best = (w_new, f_new, gn_new)
            if best is None:
                break
            w, f, gn = best
            kept += 1
            if gn == 0.0:
                break
        return w, kept

    # ---- values and maps --------------------------------------------------------------------
    def _slacks(self, gamma):
        """Smallest feasible slacks: ``xi = max(0, 1-theta-gamma)``, ``eps = max(0, gamma-1-theta)``."""
        th = self.theta
        return np.maximum(0.0, 1.0 - th - gamma), np.maximum(0.0, gamma - 1.0 - th)

    def primal_value(self, w, b=0.0):
        """``f_O(w)`` of seed 002 eq. 18 (kernelised through ``F``)."""
        return self.objective_from_margins(self.margins(w), self._norm2(w))

    @property
    def box_dual(self):
        """Eq. 15 as the box QP of :class:`refmodels._box.BoxDual`: ``zeta`` (sign +1,
        ``p = theta - 1``, diagonal ``a``) and ``beta`` (sign -1, ``p = theta + 1``, diagonal
        ``a / mu``), both unbounded above. At ``mu = 0`` (no loss above the band) ``beta``'s
        box is ``[0, 0]``, its diagonal any positive number (``a``): it never moves."""
        from ._box import BoxDual

        a, th, mu = self.a, self.theta, self.mu
        return BoxDual(("zeta", "beta"), np.array([1.0, -1.0]), np.array([th - 1.0, th + 1.0]),
                       np.array([a, a / mu if mu > 0 else a]),
                       np.array([np.inf, np.inf if mu > 0 else 0.0]))

    def objective_from_margins(self, gamma, wnorm2):
        """``f_O`` (seed 002 eq. 18) from the margins and ``||w||^2``."""
        xi, eps = self._slacks(gamma)
        return 0.5 * wnorm2 + self.c * float(xi @ xi + self.mu * (eps @ eps))

    def dual_value_from_norm(self, dual, unorm2):
        """``D_max = (1-theta) e^T zeta - (1+theta) e^T beta - 1/2 ||u||^2 - a/2 ||zeta||^2
        - a/(2 mu) ||beta||^2`` (minus eq. 15's objective) with ``||u||^2 = ||F^T Y (zeta -
        beta)||^2`` given."""
        z, bt = np.asarray(dual["zeta"], float), np.asarray(dual["beta"], float)
        th = self.theta
        return float((1 - th) * z.sum() - (1 + th) * bt.sum() - 0.5 * unorm2
                     - weighted_sq(self.a / 2, z) - self._beta_term(bt))

    def dual_value_from_gram(self, dual, Gv):
        """``D_max`` with ``Gv = G Y (zeta - beta)`` given (no feature map)."""
        z, bt = np.asarray(dual["zeta"], float), np.asarray(dual["beta"], float)
        return self.dual_value_from_norm(dual, float((self.y * (z - bt)) @ Gv))

    def dual_value(self, dual):
        """``D_max`` (:meth:`dual_value_from_norm`) in feature space."""
        z, bt = np.asarray(dual["zeta"], float), np.asarray(dual["beta"], float)
        u = self._FtYv(z - bt)
        return self.dual_value_from_norm(dual, float(u @ u))

    def coef_from_dual(self, dual):
        """``nu = Y (zeta - beta)`` (eq. 14)."""
        z, bt = np.asarray(dual["zeta"], float), np.asarray(dual["beta"], float)
        return self.y * (z - bt), None

    # ---- KKT ----------------------------------------------------------------------------------
    def _given_slacks(self, gamma, sol):
        return given_slacks(sol, self.m, self._slacks(gamma))

    def feasible_dual(self, dual):
        """``zeta >= 0`` and ``beta >= 0`` (``beta = 0`` when ``mu = 0``)."""
        z, bt = project_boxes(self.y, [(dual["zeta"], np.inf, 1.0),
                                       (dual["beta"], np.inf if self.mu > 0 else 0.0, -1.0)])
        return {"zeta": z, "beta": bt}

    def kkt_residuals(self, point, dual, sol=None):
        """KKT of eq. 12 with the Lagrangian of seed 002 eq. 13 (sign typo fixed, SPEC §4).

        Stationarity in ``w``: ``w = F^T Y (zeta - beta)``; in the slacks (eq. 14):
        ``2 c xi = zeta`` and ``2 c mu eps = beta`` with ``c = lam/(m(1-theta)^2)``.
        The slacks are sign-free in eq. 12, so only the two margin constraints count for
        primal feasibility.
        """
        w, b = point
        z, bt = np.asarray(dual["zeta"], float), np.asarray(dual["beta"], float)
        th = self.theta
        gamma = self.margins(w)
        xi, eps = self._given_slacks(gamma, sol)
        lower = gamma - (1 - th) + xi            # >= 0, multiplier zeta
        upper = (1 + th) + eps - gamma           # >= 0, multiplier beta
        primal_viol = float(max(np.max(np.maximum(-lower, 0.0)), np.max(np.maximum(-upper, 0.0))))
        w_dual = self._FtYv(z - bt, w)
        mults = np.concatenate([z, bt])
        return {
            "primal feasibility": (primal_viol, 1.0 + np.max(np.abs(gamma))),
            # (mu = 0: beta's box is [0, 0], see _beta_term)
            "dual feasibility": (box_violation(mults, 0.0, np.inf if self.mu > 0 else np.r_[
                                     np.full(self.m, np.inf), np.zeros(self.m)]),
                                 1.0 + float(np.max(np.abs(mults)))),
            "complementarity": (max(complementarity(z, lower), complementarity(bt, upper)),
                                objective_scale(self, self.primal_value(w, b), sol)),
            "stationarity": (fnorm(w - w_dual), 1.0 + fnorm(w) + fnorm(w_dual)),
            "stationarity (slacks)": self.slack_stationarity(xi, eps, dual),
        }

    def slack_stationarity(self, xi, eps, dual):
        """``(abs, scale)`` of eq. 14's stationarity in the slacks: ``2 c xi = zeta``,
        ``2 c mu eps = beta`` (also the fast solvers' self-check: it needs no feature map)."""
        z, bt = np.asarray(dual["zeta"], float), np.asarray(dual["beta"], float)
        c = self.c
        g_xi, g_eps = 2 * c * xi - z, 2 * c * self.mu * eps - bt
        scale = (1.0 + np.hypot(np.linalg.norm(z), np.linalg.norm(bt))
                 + 2 * c * np.hypot(np.linalg.norm(xi), self.mu * np.linalg.norm(eps)))
        return float(np.hypot(np.linalg.norm(g_xi), np.linalg.norm(g_eps))), scale

    def slack_residual(self, gamma, dual):
        """:meth:`slack_stationarity` at the smallest feasible slacks of the margins
        ``gamma``: what the certificate measures at a point given by its margins."""
        return self.slack_stationarity(*self._slacks(gamma), dual)

    def dual_candidates(self, point, sol=None):
        """The one dual point consistent with ``w``: stationarity in the slacks (eq. 14),
        ``zeta = 2c xi``, ``beta = 2c mu eps`` with the smallest feasible slacks."""
        w, b = point
        xi, eps = self._slacks(self.margins(w))
        c = self.c
        yield {"zeta": 2 * c * xi, "beta": 2 * c * self.mu * eps}
