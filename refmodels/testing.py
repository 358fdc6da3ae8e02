"""A conformance suite for your own solver: :func:`check_solver`.

``check_solver(solve, "ODM")`` draws problems of one family at every shape and scale (unit,
raw, tiny and huge features, an offset far from the origin, near-duplicate points;
hyperparameters over orders of magnitude), hands each to ``solve(X, y, params)``,
certifies the point it returns, diagnoses each failure (:func:`refmodels.diagnose.diagnose`)
and returns a :class:`Report`: the pass rate, the distribution of ``holds_at``, and the
worst cases, each with the code that reproduces it. On a failure it raises
``AssertionError`` with that summary (as scikit-learn's ``check_estimator`` does), so it fits
in a pytest suite::

    from refmodels.testing import check_solver

    def test_my_odm_solver():
        check_solver(my_solve, "ODM", n=50)

``solve(X, y, params)`` gets ``X`` (m x d, dense), ``y`` (+1/-1) and ``params``, a dict of
the family's hyperparameters by their names (``lam``, ``mu``, ``theta`` for ODM; ``C`` and
``fit_intercept`` for the SVM; ...) with the kernel: ``params["kernel"]`` is ``"linear"``,
``"rbf"`` (with ``gamma``: ``exp(-gamma ||x - z||^2)``) or ``"poly"`` (with ``degree``,
``gamma``, ``coef0``: ``(gamma x^T z + coef0)^degree``). It returns the point: a dict with
``w`` (linear weights) or ``coef`` (``f(x) = sum_i coef_i k(x_i, x) + intercept``), an
optional ``intercept`` (or ``b``), optional dual variables by their SPEC names
(``alpha``, ``zeta``, ``beta``, ...) and an optional ``source`` (``"libsvm"``,
``"sklearn.SVC"``, ...: the library's causes are then offered), or a
:class:`refmodels.Solution`, or an array (``w`` for the linear kernel, ``coef`` otherwise).
"""
from __future__ import annotations

import math
import time

import numpy as np

from . import kernels as _k
from .solution import Solution

__all__ = ["check_solver", "suite_problem", "as_solution", "Report", "SCALES", "FAMILIES"]

#: the scales of the suite: ``(factor, offset, near duplicates)`` applied to standard-normal
#: features (offset in units of the factor)
SCALES = {
    "unit": (1.0, 0.0, False),
    "raw": (50.0, 2.0, False),           # features in the tens, uncentred (raw data sets)
    "small": (1e-3, 0.0, False),
    "large": (1e3, 0.0, False),
    "offset": (1.0, 1e3, False),         # far from the origin
    "duplicates": (1.0, 0.0, True),      # the last m/5 points near copies of the first
}

def families():
    """The families the suite draws: the registry's with a ``suite`` draw (binary problems a
    ``solve(X, y, params)`` can answer), in its order."""
    from . import registry

    return tuple(n for n, f in registry.FAMILIES.items() if f.suite is not None)


#: the families the suite draws (at import; :func:`families` also sees families registered
#: later)
FAMILIES = families()

#: the reference optimum (and the objective gap) is computed for problems up to this size
REFERENCE_MAX_M = 200


def _family_params(family, rng):
    """Hyperparameters over orders of magnitude (as the project's sweeps draw them): the
    family's ``suite`` draw in the registry."""
    from . import registry
    from ._generate import Draw

    fam = registry.FAMILIES.get(family)
    if fam is None or fam.suite is None:
        raise ValueError(f"family must be one of {families()}; got {family!r}")
    return fam.suite(Draw(rng))


def _kernel_params(name, d, rng):
    if name == "linear":
        return {"kernel": "linear"}
    if name == "rbf":
        return {"kernel": "rbf", "gamma": float(10 ** rng.uniform(-1, 0.5)) / d}
    if name == "poly":
        return {"kernel": "poly", "degree": int(rng.integers(2, 4)),
                "gamma": float(10 ** rng.uniform(-1, 0)) / d, "coef0": 1.0}
    raise ValueError(f"kernels must name 'linear', 'rbf' or 'poly'; got {name!r}")


