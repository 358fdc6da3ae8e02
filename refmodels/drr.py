"""Discriminative ridge regression (DRR) and the discriminative ridge machine (DRM)
(SPEC §8; seed 004 eqs. 3, 8, 10–13).

Training points are grouped by class :math:`c = 1..g` (sizes :math:`n_c`); every test
point :math:`x` gets its own coefficient vector :math:`w \\in \\mathbb R^m` over the
training points. With :math:`K` the Gram matrix, :math:`H = \\mathrm{diag}(\\kappa(x_i,x_i))`,
:math:`B_{ij} = K_{ij}/n_c` when :math:`y_i = y_j = c` (0 otherwise; the block diagonal
:math:`\\mathrm{blockdiag}(K^c/n_c)` of seed 004 in the original sample order) and
:math:`K_x = [\\kappa(x_i, x)]_i`, DRR (seed 004 eq. 8) is

.. math::

    \\min_w\\ \\tfrac12 w^\\top Q_D w - K_x^\\top w + \\beta\\,\\rho(\\|w|C\\|_{q,r}),
    \\qquad Q_D = K + \\alpha(H - B),

(the constant :math:`\\tfrac12\\kappa(x,x)` omitted, as in SPEC). :math:`H - B \\succeq 0`
(seed 004 Prop. IV.1), so :math:`Q_D \\succeq 0` and the problem is convex for
:math:`q, r \\ge 1` and :math:`\\rho` convex nondecreasing. DRM (eqs. 12–13) is
:math:`q = r = 2`, :math:`\\rho = \\tfrac12t^2`:
:math:`w^\\star = (K + \\alpha H - \\alpha B + \\beta I)^{-1} K_x`.

Fenchel dual (SPEC §8), with :math:`Q_D = LL^\\top` (empirical map of :math:`Q_D`):

.. math::

    \\max_z\\ -\\tfrac12\\|z\\|^2 - \\beta R^*\\big((K_x - Lz)/\\beta\\big),
    \\qquad R^*(u) = \\rho^*(\\|u|C\\|_{q^*,r^*}),

and :math:`z^\\star = L^\\top w^\\star`.

Decision (eqs. 10–11): :math:`\\delta_c = w_c^\\top K w_c + w_{\\bar c}^\\top K w_{\\bar c}
- 2 w_c^\\top K_x` with :math:`w_c` the restriction of :math:`w` to class :math:`c`;
predict :math:`\\arg\\min_c \\delta_c`.
"""
from __future__ import annotations


import numpy as np
from scipy.linalg import cho_factor, cho_solve

from . import kernels as _k
from ._drr_refine import ProxGradientRefine
from ._validation import check_prox, multiclass_labels, nonnegative, positive
from .base import CLARABEL_LADDER, AUTO_REFERENCE_MAX_M, Problem, run_cvxpy
from .certify import DEFAULT_TOL, Certificate
from . import regularizers as _reg
from .regularizers import GroupNorm, Regularizer
from .solution import Solution, SolverError
from .workspace import using as _using

_DEFAULT_QRRHO = (2, 2, "half_square")

def _run(problem, solver, verbose, opts):
    """One reference solve of a test point. The parametrised problem is re-solved for every
    test point; ``warm_start=False`` makes CVXPY start the solver afresh each time (re-using
    Clarabel's previous state was observed to end in 'optimal_inaccurate' on instances a
    fresh solve handles)."""
    opts = dict(opts)
    opts.setdefault("warm_start", False)
    # a prox-gradient residual is first-order in the distance to the optimum: the
    # reference point goes down the one tolerance ladder from its medium level (1e-10:
    # enough here, and the tight level costs Clarabel many more iterations per test point)
    return run_cvxpy(problem, solver, verbose, ladder=CLARABEL_LADDER[1:], **opts)


