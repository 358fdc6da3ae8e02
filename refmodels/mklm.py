"""MKLm and epsilon-MKL (SPEC §7; seed 003 eqs. 22-26).

Base kernels :math:`K_1,\\dots,K_M` (PSD), feature maps :math:`\\Phi_k`, simplex
:math:`\\Delta`. Primal (eq. 22; jointly convex, :math:`\\|w_k\\|^2/\\mu_k` is a
perspective with :math:`0/0 := 0`):

.. math::

    \\min_{w,b,\\xi,\\eta,\\mu}\\ \\tfrac12\\sum_k\\frac{\\|w_k\\|^2}{\\mu_k}
    + \\frac{C_1}2\\sum_i\\xi_i + \\frac{C_2}2\\sum_i\\eta_i
    \\quad\\text{s.t.}\\quad 1-\\xi_i \\le y_i\\Big(\\sum_k\\langle w_k,\\Phi_k(x_i)\\rangle+b\\Big)
    \\le 1+\\varepsilon+\\eta_i,\\ \\xi,\\eta\\ge0,\\ \\mu\\in\\Delta.

Equivalently (eqs. 23-26) :math:`\\min_{\\mu\\in\\Delta}J(\\mu)`, :math:`J(\\mu)` the SVMm
optimum (SPEC §6) for the kernel :math:`K_\\mu=\\sum_k\\mu_kK_k` with the boxes
:math:`[0,C_1/2]\\times[0,C_2/2]`, :math:`\\partial J/\\partial\\mu_k = -\\tfrac12 v^{\\star\\top}K_kv^\\star`.
Dual, a QCQP:

.. math::

    \\max_{\\alpha,\\beta,t}\\ \\sum_i\\alpha_i-(1+\\varepsilon)\\sum_i\\beta_i - t
    \\quad\\text{s.t.}\\quad \\tfrac12 v^\\top K_k v\\le t\\ \\forall k,\\ e^\\top v = 0,\\
    0\\le\\alpha\\le C_1/2,\\ 0\\le\\beta\\le C_2/2,\\quad v = Y(\\alpha-\\beta).

The multipliers of the quadratic constraints are the kernel weights :math:`\\mu`.
Prediction: :math:`f(x)=\\sum_k\\mu_k\\sum_i\\nu_iK_k(x_i,x)+b` with :math:`\\nu = v`
(at the optimum :math:`w_k = \\mu_k\\sum_i\\nu_i\\Phi_k(x_i)`).

Erratum: eq. 26 repeats :math:`C_1` on the :math:`\\eta` term; it is :math:`C_2`
(``tests/test_mklm.py`` shows the printed version has another optimum).

**Base kernels.** ``kernels`` is a non-empty list whose entries are
:class:`refmodels.kernels.Kernel` objects or names (``"linear"``, ``"rbf"``, ``"poly"``;
evaluated on the shared ``X``), or m x m arrays: precomputed base Gram matrices (checked
symmetric and PSD at construction). ``kernels.Precomputed()`` itself is refused (``X`` is
shared by all base kernels; give the Gram array instead). With only arrays, ``X`` may be
None. For prediction, ``X_new`` is an array of new rows when every base kernel is a
Kernel object, otherwise a list with one entry per base kernel: the new rows for a Kernel
object, the cross-Gram ``K_k(X_new, X_train)`` (n_new x m) for a precomputed one. Every
base Gram must be PSD: Kernel objects are checked when their Gram is first built (solve,
certify), and a violation raises ``ValueError`` naming ``kernels[k]``.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import kernels as _k
from ._numeric import illinois_update, regula_falsi_point
from ._validation import binary_labels, check_vector, check_X, nonnegative, positive
from .base import BinaryProblem, Problem, objective_scale, run_cvxpy, warn_convergence
from .certify import box_violation, complementarity, project_boxes
from .solution import Solution, SolverError
from .svmm import SVMm, intercept_from_kkt_band

#: default relative MKL duality gap at which ``form="simplex"`` stops.
SIMPLEX_GAP_TOL = 1e-9
SIMPLEX_MAX_OUTER = 200


def _check_kernels(kernels):
    """Validate the list of base kernels: Kernel objects / names, or m x m Gram arrays."""
    if isinstance(kernels, (str, _k.Kernel, np.ndarray)) or not hasattr(kernels, "__iter__"):
        raise ValueError("kernels must be a list of base kernels (Kernel objects, names, or "
                         f"m x m Gram arrays); got {type(kernels).__name__}")
    kernels = list(kernels)
    if not kernels:
        raise ValueError("kernels must be a non-empty list of base kernels; got an empty list")
    out = []
    for k, kern in enumerate(kernels):
        name = f"kernels[{k}]"
        if isinstance(kern, (str, _k.Kernel)):
            try:
                kern = _k.make_kernel(kern)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
            if kern.is_precomputed:
                raise ValueError(f"{name} must not be Precomputed(): X is shared by all base "
                                 "kernels; give the m x m Gram array itself as the base kernel")
            out.append(kern)
        else:
            out.append(_k.check_precomputed_gram(kern, name, psd=True))
    return out


def _psd_or_raise(G, name):
    scale = max(1.0, float(np.max(np.abs(G))))
    lam_min = float(np.linalg.eigvalsh(G)[0])
    if lam_min < -1e-8 * scale:
        raise ValueError(f"{name} must be a positive semidefinite kernel: its Gram matrix on X "
                         f"has smallest eigenvalue {lam_min:.3g}")


def _run_with_fallback(build, solver, verbose, opts):
    """``(problem, handle, seconds)``: ``build(True)`` (the better-conditioned form with an
    extra variable) solved by CVXPY, or ``build(False)`` when that raises ``SolverError``;
    ``build`` returns ``(problem, handle)``."""
    try:
        problem, handle = build(True)
        return problem, handle, run_cvxpy(problem, solver, verbose, **opts)
    except SolverError:
        problem, handle = build(False)
        return problem, handle, run_cvxpy(problem, solver, verbose, **opts)


class MKLm(BinaryProblem):
    """MKLm: multiple kernel learning with the SVMm band (SPEC §7, seed 003 eq. 22).

    Parameters
    ----------
    X : array (m, d) or None
        The training points; None when every base kernel is a Gram array.
    y : array (m,)
        Labels, two classes (the larger sorted label is +1).
    kernels : list
        Non-empty list of base kernels (Kernel objects, names, or m x m PSD Grams; see the
        module docstring).
    C1 : float > 0
        The primal carries ``C1/2`` on the margin slacks, as the seed.
    C2 : float >= 0
        ``C2/2`` on the band slacks.
    eps : float >= 0
        Band width.

    Notes
    -----
    The problem always has an intercept. ``solve(form=...)``: ``"primal"`` (eq. 22 with
    ``quad_over_lin``), ``"dual"`` (the QCQP, default) or ``"simplex"`` (reduced gradient on
    ``mu`` with reference SVMm inner solves, eqs. 23-26; for validation).
    """

    family = "MKLm"
    capabilities = frozenset({"base_kernels"})
    has_intercept = True
    dual_names = ("alpha", "beta")
    primal_slack_names = ("xi", "eta")

    def __init__(self, X, y, kernels, C1=1.0, C2=1.0, eps=1.0):
        self.kernels = _check_kernels(kernels)
        self.M = len(self.kernels)
        arrays = [k for k, kern in enumerate(self.kernels) if isinstance(kern, np.ndarray)]
        if X is None:
            if len(arrays) != self.M:
                raise ValueError("X must be given (an (m, d) array) unless every base kernel is "
                                 "an m x m Gram array")
            self.X, self.m = None, self.kernels[0].shape[0]
        else:
            self.X = check_X(X, "X")
            self.m = self.X.shape[0]
        for k in arrays:
            if self.kernels[k].shape != (self.m, self.m):
                raise ValueError(f"kernels[{k}] (a precomputed base Gram) must have shape "
                                 f"({self.m}, {self.m}); got {self.kernels[k].shape}")
        self.kernel = None
        self.y, self.classes_ = binary_labels(y, self.m, "y")
        self.C1 = positive(C1, "C1")
        self.C2 = nonnegative(C2, "C2")
        self.eps = nonnegative(eps, "eps")
        self.fit_intercept = True

    # ---- lazily built data -------------------------------------------------------
    @property
    def grams(self):
        """The base Gram matrices ``K_k`` on the training points (PSD-checked)."""
        def build():
            out = []
            for k, kern in enumerate(self.kernels):
                if isinstance(kern, np.ndarray):
                    G = 0.5 * (kern + kern.T)
                else:
                    G = kern.gram(self.X)
                    if not np.all(np.isfinite(G)):
                        raise ValueError(f"kernels[{k}] gives non-finite values on X")
                    _psd_or_raise(G, f"kernels[{k}]")
                out.append(G)
            return out
        return self._cached("grams", build, on=self.data_key)

    @property
    def data_key(self):
        """The data entries (base Grams, feature maps) are computed from X and the kernels."""
        return (self.X,) + tuple(self.kernels)

    @property
    def feature_maps(self):
        """Empirical maps ``F_k`` with ``F_k F_k^T = K_k`` (``X`` for a linear base kernel)."""
        def build():
            out = []
            for kern, G in zip(self.kernels, self.grams):
                if isinstance(kern, _k.Kernel) and kern.is_linear:
                    out.append(np.asarray(self.X, float))
                else:
                    out.append(_k.empirical_map(G))
            return out
        return self._cached("F_list", build, on=self.data_key)

    @property
    def gram(self):
        raise ValueError("MKLm has one Gram matrix per base kernel: use grams, or "
                         "combined_gram(mu) for K_mu = sum_k mu_k K_k")

    @property
    def F(self):
        raise ValueError("MKLm has one feature map per base kernel: use feature_maps")

    def combined_gram(self, mu):
        """``K_mu = sum_k mu_k K_k``."""
        mu = np.asarray(mu, float)
        return sum(float(mu[k]) * G for k, G in enumerate(self.grams))

    def inner_problem(self, mu):
        """The SVMm (SPEC §6) whose optimum is ``J(mu)``: kernel ``K_mu``, ``C1/2``, ``C2/2``."""
        return SVMm(self.combined_gram(np.maximum(mu, 0.0)), self.y, C1=self.C1 / 2,
                    C2=self.C2 / 2, eps=self.eps, kernel=_k.Precomputed(), fit_intercept=True)

    # ---- values ------------------------------------------------------------------------
    def kernel_quadratics(self, coef):
        """``g_k = 1/2 nu^T K_k nu`` for every base kernel (``-dJ/dmu_k`` at the optimum)."""
        coef = np.asarray(coef, float)
        return np.array([0.5 * float(coef @ G @ coef) for G in self.grams])

    def margins(self, mu, coef, b=0.0):
        """``gamma_i = y_i (sum_k mu_k (K_k nu)_i + b)``."""
        return self.y * (self.combined_gram(mu) @ np.asarray(coef, float) + b)

    def slacks(self, gamma):
        return np.maximum(0.0, 1.0 - gamma), np.maximum(0.0, gamma - 1.0 - self.eps)

    def objective_at_zero(self):
        """The objective at ``f = 0`` (every margin 0, ``eta = 0``): ``C1 m / 2``."""
        xi, eta = self.slacks(np.zeros(self.m))
        return 0.5 * self.C1 * float(np.sum(xi)) + 0.5 * self.C2 * float(np.sum(eta))

    def roundoff_at(self, point, sol=None):
        """``eps (|P0| rho + rho sum|coef|)``, ``rho = max_k K_mu,kk sum_j |coef_j|`` on the
        combined Gram ``K_mu`` (see :meth:`refmodels.base.BinaryProblem.roundoff_at`)."""
        mu, coef = np.asarray(point[0], float), np.asarray(point[1], float)
        c = float(np.sum(np.abs(coef)))
        dmax = float(np.max(np.abs(np.diag(self.combined_gram(np.maximum(mu, 0.0))))))
        rho = dmax * c
        return float(np.finfo(float).eps * (abs(self.objective_at_zero()) * rho + rho * c))

    def primal_value(self, mu, coef, b=0.0):
        """Canonical primal objective (SPEC §7) at ``w_k = mu_k sum_i nu_i Phi_k(x_i)``:
        ``1/2 sum_k mu_k nu^T K_k nu + C1/2 sum xi + C2/2 sum eta`` (smallest slacks)."""
        mu = np.asarray(mu, float)
        xi, eta = self.slacks(self.margins(mu, coef, b))
        return (float(mu @ self.kernel_quadratics(coef)) + 0.5 * self.C1 * float(np.sum(xi))
                + 0.5 * self.C2 * float(np.sum(eta)))

    def dual_value(self, dual):
        """QCQP dual at ``t = max_k 1/2 v^T K_k v``: ``sum alpha - (1+eps) sum beta - t``."""
        a, bt = np.asarray(dual["alpha"], float), np.asarray(dual["beta"], float)
        v = self.y * (a - bt)
        return float(np.sum(a) - (1.0 + self.eps) * np.sum(bt)
                     - np.max(self.kernel_quadratics(v)))

    def feasible_dual(self, dual):
        a, bt = project_boxes(self.y, [(dual["alpha"], self.C1 / 2, 1.0),
                                       (dual["beta"], self.C2 / 2, -1.0)], True)
        return {"alpha": a, "beta": bt}

    def coef_from_dual(self, dual, mu):
        """``nu = Y(alpha - beta)``; ``b`` from the KKT conditions of the SVMm on ``K_mu``."""
        a, bt = np.asarray(dual["alpha"], float), np.asarray(dual["beta"], float)
        coef = self.y * (a - bt)
        f = self.combined_gram(mu) @ coef
        return coef, intercept_from_kkt_band(self.y, f, a, bt, self.C1 / 2, self.C2 / 2, self.eps)

    # ---- solving --------------------------------------------------------------------------
    def solve(self, form="dual", solver="CLARABEL", verbose=False, gap_tol=SIMPLEX_GAP_TOL,
              max_outer=SIMPLEX_MAX_OUTER, **solver_options):
        """Solve SPEC §7; ``form``: ``"primal"`` (eq. 22), ``"dual"`` (QCQP) or ``"simplex"``.

        ``"simplex"`` minimises ``J(mu)`` over the simplex by reduced gradient (SimpleMKL's
        direction, Polak-Ribiere conjugation on a fixed face, exact line search) with
        reference SVMm inner solves, from the uniform weights, and stops when the MKL duality
        gap ``max_k g_k - mu^T g`` (``g_k = 1/2 v^T K_k v``) is at most ``gap_tol (1 + |J|)``,
        or after ``max_outer`` iterations (status ``"max_iter"``, ConvergenceWarning).

        ``"primal"`` and ``"dual"`` solve the conic problems in CVXPY; their optimal value is
        kept in ``info["conic_value"]`` and their kernel weights in ``info["mu_start"]``. Those
        weights are accurate to about 1e-6 only (interior-point accuracy on a second-order
        cone program), which the hinge terms of the canonical objective turn into errors of
        the same order at the point. So the point is *polished*: the same reduced gradient,
        started from the conic ``mu`` (usually zero to two line searches), with exact SVMm
        inner solves; ``max_outer=0`` keeps the conic ``mu`` and only re-solves the SVMm at it.
        ``Solution.objective`` is the canonical primal value at ``(mu, nu, b)`` in every form.
        """
        if form not in ("primal", "dual", "simplex"):
            raise ValueError(f"form must be 'primal', 'dual' or 'simplex'; got {form!r}")
        if not isinstance(solver, str):
            raise ValueError(f"solver must be the name of a CVXPY solver; got {solver!r}")
        solver = solver.upper()
        gap_tol = positive(gap_tol, "gap_tol")
        if isinstance(max_outer, bool) or not isinstance(max_outer, numbers.Integral) \
                or max_outer < 0:
            raise ValueError(f"max_outer must be an integer >= 0; got {max_outer!r}")
        forms = {"primal": self._solve_primal, "dual": self._solve_dual,
                 "simplex": self._solve_simplex}

        def build(f, s, verbose, opts):
            return forms[f](s, verbose, opts, gap_tol, int(max_outer))

        # certified, or refused (base.Problem._certified_solve): the other form is the
        # reduced gradient from the uniform weights ("simplex")
        return self._certified_solve(form, solver, verbose, solver_options, build=build,
                                     other="simplex" if form != "simplex" else "dual")

    def _solve_primal(self, solver, verbose, opts, gap_tol, max_outer):
        """Eq. 22: ``w_k`` in the empirical feature space of ``K_k``; the perspective
        ``||w_k||^2 / mu_k`` is CVXPY's ``quad_over_lin`` (``0/0 = 0``). Then polished
        (see :meth:`solve`)."""
        import cvxpy as cp

        Fs, y, m = self.feature_maps, self.y, self.m

        def build(z_variable):
            mu = cp.Variable(self.M, nonneg=True)
            ws = [cp.Variable(F.shape[1]) for F in Fs]
            b, xi, eta = cp.Variable(), cp.Variable(m, nonneg=True), cp.Variable(m, nonneg=True)
            f = sum(F @ w for F, w in zip(Fs, ws)) + b
            cons = []
            if z_variable:              # decision values as their own variable (better conditioned)
                z = cp.Variable(m)
                cons.append(z == f)
                f = z
            gamma = cp.multiply(y, f)
            cons += [gamma >= 1 - xi, gamma <= 1 + self.eps + eta, cp.sum(mu) == 1]
            objective = (0.5 * sum(cp.quad_over_lin(w, mu[k]) for k, w in enumerate(ws))
                         + self.C1 / 2 * cp.sum(xi) + self.C2 / 2 * cp.sum(eta))
            return cp.Problem(cp.Minimize(objective), cons), mu

        problem, mu, t = _run_with_fallback(build, solver, verbose, opts)
        # the solver's optimal value (CVXPY re-evaluates quad_over_lin(w, 0) as inf at mu_k = 0)
        value = float(problem.solution.opt_val)
        return self._polished(self._check_mu(mu.value, solver), value, solver, "primal", t,
                              verbose, opts, gap_tol, max_outer)

    def _solve_dual(self, solver, verbose, opts, gap_tol, max_outer):
        """The QCQP dual; ``mu_k`` = multiplier of ``1/2 v^T K_k v <= t``. Then polished
        (see :meth:`solve`)."""
        import cvxpy as cp

        y, m = self.y, self.m

        def build(v_variable):
            alpha, t = cp.Variable(m), cp.Variable()
            beta = cp.Variable(m) if self.C2 > 0 else None    # C2 = 0: beta is pinned at 0
            diff = alpha - beta if beta is not None else alpha
            cons = [alpha >= 0, alpha <= self.C1 / 2]
            if beta is not None:
                cons += [beta >= 0, beta <= self.C2 / 2]
            if v_variable:
                v = cp.Variable(m)
                cons.append(v == cp.multiply(y, diff))
            else:
                v = cp.multiply(y, diff)
            quad = [0.5 * cp.sum_squares(F.T @ v) <= t for F in self.feature_maps]
            objective = cp.sum(alpha) - t
            if beta is not None:
                objective = objective - (1.0 + self.eps) * cp.sum(beta)
            return cp.Problem(cp.Maximize(objective), quad + [cp.sum(v) == 0] + cons), quad

        # v as its own variable (v = Y(alpha - beta)) first: with eps = 0 only alpha - beta is
        # determined, and Clarabel often stalls ('optimal_inaccurate') when v is substituted;
        # the substituted form is the fallback.
        problem, quad_cons, el = _run_with_fallback(build, solver, verbose, opts)
        mu = np.array([float(np.sum(c.dual_value)) for c in quad_cons])
        return self._polished(self._check_mu(mu, solver), float(problem.value), solver, "dual",
                              el, verbose, opts, gap_tol, max_outer)

    def _solve_simplex(self, solver, verbose, opts, gap_tol, max_outer):
        """Seed 003 eqs. 23-26: reduced gradient on ``mu`` (SimpleMKL), SVMm inside,
        from the uniform weights."""
        return self._polished(np.full(self.M, 1.0 / self.M), None, solver, "simplex", 0.0,
                              verbose, opts, gap_tol, max_outer)

    def _check_mu(self, mu, solver):
        mu = np.asarray(mu, float)
        if not np.all(np.isfinite(mu)) or np.min(mu) < -1e-6 or abs(mu.sum() - 1.0) > 1e-6:
            raise SolverError(f"reference solver {solver} returned kernel weights off the "
                              f"simplex: mu={mu}")
        mu = np.maximum(mu, 0.0)
        return mu / mu.sum()              # remove solver round-off (checked above)

    def _polished(self, mu0, conic_value, solver, form, elapsed, verbose, opts, gap_tol,
                  max_outer):
        """Run the reduced gradient from ``mu0`` and build the Solution at its end point."""
        import time

        t0 = time.perf_counter()
        mu, J, g, inner, status, it, gap, n_inner = self._reduced_gradient(
            mu0, solver, opts, gap_tol, max_outer, verbose)
        a, bt = inner
        sol = self._mkl_solution(mu, self.y * (a - bt), {"alpha": a, "beta": bt},
                                 solver if form != "simplex" else f"{solver}+reduced-gradient",
                                 form, elapsed + time.perf_counter() - t0)
        sol.status, sol.n_iter = status, it
        sol.info.update({"mkl_gap": gap, "inner_solves": n_inner, "J": J, "mu_start": mu0})
        if conic_value is not None:
            sol.info["conic_value"] = conic_value
        return sol

    def _inner(self, mu, solver, opts):
        """``J(mu)``, ``g`` and the inner SVMm dual point ``(alpha, beta)`` (reference solve)."""
        a, bt = self._inner_dual_point(mu, solver, opts)
        v = self.y * (a - bt)
        g = self.kernel_quadratics(v)
        J = float(np.sum(a) - (1.0 + self.eps) * np.sum(bt) - mu @ g)
        return J, g, (a, bt)

    def _inner_dual_point(self, mu, solver, opts):
        """``(alpha, beta)``: the inner SVMm's dual point, as :meth:`SVMm.dual_point` of
        :meth:`inner_problem` gives it (SPEC §6 eq. 15 on ``K_mu``, boxes ``C1/2``, ``C2/2``,
        then its active-set polish), with the CVXPY problem built once per MKLm and ``mu`` a
        parameter (DPP): CVXPY canonicalises it on the first solve and afterwards only puts
        the new ``mu`` in (the reduced gradient solves it 4 to 20 times per ``solve``). Its
        quadratic ``1/2 v^T K_mu v`` is written ``sum_k mu_k 1/2 v^T K_k v``, the same QP.
        """
        import cvxpy as cp

        from .base import quad

        def build():
            mu_par = cp.Parameter(self.M, nonneg=True)
            problem, alpha, beta, cons = self.inner_problem(np.ones(self.M)).dual_problem(
                lambda v: 0.5 * sum(mu_par[k] * quad(v, G) for k, G in enumerate(self.grams)))
            return problem, mu_par, alpha, beta, cons[4]
        problem, mu_par, alpha, beta, balance = self._cached("inner_dpp", build)
        mu = np.maximum(np.asarray(mu, float), 0.0)
        mu_par.value = mu
        run_cvxpy(problem, solver, False, **opts)
        # the multiplier of e^T v = 0 is the intercept (SVMm.dual_point)
        a, bt, _, _ = self.inner_problem(mu).polish_dual(alpha.value, beta.value,
                                                         float(balance.dual_value))
        return a, bt

    def _reduced_gradient(self, mu, solver, opts, gap_tol, max_outer, verbose):
        """SimpleMKL's reduced gradient on ``J(mu)`` (seed 003 after eq. 26), from ``mu``.

        Direction: ``grad J = -g``; with the reference coordinate the largest ``mu_k``,
        ``d_k = g_k - g_ref`` for ``mu_k > 0`` or ``g_k > g_ref``, else 0, and
        ``d_ref = -sum d_k``; Polak-Ribiere conjugation while the face is unchanged; exact
        line search. Stops when ``max_k g_k - mu^T g <= gap_tol (1 + |J|)``.
        """
        n_inner = [0]

        def evaluate(x):
            n_inner[0] += 1
            return self._inner(x, solver, opts)

        def done(x, J, g):
            return float(np.max(g) - x @ g) <= gap_tol * (1.0 + abs(J))

        J, g, inner = evaluate(mu)
        d_prev = r_prev = ref_prev = None
        status, it = "max_iter", 0
        gap = float(np.max(g) - mu @ g)
        while True:
            gap = float(np.max(g) - mu @ g)
            if verbose:
                print(f"[MKLm reduced gradient] it={it} J={J:.12g} gap={gap:.3e} mu={mu}")
            if gap <= gap_tol * (1.0 + abs(J)):
                status = "optimal"
                break
            if it >= max_outer:
                break
            it += 1
            ref = int(np.argmax(mu))
            r = g - g[ref]
            d = np.where((mu > 0) | (r > 0), r, 0.0)
            d[ref] = 0.0
            d[ref] = -np.sum(d)
            d_rg = d
            if d_prev is not None and ref == ref_prev and np.array_equal(r_prev != 0, d != 0):
                beta_pr = max(0.0, float(d @ (d - r_prev)) / max(float(r_prev @ r_prev), 1e-300))
                dc = d + beta_pr * d_prev
                if -(g @ dc) < 0 and not np.any(dc[mu <= 0] < 0):
                    d = dc
            mu, J, g, inner, hit = self._line_search(mu, d, J, g, inner, evaluate, done)
            if hit is None:                  # no progress possible at this precision
                status = "stalled"
                break
            d_prev, r_prev, ref_prev = (None, None, None) if hit else (d, d_rg, ref)
        if status != "optimal":
            warn_convergence(f"MKLm reduced gradient stopped ({status}) after {it} iterations "
                             f"with MKL duality gap {gap:.3g} (asked {gap_tol:g} relative)")
        return mu, J, g, inner, status, it, gap, n_inner[0]

    @staticmethod
    def _line_search(mu, d, J0, g0, inner0, evaluate, done, max_evals=40):
        """Exact line search of the convex ``phi(s) = J(mu + s d)`` on ``[0, s_max]``
        (``phi'(s) = -g(mu + s d)^T d``): the boundary if ``phi'(s_max) <= 0``, else the root
        of ``phi'`` by the Illinois method. Returns the best point evaluated."""
        neg = d < 0
        s_max = float(np.min(mu[neg] / -d[neg]))
        block = np.flatnonzero(neg)[np.argmin(mu[neg] / -d[neg])]

        def point(s):
            x = mu + s * d
            if s == s_max:
                x[block] = 0.0
            x = np.maximum(x, 0.0)
            return x / x.sum()

        dphi0 = -float(g0 @ d)
        mu1 = point(s_max)
        J1, g1, in1 = evaluate(mu1)
        dphi1 = -float(g1 @ d)
        if dphi1 <= 0:
            return mu1, J1, g1, in1, True
        # phi convex: the minimiser is the root of phi' in (0, s_max). J is flat there (its
        # differences fall below round-off), so the iterate kept is the one with smallest |phi'|.
        best = (abs(dphi1), mu1, J1, g1, in1)
        lo, hi, f_lo, f_hi, side = 0.0, s_max, dphi0, dphi1, 0
        for _ in range(max_evals):
            s = regula_falsi_point(lo, hi, f_lo, f_hi)
            x = point(s)
            Js, gs, ins = evaluate(x)
            fs = -float(gs @ d)
            if abs(fs) < best[0]:
                best = (abs(fs), x, Js, gs, ins)
            if done(x, Js, gs):
                return x, Js, gs, ins, False
            if abs(fs) <= 1e-6 * abs(dphi0) or (hi - lo) <= 1e-14 * s_max:
                break
            lo, hi, f_lo, f_hi, side = illinois_update(s, fs, lo, hi, f_lo, f_hi, side, True)
        if best[0] >= abs(dphi0):
            return mu, J0, g0, inner0, None
        return best[1], best[2], best[3], best[4], False

    def _mkl_solution(self, mu, coef, variables, solver, form, elapsed):
        mu, coef = np.asarray(mu, float), np.asarray(coef, float)
        variables = {k: np.asarray(v, float) for k, v in variables.items()}
        # b exactly from the KKT conditions at (mu, nu): the canonical objective is linear in
        # the error of b, so a solver's b (a variable or a multiplier) is not used as is.
        b = intercept_from_kkt_band(self.y, self.combined_gram(mu) @ coef, variables["alpha"],
                                    variables["beta"], self.C1 / 2, self.C2 / 2, self.eps)
        variables["mu"] = mu
        variables["b"] = float(b)
        return Solution(objective=self.primal_value(mu, coef, b), coef=coef, intercept=float(b),
                        variables=variables, status="optimal", solver=solver, form=form,
                        time=elapsed)

    # ---- predictions --------------------------------------------------------------------
    def cross_grams(self, X_new):
        """``[K_k(X_train, X_new)]`` (each m x n_new); see the module docstring for ``X_new``."""
        if isinstance(X_new, (list, tuple)):
            if len(X_new) != self.M:
                raise ValueError(f"X_new must be a list of {self.M} entries (one per base "
                                 f"kernel); got {len(X_new)}")
            entries = list(X_new)
        else:
            if any(isinstance(kern, np.ndarray) for kern in self.kernels):
                raise ValueError("X_new must be a list with one entry per base kernel (the "
                                 "cross-Gram K_k(X_new, X_train) for a precomputed base Gram)")
            entries = [X_new] * self.M
        out = []
        for k, (kern, Z) in enumerate(zip(self.kernels, entries)):
            name = f"X_new[{k}]" if isinstance(X_new, (list, tuple)) else "X_new"
            Z = check_X(Z, name)
            if isinstance(kern, np.ndarray):
                if Z.shape[1] != self.m:
                    raise ValueError(f"{name} must be K_{k}(X_new, X_train) with {self.m} "
                                     f"columns; got shape {Z.shape}")
                out.append(Z.T)
            else:
                if Z.shape[1] != self.X.shape[1]:
                    raise ValueError(f"{name} must have {self.X.shape[1]} features (as X); "
                                     f"got {Z.shape[1]}")
                out.append(kern.cross(self.X, Z))
        return out

    def kernel_to(self, X_new):
        raise ValueError("MKLm has one kernel per base kernel: use cross_grams(X_new)")

    def decision_function(self, sol, X_new):
        """``f(x) = sum_k mu_k sum_i nu_i K_k(x_i, x) + b``."""
        mu, coef, b = self._point(sol)
        return sum(mu[k] * (K.T @ coef) for k, K in enumerate(self.cross_grams(X_new))) + b

    # ---- user points and the certificate ------------------------------------------------------
    def _point(self, sol):
        mu = sol.variables.get("mu")
        if mu is None or np.shape(mu) != (self.M,):
            raise ValueError(f"sol must carry variables['mu'] of shape ({self.M},)")
        if sol.coef is None or np.shape(sol.coef) != (self.m,):
            raise ValueError(f"sol must carry coef of shape ({self.m},)")
        return np.asarray(mu, float), np.asarray(sol.coef, float), float(sol.intercept)

    def solution_from(self, mu=None, coef=None, intercept=None, dual=None, **primal):
        """A :class:`Solution` from a user's own arrays, ready for :meth:`certify`: ``mu``
        (kernel weights (M,), required), ``coef`` (nu) and ``intercept``, and/or ``dual={"alpha":
        ..., "beta": ...}`` (alone: ``nu = Y(alpha - beta)``, ``b`` from the KKT conditions on
        ``K_mu``); slacks ``xi=``, ``eta=`` (else the smallest feasible ones)."""
        if mu is None:
            raise ValueError("mu (kernel weights, one per base kernel) must be given")
        mu = check_vector(mu, self.M, "mu")
        variables = {"mu": mu}
        if coef is not None:
            coef = check_vector(coef, self.m, "coef")
        if intercept is not None:
            intercept = float(check_vector([intercept], 1, "intercept")[0])
        if dual is not None:
            if not isinstance(dual, dict):
                raise ValueError("dual must be a dict {'alpha': ..., 'beta': ...}")
            if set(dual) != set(self.dual_names):
                raise ValueError(f"dual must have exactly the keys {list(self.dual_names)}; got "
                                 f"{sorted(dual)}")
            for k in self.dual_names:
                variables[k] = check_vector(dual[k], self.m, f"dual[{k!r}]")
        for k, v in primal.items():
            if k not in self.primal_slack_names:
                raise ValueError(f"unknown argument {k!r}; primal slacks are "
                                 f"{list(self.primal_slack_names)}")
            variables[k] = check_vector(v, self.m, k)
        if coef is None:
            if dual is None:
                raise ValueError("give coef (and intercept) or dual")
            coef, b_dual = self.coef_from_dual(variables, np.maximum(mu, 0.0))
            if intercept is None:
                intercept = b_dual
        intercept = 0.0 if intercept is None else intercept
        variables["b"] = intercept
        return Solution(objective=self.primal_value(mu, coef, intercept), coef=coef,
                        intercept=intercept, variables=variables, status="user",
                        solver="user", form="user")

    def kkt_residuals(self, point, dual, sol=None):
        """KKT residuals of ``(mu, nu, b)`` with ``(alpha, beta)`` (without the gaps)."""
        mu, coef, b = point
        a, bt = np.asarray(dual["alpha"], float), np.asarray(dual["beta"], float)
        C1h, C2h = self.C1 / 2, self.C2 / 2
        gamma = self.margins(mu, coef, b)
        xi, eta = self.slacks(gamma)
        if sol is not None and np.shape(sol.variables.get("xi")) == (self.m,):
            xi = np.asarray(sol.variables["xi"], float)
        if sol is not None and np.shape(sol.variables.get("eta")) == (self.m,):
            eta = np.asarray(sol.variables["eta"], float)
        simplex = max(abs(float(np.sum(mu)) - 1.0), float(np.max(np.maximum(-mu, 0.0))))
        primal_feas = max(simplex, self._slack_violation(gamma, sol, "xi", 1.0),
                          self._slack_violation(gamma, sol, "eta", 1.0 + self.eps, upper=True))
        dual_feas = max(box_violation(a, 0.0, C1h), box_violation(bt, 0.0, C2h),
                        abs(float(self.y @ (a - bt))))
        P = self.primal_value(mu, coef, b)
        comp = max(complementarity(a, gamma - 1.0 + xi), complementarity(C1h - a, xi),
                   complementarity(bt, 1.0 + self.eps + eta - gamma),
                   complementarity(C2h - bt, eta))
        # stationarity in w_k / mu_k = F_k^T v, measured in the metric of K_mu
        Kmu = self.combined_gram(np.maximum(mu, 0.0))
        v = self.y * (a - bt)

        def knorm(u):
            return float(np.sqrt(max(u @ Kmu @ u, 0.0)))

        return {
            "primal feasibility": (primal_feas, 1.0 + np.max(np.abs(gamma))),
            "dual feasibility": (dual_feas, 1.0 + max(C1h, C2h)),
            "complementarity": (comp, objective_scale(self, P, sol)),
            "stationarity": (knorm(coef - v), 1.0 + knorm(coef) + knorm(v)),
        }

    def dual_candidates(self, point, sol=None):
        """Duals derived for the SVMm on ``K_mu`` (boxes C1/2, C2/2), as SVMm does."""
        mu, coef, b = point
        inner = self.inner_problem(mu)
        yield from inner.dual_candidates((inner.w_from_coef(coef), b))

    # ---- the certificate: base.Problem.certify with MKLm's point (mu, nu, b) ----------
    derived_dual_note = "derived from the margins on K_mu (ties by bounded least squares)"

    def primal_point(self, sol):
        """``(mu, coef, b)``. The certificate (:meth:`refmodels.base.Problem.certify`): primal
        feasibility includes ``mu`` on the simplex; dual feasibility the boxes ``[0, C1/2]``,
        ``[0, C2/2]`` and ``e^T v = 0``; complementarity and stationarity are those of the
        SVMm on ``K_mu``. The duality gap is the MKL gap ``P(mu, nu, b) - D(alpha, beta)``
        with ``D`` the QCQP dual at ``t = max_k 1/2 v^T K_k v``: it certifies ``mu`` too (it
        is the inner SVMm gap plus ``max_k g_k - mu^T g``). Without duals in ``sol`` they are
        derived from the margins on ``K_mu``, the best of several tie thresholds."""
        return self._point(sol)

    def _check_solution(self, sol):
        Problem._check_solution(self, sol)
        for k in self.dual_names:
            if sol.variables.get(k) is not None:
                check_vector(sol.variables[k], self.m, f"sol.variables[{k!r}]")

    def _certificate_extras(self, cert, sol, point):
        cert.values["mu"] = point[0]


class EpsMKL(MKLm):
    """epsilon-MKL (seed 003, after eq. 22): MKLm with ``eps = 0`` (SPEC §7)."""

    family = "EpsMKL"

    def __init__(self, X, y, kernels, C1=1.0, C2=1.0):
        super().__init__(X, y, kernels, C1=C1, C2=C2, eps=0.0)
