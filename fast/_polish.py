"""Active-set Newton refinement of a box QP, shared by the DCD and the SMO.

Coordinate methods (the DCD of :mod:`fast._dcd`, the SMO of :mod:`fast._smo`) converge
linearly, and crawl on ill-conditioned duals (a 1-D RBF Gram, a linear kernel with
``d << m`` and a large C, a polynomial kernel on unscaled data). Once they have found
roughly which variables sit at a bound, the rest is a small QP on the free variables:

.. math::

    \\min_x\\ \\tfrac12 (x-x_0)^\\top Q (x-x_0) + g_0^\\top (x-x_0)
    \\quad\\text{s.t.}\\quad lo \\le x \\le hi,\\quad [\\,s^\\top (x - x_0) = 0\\,],

(``Q`` the dual Hessian on those variables, ``g_0`` the gradient at ``x_0``, the equality
only for the SMO's duals with an intercept), solved by :func:`active_set_qp`, a primal
active-set method: a Newton step on the working free set, a ratio test, release of the
bound variable with the most negative multiplier at a working-set optimum.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

#: eigenvalues below ``EIG_CUTOFF * lambda_max`` are treated as zero (``Q`` is singular for
#: the linear kernel with more free variables than features, for duplicated points, and
#: numerically for smooth kernels)
EIG_CUTOFF = 1e-12

_BLAS = []


def one_blas_thread():
    """A context in which BLAS / LAPACK run on one thread (threadpoolctl, as scikit-learn's
    KMeans does around its own loops). The polishes factorise many small matrices (a few
    hundred rows, ``d x d`` for the low-rank active set) one after another: a second thread
    gains little on them, and when the machine's cores are busy with other work the BLAS
    threads wait for each other and every small factorisation takes many times longer
    (validation/decisions.md has the figures)."""
    if not _BLAS:
        from threadpoolctl import ThreadpoolController

        _BLAS.append(ThreadpoolController())   # made once: finding the libraries costs ms
    return _BLAS[0].limit(limits=1, user_api="blas")


def _release(W, x, lo, hi, mult, scale, skip=None):
    """At a working-set optimum: release from the working set ``W`` the bound variable whose
    multiplier ``mult`` has the most wrong sign (not one of ``skip``); returns its index, or
    -1 (nothing released: optimal) when no multiplier is wrong by more than
    ``1e-12 scale``."""
    viol = np.where(W & (x <= lo), -mult, np.where(W & (x >= hi), mult, 0.0))
    if skip is not None:
        viol[skip] = 0.0
    k = int(np.argmax(viol))
    if viol[k] <= 1e-12 * scale:
        return -1
    W[k] = False
    return k


def _leaves_box(x, d, lo, hi, k):
    """Whether ``d`` moves the variable ``k``, at a bound, out of the box (or not at all).

    Right after ``k`` is released its multiplier says the objective decreases inward, and in
    exact arithmetic the next step (Newton or null-space) moves it inward. On a nearly
    singular ``Q_fr`` the step is dominated by round-off in the gradient of the other free
    variables (amplified by ``1 / ev``), and its ``k`` component can have the wrong sign:
    the ratio test would then stop at once on ``k`` and put it back, and the release repeat
    to the step cap (seen on LDM RBF on haberman at C = 2^20)."""
    return (x[k] <= lo[k] and d[k] <= 0.0) or (x[k] >= hi[k] and d[k] >= 0.0)


def _coordinate_step(x, k, gk, qkk, lo, hi):
    """The exact minimisation along the coordinate ``k`` alone (``gk`` its gradient, ``qkk``
    its curvature; zero curvature: to the bound the gradient points to), in the box: the
    fallback step after :func:`_leaves_box`, a strict decrease of the objective."""
    xn = x.copy()
    if qkk > 0.0:
        xn[k] = min(max(x[k] - gk / qkk, lo[k]), hi[k])
    else:
        xn[k] = hi[k] if gk < 0.0 else lo[k]
    return xn


def _step_is_null(d, x):
    """Whether the step ``d`` is too small to move ``x`` (relative ``1e-15``)."""
    return np.max(np.abs(d)) <= 1e-15 * (1.0 + np.max(np.abs(x)))


def _real_null(null, scale, x, rank, gnorm=0.0, null_rel=0.0):
    """Whether the component ``null`` of the free gradient in the null space of ``Q_fr`` is
    followed (the objective is linear along it: a step to the box). Not when ``Q_fr`` has
    no null space (``rank`` = the number of variables: ``null`` is then only the round-off
    of the projection, which on a badly scaled ``Q`` -- features x1e6 -- is far above
    ``1e-10 scale``), nor when its norm is below ``1e-10 scale``, nor when it is too small
    to move ``x`` (:func:`_step_is_null`): with ``|x|`` large (a box ``[0, 2^20]``),
    round-off leaves such a component in the null space of a nearly singular ``Q_fr``;
    taken as the step it stops the method as if at a working-set optimum with the range
    component (the Newton step) still large (seen on LDM RBF on haberman at C = 2^20).
    Nor when its norm is at most ``null_rel`` times ``gnorm``, the norm of the free
    gradient (:func:`active_set_qp`'s ``null_rel``)."""
    nn = np.linalg.norm(null)
    return (rank < null.size and nn > 1e-10 * scale and nn > null_rel * gnorm
            and not _step_is_null(null, x))


class _Progress:
    """The objective at each release (a working-set optimum): the best point seen, and a
    stop when three releases in a row found no decrease although ``x`` moved in between
    (round-off making the method walk in circles on a badly scaled ``Q``)."""

    def __init__(self, x):
        self.best_x, self.best_f = x.copy(), 0.0
        self.last_f = 0.0
        self.stalls = 0
        self.moved = False

    def at_release(self, x, f):
        """Record the point ``x`` of objective ``f``; False when the method should stop."""
        if f < self.best_f:
            self.best_x, self.best_f = x.copy(), f
        if self.moved:
            if f >= self.last_f - 1e-15 * (1.0 + abs(f)):
                self.stalls += 1
            else:
                self.stalls = 0
            self.last_f = f
        self.moved = False
        return self.stalls < 3


def _first_bound(x, d, lo, hi):
    """``(k, t)``: the variable ``k`` that ``x + t d`` brings to its bound first, and ``t``
    (``inf`` when ``d`` meets no bound)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t_hi = np.where(d > 0, (hi - x) / d, np.inf)
        t_lo = np.where(d < 0, (lo - x) / d, np.inf)
    t_all = np.minimum(t_hi, t_lo)
    k = int(np.argmin(t_all))
    return k, float(t_all[k])


def _ratio_step(x, d, lo, hi, W, unbounded_ok):
    """The ratio test along ``d``: ``(x + d, True)`` when the full step stays in the box and
    may be taken whole (``unbounded_ok``: a Newton step, not a null direction), else
    ``(step to the first bound, False)``, that bound joining ``W``; ``(None, False)`` for a
    null direction that meets no bound.

    A full Newton step ends at the minimiser on the working free set: the caller goes
    straight to :func:`_release` (its multipliers) rather than solving again. Solving again
    at that point would give a step made only of round-off, ``(g_fr residual) / ev``, which on
    a nearly singular ``Q_fr`` (an RBF Gram with a small gamma, eigenvalues down to
    ``EIG_CUTOFF * lambda_max``) is not small: the loop then spent its whole step cap on
    such steps without ever releasing a variable (seen on haberman at C >= 2^14)."""
    k, t = _first_bound(x, d, lo, hi)
    if unbounded_ok and t >= 1.0:
        return x + d, True
    if not np.isfinite(t):
        return None, False
    xn = np.minimum(np.maximum(x + t * d, lo), hi)
    xn[k] = hi[k] if d[k] > 0 else lo[k]
    W[k] = True
    return xn, False


def _restore_equality(x, x0, lo, hi, seq):
    """Put ``seq^T x`` back on ``seq^T x0`` (moved by round-off or by snapping to bounds)
    through the most interior variable, in place."""
    r = float(seq @ (x - x0))
    inside = np.flatnonzero((x > lo) & (x < hi))
    if r != 0.0 and inside.size:
        q = inside[int(np.argmax(np.minimum(x[inside] - lo[inside], hi[inside] - x[inside])))]
        x[q] = min(max(x[q] - r / seq[q], lo[q]), hi[q])


#: counted flops of a Newton step of :func:`active_set_qp` by Cholesky, per ``|fr|^3``, in
#: the unit of its ``4 |fr|^3`` per eigendecomposition (the factorisation runs ~16x faster
#: than the symmetric eigendecomposition: :data:`IPM_STEP_COST`)
CHOL_STEP_COST = 0.25


def _cholesky_newton(Qff, gf, sf=None):
    """The Newton step ``-Q_fr^{-1} g_fr`` by Cholesky when ``Q_fr`` is positive definite
    with a condition number well below ``1 / EIG_CUTOFF`` (LAPACK's 1-norm estimate, within
    a factor ``n`` of the 2-norm one, at most ``1 / (10 n EIG_CUTOFF)``): then the
    eigendecomposition would keep every eigenvalue and give the same step, with no null
    space to follow. With the equality's ``s_fr`` (``sf``), the minimiser on
    ``{s_fr^T d = 0}``: ``d = -Q_fr^{-1} (g_fr + nu s_fr)``, ``nu`` making ``s_fr^T d = 0``
    (the projected Hessian's eigenvalues on that subspace interlace ``Q_fr``'s: the
    eigendecomposition would drop only the direction ``s_fr``). None otherwise (the caller
    takes :func:`_eig_step`)."""
    lapack = sla.lapack
    n = gf.size
    A = 0.5 * (Qff + Qff.T)
    anorm = float(np.max(np.sum(np.abs(A), axis=0)))
    if not (anorm > 0.0 and np.isfinite(anorm)):
        return None
    L, info = lapack.dpotrf(A, lower=1, clean=1)
    if info != 0:
        return None
    rcond, info = lapack.dpocon(L, anorm, uplo="L")
    if info != 0 or not rcond > 10.0 * n * EIG_CUTOFF:
        return None
    rhs = gf[:, None] if sf is None else np.column_stack([gf, sf])
    z, info = lapack.dpotrs(L, rhs, lower=1)
    if info != 0 or not np.all(np.isfinite(z)):
        return None
    if sf is None:
        return -z[:, 0]
    ssq = float(sf @ z[:, 1])
    if not ssq > 0.0:
        return None
    return -(z[:, 0] - (float(sf @ z[:, 0]) / ssq) * z[:, 1])


def _eig_step(Qff, gf, d, fr, x, scale, null_rel):
    """The step of :func:`active_set_qp` on the free set ``fr`` through the symmetric
    eigendecomposition of ``Q_fr``: the Newton step on the eigenvalues above
    ``EIG_CUTOFF * lambda_max``, or the gradient's null-space component when it is to be
    followed (:func:`_real_null`: the objective is linear along it, a step to the box).
    Writes ``d[fr]``; returns whether a full step may be taken (False on a null step)."""
    ev, V = np.linalg.eigh(0.5 * (Qff + Qff.T))
    lmax = max(float(ev[-1]), 0.0)
    keep = ev > EIG_CUTOFF * lmax if lmax > 0 else np.zeros(ev.size, bool)
    coeff = V[:, keep].T @ gf
    null = gf - V[:, keep] @ coeff         # component in the null space
    if _real_null(null, scale, x, int(np.count_nonzero(keep)), float(np.linalg.norm(gf)),
                  null_rel):
        d[fr] = -null                      # linear descent to the box
        return False
    d[fr] = -(V[:, keep] @ (coeff / ev[keep]))
    return True


def active_set_qp(Q, g0, x0, lo, hi, seq=None, budget=np.inf, max_steps=None, null_rel=0.0):
    """The QP of the module doc from ``x0`` (feasible); returns ``(x, change)``.

    Each step solves the Newton system on the working free set ``fr`` (the variables not
    held at a bound) by Cholesky when ``Q_fr`` is well conditioned
    (:func:`_cholesky_newton`, the equality by one more solve), else through the symmetric
    eigendecomposition of ``Q_fr`` (projected on
    ``{seq^T d = 0}`` when ``seq`` is given): the components of the (projected) gradient
    on eigenvalues above ``EIG_CUTOFF * lambda_max`` give the Newton step; a component in
    the null space means the objective is linear along it, and the step follows it to the
    box. A ratio test stops at the first bound (which joins the working set); at a
    working-set optimum the bound variable whose multiplier (``g_t``, or ``g_t + lam s_t``
    with the equality's multiplier ``lam``) has the wrong sign is released. At most
    ``max_steps`` steps (default ``10 n + 10``: from a coordinate-descent point with
    hundreds of free variables the walk to the vertex takes 2-3 n steps, e.g. haberman RBF
    C = 2^14 - 2^20, where ``2 n + 10`` stopped it short), each about ``4 |fr|^3`` flops,
    and at most ``budget`` flops in all (then it stops where it is). ``change`` is the
    decrease of the objective (negative when it improved); ``x`` always lies in the box and
    keeps ``seq^T x = seq^T x0`` up to round-off.

    ``null_rel`` (default 0: off): a null-space component of norm at most ``null_rel``
    times the (projected) free gradient's is not followed; the Newton step is taken. Such a
    component lives on eigenvalues just below the cutoff: the objective is linear along it
    only over short distances, yet the ratio test follows it across the box (steps of
    ``t ~ 10^13`` along a direction of norm ``5e-10``, ``x`` in ``[0, 2^18]``), one bound
    per factorisation, while the range component of the gradient (its multipliers of
    size 1-10) is left untouched; a release after such a walk then meets a step that
    leaves the box, and the method stops on its stall rule short of the working-set
    optimum (SVM with intercept, RBF, haberman C = 2^18, 2^20: ``max_iter`` with 14
    polishes; with ``1e-6``, certified).
    """
    n = g0.size
    x = x0.copy()
    if max_steps is None:
        max_steps = 10 * n + 10
    scale = max(1.0, float(np.max(np.abs(g0)))) if n else 1.0
    W = (x <= lo) | (x >= hi)          # working set: variables held at a bound
    spent = 0.0
    at_opt = False                     # at the minimiser on the working free set
    rel = -1                           # the variable released by the last step
    skip = np.zeros(n, bool)           # released in vain since x last moved (equality only)
    prog = _Progress(x)
    for _ in range(max_steps):
        D = x - x0
        gx = g0 + Q @ D
        fr = np.flatnonzero(~W)
        # (a Newton step by Cholesky; the eigendecomposition, when taken, costs more below)
        spent += (0.0 if at_opt else CHOL_STEP_COST * float(fr.size) ** 3) + 2.0 * n * n
        if spent > budget:
            break                          # out of budget: keep what was gained
        d = np.zeros(n)
        lam = 0.0
        unbounded_ok = True
        if fr.size and seq is not None and at_opt:
            sf = seq[fr]
            ss = float(sf @ sf)
            if ss > 0.0:
                lam = -float(sf @ gx[fr]) / ss     # multiplier of the equality
        elif fr.size:
            gf = gx[fr]
            Qff = Q[np.ix_(fr, fr)]
            sf = seq[fr] if seq is not None else None
            ss = float(sf @ sf) if sf is not None else 0.0
            if ss > 0.0:
                lam = -float(sf @ gf) / ss         # multiplier of the equality
            step = _cholesky_newton(Qff, gf, sf if ss > 0.0 else None)
            if step is not None:
                d[fr] = step                       # Q_fr well conditioned: no null space
            else:
                spent += 4.0 * float(fr.size) ** 3
                if spent > budget:
                    break
                if ss > 0.0:
                    # the equality: work in {s_fr^T d = 0} through the projector P
                    def proj(v):
                        return v - sf * (sf @ v) / ss
                    Qff = Qff - np.outer(sf, sf @ Qff) / ss
                    Qff = Qff - np.outer(Qff @ sf, sf) / ss
                    gf = proj(gf)
                unbounded_ok = _eig_step(Qff, gf, d, fr, x, scale, null_rel)
                if ss > 0.0:
                    d[fr] = proj(d[fr])
        if at_opt or fr.size == 0 or _step_is_null(d, x):
            # optimal on the working set: release the worst bound multiplier, or stop
            at_opt = False
            if not prog.at_release(x, float(g0 @ D + 0.5 * D @ (gx - g0))):
                break
            rel = _release(W, x, lo, hi, gx + lam * seq if seq is not None else gx, scale,
                           skip)
            if rel < 0:
                break
            continue
        if rel >= 0 and _leaves_box(x, d, lo, hi, rel):
            if seq is None:
                # round-off turned the step: the coordinate step on the released variable
                x = _coordinate_step(x, rel, gx[rel], Q[rel, rel], lo, hi)
                W[rel] = x[rel] <= lo[rel] or x[rel] >= hi[rel]
                skip[:] = False
                prog.moved = True
            else:
                # a lone coordinate would break the equality: put it back, try the next
                W[rel] = True
                skip[rel] = True
                at_opt = True
            rel = -1
            continue
        rel = -1
        xn, at_opt = _ratio_step(x, d, lo, hi, W, unbounded_ok)
        if xn is None:
            break                          # unbounded direction: leave it to the caller
        x = xn
        skip[:] = False
        prog.moved = True
    x = np.minimum(np.maximum(x, lo), hi)
    D = x - x0
    if float(g0 @ D + 0.5 * D @ (Q @ D)) > prog.best_f:
        x = prog.best_x                    # round-off lost ground since the best release
    if seq is not None:
        # clipping may move seq^T x by round-off: put it back on the most interior variable
        _restore_equality(x, x0, lo, hi, seq)
    D = x - x0
    return x, float(g0 @ D + 0.5 * D @ (Q @ D))


#: counted flops of one step of :func:`interior_point_qp` per ``k^3`` (``k`` variables), in
#: the unit of :func:`active_set_qp`'s ``4 |fr|^3`` per eigendecomposition: a Cholesky
#: factorisation runs ~16x faster than the symmetric eigendecomposition of the same matrix
#: (OpenBLAS, one thread; the timings: validation/decisions.md), so ``4 / 16``
IPM_STEP_COST = 0.25
#: the interior-point method's step cap (Mehrotra's method takes 25-40 steps to ``mu`` of
#: ``1e-14`` on the SMO duals of the KEEL sets at C up to 2^20)
IPM_MAX_STEPS = 60


def _longest(v, dv):
    """The longest step ``alpha <= 1`` with ``v + alpha dv >= 0`` (``v > 0``)."""
    neg = dv < 0.0
    return min(1.0, float(np.min(-v[neg] / dv[neg]))) if neg.any() else 1.0


def mehrotra_box(grad, factor, stop, n, a=None, beq=0.0, moved=None):
    """Mehrotra's predictor-corrector method (Mehrotra, SIAM J. Optim. 2(4), 1992; Nocedal
    and Wright, *Numerical Optimization*, 2nd ed., Alg. 16.4) on the box QP

    .. math::

        \\min_\\xi\\ \\tfrac12 \\xi^\\top Q_s \\xi + c_s^\\top \\xi
        \\quad\\text{s.t.}\\quad 0 \\le \\xi \\le 1,\\quad [\\,a^\\top \\xi = b_{eq}\\,],

    the one iteration of the package's two interior points (:func:`interior_point_qp`, a
    dense Cholesky factorisation; :func:`fast._svmm_linear.ipm`, Woodbury in the space of
    the features). ``z``, ``w`` are the multipliers of ``xi >= 0`` and ``t = 1 - xi >= 0``
    (``t`` carried apart from ``1 - xi``: near the upper bound ``1 - xi`` has no digits
    left), ``y`` the equality's. The caller brings its linear algebra and its stopping rule:

    * ``grad(xi)``: ``Q_s xi + c_s``;
    * ``factor(h)``: the solver of the Newton system ``(Q_s + diag(h)) v = r`` (a function
      of ``r``), or None when the factorisation fails (the method ends at its last point);
    * ``stop(steps, xi, t, z, w, y, gq, rd, rp, mu)``: True to end before the next step,
      given the gradient ``gq``, the dual residual ``rd = gq - z + w + y a``, the primal
      one ``rp = a^T xi - b_eq`` and ``mu`` (the mean complementarity);
    * ``moved(ap, dx)`` (optional): told each step, ``xi`` having moved by ``ap dx``.

    The start: the centre of the box, ``z = max(1, -gq) + 1``, ``w = max(1, gq) + 1``. Each
    step: the affine-scaling (predictor) direction, the step lengths to the boundary, the
    centring ``sigma = (mu_aff / mu)^3``, the corrector with the second-order terms
    ``dxi dz`` and ``-dxi dw``, then 0.99 of the longest steps (one common step with the
    equality: its residual shrinks by it). The equality enters by the Schur complement
    ``a^T M^{-1} a`` of its column. Returns ``(xi, t, z, w, y, steps)`` (``steps``: the
    factorisations).
    """
    xi = np.full(n, 0.5)
    t = 1.0 - xi
    gq = grad(xi)
    z = np.maximum(1.0, -gq) + 1.0
    w = np.maximum(1.0, gq) + 1.0
    y = 0.0
    steps = 0
    while True:
        if steps:
            gq = grad(xi)
        rd = gq - z + w + (y * a if a is not None else 0.0)
        rp = float(a @ xi) - beq if a is not None else 0.0
        mu = float(xi @ z + t @ w) / (2 * n)
        if stop(steps, xi, t, z, w, y, gq, rd, rp, mu):
            break
        solve = factor(z / xi + w / t)
        if solve is None:
            break
        steps += 1
        Ma = solve(a) if a is not None else None
        aMa = float(a @ Ma) if a is not None else 1.0
        if not (aMa > 0.0 and np.isfinite(aMa)):
            # the Schur complement of the equality lost to round-off: the Newton system is
            # singular to working precision (a degenerate optimum, more variables free than
            # the Hessian's rank, as eps = 0 makes alpha_i = beta_i a null direction of
            # SVMm's dual), and its solve returned no digits. End at the last point, as when
            # the factorisation fails; the caller's crossover finishes it
            break

        def direction(target, cz, cw):
            rz = target - xi * z - cz              # xi dz + z dxi = rz
            rw = target - t * w - cw               # t dw - w dxi = rw   (dt = -dxi)
            dx = solve(-rd + rz / xi - rw / t)
            dy = 0.0
            if a is not None:
                dy = (float(a @ dx) + rp) / aMa
                dx = dx - dy * Ma
            return dx, (rz - z * dx) / xi, (rw + w * dx) / t, dy

        dx, dz, dw, dy = direction(0.0, 0.0, 0.0)           # predictor (affine scaling)
        if not np.all(np.isfinite(dx)):
            break                                   # as above: a solve without digits
        ap = min(_longest(xi, dx), _longest(t, -dx))
        ad = min(_longest(z, dz), _longest(w, dw))
        mu_aff = float((xi + ap * dx) @ (z + ad * dz) + (t - ap * dx) @ (w + ad * dw)) / (2 * n)
        sigma = (mu_aff / mu) ** 3 if mu > 0.0 else 0.0
        dx, dz, dw, dy = direction(sigma * mu, dx * dz, -dx * dw)   # corrector
        if not (np.all(np.isfinite(dx)) and np.all(np.isfinite(dz))
                and np.all(np.isfinite(dw)) and np.isfinite(dy)):
            break
        ap = 0.99 * min(_longest(xi, dx), _longest(t, -dx))
        ad = 0.99 * min(_longest(z, dz), _longest(w, dw))
        if a is not None:
            ap = ad = min(ap, ad)
        xi = xi + ap * dx
        t = t - ap * dx
        z = z + ad * dz
        w = w + ad * dw
        y += ad * dy
        if moved is not None:
            moved(ap, dx)
    return xi, t, z, w, y, steps


def crossover_masks(xi, t, z, w, ratio=1.0):
    """The crossover of an interior point: the variables whose distance to a bound is
    below ``ratio`` times its multiplier go there; returns the masks ``(at_lower,
    at_upper)`` (the lower bound first)."""
    low = xi < ratio * z
    return low, (t < ratio * w) & ~low


def interior_point_qp(Q, g0, x0, lo, hi, seq=None, budget=np.inf, max_steps=IPM_MAX_STEPS,
                      null_rel=0.0):
    """The QP of the module doc by a primal-dual interior-point method; returns
    ``(x, change, steps)`` (``change`` as :func:`active_set_qp`'s, ``x`` in the box and on
    ``seq^T x = seq^T x0``).

    Mehrotra's predictor-corrector method (:func:`mehrotra_box`, for the box
    ``0 <= xi <= 1`` of the scaled variables ``x = lo + (hi - lo) xi``): each step one
    Cholesky factorisation of ``Q_s + diag(z / xi + w / (1 - xi))`` (``z``, ``w`` the
    multipliers of the two bounds; the equality through the Schur complement
    ``a^T M^{-1} a`` of its column ``a``). Its
    cost does not depend on how far the optimum lies, where the active set releases one
    bound per eigendecomposition and the SMO crawls along the near-null directions of a
    numerically singular ``Q`` (LDM RBF on spambase at C = 2^20: the optimum
    ~10^5-10^6 away along eigenvalues down to 1e-14 lambda_max). Its point is strictly
    inside the box: the crossover puts on its bound every variable whose multiplier exceeds
    its distance to that bound (``xi_t < z_t`` or ``1 - xi_t < w_t``), keeps the equality
    on the most interior variable, and finishes with :func:`active_set_qp` from there (a
    Newton step on the free variables, a release if a multiplier is wrong) within what is
    left of ``budget`` (counted flops: ``IPM_STEP_COST k^3`` per step; ``null_rel`` is
    handed to it). At most
    ``max_steps`` steps; a factorisation that fails (round-off on a singular ``Q`` once the
    barrier terms vanish) ends the method at its last point. It stops once the gap
    ``2 k mu`` is at the round-off of the objective's change and the residuals are small
    (the face is then known: the active set of the crossover finishes exactly).
    """
    k = g0.size
    if k == 0:
        return x0.copy(), 0.0, 0
    D = hi - lo
    if not np.all(D > 0.0):
        raise ValueError("interior_point_qp needs hi > lo for every variable")
    Qs = D[:, None] * Q * D[None, :]
    cs = D * (g0 + Q @ (lo - x0))                  # 1/2 xi^T Qs xi + cs^T xi (+ const)
    a = D * seq if seq is not None else None
    beq = float(seq @ (x0 - lo)) if seq is not None else 0.0
    xi0 = (x0 - lo) / D
    f0 = float(xi0 @ (0.5 * (Qs @ xi0) + cs))
    spent = 0.0
    cmax = float(np.max(np.abs(cs)))
    amax = float(np.max(np.abs(a))) if a is not None else 0.0

    def grad(xi):
        return Qs @ xi + cs

    def stop(steps, xi, t, z, w, y, gq, rd, rp, mu):
        nonlocal spent
        if steps >= max_steps:
            return True
        spent += IPM_STEP_COST * float(k) ** 3 + 6.0 * k * k
        if spent > budget:
            return True
        fchange = abs(float(xi @ (0.5 * (gq + cs))) - f0)
        return (2 * k * mu <= 1e-14 * (1.0 + fchange)
                and float(np.max(np.abs(rd))) <= 1e-9 * (1.0 + float(np.max(np.abs(gq - cs)))
                                                        + cmax)
                and abs(rp) <= 1e-9 * (1.0 + abs(beq) + amax))

    def factor(h):
        try:
            L = sla.cho_factor(Qs + np.diag(h), lower=True, overwrite_a=True,
                               check_finite=False)
        except np.linalg.LinAlgError:
            return None
        return lambda r: sla.cho_solve(L, r, check_finite=False)

    xi, t, z, w, _, steps = mehrotra_box(grad, factor, stop, k, a, beq)
    x = np.minimum(lo + D * xi, hi - D * t)
    low, up = crossover_masks(xi, t, z, w)
    x[low] = lo[low]
    x[up] = hi[up]
    if seq is not None:
        _restore_equality(x, x0, lo, hi, seq)
    Dx = x - x0
    gx = g0 + Q @ Dx
    f_cross = float(g0 @ Dx + 0.5 * Dx @ (gx - g0))
    # the active set from there: a misclassified variable is released at its first
    # working-set optimum
    xa, change = active_set_qp(Q, gx, x, lo, hi, seq=seq, budget=max(budget - spent, 0.0),
                               null_rel=null_rel)
    if not f_cross + change < 0.0:
        return x0.copy(), 0.0, steps                # no progress: leave it to the caller
    return xa, f_cross + change, steps


#: the subspace polish of :func:`fast._dcd.run` takes at most this many conjugate-gradient
#: iterations per polish ...
SUBSPACE_MAX_CG = 250
#: ... and stops once the residual is within this fraction of the descent's tolerance
SUBSPACE_PG_FRACTION = 0.1


def subspace_polish(oracle, sigma, p, dg, lo, hi, alpha, s, budget, pg_tol=0.0):
    """The subspace polish of :func:`fast._dcd.run` (one copy ``sigma``, linear path, any
    number of features, dense or CSR rows): a projected Newton step on the free variables ``F``
    (strictly inside their box), the others held where they are. ``Q_FF = Z_F Z_F^T +
    dg I`` with ``Z_F = sigma diag(qy_F) X_F`` is never formed: the Newton direction
    ``Q_FF D = -g_F`` is found by conjugate gradients, each iteration two products with the
    rows ``X_F`` (O(their stored entries)), stopped at a relative residual of 1e-12 or
    once every entry of the residual (the free variables' gradient after the step) is
    within ``SUBSPACE_PG_FRACTION * pg_tol`` (the descent's stop asks ``pg_tol``; near the
    optimum the first residual is already small), on curvature that is not positive
    (``Q_FF`` is singular when ``|F|`` exceeds the rank of ``X_F``), at
    :data:`SUBSPACE_MAX_CG` iterations or when ``budget`` multiply-adds are spent. The step
    is then projected on the box, halved until the exact change of the dual (a quadratic:
    ``g_F^T delta + 1/2 delta^T Q_FF delta``) is a decrease, and ``alpha`` is modified in
    place. Returns the CG iterations taken, positive when the step
    was kept, negative (or 0) when not. Deterministic: no random draws."""
    F = np.flatnonzero((alpha > lo) & (alpha < hi))
    if F.size == 0:
        return 0
    XF = oracle.X[F]
    q = sigma * oracle.qy[F]
    g = sigma * s[F] + p + dg * alpha[F]
    per_iter = 2.0 * (XF.nnz if sp.issparse(XF) else XF.size) + 10.0 * F.size

    # the transpose laid out once: each product with it is then a row-wise pass
    XFt = XF.T.tocsr() if sp.issparse(XF) else np.ascontiguousarray(XF.T)

    def Qv(v):
        z = np.asarray(XFt @ (q * v)).ravel()
        return q * np.asarray(XF @ z).ravel() + dg * v

    # conjugate gradients on Q_FF D = -g from D = 0
    D = np.zeros(F.size)
    r = -g
    dirn = r.copy()
    rr = float(r @ r)
    stop = 1e-24 * rr
    pg_stop = SUBSPACE_PG_FRACTION * pg_tol
    its = 0
    max_its = int(min(SUBSPACE_MAX_CG, F.size, max(1.0, budget / per_iter)))
    while its < max_its and rr > stop and not float(np.max(np.abs(r))) <= pg_stop:
        Qd = Qv(dirn)
        curv = float(dirn @ Qd)
        its += 1
        if not curv > 1e-14 * float(dirn @ dirn) * (1.0 + float(np.max(oracle.diag[F]))):
            break                       # no positive curvature left along dirn
        step = rr / curv
        D += step * dirn
        r -= step * Qd
        rr_new = float(r @ r)
        dirn = r + (rr_new / rr) * dirn
        rr = rr_new
    if not np.any(D):
        return -its
    a0 = alpha[F]
    scale = 1.0 + abs(float(g @ a0))
    t = 1.0
    for _ in range(30):
        delta = np.clip(a0 + t * D, lo, hi) - a0
        z = np.asarray(XFt @ (q * delta)).ravel()
        change = float(g @ delta) + 0.5 * (float(z @ z) + float(np.sum(dg * delta * delta)))
        if change < -1e-15 * scale:
            alpha[F] = a0 + delta
            return max(its, 1)
        t *= 0.5
    return -its
