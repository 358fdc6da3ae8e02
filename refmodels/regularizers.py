"""Regularizers of discriminative ridge regression (SPEC §8; seed 004 eq. 8) and a checker.

A regularizer ``R`` enters DRR as the term :math:`\\beta R(w)` of seed 004 eq. 8,

.. math::

    \\min_w\\ \\tfrac12 w^\\top Q_D w - K_x^\\top w + \\beta R(w),
    \\qquad Q_D = K + \\alpha(H - B),

where the coordinates of ``w`` (one per training point) are grouped by class:
``groups`` is a list of integer index arrays, one per class, that partition
``range(len(w))``.

:class:`Regularizer` is the interface a user subclasses to explore a new one:

``expr(w, groups)``
    the CVXPY expression of ``R`` (convex; the ground truth of the reference solves);
``value(w, groups)``
    its NumPy value;
``prox(v, step, groups)``
    :math:`\\mathrm{prox}_{sR}(v) = \\arg\\min_x \\tfrac12\\|x - v\\|^2 + s R(x)`;
``conjugate(u, groups)`` (optional)
    :math:`R^*(u) = \\sup_x u^\\top x - R(x)` (``+inf`` outside its domain); gives DRR a
    duality gap in :meth:`refmodels.drr.DRR.certify`;
``conjugate_expr(u, groups)`` (optional)
    ``(expression, constraints)``: :math:`R^*` in CVXPY (``constraints`` carry an indicator
    part); needed only by ``DRR.solve(form="dual")``.

The interface is defined on **vectors** (one test point): ``w``, ``v`` and ``u`` are 1-D.
:class:`GroupNorm` additionally accepts 2-D arrays whose columns are test points
(``value``/``conjugate`` then return one number per column, ``prox`` takes a scalar step or
one step per column), which the batched fast solvers may use; DRR itself only ever calls
the 1-D form, so a user's regularizer need not support matrices.

:func:`check` tests a regularizer: ``value`` against ``expr``, ``prox`` against a CVXPY
solve of the prox problem, a convexity probe, and the conjugate (if any) through the
Fenchel-Young inequality and equality.

Nothing trusts a user's regularizer unchecked: :func:`verdict` runs :func:`check` once per
regularizer object (the report kept, weakly, in a module-level table, not on a problem), at
the first solve or certificate of a DRR that uses it. :func:`require_usable` refuses
(``ValueError`` naming the check) a regularizer that is not the convex function it states
(:data:`REFUSE_ON`: a non-DCP ``expr``, ``value`` not ``expr``'s value, a failed convexity
probe) or whose ``prox`` returns non-finite values. A ``prox`` or conjugate that fails its
check is not used as evidence: the fast solvers then say ``inaccurate`` (the fixed point of
a wrong prox is not the optimum), and the certificate uses the conjugate only when it passed
and the prox-gradient residual only when the prox did. Where a certificate would rest on
the prox alone (no checked conjugate, no reference optimum), the prox is tested again on
the vectors of that point by :func:`check_prox_at`.
"""
from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np
from scipy.optimize import brentq

from ._numeric import dual_exponent  # noqa: F401  (public here: the Hölder conjugate)
from ._numeric import unit_scale, unit_scale_scalar
from ._verdict import (CONJUGATE_CHECKS, NONFINITE_PROX, PROX_CHECKS, REFUSE_ON, CheckReport,
                       CheckResult, bad_conjugate, failed, require_usable, verdict)

__all__ = ["Regularizer", "GroupNorm", "check", "check_prox_at", "CheckReport", "CheckResult",
           "check_groups", "dual_exponent", "project_l1_ball", "verdict", "require_usable",
           "bad_conjugate", "failed", "REFUSE_ON", "PROX_CHECKS", "CONJUGATE_CHECKS",
           "NONFINITE_PROX", "PROX_AT_POINT"]


# ----------------------------------------------------------------------------------------
# groups and exponents
# ----------------------------------------------------------------------------------------
def check_groups(groups, n, name="groups"):
    """Validate ``groups`` as a partition of ``range(n)``; return a list of int arrays."""
    if isinstance(groups, np.ndarray) and groups.ndim == 1 and groups.dtype.kind in "iu":
        raise ValueError(f"{name} must be a list of index arrays (one per group), not one "
                         "array of labels")
    try:
        out = [np.asarray(g) for g in groups]
    except TypeError:
        raise ValueError(f"{name} must be a list of integer index arrays; got "
                         f"{type(groups).__name__}") from None
    if not out:
        raise ValueError(f"{name} must contain at least one group")
    for g in out:
        if g.ndim != 1 or g.size == 0 or (g.dtype.kind not in "iu"):
            raise ValueError(f"{name} must be non-empty 1-D integer index arrays; got "
                             f"{g!r}")
    allidx = np.concatenate(out)
    if allidx.size != n or not np.array_equal(np.sort(allidx), np.arange(n)):
        raise ValueError(f"{name} must partition range({n}) (every coordinate in exactly one "
                         "group)")
    return [g.astype(np.intp) for g in out]


