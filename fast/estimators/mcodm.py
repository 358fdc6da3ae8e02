"""The multi-class ODM estimator (SPEC §5)."""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from refmodels.mcodm import McODM

from .. import solve as _solve
from ._base import _KERNEL_PARAMS, BaseMarginClassifier, _positive
from ._docs import shared_doc


def _why_not_converged(changes, tol):
    """Why Alg. 3's outer loop did not settle, from the relative changes of ``W``."""
    last = changes[-6:]
    text = (f". Alg. 3's outer loop is not a descent method (each round solves the relaxed "
            f"QP at M from the previous iterate), so it need not settle; last changes of W: "
            f"{np.array2string(last, precision=3, separator=', ')}")
    rate = (last[-1] / last[0]) ** (1.0 / (last.size - 1)) if last.size >= 3 and last[0] > 0 \
        else np.nan
    if np.isfinite(rate) and rate < 0.99 and np.all(np.diff(last) < 0):
        more = int(np.ceil(np.log(tol / last[-1]) / np.log(rate)))
        text += (f": they shrink by {rate:.3g} per round (linear convergence, slow), so about "
                 f"{more} more rounds would reach tol: raise max_outer")
    elif last.size >= 4 and np.ptp(last[-4:]) <= 0.05 * np.max(last[-4:]):
        text += (": they do not shrink, so the iterates cycle (typically between two M's, "
                 "each change being the distance between them)")
    return text + ("; the fitted point is the last round's certified relaxed QP, not a fixed "
                   "point of Alg. 3 (outer_changes_ has every round).")