class DRR(ProxGradientRefine, Problem):
    """Discriminative ridge regression, one problem per test point (SPEC §8, seed 004 eq. 8).

    .. math::

        \\min_w\\ \\tfrac12 w^\\top (K + \\alpha H - \\alpha B) w - K_x^\\top w
        + \\beta\\,\\rho(\\|w|C\\|_{q,r})

    Parameters
    ----------
    X : array (m, d)
        The training points, or the m x m training Gram with ``kernel=Precomputed()``.
    y : array (m,)
        Labels, any ``g >= 2`` classes; the groups ``C`` of the regularizer are the classes.
        A class may have a single member (its block of ``H - B`` is then 0; nothing breaks).
    X_test : array (n_test, d)
        The test points, or ``K(X_test, X_train)`` of shape (n_test, m) with
        ``kernel=Precomputed()``. The test points are fixed in the problem: one ``w`` per
        test point (``Solution.coef`` has shape (m, n_test)).
    alpha : float >= 0
        Weight of the within-class scatter ``S_w(w) = 1/2 w^T (H - B) w``.
    beta : float > 0
        Weight of the regularizer. Seed 004 Alg. 1 takes ``beta > 0``; at ``beta = 0`` the
        problem has no regularizer, its minimiser is not unique when ``Q_D`` is singular
        and the dual of SPEC §8 divides by ``beta``, so 0 is refused.
    q, r : float in [1, inf]
        Exponents of the group norm (``q < 1`` / ``r < 1`` refused: non-convex).
    rho : ``"identity"``, ``"half_square"`` or a number ``p >= 1``
        The function ρ of the regularizer (``p``: ``t^p/p``).
    kernel : Kernel or name, default linear
    regularizer : Regularizer, optional
        A :class:`refmodels.regularizers.Regularizer` used instead of
        ``GroupNorm(q, r, rho)`` (then leave ``q, r, rho`` at their defaults). It is checked
        (:func:`refmodels.regularizers.verdict`, once per regularizer object) at the first
        solve or certificate: one that is not the convex function it states is refused
        (``ValueError`` naming the failed check), and a ``prox`` or conjugate that fails its
        check is not used as evidence of optimality.

    Notes
    -----
    Solving. ``solve(form="primal")`` (default) states eq. 8 in CVXPY through
    ``regularizer.expr`` with ``1/2 w^T Q_D w = 1/2 ||L^T w||^2``; ``form="dual"`` the Fenchel
    dual (needs ``regularizer.conjugate_expr``), with ``w`` recovered as the multiplier of
    the constraint ``u = K_x - L z`` (at the optimum ``u in beta dR(w)``, ``z = L^T w``);
    ``form="closed_form"`` eq. 13 by Cholesky (only for ``q = r = 2``, ``rho = t^2/2``).
    Test points are solved one after the other with one parametrised (DPP) CVXPY problem
    whose parameter is ``K_x``: it is canonicalised once; memory is that of one problem
    (``O(m r)`` for ``L``), time grows linearly with ``n_test``.

    ``Solution.objective`` is an array: eq. 8 (without ``1/2 k(x, x)``) at each test
    point's ``w``. ``Solution.variables``: ``W`` (m x n_test) and, for the dual form, ``z``
    (r x n_test).
    """

    family = "DRR"
    capabilities = frozenset({"test_points"})
    dual_names = ("z",)

    def __init__(self, X, y, X_test, alpha, beta, q=2, r=2, rho="half_square", kernel=None,
                 regularizer=None):
        super().__init__(X, kernel)
        self.y, self.classes_ = multiclass_labels(y, self.m, "y")
        self.groups = [np.flatnonzero(self.y == c) for c in range(self.classes_.size)]
        self.alpha = nonnegative(alpha, "alpha")
        self.beta = positive(beta, "beta")
        if regularizer is None:
            self.regularizer = GroupNorm(q, r, rho)
        else:
            if not isinstance(regularizer, Regularizer):
                raise ValueError("regularizer must be a refmodels.regularizers.Regularizer; got "
                                 f"{type(regularizer).__name__}")
            if _differs((q, r, rho), _DEFAULT_QRRHO):
                raise ValueError("give either (q, r, rho) or regularizer, not both")
            self.regularizer = regularizer
        reg = self.regularizer
        if isinstance(reg, GroupNorm):
            self.q, self.r, self.rho = reg.q, reg.r, reg.rho
        else:
            self.q = self.r = self.rho = None
        self.X_test = self._check_X_test(X_test)
        self.n_test = self.X_test.shape[0]


    def replace(self, **changes):
        """A new problem on the same data with some hyperparameters changed (see
        :meth:`refmodels.base.Problem.replace`): the labels as given (``classes_[y]``); the
        regularizer object itself unless ``q``, ``r``, ``rho`` or ``regularizer`` change
        (then the others of ``q``, ``r``, ``rho`` are kept)."""
        import inspect

        params = list(inspect.signature(type(self).__init__).parameters)[1:]
        kwargs = {"X": self.X, "y": self._labels_as_given(), "X_test": self.X_test,
                  "alpha": self.alpha, "beta": self.beta, "kernel": self.kernel}
        shape = {"q", "r", "rho"} & set(changes)
        if "regularizer" in params and not shape and "regularizer" not in changes:
            kwargs["regularizer"] = self.regularizer
        elif shape and self.q is not None:
            kwargs.update(q=self.q, r=self.r, rho=self.rho)
        kwargs.update(changes)
        unknown = sorted(set(kwargs) - set(params))
        if unknown:
            raise ValueError(f"{type(self).__name__} has no hyperparameter(s) {unknown}")
        return type(self)(**kwargs)
    def _check_X_test(self, X_test):
        return self._check_points(X_test, "X_test")

    # ---- the matrices of seed 004 (built on first use) -----------------------------------
    @property
    def K(self):
        """Gram matrix of the training points."""
        return self.gram

    @property
    def H(self):
        """``H = diag(k(x_i, x_i))`` (seed 004 eq. 5)."""
        return self._cached("H", lambda: np.diag(np.diag(self.gram).copy()))

    @property
    def B(self):
        """``B = blockdiag(K^c / n_c)`` in the original sample order (seed 004 eq. 6)."""
        def build():
            K, B = self.gram, np.zeros_like(self.gram)
            for g in self.groups:
                B[np.ix_(g, g)] = K[np.ix_(g, g)] / g.size
            return B
        return self._cached("B", build)

    @property
    def Q_D(self):
        """``Q_D = K + alpha (H - B)`` (PSD by Prop. IV.1)."""
        def build():
            Q = self.gram + self.alpha * (self.H - self.B)
            return 0.5 * (Q + Q.T)
        return self._cached("Q_D", build)

    @property
    def L(self):
        """Empirical map of ``Q_D``: ``L L^T = Q_D`` (SPEC notation; m x r)."""
        return self._cached("L", lambda: _k.empirical_map(self.Q_D))

    @property
    def K_x(self):
        """``K_x`` of every test point, as columns: ``K_x[i, j] = k(x_i, x_test_j)`` (m x n_test)."""
        return self._cached("K_x", lambda: np.asarray(self.kernel.cross(self.X, self.X_test),
                                                      dtype=float),
                            on=self.data_key + (self.X_test,))

    @property
    def sigma_max(self):
        """Largest eigenvalue of ``Q_D`` (Lipschitz constant of the smooth part's gradient)."""
        return self._cached("sigma_max", lambda: float(np.linalg.eigvalsh(self.Q_D)[-1]))

    @property
    def has_closed_form(self):
        """True when the regularizer is DRM's ``1/2 ||w||_2^2`` (eqs. 12–13 apply)."""
        reg = self.regularizer
        return (isinstance(reg, GroupNorm) and reg.p == 2 and reg.q == 2
                and (reg.r == 2 or len(self.groups) == 1))

    # ---- objective, dual, gradient -----------------------------------------------------------
    def _check_W(self, W, name="W"):
        try:
            W = np.asarray(W, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be a numeric array: {exc}") from None
        if W.ndim == 1 and self.n_test == 1:
            W = W[:, None]
        if W.shape != (self.m, self.n_test):
            raise ValueError(f"{name} must have shape (n_train, n_test) = ({self.m}, "
                             f"{self.n_test}); got {W.shape}")
        if not np.all(np.isfinite(W)):
            raise ValueError(f"{name} must contain only finite values")
        return W

    def primal_value(self, W):
        """Eq. 8 (without ``1/2 k(x,x)``) for every column of ``W``: an array (n_test,)."""
        W = self._check_W(W)
        quad = 0.5 * np.einsum("ij,ij->j", W, self.Q_D @ W)
        lin = np.einsum("ij,ij->j", self.K_x, W)
        R = np.array([self.regularizer.value(W[:, j], self.groups) for j in range(self.n_test)],
                     dtype=float)
        return quad - lin + self.beta * R

    def gradient(self, W):
        """Gradient of the smooth part: ``Q_D W - K_x``."""
        return self.Q_D @ self._check_W(W) - self.K_x

    def _dual_value_col(self, z, j):
        u = (self.K_x[:, j] - self.L @ z) / self.beta
        return float(-0.5 * z @ z - self.beta * self.regularizer.conjugate(u, self.groups))

    def dual_value(self, Z):
        """SPEC §8's dual ``-1/2||z||^2 - beta R*((K_x - L z)/beta)`` per column of ``Z`` (r x n_test).

        ``-inf`` where ``z`` is dual infeasible (an indicator conjugate). Needs
        ``regularizer.conjugate``.
        """
        Z = np.asarray(Z, float)
        if Z.ndim == 1 and self.n_test == 1:
            Z = Z[:, None]
        if Z.shape != (self.L.shape[1], self.n_test):
            raise ValueError(f"Z must have shape (r, n_test) = ({self.L.shape[1]}, {self.n_test});"
                             f" got {Z.shape}")
        return np.array([self._dual_value_col(Z[:, j], j) for j in range(self.n_test)])

    # ---- solving ----------------------------------------------------------------------------
    def solve(self, form="primal", solver="CLARABEL", verbose=False, **solver_options):
        """Solve every test point: ``form`` ``"primal"`` (eq. 8 in CVXPY), ``"dual"`` (SPEC §8's
        Fenchel dual in CVXPY) or ``"closed_form"`` (eq. 13 by Cholesky; DRM only).

        The reference never says ``optimal`` for a point that fails its own certificate:
        the point is certified (``certify(reference=False)``) and, if it fails, solved again
        down the one ladder of :meth:`Problem._certified_solve` (tight Clarabel, the other
        form when the regularizer has a CVXPY conjugate, OSQP where it applies).

        Raises :class:`refmodels.SolverError` unless a point certifies.
        """
        if form not in ("primal", "dual", "closed_form"):
            raise ValueError(f"form must be 'primal', 'dual' or 'closed_form'; got {form!r}")
        _reg.require_usable(self.regularizer)
        if form == "closed_form":
            return self.closed_form()
        if not isinstance(solver, str):
            raise ValueError(f"solver must be the name of a CVXPY solver; got {solver!r}")
        # the other form of the ladder: the dual needs the regularizer's CVXPY conjugate
        other = "dual" if form == "primal" and self.regularizer.has_conjugate_expr else "primal"

        def build(f, s, verbose, opts):
            return (self._solve_primal if f == "primal" else self._solve_dual)(s, verbose, opts)
        return self._certified_solve(form, solver.upper(), verbose, solver_options,
                                     build=build, other=other)

    def _solve_primal(self, solver, verbose, opts):
        """Seed 004 eq. 8, ``1/2 w^T Q_D w`` written ``1/2 ||L^T w||^2``; one DPP problem, K_x a parameter.

        If the solver does not reach 'optimal' on a test point and the regularizer is a
        :class:`GroupNorm` with p-norms or powers, that point is solved again with the
        power-cone form of its expression (``GroupNorm.power_cones``).
        """
        W, elapsed = np.zeros((self.m, self.n_test)), 0.0
        build = lambda reg: self._primal_problem(reg)
        problem, w, kx = build(self.regularizer)
        alt = None
        from . import _progress

        bar = _progress.bar(total=self.n_test, unit="test point",
                            desc=f"DRR reference (CVXPY), m={self.m}",
                            enabled=self.m * self.n_test > 50 * _progress.REFERENCE_BAR_M)
        for j in range(self.n_test):
            bar.update(1)
            kx.value = self.K_x[:, j]
            try:
                elapsed += _run(problem, solver, verbose, opts)
                W[:, j] = self._refine(np.asarray(w.value, float), j)
            except SolverError:
                reg = self.regularizer
                if not (isinstance(reg, GroupNorm) and not reg.power_cones):
                    raise
                if alt is None:
                    alt = build(reg.with_power_cones())
                alt[2].value = self.K_x[:, j]
                elapsed += _run(alt[0], solver, verbose, opts)
                W[:, j] = self._refine(np.asarray(alt[1].value, float), j)
        bar.close()
        return self._solution(W, None, solver, "primal", elapsed)

    def _primal_problem(self, reg):
        import cvxpy as cp

        w, kx = cp.Variable(self.m), cp.Parameter(self.m)
        Rw = reg.expr(w, self.groups)
        if not (Rw.is_dcp() and Rw.is_convex()):
            raise ValueError("regularizer.expr must return a convex (DCP) CVXPY expression")
        problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(self.L.T @ w) - kx @ w
                                         + self.beta * Rw))
        return problem, w, kx

    def _solve_dual(self, solver, verbose, opts):
        """SPEC §8: ``max_z -1/2||z||^2 - beta R*(u/beta)`` s.t. ``u = K_x - L z``.

        ``w`` is the multiplier of the equality ``u = K_x - L z``: the Lagrangian's
        stationarity in ``z`` gives ``z = L^T w`` and in ``u`` gives ``u / beta in dR(w)``,
        which together are eq. 8's optimality condition ``K_x - Q_D w in beta dR(w)``.
        """
        reg = self.regularizer
        if not reg.has_conjugate_expr:
            raise ValueError(f"form='dual' needs regularizer.conjugate_expr (the CVXPY "
                             f"expression of R*); {type(reg).__name__} has none: use "
                             "form='primal'")
        L = self.L
        W, Z, elapsed = np.zeros((self.m, self.n_test)), np.zeros((L.shape[1], self.n_test)), 0.0
        main, alt = self._dual_problem(reg), None
        for j in range(self.n_test):
            try:
                elapsed += self._dual_point(main, j, solver, verbose, opts, W, Z)
            except SolverError:       # retry with power cones, as in the primal
                if not (isinstance(reg, GroupNorm) and not reg.power_cones):
                    raise
                if alt is None:
                    alt = self._dual_problem(reg.with_power_cones())
                elapsed += self._dual_point(alt, j, solver, verbose, opts, W, Z)
        sol = self._solution(W, Z, solver, "dual", elapsed)
        if reg.has_conjugate:
            sol.info["dual_objective"] = self.dual_value(Z)
        return sol

    def _dual_problem(self, reg):
        import cvxpy as cp

        L = self.L
        z, u, kx = cp.Variable(L.shape[1]), cp.Variable(self.m), cp.Parameter(self.m)
        conj, cons = reg.conjugate_expr(u / self.beta, self.groups)
        link = u == kx - L @ z
        problem = cp.Problem(cp.Maximize(-0.5 * cp.sum_squares(z) - self.beta * conj),
                             [link, *cons])
        return problem, z, kx, link

    def _dual_point(self, built, j, solver, verbose, opts, W, Z):
        problem, z, kx, link = built
        kx.value = self.K_x[:, j]
        elapsed = _run(problem, solver, verbose, opts)
        Z[:, j] = z.value
        # CVXPY's multiplier of ``u == kx - L z`` in this maximisation is ``-w`` (checked:
        # with it, z = L^T w and the primal and dual objectives agree).
        W[:, j] = -np.asarray(link.dual_value, float)
        return elapsed

    def closed_form(self):
        """DRM, seed 004 eq. 13: ``W = (K + alpha H - alpha B + beta I)^{-1} K_x`` (Cholesky).

        Only for ``q = r = 2``, ``rho = t^2/2`` (``R(w) = 1/2 ||w||^2``).
        """
        if not self.has_closed_form:
            raise ValueError("the closed form (seed 004 eq. 13) needs q = r = 2 and "
                             f"rho = 'half_square' (DRM); this problem has {self.regularizer!r}")
        import time

        t0 = time.perf_counter()
        A = self.Q_D + self.beta * np.eye(self.m)
        W = cho_solve(cho_factor(A, lower=True), self.K_x)
        return self._solution(W, None, "cholesky", "closed_form", time.perf_counter() - t0)

    def _solution(self, W, Z, solver, form, elapsed, status="optimal"):
        W = np.asarray(W, float)
        variables = {"W": W}
        if Z is not None:
            variables["z"] = np.asarray(Z, float)
        return Solution(objective=self.primal_value(W), coef=W, intercept=0.0,
                        variables=variables, status=status, solver=solver, form=form,
                        time=elapsed)

    def reference_solution(self):
        """The reference optimum, cached: eq. 13 for DRM, otherwise the CVXPY primal."""
        return self._cached("reference", lambda: self.closed_form() if self.has_closed_form
                            else self.solve(form="primal"))

    # ---- a user's point ------------------------------------------------------------------------
    def solution_from(self, coef=None, W=None, dual=None):
        """A :class:`Solution` from a user's ``coef`` (= ``W``, shape (m, n_test)), ready for
        :meth:`certify`; optionally ``dual={"z": Z}`` (shape (r, n_test), r = ``L.shape[1]``)."""
        if coef is not None and W is not None:
            raise ValueError("give coef or W (the same thing), not both")
        coef = W if coef is None else coef
        if coef is None:
            raise ValueError("give coef (W, shape (n_train, n_test)); DRR cannot recover w from "
                             "a dual point alone")
        W = self._check_W(coef, "coef")
        variables = {"W": W}
        if dual is not None:
            if not isinstance(dual, dict) or set(dual) != {"z"}:
                raise ValueError("dual must be a dict {'z': Z} with Z of shape (r, n_test)")
            Z = np.asarray(dual["z"], float)
            if Z.ndim == 1 and self.n_test == 1:
                Z = Z[:, None]
            if Z.shape != (self.L.shape[1], self.n_test) or not np.all(np.isfinite(Z)):
                raise ValueError(f"dual['z'] must be finite with shape (r, n_test) = "
                                 f"({self.L.shape[1]}, {self.n_test}); got {Z.shape}")
            variables["z"] = Z
        return Solution(objective=self.primal_value(W), coef=W, intercept=0.0,
                        variables=variables, status="user", solver="user", form="user")

    def _W_of(self, sol):
        W = sol.coef if sol.coef is not None else sol.variables.get("W")
        if W is None:
            raise ValueError("sol must carry coef (W, shape (n_train, n_test))")
        return self._check_W(W, "sol.coef")

    # ---- decision (eqs. 10–11) -------------------------------------------------------------------
    def dissimilarities(self, sol):
        """``delta_c`` of seed 004 eq. 10 for every test point and class: (n_test, g).

        ``delta_c = w_c^T K w_c + w_cbar^T K w_cbar - 2 w_c^T K_x``; smaller is more similar.
        """
        W, K, Kx = self._W_of(sol), self.gram, self.K_x
        delta = np.empty((self.n_test, len(self.groups)))
        for c in range(len(self.groups)):
            mask = (self.y == c)[:, None]
            Wc = np.where(mask, W, 0.0)
            Wb = W - Wc
            delta[:, c] = (np.einsum("ij,ij->j", Wc, K @ Wc) + np.einsum("ij,ij->j", Wb, K @ Wb)
                           - 2.0 * np.einsum("ij,ij->j", Wc, Kx))
        return delta

    def decision_function(self, sol, X_new=None):
        """Per test point and class, the score ``-delta_c`` (larger = more likely; sklearn's
        sign): shape (n_test, g), columns in the order of ``classes_``.

        The test points are fixed in the problem (each has its own ``w``): ``X_new`` must be
        omitted; build a new problem for new points.
        """
        if X_new is not None:
            raise ValueError("X_new must be None: DRR's test points are X_test, fixed in the "
                             "problem (one w per test point); build a new DRR for new points")
        return -self.dissimilarities(sol)

    def predict(self, sol, X_new=None):
        """Seed 004 eq. 11: ``argmin_c delta_c``, in the original label values. Values within a
        relative 1e-12 of the smallest are ties, given to the first class (so two certified
        solutions of one problem predict alike; the estimators use the same rule)."""
        if X_new is not None:
            raise ValueError("X_new must be None: DRR's test points are X_test, fixed in the "
                             "problem; build a new DRR for new points")
        d = self.dissimilarities(sol)
        tie = d - d.min(axis=1, keepdims=True) <= 1e-12 * np.abs(d).max(axis=1, keepdims=True)
        return self.classes_[np.argmax(tie, axis=1)]

    # ---- certificate -------------------------------------------------------------------------------
    def _feasible_dual(self, z, j):
        """``(z', D(z'), theta)``: ``z`` moved towards ``z0 = L^+ K_x`` (where ``K_x - L z0`` is
        0 or as small as the range of ``L`` allows) by the least ``theta`` in [0, 1] that
        makes ``D`` finite (an indicator conjugate, ``rho = t``); ``theta = 0`` when ``z`` is
        dual feasible already."""
        D = self._dual_value_col(z, j)
        if np.isfinite(D):
            return z, D, 0.0
        z0 = np.linalg.lstsq(self.L, self.K_x[:, j], rcond=None)[0]
        if not np.isfinite(self._dual_value_col(z0, j)):
            return z, -np.inf, np.nan
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if np.isfinite(self._dual_value_col((1 - mid) * z + mid * z0, j)):
                hi = mid
            else:
                lo = mid
        zf = (1 - hi) * z + hi * z0
        return zf, self._dual_value_col(zf, j), hi

    def prox_gradient_argument(self, w, j):
        """``(v, s)``: the argument ``v = w - t grad f(w)`` and the step ``s = t beta`` of the
        prox in :meth:`prox_gradient_residual` (``t = 1/sigma_max(Q_D)``) for the point ``w``
        of test point ``j`` (or, for a matrix ``w`` and an index or slice ``j`` of as many
        test points, one column each); the fast solvers' spot check of a user's prox tests
        it there."""
        v, s, _, _ = self._prox_gradient_step(w, j)
        return v, s

    def _prox_gradient_step(self, w, j):
        """``(v, s, t, Q_D w)`` of :meth:`prox_gradient_argument`."""
        t = 1.0 / self.sigma_max if self.sigma_max > 0 else 1.0
        Qw = self.Q_D @ w
        return w - t * (Qw - self.K_x[:, j]), t * self.beta, t, Qw

    def prox_gradient_residual(self, w, j):
        """``||w - prox_{t beta R}(w - t grad f(w))|| / t`` with ``t = 1/sigma_max(Q_D)``."""
        v, s, t, Qw = self._prox_gradient_step(w, j)
        p = check_prox(self.regularizer.prox(v, s, self.groups), w)
        return float(np.linalg.norm(w - p) / t), 1.0 + float(np.linalg.norm(self.K_x[:, j])
                                                              + np.linalg.norm(Qw))

    def certify(self, sol, tol=DEFAULT_TOL, reference="auto", *, workspace=None, mode="full"):
        """Certificate of ``sol`` (one per test point, merged by the worst residual).

        Per test point ``w``:

        * ``duality gap`` ``P(w) - D(z)`` (scaled by ``1 + |P|``), when the regularizer has a
          conjugate. ``z`` is the solution's own ``z`` when it carries one, else
          ``z = L^T w`` (the optimal pair satisfies it, SPEC §8, so it works for any
          solver's ``w``). For ``rho = t`` the dual is a constraint; a ``z`` that violates
          it by rounding is moved towards ``L^+ K_x`` just enough to be feasible (the
          fraction is in ``values["dual_shift"]``).
        * otherwise ``prox-gradient residual`` ``||w - prox_{t beta R}(w - t grad f(w))||/t``,
          ``t = 1/sigma_max(Q_D)``, scaled by ``1 + ||K_x|| + ||Q_D w||``.
        * ``objective gap`` ``P(w) - P*`` (scaled by ``1 + |P*|``) against the reference
          (``reference="auto"``: computed when ``m <= AUTO_REFERENCE_MAX_M``; ``True``;
          ``False``; or a :class:`Solution`).

        ``workspace``, ``mode``: as in :meth:`refmodels.base.Problem.certify`.
        """
        if mode not in ("full", "cheap"):
            raise ValueError(f"mode must be 'full' or 'cheap'; got {mode!r}")
        with _using(workspace, owner=self):
            if mode == "cheap":
                from .cheap import certify_cheap

                return certify_cheap(self, sol, tol)
            return self._certify_drr(sol, tol, reference)

    def _certify_drr(self, sol, tol, reference):
        reg = self.regularizer
        report = _reg.require_usable(reg)
        # a user's conjugate or prox that fails its check is no evidence (module docstring
        # of refmodels.regularizers)
        bad_conj = _reg.bad_conjugate(report)
        bad_prox = _reg.failed(report, _reg.PROX_CHECKS)
        use_conj = reg.has_conjugate and not bad_conj
        W = self._W_of(sol)
        P = self.primal_value(W)
        Z = sol.variables.get("z")
        own_z = Z is not None and np.shape(Z) == (self.L.shape[1], self.n_test)
        try:
            ref, unavailable = self._reference_for(reference), None
        except (SolverError, ValueError, np.linalg.LinAlgError) as exc:
            if not (reference is True or (isinstance(reference, str) and reference == "auto")):
                raise                  # the caller's own reference (a Solution) is wrong
            # the reference refuses (a regularizer the ladder cannot certify, a non-DCP
            # expr): reported, not raised, as every family's certificate does
            ref, unavailable = None, exc
        cert = Certificate(self.family, tol)
        D_all, shift = np.full(self.n_test, np.nan), np.zeros(self.n_test)
        for j in range(self.n_test):
            cj = Certificate(self.family, tol)
            w = W[:, j]
            if use_conj:
                z = np.asarray(Z[:, j], float) if own_z else self.L.T @ w
                _, D, theta = self._feasible_dual(z, j)
                D_all[j], shift[j] = D, theta
                gap = P[j] - D if np.isfinite(D) else np.inf
                cj.add("duality gap", gap, 1.0 + abs(P[j]))
            elif not bad_prox:
                cj.add("prox-gradient residual", *self.prox_gradient_residual(w, j))
            else:                  # neither a checked conjugate nor a checked prox
                cj.add(f"regularizer check ({bad_prox[0].name})", np.inf, 1.0)
            if ref is not None:
                Pstar = np.asarray(ref.objective, float).reshape(-1)[j]
                cj.add("objective gap", P[j] - Pstar, 1.0 + abs(Pstar))
            cert.merge_max(cj)
        if report is not None and not use_conj and not bad_prox and ref is None:
            # the prox-gradient residual is the only evidence, and it rests on the prox:
            # the prox is tested at this point's own arguments
            from ._regcheck import prox_spot_check

            spot = cert.values["prox_spot_check"] = prox_spot_check(self, W)
            if not spot["passed"]:
                cert.add(f"prox at the point ({spot['check']})", np.inf, 1.0)
                cert.notes.append(f"the regularizer's prox fails at this point's arguments "
                                  f"(error {spot['error']:.3g}, tolerance "
                                  f"{spot['tolerance']:.1g}; {spot['note']}): its "
                                  "prox-gradient residual is no evidence")
        if report is not None:          # a user's regularizer: its value is its expr's here
            from ._verdict import value_vs_expr_at

            cert.add("regularizer value vs expr at the point",
                     *value_vs_expr_at(reg, W, self.groups))
        cert.values["objective"] = P
        if use_conj:
            cert.values["dual_objective"] = D_all
            cert.values["dual_shift"] = shift
            cert.notes.append("dual point: " + ("the solution's own z" if own_z else
                                                "z = L^T w, the optimal pair's relation"))
        elif bad_conj:
            cert.notes.append(f"the regularizer's conjugate fails rm.regularizers.check's "
                              f"{bad_conj[0].name!r}: no duality gap through it")
        else:
            cert.notes.append("the regularizer has no conjugate: proximal-gradient residual "
                              "instead of a duality gap")
        if bad_prox and not use_conj:
            cert.notes.append(f"the regularizer's prox fails rm.regularizers.check's "
                              f"{bad_prox[0].name!r} (error {bad_prox[0].max_error:.3g}): no "
                              "residual through it, so no point of this problem certifies "
                              "without a valid conjugate")
        if ref is not None:
            cert.values["reference_objective"] = np.asarray(ref.objective, float)
        elif unavailable is not None:
            cert.values["reference_objective"] = None
            cert.notes.append(f"reference optimum unavailable ({type(unavailable).__name__}: "
                              f"{unavailable}); objective gap not computed")
        else:
            cert.notes.append("objective gap not computed (reference=False or m above "
                              f"{AUTO_REFERENCE_MAX_M})")
        cert.notes.append(f"{self.n_test} test point(s); each residual is the worst over them")
        return cert

    def _check_reference(self, reference):
        if np.shape(reference.objective) != (self.n_test,):
            raise ValueError(f"reference must be a DRR Solution with {self.n_test} objective "
                             "values")


class DRM(DRR):
    """Discriminative ridge machine (SPEC §8; seed 004 eqs. 12–13): DRR with ``q = r = 2``,
    ``rho = t^2/2``, i.e. ``R(w) = 1/2 ||w||^2``:

    .. math::

        \\min_w\\ \\tfrac12 w^\\top(K + \\alpha(H - B) + \\beta I)w - w^\\top K_x,
        \\qquad w^\\star = (K + \\alpha H - \\alpha B + \\beta I)^{-1} K_x.

    ``beta > 0`` (required by eq. 13: ``Q_D + beta I`` is then positive definite).
    ``closed_form()`` (or ``solve(form="closed_form")``) computes eq. 13 by Cholesky.
    """

    def __init__(self, X, y, X_test, alpha, beta, kernel=None):
        super().__init__(X, y, X_test, alpha, beta, q=2, r=2, rho="half_square", kernel=kernel)


def _differs(a, b):
    for u, v in zip(a, b):
        if isinstance(u, str) or isinstance(v, str):
            if u != v:
                return True
        elif u != v:
            return True
    return False
