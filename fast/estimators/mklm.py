"""The MKLm estimator (SPEC §7): multiple kernel learning with the SVMm band."""
from __future__ import annotations

import numpy as np

from refmodels import kernels as _k
from refmodels.mklm import MKLm

from ._base import (_KERNEL_PARAMS, MULTI_CLASS, BaseMarginClassifier, _nonnegative, _positive,
                    gamma_value)
from ._docs import shared_doc


class _CallableKernel(_k.Kernel):
    """A base kernel given as a callable ``k(X, Z) -> Gram`` (as ``SVC(kernel=callable)``)."""

    name = "callable"

    def __init__(self, func):
        self.func = func

    def params(self):
        return {"func": getattr(self.func, "__name__", repr(self.func))}

    def cross(self, X, Z):
        K = np.asarray(self.func(X, Z), dtype=np.float64)
        if K.shape != (X.shape[0], Z.shape[0]):
            raise ValueError(f"kernels: a callable kernel must return shape "
                             f"({X.shape[0]}, {Z.shape[0]}); got {K.shape}")
        return K


@shared_doc
class MKLmClassifier(BaseMarginClassifier):
    r"""MKLm classifier: multiple kernel learning with the margin band (SPEC §7).

    On the fast solver (seed 003 eqs. 22–26).

    .. math::

        \min_{\mu\in\Delta,\, w, b, \xi, \eta}\ \tfrac12\sum_k\frac{\|w_k\|^2}{\mu_k}
        + \frac{C_1}2\sum_i\xi_i + \frac{C_2}2\sum_i\eta_i
        \quad\text{s.t.}\quad 1-\xi_i \le y_i f(x_i) \le 1+\varepsilon+\eta_i

    with ``f(x) = sum_k w_k^T phi_k(x) + b`` and the kernel weights ``mu`` on the simplex.
    Each binary problem is a :class:`refmodels.MKLm` solved by :func:`fast.solve`: a
    SimpleMKL-style reduced gradient on ``mu`` with the SMO inside, warm-started.

    Parameters
    ----------
    kernels : list, tuple or None, default=None
        The base kernels; None means ``["linear", "rbf"]``. Each is given as in ``SVC``: a
        name (``"linear"``, ``"rbf"``, ``"poly"``; this estimator's ``gamma``, ``degree``,
        ``coef0`` apply), a pair ``(name, {params})`` such as ``("rbf", {"gamma": 0.1})``,
        a :class:`refmodels.kernels.Kernel`, or a callable ``k(X, Z)`` returning the Gram
        matrix. Every base kernel must be positive semidefinite.
    C1 : float > 0, default=2.0
        Weight of the margin slacks (the primal carries ``C1 / 2``, as the seed; 2 is
        ``SVC``'s ``C = 1`` per point).
    <<C2:mkl>>
    eps : float >= 0, default=0.5
        Width of the band above the margin (0 is the ε-MKL, :class:`refmodels.EpsMKL`).
    gamma : {"scale", "auto"} or float > 0, default="scale"
        Coefficient of the named ``"rbf"`` and ``"poly"`` base kernels that do not give
        their own, as in ``SVC``: ``"scale"`` is ``1 / (n_features * X.var())``, ``"auto"``
        is ``1 / n_features``.
    degree : int >= 1, default=3
        Degree of the named ``"poly"`` base kernels that do not give their own.
    coef0 : float >= 0, default=0.0
        Constant term of the named ``"poly"`` base kernels that do not give their own.
    <<tol:mkl max_iter:mkl random_state:unused multi_class>>

    Attributes
    ----------
    <<classes_>>
    kernels_ : list of refmodels.kernels.Kernel
        The base kernels as objects, with ``gamma`` resolved.
    mu_ : ndarray of shape (n_problems, n_kernels)
        The learnt kernel weights of each problem (on the simplex).
    <<dual_coef_:mkl intercept_:b pairs_ n_iter_:mkl problems_ solutions_ shape_fit_ X_fit_:dense
      n_features_in_ feature_names_in_>>

    See Also
    --------
    refmodels.MKLm : The problem, solved by the reference (CVXPY) and certified.
    SVMmClassifier : The same band with one fixed kernel.

    Notes
    -----
    **Defaults**: base kernels ``["linear", "rbf"]`` (``gamma="scale"``) and
    ``C1=2`` (the primal carries ``C1 / 2``, so 2 is ``SVC``'s ``C = 1``); ``C2=0.5``,
    ``eps=0.5`` kept. The former ``C1=1`` scored 0.961, 0.983, 0.953, 0.974 (mean 0.968,
    1.1 points below SVC). refmodels.MKLm defaults to ``C2=eps=1`` and has no default
    kernels.
    <<defaults breast_cancer=0.977 wine=0.989 iris=0.953 digits=0.984 mean=0.976>>

    Dense input only.
    <<multiclass>>

    References
    ----------
    .. [1] Huyen Do and Alexandros Kalousis. A Metric-learning based framework for Support
       Vector Machines and Multiple Kernel Learning. arXiv preprint arXiv:1309.3877, 2013
       (seed 003; MKLm is its eqs. 22–26).
    .. [2] Alain Rakotomamonjy, Francis R. Bach, Stéphane Canu and Yves Grandvalet.
       SimpleMKL. Journal of Machine Learning Research, 9:2491–2521, 2008.

    <<Examples: load_breast_cancer 0.95
      MKLmClassifier(kernels=["linear", ("rbf", {"gamma": 0.05})])>>
    """

    _problem_class = MKLm
    _hyper = ("C1", "C2", "eps")
    _accepts_sparse = False
    #: not a parameter: no single kernel (dense input, not pairwise, for the shared helpers)
    kernel = "mkl"
    _parameter_constraints = {
        "kernels": [None, list, tuple],
        "C1": _positive(), "C2": _nonnegative(), "eps": _nonnegative(),
        **{k: v for k, v in _KERNEL_PARAMS.items() if k != "kernel"}, **MULTI_CLASS,
    }

    def __init__(self, kernels=None, C1=2.0, C2=0.5, eps=0.5, *, gamma="scale", degree=3,
                 coef0=0.0, tol=None, max_iter=None, random_state=None, multi_class="ovo"):
        self._store_params(locals())

    def _fit_kernel(self, X):
        """Set the base kernels as objects (``kernels_``) on the training data ``X``."""
        self.kernels_ = self._base_kernels(X)

    def _problem_kernel(self):
        return {"kernels": self.kernels_}

    def _base_kernels(self, X):
        specs = ["linear", "rbf"] if self.kernels is None else list(self.kernels)
        if not specs:
            raise ValueError("kernels must be a non-empty list of base kernels")
        out = []
        for k, spec in enumerate(specs):
            if isinstance(spec, _k.Kernel):
                out.append(spec)
            elif callable(spec):
                out.append(_CallableKernel(spec))
            elif isinstance(spec, str) or (isinstance(spec, tuple) and len(spec) == 2
                                           and isinstance(spec[0], str)
                                           and isinstance(spec[1], dict)):
                name, params = (spec, {}) if isinstance(spec, str) else spec
                if name not in ("linear", "rbf", "poly"):
                    raise ValueError(f"kernels[{k}] must name 'linear', 'rbf' or 'poly'; got "
                                     f"{name!r}")
                if name == "linear":
                    out.append(_k.Linear(**params))
                    continue
                gamma = gamma_value(params.get("gamma", self.gamma), X)
                if name == "rbf":
                    out.append(_k.RBF(gamma=gamma))
                else:
                    out.append(_k.Polynomial(degree=params.get("degree", self.degree),
                                             gamma=gamma, coef0=params.get("coef0", self.coef0)))
            else:
                raise ValueError(f"kernels[{k}] must be a name, a (name, params) pair, a Kernel "
                                 f"or a callable; got {spec!r}")
        return out

    def fit(self, X, y):
        """Learn the kernel weights and the classifier: one problem (two classes), else one
        per pair of classes (``multi_class="ovo"``, the base kernels resolved once on all of
        ``X``) or one per class (``"ovr"``), on dense ``X`` and the labels ``y``; returns
        ``self``."""
        X, y = self._fit_data(X, y)
        self._fit_problems(X, y)
        self.mu_ = np.vstack([np.asarray(sol.variables["mu"], float) for sol in self.solutions_])
        return self

    def decision_function(self, X):
        """Compute the scores ``f(x) = sum_k mu_k sum_i dual_coef_i K_k(x_i, x) + b``: shape
        (n_samples,) for two classes (positive means ``classes_[1]``), else
        (n_samples, n_classes): one-vs-rest the score of each class, one-vs-one the votes
        plus the normalised summed pair scores (``SVC``'s ``decision_function_shape="ovr"``
        convention; see :meth:`BaseMarginClassifier.decision_function`)."""
        X = self._validate_X_predict(X)
        scores = np.tile(self.intercept_, (X.shape[0], 1))
        for k, kern in enumerate(self.kernels_):
            Kx = kern.cross(self.X_fit_, X)                     # m x n
            scores += (Kx.T @ self.dual_coef_.T) * self.mu_[:, k]
        return self._class_scores(scores)