def make_kernel(params):
    """The :mod:`refmodels.kernels` object of a suite ``params`` dict."""
    name = params.get("kernel", "linear")
    if name == "linear":
        return _k.Linear()
    if name == "rbf":
        return _k.RBF(gamma=params["gamma"])
    return _k.Polynomial(degree=params["degree"], gamma=params["gamma"], coef0=params["coef0"])


def suite_problem(family, seed, scale="unit", kernel="linear", m=None, fixed=None):
    """``(X, y, params, problem)`` of the suite, reproducible from its arguments: ``m``
    points (drawn in 10..150 when None) in 1..8 dimensions at ``scale`` (a key of
    :data:`SCALES`), two classes (+1/-1, one possibly rarer), ``params`` the family's
    hyperparameters and kernel (``fixed`` overrides some), ``problem`` the refmodels problem
    they make."""
    from . import registry

    if scale not in SCALES:
        raise ValueError(f"scale must be one of {sorted(SCALES)}; got {scale!r}")
    rng = np.random.default_rng(seed)
    m = int(rng.integers(10, 151)) if m is None else int(m)
    d = int(rng.integers(1, 9))
    frac = float(rng.choice([0.5, 0.5, 0.3, 0.8]))
    y = np.where(rng.random(m) < frac, 1.0, -1.0)
    y[0], y[-1] = 1.0, -1.0
    X = rng.normal(size=(m, d)) + 0.8 * y[:, None] * rng.normal(size=d)[None, :]
    factor, offset, dup = SCALES[scale]
    X = X * factor + offset * factor
    if dup and m >= 5:
        k = m // 5
        X[-k:] = X[:k] * (1 + 1e-9 * rng.normal(size=(k, d)))
    params = {**_family_params(family, rng), **_kernel_params(kernel, d, rng)}
    cls = registry.FAMILIES[family].problem_class()
    # tiny, huge and far-off features come with loss weights divided by the squared norm
    # they add (as a user scales C to the data): the same conditioning as on unit features,
    # the arithmetic of those magnitudes; raw features keep the weights as drawn
    span = factor ** 2 * (1.0 + offset ** 2) if scale in ("small", "large", "offset") else 1.0
    if span != 1.0 and kernel == "linear":
        for name in cls.rescale_params or ():
            params[name] = params[name] / span
    params.update(fixed or {})
    hyper = {k: v for k, v in params.items() if k not in ("kernel", "gamma", "degree", "coef0")}
    prob = cls(X, y, kernel=make_kernel(params), **hyper)
    return X, y, params, prob


def as_solution(prob, point):
    """A solver's answer (dict, Solution or array, see the module docstring) as a
    :class:`refmodels.Solution` of ``prob``. An intercept the problem does not have is kept
    in ``info["intercept"]`` (certified as a failing residual, and diagnosed)."""
    from .diagnose import with_foreign_intercept

    source = "user"
    if isinstance(point, Solution):
        source = str((point.info or {}).get("source", "user"))
        d = {"intercept": point.intercept, **{k: v for k, v in point.variables.items()
                                              if v is not None and k != "b"}}
        if point.coef is not None:
            d["coef"] = point.coef
        point = d
    elif not isinstance(point, dict):
        arr = np.asarray(point, dtype=float)
        point = {"w": arr} if prob.kernel.is_linear else {"coef": arr}
    point = dict(point)
    source = str(point.pop("source", source))
    if "b" in point and "intercept" not in point:
        point["intercept"] = point.pop("b")
    b = point.pop("intercept", None)
    b = None if b is None else float(np.asarray(b, dtype=float).ravel()[0])
    dual = {k: point.pop(k) for k in list(point) if k in prob.dual_names}
    kw = {k: point.pop(k) for k in ("w", "coef") if point.get(k) is not None}
    if not prob.kernel.is_linear:
        kw.pop("w", None)
    for k in list(point):
        if k not in getattr(prob, "primal_slack_names", ()):
            point.pop(k)                          # anything else the solver reports
    if len(dual) != len(prob.dual_names):
        dual = {}
    foreign = b if (b is not None and not prob.has_intercept and b != 0.0) else None
    sol = prob.solution_from(**kw, intercept=None if foreign is not None else b,
                             dual=dual or None, source=source)
    if foreign is not None:
        with_foreign_intercept(prob, sol, foreign)
    return sol