def _exponent(value, name):
    """A norm exponent in [1, inf]; ``np.inf`` or ``"inf"`` for the max norm."""
    if isinstance(value, str):
        if value.strip().lower() in ("inf", "infinity"):
            return math.inf
        raise ValueError(f"{name} must be a number in [1, inf] or 'inf'; got {value!r}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ValueError(f"{name} must be a number in [1, inf] or 'inf'; got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1: for {name} = {value!r} < 1 the group norm is not "
                         "a norm and the problem would be non-convex (SPEC §8)")
    return math.inf if math.isinf(value) else float(value)


def _vec_norm(x, p, axis=0):
    if x.shape[axis] == 0:
        return np.zeros(np.delete(x.shape, axis))
    if x.ndim == 1:
        return _vec_norm_1d(x, p)
    ordp = np.inf if math.isinf(p) else p
    if p == 1 or math.isinf(p):
        return np.linalg.norm(x, ord=ordp, axis=axis)
    c, far = unit_scale(np.max(np.abs(x), axis=axis))
    if not far:
        return np.linalg.norm(x, ord=ordp, axis=axis)
    return c * np.linalg.norm(x / np.expand_dims(c, axis), ord=ordp, axis=axis)


def _vec_norm_1d(x, p):
    """:func:`_vec_norm` of one non-empty vector: the operations of ``np.linalg.norm`` (the
    same sums, hence the same value) and the scalar :func:`unit_scale_scalar`, without the
    per-call overhead of either (which is most of the cost of a vector of a few dozen
    entries)."""
    a = np.abs(x)
    if p == 1:
        return np.add.reduce(a)
    amax = a.max(initial=0.0)
    if math.isinf(p):
        return amax
    c, far = unit_scale_scalar(amax)
    if far:
        x = x / c
    n = np.sqrt(np.add.reduce(x * x)) if p == 2 else np.linalg.norm(x, ord=p)
    return c * n if far else n


def _cvx_norm(x, p, power_cones=False):
    import cvxpy as cp

    if p in (1, 2) or math.isinf(p):
        return cp.norm(x, "inf" if math.isinf(p) else int(p))
    exact = float(Fraction(p).limit_denominator(1024)) == p
    # an exact rational: SOC form (unless power cones are asked for); otherwise power cones
    return cp.pnorm(x, p, approx=exact and not power_cones)


def _cvx_power(t, p, power_cones=False):
    import cvxpy as cp

    exact = float(Fraction(p).limit_denominator(1024)) == p
    return cp.power(t, p, approx=exact and not power_cones)


def project_l1_ball(v, radius):
    """Euclidean projection of ``v`` onto ``{u : ||u||_1 <= radius}`` (sort algorithm)."""
    v = np.asarray(v, float)
    if not np.all(np.isfinite(v)) or not np.isfinite(radius):
        raise ValueError("project_l1_ball needs a finite v and radius")
    if radius <= 0:
        return np.zeros_like(v)
    a = np.abs(v)
    if a.sum() <= radius:
        return v.copy()
    s = np.sort(a)[::-1]
    cs = np.cumsum(s)
    k = np.arange(1, s.size + 1)
    # k = 1 always qualifies in exact arithmetic; a radius below the rounding of cs (1e-17
    # against 0.7) can make the comparison fail for every k
    hits = np.nonzero(s * k > cs - radius)[0]
    rho = hits[-1] if hits.size else 0
    theta = (cs[rho] - radius) / (rho + 1.0)
    return np.sign(v) * np.maximum(a - theta, 0.0)


def _vec_norm_prox(v, tau, p):
    """``prox_{tau ||.||_p}(v)`` in closed form for p in {1, 2, inf}; None otherwise."""
    if tau <= 0:
        return v.copy()
    if p == 1:                                  # soft-thresholding
        return np.sign(v) * np.maximum(np.abs(v) - tau, 0.0)
    if p == 2:                                  # block soft-thresholding
        nv = np.linalg.norm(v)
        return v * max(0.0, 1.0 - tau / nv) if nv > 0 else np.zeros_like(v)
    if math.isinf(p):                           # Moreau: v - proj onto the l1 ball of radius tau
        return v - project_l1_ball(v, tau)
    return None


