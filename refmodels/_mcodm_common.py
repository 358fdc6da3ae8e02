"""What :class:`refmodels.mcodm.McODM` and :class:`refmodels.mcodm.RelaxedMcODM` share: the
multi-class data, labels and hyperparameters, the scores ``s_l(x) = w_l^T phi(x)`` and
margins, the map between ``coef`` and the feature-space ``W``, predictions, and the checks
of their inputs (the mathematics is in :mod:`refmodels.mcodm`'s docstring).
"""
from __future__ import annotations

import numpy as np

from ._validation import check_vector, in_interval, multiclass_labels, positive
from .base import Problem, add_coef_consistency, objective_scale, run_cvxpy


def _check_matrix(A, shape, name):
    """A finite float array of exactly ``shape``."""
    try:
        A = np.asarray(A, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array: {exc}") from None
    if A.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}; got {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return A


def _check_M(M, m):
    """``M`` (one ``M_i`` per training sample), finite, of length ``m``."""
    M = np.asarray(M, dtype=object if np.iscomplexobj(M) else None)
    if np.shape(M) not in ((m,), (m, 1), (1, m)):
        raise ValueError(f"M must be a vector of length m={m} (one M_i per training sample); "
                         f"got shape {np.shape(M)}")
    try:
        return check_vector(M, m, "M")
    except ValueError as exc:
        if "finite" in str(exc):
            raise ValueError("M must contain only finite values (no NaN or inf)") from None
        raise


def _run_tight(problem, solver, verbose, opts):
    """``run_cvxpy`` down the one tolerance ladder (:data:`refmodels.base.CLARABEL_LADDER`):
    with Clarabel's defaults (1e-8) a multiplier of a weakly active upper-margin constraint
    can be off by ~1e-5 (the gap is still 1e-9), and ``W`` with it; the tight level gives KKT
    residuals ~1e-9."""
    return run_cvxpy(problem, solver, verbose, ladder=True, **opts)


def _solve_psd(K, b):
    """``K x = b`` for a symmetric PSD ``K``: Cholesky when it is definite, else least squares."""
    import scipy.linalg as sla

    try:
        cf = sla.cho_factor(K, check_finite=False)
        x = sla.cho_solve(cf, b, check_finite=False)
        if np.all(np.isfinite(x)) and np.linalg.norm(K @ x - b) <= 1e-10 * (1 + np.linalg.norm(b)):
            return x
    except (np.linalg.LinAlgError, sla.LinAlgError):
        pass
    return sla.lstsq(K, b, lapack_driver="gelsy", check_finite=False, cond=1e-13)[0]


class _MultiClassData(Problem):
    """Data, labels, hyperparameters and score helpers shared by
    :class:`refmodels.mcodm.McODM` and :class:`refmodels.mcodm.RelaxedMcODM`."""

    family = "McODM"
    #: the dual variables a solution may carry (``solution_from(alpha=..., beta=...)``): the
    #: relaxed QP's (eq. 20), through which McODM is certified
    solution_dual_names = ("alpha", "beta")

    def _init_params(self, y, lam, mu, theta):
        self.y, self.classes_ = multiclass_labels(y, self.m, "y")
        self.k = int(self.classes_.size)
        self.lam = positive(lam, "lam")
        self.mu = positive(mu, "mu")
        self.theta = in_interval(theta, "theta", 0.0, 1.0, lo_closed=True, hi_closed=False)
        #: weight of the squared slacks in eq. 20, lambda / (m (1 - theta)^2)
        self.c = self.lam / (self.m * (1.0 - self.theta) ** 2)
        self.onehot = np.zeros((self.m, self.k))
        self.onehot[np.arange(self.m), self.y] = 1.0
        # the m(k-1) pairs (i, l), l != y_i, of eq. 20's lower constraints (i-major)
        I, L = np.nonzero(self.onehot == 0.0)
        self._I, self._L = I, L

    # ---- points -----------------------------------------------------------------------
    @property
    def r(self):
        """Dimension of the feature space (columns of ``F``)."""
        return self.F.shape[1]

    def W_from_coef(self, coef):
        """``W = F^T coef`` (r x k): the feature-space coordinates of
        ``w_l = sum_i coef[i,l] phi(x_i)``."""
        return np.asarray(self.F.T @ coef)

    def scores(self, W):
        """``S[i, l] = s_l(x_i) = w_l^T phi(x_i)`` (m x k) for ``W`` in feature space."""
        return np.asarray(self.F @ W)

    def _split_scores(self, S):
        """``(s_{y_i}(x_i), max_{l != y_i} s_l(x_i))`` from the score matrix."""
        sy = S[np.arange(self.m), self.y]
        other = np.where(self.onehot > 0, -np.inf, S)
        return sy, np.max(other, axis=1)

    def slacks_from_scores(self, S, M):
        """The smallest feasible ``(xi, eps)`` of eq. 20 for the scores ``S`` (m x k) at the
        relaxation's ``M`` (``M`` the largest other score, :meth:`M_from`: the original
        mcODM's): ``xi = max(0, 1 - theta - (s_y - max_{l != y} s_l))``, ``eps = max(0, s_y - M
        - 1 - theta)``."""
        sy, so = self._split_scores(S)
        return (np.maximum(0.0, 1.0 - self.theta - (sy - so)),
                np.maximum(0.0, sy - M - 1.0 - self.theta))

    def objective_from_slacks(self, norm2, xi, eps):
        """Eq. 20's objective from ``||W||_F^2`` and the slacks:
        ``1/2 ||W||_F^2 + c sum_i (xi_i^2 + mu eps_i^2)``."""
        return 0.5 * norm2 + self.c * float(np.sum(xi ** 2 + self.mu * eps ** 2))

    def margins(self, W):
        """Multi-class margins ``gamma_i = s_{y_i}(x_i) - max_{l != y_i} s_l(x_i)``."""
        sy, so = self._split_scores(self.scores(W))
        return sy - so

    def _certificate_extras(self, cert, sol, point):
        """Predictions use ``coef`` (scores ``K coef``), the residuals ``W``: when a solution
        carries both they must be one point. Residuals: the scores on the training points,
        ``F W`` against ``F F^T coef`` (scaled by ``1 + max |F W|``: scores do not depend on
        the scale of the features, where ``||W||`` does), and the objective at ``F^T coef``
        against that at ``W`` (scaled by :func:`objective_scale`). Without them a reference point on
        Gram entries of 4e13 certified its ``W`` (scores ~1e-4) while ``coef`` gave +-4.8."""
        W = point[0]
        Wv = sol.variables.get("W")
        if sol.coef is None or Wv is None or np.shape(Wv) != np.shape(W) \
                or np.shape(sol.coef) != (self.m, self.k):
            return
        Wc = self.W_from_coef(np.asarray(sol.coef, float))
        add_coef_consistency(cert, "scores (coef vs W)", self.scores(W), self.scores(W - Wc),
                             cert.values["objective"], self.primal_value(Wc),
                             objective_scale(self, cert.values["objective"], sol))

    def M_from(self, W):
        """Alg. 3, step 5: ``M_i = max_{l != y_i} s_l(x_i)`` at the iterate ``W``."""
        return self._split_scores(self.scores(W))[1]

    def _W_of(self, sol):
        """Feature-space ``W`` (r x k) of a solution: its ``W`` if of the right shape, else
        ``F^T coef``."""
        W = sol.variables.get("W")
        if W is not None and np.shape(W) == (self.r, self.k):
            return np.asarray(W, float)
        if sol.coef is None:
            raise ValueError("the solution carries neither coef (m x k) nor W (r x k) of the "
                             "right shape")
        coef = np.asarray(sol.coef, float)
        if coef.shape != (self.m, self.k):
            raise ValueError(f"sol.coef must have shape ({self.m}, {self.k}); got {coef.shape}")
        return self.W_from_coef(coef)

    def objective_at_zero(self):
        """The mcODM objective at ``W = 0`` (every margin 0): ``c m (1 - theta)^2``."""
        return self.c * self.m * (1.0 - self.theta) ** 2

    def mcodm_value(self, W):
        """Objective of the original, non-convex mcODM (seed 002 §4, display before eq. 20)
        at ``W`` with the smallest feasible slacks:
        ``1/2 ||W||_F^2 + c sum_i [max(0, 1-theta-gamma_i)^2 + mu max(0, gamma_i-1-theta)^2]``.
        Equals the relaxed objective (eq. 20) at ``M = M_from(W)``."""
        W = np.asarray(W, float)
        S = self.scores(W)
        return self.objective_from_slacks(float(np.sum(W * W)),
                                          *self.slacks_from_scores(S, self.M_from_scores(S)))

    def M_from_scores(self, S):
        """:meth:`M_from` from the scores ``S`` themselves."""
        return self._split_scores(S)[1]

    # ---- predictions --------------------------------------------------------------------
    def decision_function(self, sol, X_new):
        """Scores ``s_l(x) = sum_i coef[i, l] k(x_i, x)`` (n_new x k) for the rows of ``X_new``."""
        if sol.coef is None:
            return self._primal_scores(sol, X_new, "W")
        coef = np.asarray(sol.coef, float)
        if coef.shape != (self.m, self.k):
            raise ValueError(f"sol.coef must have shape ({self.m}, {self.k}); got {coef.shape}")
        K = self.kernel_to(X_new)
        return np.asarray(K.T @ coef)

    def predict(self, sol, X_new):
        """``argmax_l s_l(x)``, mapped back to the original labels (Alg. 3's prediction)."""
        return self.classes_[np.argmax(self.decision_function(sol, X_new), axis=1)]