class Case:
    """One problem of the suite: how it was drawn, what the solver returned, its certificate
    and, when it fails, its diagnosis."""

    def __init__(self, family, seed, scale, kernel, m, d, params):
        self.family, self.seed, self.scale, self.kernel = family, seed, scale, kernel
        self.m, self.d, self.params = m, d, params
        self.ok, self.holds_at, self.worst, self.error = False, math.inf, None, None
        self.diagnosis, self.certificate = None, None
        self.solve_time = self.certify_time = 0.0

    def code(self, fixed=None):
        """Python that reproduces this case with your ``solve``."""
        fx = f", fixed={fixed!r}" if fixed else ""
        return (f"from refmodels.testing import suite_problem, as_solution\n"
                f"X, y, params, prob = suite_problem({self.family!r}, seed={self.seed}, "
                f"scale={self.scale!r}, kernel={self.kernel!r}{fx})\n"
                f"cert = prob.certify(as_solution(prob, solve(X, y, params)))\n"
                f"print(cert); print(cert.diagnose())")

    def line(self):
        what = (f"{self.family} seed={self.seed} scale={self.scale} kernel={self.kernel} "
                f"m={self.m} d={self.d}")
        if self.error:
            return f"{what}: the solver raised {self.error}"
        head = f"{what}: holds_at {self.holds_at:.1e}"
        if self.worst:
            head += f" ({self.worst})"
        return head

    def to_dict(self):
        return {"family": self.family, "seed": self.seed, "scale": self.scale,
                "kernel": self.kernel, "m": self.m, "d": self.d, "params": self.params,
                "ok": self.ok, "holds_at": self.holds_at, "worst": self.worst,
                "error": self.error, "solve_time": self.solve_time,
                "diagnosis": None if self.diagnosis is None else str(self.diagnosis)}