# ----------------------------------------------------------------------------------------
# the interface
# ----------------------------------------------------------------------------------------
class Regularizer:
    """Interface of a DRR regularizer ``R`` (see the module docstring).

    Subclasses implement :meth:`expr`, :meth:`value` and :meth:`prox`; :meth:`conjugate`
    (and :meth:`conjugate_expr` for the CVXPY dual) are optional. ``R`` must be convex;
    :func:`check` probes all of this numerically.
    """

    name = "regularizer"

    def expr(self, w, groups):
        """CVXPY expression of ``R(w)`` for a CVXPY vector ``w`` (convex)."""
        raise NotImplementedError

    def value(self, w, groups):
        """``R(w)`` for a NumPy vector ``w``."""
        raise NotImplementedError

    def prox(self, v, step, groups):
        """``argmin_x 1/2 ||x - v||^2 + step * R(x)`` for a NumPy vector ``v``, ``step >= 0``."""
        raise NotImplementedError

    def conjugate(self, u, groups):
        """``R*(u) = sup_x u^T x - R(x)`` (``+inf`` outside the domain). Optional."""
        raise NotImplementedError

    def conjugate_expr(self, u, groups):
        """``(expression, constraints)`` of ``R*(u)`` in CVXPY. Optional (dual form only)."""
        raise NotImplementedError

    @property
    def has_conjugate(self):
        """True when the subclass overrides :meth:`conjugate`."""
        return type(self).conjugate is not Regularizer.conjugate

    @property
    def has_conjugate_expr(self):
        return type(self).conjugate_expr is not Regularizer.conjugate_expr

    def __repr__(self):
        return f"{type(self).__name__}()"


_RHO_NAMES = {"identity": 1.0, "half_square": 2.0}