@shared_doc
class McODMClassifier(BaseMarginClassifier):
    r"""Multi-class ODM classifier on the fast solver (SPEC §5; seed 002 §4, Alg. 3).

    .. math::

        \min_{W, \xi, \epsilon}\ \tfrac12\sum_l\|w_l\|^2
        + \frac{\lambda}{m(1-\theta)^2}\sum_i(\xi_i^2+\mu\epsilon_i^2),
        \quad \gamma(x, y) = s_y(x) - \max_{l\ne y}s_l(x)

    with the score ``s_l(x) = w_l^T phi(x)`` of class ``l`` and the ODM band on the margin
    ``gamma``. Solved by Alg. 3's outer loop: the relaxed QP at ``M`` from the previous
    iterate, block coordinate descent inside. Natively multi-class (also for two classes:
    two score functions). The problem is non-convex; the fitted point is a fixed point of
    Alg. 3 whose relaxed QP is certified (see :class:`refmodels.McODM`). No intercept, as
    in the seed.

    Parameters
    ----------
    lam : float > 0 or None, default=None
        Weight :math:`\lambda` of the squared losses. None is ``m``, the number of
        training samples (``lam / m = 1``, as ``SVC``'s ``C = 1``; as
        :class:`ODMClassifier`).
    <<mu theta kernel gamma degree coef0 tol:outer max_iter:outer random_state:bcd>>
    max_outer : int >= 1, default=200
        Rounds of Alg. 3's outer loop. A fit that stops at ``max_outer`` warns
        (``ConvergenceWarning``) and says why (see the Notes). The solver takes Anderson
        steps once the plain loop is slow (:mod:`fast.mcodm`): with ``MinMaxScaler``,
        ``lam = m``, 70% of each set, it converges (change of ``W`` < ``tol``) in 39
        rounds on digits (linear; the plain loop of ``refmodels.McODM.solve`` needs 737,
        its changes shrinking by ~0.985 per round), 29 on breast_cancer (linear; plain
        793), 16 (RBF; plain 77), 17 on wine (linear; plain 98), 2-7 elsewhere. 200, rather
        than the reference's 50, leaves room for other data; the rounds are warm-started,
        so the extra ones are cheap.

    Attributes
    ----------
    <<classes_ dual_coef_:mcodm coef_:mcodm n_iter_:outer>>
    n_outer_ : int
        Rounds of Alg. 3's outer loop.
    outer_changes_ : ndarray of shape (n_outer_,)
        The relative change of ``W`` in each round (the stopping rule compares the last one
        with ``tol``).
    <<problems_:mcodm solutions_:mcodm>>
    solution_ : refmodels.Solution
        The same solution (``solutions_[0]``).
    <<kernel_ X_fit_ shape_fit_ n_features_in_ feature_names_in_>>

    See Also
    --------
    refmodels.McODM : The problem, solved by the reference (CVXPY) and certified.
    ODMClassifier : The binary ODM (one-vs-one beyond two classes, or one-vs-rest).

    Notes
    -----
    **Defaults**: ``kernel="rbf"`` (``gamma="scale"``) and ``lam=None``, i.e.
    ``lam = m`` (as :class:`ODMClassifier`). The former ``lam=1`` with the linear kernel
    scored 0.66 on iris (0.85 mean). refmodels.McODM has no defaults (``lam``, ``mu``,
    ``theta`` required).
    <<defaults breast_cancer=0.975 wine=0.983 iris=0.967 digits=0.989 mean=0.979>>

    Alg. 3's outer loop is not a descent method on the non-convex objective: each round
    solves the convex relaxed QP at ``M`` taken from the previous iterate, and the
    iterates can converge slowly (linearly) or cycle (typically between two ``M``'s)
    instead of settling. A fit that stops at ``max_outer`` keeps the last round's certified
    relaxed QP and warns with the last changes of ``W`` (``outer_changes_``) and which of
    the two it sees: the rate and the rounds still needed, or a cycle.
    Dense input only. ``sample_weight`` and ``class_weight`` are not supported: SPEC's
    formulations weigh every sample equally.

    References
    ----------
    .. [1] Teng Zhang and Zhi-Hua Zhou. Optimal Margin Distribution Machine. IEEE
       Transactions on Knowledge and Data Engineering, 32(6), 2020 (seed 002; mcODM is its
       eqs. 20–41 and Algs. 3–4).

    <<Examples: load_wine 0.95 McODMClassifier(kernel="rbf")>>
    """

    _problem_class = McODM
    _accepts_sparse = False
    _hyper = ("lam", "mu", "theta")
    _parameter_constraints = {"lam": [*_positive(), None], "mu": _positive(),
                              "theta": [Interval(numbers.Real, 0.0, 1.0, closed="left")],
                              "max_outer": [Interval(numbers.Integral, 1, None, closed="left")],
                              **_KERNEL_PARAMS}

    def __init__(self, lam=None, mu=0.5, theta=0.3, *, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, tol=None, max_iter=None, random_state=None, max_outer=200):
        self._store_params(locals())

    def _targets(self, y):
        """One problem for all classes: the labels themselves."""
        return [y]

    def fit(self, X, y):
        """Fit the multi-class problem (all classes at once).

        Runs Alg. 3's outer loop (at most ``max_outer`` rounds, each a relaxed QP solved by
        block coordinate descent, warm-started); a loop that does not settle warns with
        the reason (see the Notes of the class).

        Parameters
        ----------
        <<X:fit_dense y:fit>>

        Returns
        -------
        self : McODMClassifier
            The fitted estimator; ``n_outer_`` and ``outer_changes_`` tell how the outer
            loop ended.
        """
        X, y = self._fit_data(X, y)
        prob = self._make_problems(X, y)[0]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            sol = _solve(prob, tol=self.tol, max_iter=self.max_iter,
                         random_state=self.random_state, max_outer=self.max_outer)
        changes = np.asarray(sol.info.get("changes", []), float)
        for w in caught:
            message = str(w.message)
            if issubclass(w.category, ConvergenceWarning) and "max_outer" in message:
                message += _why_not_converged(changes, sol.info.get("tol", 1e-6))
            warnings.warn(message, w.category, stacklevel=2)
        self.problems_, self.solutions_, self.solution_ = [prob], [sol], sol
        self.dual_coef_ = np.asarray(sol.coef, float).T
        self.n_outer_ = int(sol.n_iter or max(changes.size, 1))
        self.n_iter_ = self.n_outer_
        self.outer_changes_ = changes
        if self.kernel == "linear":
            self.coef_ = self.dual_coef_ @ X
        return self

    def decision_function(self, X):
        """Compute the scores ``s_l(x)``, shape (n_samples, n_classes); for two classes,
        scikit-learn's binary convention: ``s_1(x) - s_0(x)`` (positive means ``classes_[1]``)."""
        S = self._raw_scores(X)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 else S

    def predict(self, X):
        """Predict class labels: the class of the largest score ``s_l(x)``.

        Ties are broken by a fixed rule: equal largest scores go to the smallest class
        index (``numpy.argmax``), also for two classes, where ``decision_function`` is
        ``s_1 - s_0`` and a score of exactly 0 therefore gives ``classes_[0]`` (as
        :meth:`refmodels.McODM.predict`).

        Parameters
        ----------
        <<X:predict_dense>>

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels, ``classes_[argmax_l s_l(x)]``.
        """
        S = self._raw_scores(X)
        return self.classes_[np.argmax(S, axis=1)]