class Report:
    """The outcome of :func:`check_solver`: ``cases``, ``pass_rate``, ``holds_at`` (every
    case's), ``worst`` (the failing cases, worst first); ``str()`` is the summary."""

    def __init__(self, family, cases, tol, fixed=None, elapsed=0.0, n_worst=3):
        self.family, self.cases, self.tol, self.fixed = family, list(cases), tol, fixed
        self.elapsed, self.n_worst = elapsed, n_worst
        #: ``reproduce(case) -> str``: the code that reproduces a case (default: Python
        #: with your ``solve``; the command line gives its own command)
        self.reproduce = None

    @property
    def passed(self):
        return sum(c.ok for c in self.cases)

    @property
    def ok(self):
        return self.passed == len(self.cases)

    @property
    def pass_rate(self):
        return self.passed / len(self.cases) if self.cases else 0.0

    @property
    def holds_at(self):
        return np.array([c.holds_at for c in self.cases])

    @property
    def worst(self):
        bad = [c for c in self.cases if not c.ok]
        return sorted(bad, key=lambda c: -(c.holds_at if np.isfinite(c.holds_at) else 1e300))

    def histogram(self):
        """``[(label, count)]``: ``holds_at`` by decade."""
        edges = [1e-12, 1e-9, 1e-6, 1e-3, 1.0]
        labels = ["<= 1e-12", "1e-12..1e-9", "1e-9..1e-6", "1e-6..1e-3", "1e-3..1", "> 1",
                  "error"]
        counts = [0] * len(labels)
        for c in self.cases:
            h = c.holds_at
            if c.error or not np.isfinite(h):
                counts[-1] += 1
                continue
            counts[int(np.searchsorted(edges, h, side="left"))] += 1
        return [(lab, n) for lab, n in zip(labels, counts) if n]

    def __str__(self):
        n = len(self.cases)
        lines = [f"check_solver({self.family}): {self.passed}/{n} certificates hold at "
                 f"tol={self.tol:g} (pass rate {100 * self.pass_rate:.0f} %) in "
                 f"{self.elapsed:.1f} s",
                 "  holds_at: " + ", ".join(f"{lab}: {k}" for lab, k in self.histogram())]
        by_scale = {}
        for c in self.cases:
            by_scale.setdefault(c.scale, [0, 0])
            by_scale[c.scale][0] += c.ok
            by_scale[c.scale][1] += 1
        lines.append("  by scale: " + ", ".join(f"{s} {a}/{b}" for s, (a, b) in
                                                 by_scale.items()))
        causes = {}
        for c in self.worst:
            key = _short_cause(c)
            causes[key] = causes.get(key, 0) + 1
        if causes:
            lines.append("  diagnoses: " + "; ".join(f"{k} ({v})" for k, v in causes.items()))
        for i, c in enumerate(self.worst[:self.n_worst], 1):
            lines.append(f"  worst {i}: {c.line()}")
            if c.diagnosis is not None:
                lines += [f"    {t}" for t in str(c.diagnosis).splitlines()]
            lines.append("    reproduce:")
            code = self.reproduce(c) if self.reproduce else c.code(self.fixed)
            lines += [f"      {t}" for t in code.splitlines()]
        return "\n".join(lines)

    __repr__ = __str__

    def to_dict(self):
        return {"family": self.family, "tol": self.tol, "passed": self.passed,
                "n": len(self.cases), "pass_rate": self.pass_rate,
                "histogram": self.histogram(), "elapsed": self.elapsed,
                "cases": [c.to_dict() for c in self.cases]}


def _short_cause(case):
    """A few words for the summary's count of diagnoses."""
    if case.error:
        return "the solver raised"
    dg = case.diagnosis
    if dg is None:
        return "not diagnosed"
    if dg.candidates:
        return f"optimal for {dg.candidates[0].description.split(' = ')[0].split(':')[0]}"
    return "looks stopped early" if dg.stopped_early else "far from optimal"