class GroupNorm(Regularizer):
    """SPEC §8's family :math:`R(w) = \\rho(\\|w|C\\|_{q,r})` (seed 004 eq. 8).

    .. math::

        \\|w|C\\|_{q,r} = \\big\\|(\\|w^1\\|_q, \\dots, \\|w^g\\|_q)\\big\\|_r,
        \\qquad \\rho(t) \\in \\{t,\\ \\tfrac12 t^2,\\ t^p/p\\}.

    Parameters
    ----------
    q, r : float in [1, inf] (``np.inf`` or ``"inf"`` allowed)
        Inner (within a group) and outer (across groups) exponents. ``q < 1`` or ``r < 1``
        raise ``ValueError``: the problem would be non-convex (SPEC §8).
    rho : ``"identity"`` (t), ``"half_square"`` (t²/2) or a number ``p >= 1`` (t^p/p)
        ``p = 1`` is ``"identity"`` and ``p = 2`` is ``"half_square"``; ``p < 1`` is refused
        (non-convex).

    Conjugate (SPEC §8): :math:`R^*(u) = \\rho^*(\\|u|C\\|_{q^*,r^*})` with the monotone
    conjugate :math:`\\rho^*`: the indicator of ``s <= 1`` for ``t`` (0 or ``+inf``; a
    relative rounding allowance ``indicator_tol`` = 1e-9 is granted), ``s²/2`` for ``t²/2``,
    ``s^{p*}/p*`` for ``t^p/p``.

    Prox. Closed forms are used where known; otherwise the prox is numerical:

    * norm part (``rho = t``): ``q = r`` in {1, 2, inf} (soft-thresholding, block
      soft-thresholding of the whole vector, ``v - proj_{l1 ball}(v)``); ``r = 1`` with
      ``q`` in {1, 2, inf} (group by group: soft-thresholding, group soft-thresholding,
      ``v^c - proj`` of ``v^c`` onto the l1 ball of radius ``step``, by Moreau's identity since
      the dual of (inf, 1) is (1, inf)); ``q = 2`` with ``r`` in {2, inf} (the prox acts on the
      vector of group norms, each group keeping its direction); a single group (any ``r``).
    * ``rho = t²/2`` with ``q = r = 2``: ``v / (1 + step)``.
    * other ``rho`` over a norm with a closed-form prox: the optimality condition gives
      ``x = prox_{tau N}(v)`` with ``tau = step * rho'(N(x))``; ``tau`` is the root of an
      increasing scalar function, found by Brent's method to machine precision.
    * everything else (e.g. ``q = 1.5``, ``(3, 2)``, ``(1, inf)``): a CVXPY/Clarabel solve of the
      prox problem (one conic solve per call, accurate to about 1e-8; the parametrised
      problem is cached per group structure). Fast solvers should bring their own prox for
      these cases.
    """

    name = "group_norm"
    indicator_tol = 1e-9
    #: CVXPY form of ``||.||_p`` and ``t^p`` for rational ``p`` not in {1, 2, inf}: False = the
    #: SOC representation, True = power cones (DRR retries with power cones when Clarabel
    #: does not reach 'optimal' on the SOC form; observed for (q, r) = (1.5, 3)).
    power_cones = False

    def __init__(self, q=2, r=2, rho="half_square"):
        self.q = _exponent(q, "q")
        self.r = _exponent(r, "r")
        if isinstance(rho, str):
            key = rho.strip().lower()
            if key not in _RHO_NAMES:
                raise ValueError(f"rho must be 'identity', 'half_square' or a number p >= 1; "
                                 f"got {rho!r}")
            p = _RHO_NAMES[key]
        elif isinstance(rho, bool) or not isinstance(rho, numbers.Real) or not np.isfinite(rho):
            raise ValueError(f"rho must be 'identity', 'half_square' or a finite number p >= 1; "
                             f"got {rho!r}")
        elif rho < 1:
            raise ValueError(f"rho = t^p/p needs p >= 1; for p = {rho!r} < 1 rho is not convex "
                             "and the problem would be non-convex (SPEC §8)")
        else:
            p = float(rho)
        self.p = p
        self.rho = "identity" if p == 1 else "half_square" if p == 2 else p
        self.q_star, self.r_star = dual_exponent(self.q), dual_exponent(self.r)
        self.p_star = dual_exponent(p)
        self._prox_cache = {}

    def __repr__(self):
        f = lambda e: "inf" if math.isinf(e) else f"{e:g}"
        return f"GroupNorm(q={f(self.q)}, r={f(self.r)}, rho={self.rho!r})"

    # ---- norms --------------------------------------------------------------------------
    @staticmethod
    def group_norm(w, groups, q, r):
        """``||w|C||_{q,r}`` of a vector, or of every column of a matrix."""
        w = np.asarray(w, float)
        if w.ndim == 1:
            return _vec_norm(np.array([_vec_norm_1d(w[g], q) for g in groups]), r)
        inner = np.stack([_vec_norm(w[g], q, axis=0) for g in groups], axis=0)
        return _vec_norm(inner, r, axis=0)

    def norm(self, w, groups):
        """``||w|C||_{q,r}``."""
        return self.group_norm(w, groups, self.q, self.r)

    def dual_norm(self, u, groups):
        """The dual norm ``||u|C||_{q*,r*}``."""
        return self.group_norm(u, groups, self.q_star, self.r_star)

    # ---- rho and its monotone conjugate ----------------------------------------------
    def rho_value(self, t):
        t = np.asarray(t, float)
        return t if self.p == 1 else t ** self.p / self.p

    def rho_prime(self, t):
        return 1.0 if self.p == 1 else t ** (self.p - 1.0)

    def rho_conjugate(self, s):
        """``rho*(s) = sup_{t >= 0} s t - rho(t)`` for ``s >= 0``."""
        s = np.asarray(s, float)
        if self.p == 1:
            return np.where(s <= 1.0 + self.indicator_tol, 0.0, np.inf)
        return s ** self.p_star / self.p_star

    # ---- the interface ------------------------------------------------------------------
    def value(self, w, groups):
        out = self.rho_value(self.norm(w, groups))
        return float(out) if np.ndim(out) == 0 else out

    def conjugate(self, u, groups):
        out = self.rho_conjugate(self.dual_norm(u, groups))
        return float(out) if np.ndim(out) == 0 else out

    def _cvx_group_norm(self, w, groups, q, r):
        import cvxpy as cp

        pc = self.power_cones
        if q == r or len(groups) == 1:
            return _cvx_norm(w, q, pc)
        return _cvx_norm(cp.hstack([_cvx_norm(w[g], q, pc) for g in groups]), r, pc)

    def expr(self, w, groups):
        import cvxpy as cp

        if self.p == 2 and self.q == 2 and (self.r == 2 or len(groups) == 1):
            return 0.5 * cp.sum_squares(w)
        N = self._cvx_group_norm(w, groups, self.q, self.r)
        if self.p == 1:
            return N
        if self.p == 2:
            return 0.5 * cp.square(N)
        return _cvx_power(N, self.p, self.power_cones) / self.p

    def with_power_cones(self):
        """A copy whose CVXPY expressions use power cones (see ``power_cones``)."""
        new = GroupNorm(self.q, self.r, self.rho)
        new.power_cones = True
        return new

    def conjugate_expr(self, u, groups):
        import cvxpy as cp

        S = self._cvx_group_norm(u, groups, self.q_star, self.r_star)
        if self.p == 1:
            return cp.Constant(0.0), [S <= 1]
        if self.p == 2:
            if self.q_star == 2 and (self.r_star == 2 or len(groups) == 1):
                return 0.5 * cp.sum_squares(u), []
            return 0.5 * cp.square(S), []
        return _cvx_power(S, self.p_star, self.power_cones) / self.p_star, []

    # ---- prox -----------------------------------------------------------------------------
    def norm_prox(self, v, tau, groups):
        """``prox_{tau ||.|C||_{q,r}}(v)`` in closed form, or None when none is known."""
        q, r = self.q, self.r
        if tau <= 0:
            return v.copy()
        if q == r or len(groups) == 1:
            return _vec_norm_prox(v, tau, q)
        if r == 1:
            x = np.empty_like(v)
            for g in groups:
                xg = _vec_norm_prox(v[g], tau, q)
                if xg is None:
                    return None
                x[g] = xg
            return x
        if q == 2:
            n = np.array([np.linalg.norm(v[g]) for g in groups])
            a = _vec_norm_prox(n, tau, r)
            if a is None:
                return None
            x = np.zeros_like(v)
            for c, g in enumerate(groups):
                if n[c] > 0:
                    x[g] = v[g] * (a[c] / n[c])
            return x
        return None

    def prox_is_closed_form(self, groups):
        """True when :meth:`prox` does not fall back on a CVXPY solve for these groups."""
        v = np.zeros(sum(len(g) for g in groups))
        return self.norm_prox(v, 1.0, groups) is not None

    def prox(self, v, step, groups):
        v = np.asarray(v, float)
        if v.ndim == 2:
            steps = np.broadcast_to(np.asarray(step, float), (v.shape[1],))
            return np.column_stack([self.prox(v[:, j], steps[j], groups)
                                    for j in range(v.shape[1])])
        step = float(step)
        if step < 0 or not np.isfinite(step):
            raise ValueError(f"step must be a finite number >= 0; got {step!r}")
        if step == 0:
            return v.copy()
        if self.p == 1 and float(self.dual_norm(v, groups)) <= step:
            return np.zeros_like(v)       # Moreau: v lies in the dual ball of radius step
        c, far = unit_scale_scalar(np.max(np.abs(v)) if v.size else 0.0)
        if far:      # prox_{s rho(N)}(v) = c prox_{s c^(p-2) rho(N)}(v / c), rho = t^p/p
            with np.errstate(over="ignore", under="ignore"):
                return c * self.prox(v / c, step * c ** (self.p - 2.0), groups)
        if self.p == 1:
            x = self.norm_prox(v, step, groups)
            return x if x is not None else self._numerical_prox(v, step, groups)
        if self.p == 2 and self.q == 2 and (self.r == 2 or len(groups) == 1):
            return v / (1.0 + step)
        if self.norm_prox(np.zeros_like(v), 1.0, groups) is None:
            return self._numerical_prox(v, step, groups)
        # rho o N: x = prox_{tau N}(v) with tau = step * rho'(N(x)); h(tau) is increasing.
        Nv = float(self.norm(v, groups))
        if Nv == 0:
            return v.copy()
        hi = step * self.rho_prime(Nv)

        def h(tau):
            return tau - step * self.rho_prime(float(self.norm(self.norm_prox(v, tau, groups),
                                                             groups)))

        if h(hi) <= 0:
            tau = hi
        else:
            tau = brentq(h, 0.0, hi, xtol=1e-15 * hi, rtol=4 * np.finfo(float).eps,
                         maxiter=500)
        return self.norm_prox(v, tau, groups)

    def _numerical_prox(self, v, step, groups):
        """CVXPY/Clarabel solve of ``min 1/2||x - v||^2 + step R(x)`` (cached, DPP)."""
        import cvxpy as cp

        key = (v.size, tuple(tuple(g.tolist()) for g in groups))
        if key not in self._prox_cache:
            x = cp.Variable(v.size)
            vp, sp_ = cp.Parameter(v.size), cp.Parameter(nonneg=True)
            prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x - vp)
                                          + sp_ * self.expr(x, groups)))
            self._prox_cache[key] = (prob, x, vp, sp_)
        prob, x, vp, sp_ = self._prox_cache[key]
        vp.value, sp_.value = v, step
        prob.solve(solver="CLARABEL")
        if prob.status != cp.OPTIMAL:
            from .solution import SolverError

            raise SolverError(f"numerical prox of {self!r}: CVXPY status {prob.status!r}")
        return np.asarray(x.value, float).copy()


# the checker (its own module; public here)
from ._regcheck import PROX_AT_POINT, check, check_prox_at  # noqa: E402