def _plan(n, scales, kernels, seed):
    """``[(seed, scale, kernel)]``: ``n`` cases cycling over the scales and kernels."""
    scales = (scales,) if isinstance(scales, str) else tuple(scales)
    if "all" in scales:
        scales = tuple(SCALES)
    for s in scales:
        if s not in SCALES:
            raise ValueError(f"scales must be 'all' or names from {sorted(SCALES)}; got {s!r}")
    if isinstance(kernels, str):
        kernels = (kernels,)
    kernels = tuple(kernels)
    if not kernels:
        raise ValueError("kernels must name at least one kernel")
    for k in kernels:
        _kernel_params(k, 1, np.random.default_rng(0))
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be an integer >= 1; got {n!r}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise ValueError(f"seed must be an integer; got {seed!r}")
    rng = np.random.default_rng(seed)
    seeds = rng.integers(0, 2**31 - 1, size=n)
    return [(int(seeds[i]), scales[i % len(scales)], kernels[(i // len(scales)) % len(kernels)])
            for i in range(n)]


def run_case(solve, family, seed, scale, kernel, tol, fixed=None, diagnose=True):
    """One case: draw, solve, certify (reference for m <= :data:`REFERENCE_MAX_M`),
    diagnose a failure."""
    X, y, params, prob = suite_problem(family, seed, scale, kernel, fixed=fixed)
    case = Case(family, seed, scale, kernel, prob.m, X.shape[1], params)
    t0 = time.perf_counter()
    try:
        point = solve(X.copy(), y.copy(), dict(params))
    except Exception as exc:                       # noqa: BLE001 - reported, not raised
        case.error = f"{type(exc).__name__}: {exc}"
        case.solve_time = time.perf_counter() - t0
        return case
    case.solve_time = time.perf_counter() - t0
    return certify_case(case, prob, point, tol, diagnose)


def certify_case(case, prob, point, tol, diagnose=True):
    """Certify a case's point (see :func:`run_case`)."""
    from .diagnose import certify_foreign_intercept

    t0 = time.perf_counter()
    try:
        sol = as_solution(prob, point)
        cert = certify_foreign_intercept(prob, sol, tol,
                                         reference=prob.m <= REFERENCE_MAX_M)
    except Exception as exc:                       # noqa: BLE001 - a malformed point
        case.error = f"the point cannot be certified: {type(exc).__name__}: {exc}"
        case.certify_time = time.perf_counter() - t0
        return case
    case.certificate = cert
    case.ok, case.holds_at = cert.ok, cert.holds_at
    name, worst = cert.worst
    case.worst = f"{name} {abs(worst):.1e}" if name else None
    if not cert.ok and diagnose:
        try:
            case.diagnosis = cert.diagnose()
        except Exception as exc:                   # noqa: BLE001 - the diagnosis is an aside
            from .diagnose import Diagnosis

            case.diagnosis = Diagnosis(cert, [], [], f"no diagnosis ({type(exc).__name__}: "
                                                     f"{exc})")
    case.certify_time = time.perf_counter() - t0
    return case


def check_solver(solve, family, *, n=50, scales="all", kernels=("linear",), seed=0,
                 tol=1e-6, fixed=None, raise_on_failure=True, diagnose=True, progress=None):
    """Run a solver over ``n`` problems of ``family`` and certify every point.

    Parameters
    ----------
    solve : callable ``solve(X, y, params) -> point`` (see the module docstring).
    family : one of :func:`families` (the registry's families with a ``suite`` draw:
        ``"ODM"``, ``"SVM"``, ``"LDM"``, ...).
    n : the number of problems.
    scales : ``"all"`` or names from :data:`SCALES` (cycled over the problems).
    kernels : kernel names (``"linear"``, ``"rbf"``, ``"poly"``), cycled.
    seed : the suite's seed (every case records its own, to reproduce it alone).
    tol : the certificate's tolerance.
    fixed : hyperparameters to pin (e.g. ``{"fit_intercept": True}`` for an SVM solver that
        always fits an intercept).
    raise_on_failure : raise ``AssertionError`` with the summary when a certificate fails.
    diagnose : diagnose each failure (:meth:`Certificate.diagnose`).
    progress : a callable ``progress(case)`` called after each case.

    Returns
    -------
    Report : ``pass_rate``, ``holds_at``, ``worst`` (with reproducing code), ``str()``.
    """
    if family not in families():
        raise ValueError(f"family must be one of {families()}; got {family!r}")
    if not callable(solve):
        raise ValueError(f"solve must be a callable solve(X, y, params); got {solve!r}")
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not (
            np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a finite number > 0; got {tol!r}")
    if fixed is not None and not isinstance(fixed, dict):
        raise ValueError(f"fixed must be a dict of hyperparameters; got {fixed!r}")
    plan = _plan(n, scales, kernels, seed)
    t0 = time.perf_counter()
    cases = []
    for s, scale, kernel in plan:
        case = run_case(solve, family, s, scale, kernel, tol, fixed=fixed, diagnose=diagnose)
        cases.append(case)
        if progress is not None:
            progress(case)
    report = Report(family, cases, tol, fixed=fixed, elapsed=time.perf_counter() - t0)
    if raise_on_failure and not report.ok:
        raise AssertionError(str(report))
    return report
