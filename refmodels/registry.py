"""The one family registry: ``fast.solve``, the command line and the tests all read it.

A family is a problem class of :mod:`refmodels` (the name users type: ``rm.ODM``,
``refmodels certify --family ODM``), the module that states it (``refmodels/<module>.py``,
mirrored by ``fast/<module>.py`` and ``tests/test_<module>.py``), its SPEC section, and its
scikit-learn estimator in :mod:`fast` (if any). Adding a family: write the three mirrored
files and the estimator, then add its entry here (see ``CONTRIBUTING.md``).

Everything else the package says about one family by name lives in its entry too: its rows
of ``refmodels verify``, its random draws (``refmodels.testing.check_solver`` and the
property tests' generator), the terms ``diagnose`` tries leaving out, whether
``from_sklearn`` maps its estimator. The code reading them never names a family.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import Callable, Mapping


@dataclass(frozen=True, eq=False)
class VerifyCase:
    """One row per kernel of ``refmodels verify``: the hyperparameters, a short setting note
    (``"fit_intercept=True"``) and which of the rows run in the first of the two processes
    (``True``: every kernel's; a tuple: the kernels named, ``"linear"``, ``"rbf"``). The data
    set follows from the class: binary rows on heart, ``multiclass`` on iris, ``base_kernels``
    on heart with two base kernels, ``test_points`` on wine with test points. The processes
    keep the rows whose fast solvers share compiled code together (``refmodels/cli/verify.py``)."""

    params: Mapping
    setting: str = ""
    first_half: bool | tuple = ()

    def in_first_half(self, kernel):
        return self.first_half is True or kernel in (self.first_half or ())


@dataclass(frozen=True, eq=False)
class Family:
    """One formulation family (see the module docstring)."""

    name: str                    #: problem class name in :mod:`refmodels`
    module: str                  #: ``refmodels/<module>.py``, ``fast/<module>.py``
    spec: str                    #: section of the mathematics (docs/conventions)
    estimator: str | None        #: estimator class in :mod:`fast`, or None
    summary: str                 #: one line for help texts
    ref_module: str = ""         #: dotted module of the problem class (default refmodels.<module>)
    solver_module: str = ""      #: dotted module with ``SOLVERS`` (default fast.<module>)
    #: ``fast.path``: the regularization parameter (larger = weaker), the dual variable
    #: whose box grows with it (the warm start is the previous one scaled by
    #: ``v_new / v_old``), and the method a path uses when the caller names none
    path_param: str | None = None
    path_scaled_dual: str | None = None
    path_method: str | None = None
    #: ``refmodels certify --family`` takes it (False: certified through another family)
    command_line: bool = True
    #: its labels are class indices ``0..k-1``, ``k >= 2`` (the generators draw several classes)
    multiclass: bool = False
    #: ``refmodels verify``'s rows (none: certifiable, no row) and the ``fast.solve`` options
    #: of those rows (default: the family's default method)
    verify: tuple = ()
    verify_fast: Mapping = field(default_factory=dict)
    #: ``from_sklearn`` maps a fitted ``fast.<estimator>`` (binary) to this problem
    adapter: bool = False
    #: ``check_solver``'s hyperparameter draw, ``suite(draw) -> dict`` (a
    #: :class:`refmodels._generate.Draw` over the suite's generator); None: not in the suite
    suite: Callable | None = None
    #: the property tests' generator: ``{label: draw -> problem}`` (``make_problem(label, seed)``)
    draws: Mapping = field(default_factory=dict)
    #: ``diagnose``: ``(parameter, neutral value, the term it stands for)`` of a solver that
    #: leaves a term out
    dropped: tuple = ()

    @property
    def ref_path(self):
        return self.ref_module or f"refmodels.{self.module}"

    def problem_class(self):
        """The problem class (imports its module on first use)."""
        return getattr(import_module(self.ref_path), self.name)

    def fast_module(self):
        """The module whose ``SOLVERS`` (:class:`fast._methods.Solvers`: the method table,
        the choice rule, the fallbacks) solve this family (``fast.<module>``)."""
        return import_module(self.solver_module or f"fast.{self.module}")


def _odm_suite(d):
    theta = d.theta(-3)
    return {"lam": d.hp(-2, 3), "mu": d.uniform(0.05, 1), "theta": theta}


def _odm_draw(d):
    theta = d.theta(-4)
    return d.make(lam=d.hp(), mu=d.uniform(0.05, 1), theta=theta)


def _drr_draw(d):
    Xt = d.test_points()
    q, r = d.pick([(2, 1), (1, 1), (2, 2), (float("inf"), 1)])
    return d.cls(d.X, d.labels01(), Xt, alpha=d.hp(-2, 1), beta=d.hp(-2, 2), q=q, r=r,
                 rho="identity", kernel=d.kernel)


_SVMM = {"C1": 1.0, "C2": 0.5, "eps": 0.5}
_ODM = {"lam": 1.0, "mu": 0.5, "theta": 0.3}

FAMILIES = {f.name: f for f in (
    Family("SVM", "svm", "§1", "SVMClassifier", "soft-margin SVM (hinge), optional intercept",
           path_param="C", path_scaled_dual="alpha", path_method="auto", adapter=True,
           verify=(VerifyCase({"C": 1.0}, first_half=("rbf",)),
                   VerifyCase({"C": 1.0, "fit_intercept": True}, "fit_intercept=True",
                              first_half=True)),
           suite=lambda d: {"C": d.hp(), "fit_intercept": d.coin(0.5)},
           draws={"SVM": lambda d: d.make(C=d.hp()),
                  "SVM+b": lambda d: d.make(C=d.hp(), fit_intercept=True)}),
    Family("ODML", "odml", "§2", "ODMLClassifier", "ODM^L: hinge + margin variance and mean",
           path_param="lam", path_scaled_dual="alpha", adapter=True,
           verify=(VerifyCase({"lam": 100.0, "mu1": 0.5, "mu2": 0.1}, first_half=("rbf",)),),
           suite=lambda d: {"lam": d.hp(-1, 3), "mu1": d.hp(-2, 2), "mu2": d.hp(-2, 2)},
           draws={"ODML": lambda d: d.make(lam=d.hp(-1, 4), mu1=d.hp(-2, 3), mu2=d.hp(-2, 3))},
           dropped=(("mu1", 0.0, "the margin variance"), ("mu2", 0.0, "the margin mean"))),
    Family("LDM", "odml", "§3", "LDMClassifier", "large margin distribution machine",
           path_param="C", path_scaled_dual="beta", adapter=True,
           verify=(VerifyCase({"C": 1.0, "lam1": 0.25, "lam2": 0.1}, first_half=("rbf",)),),
           suite=lambda d: {"C": d.hp(-2, 2), "lam1": d.hp(-2, 2), "lam2": d.hp(-2, 2)},
           draws={"LDM": lambda d: d.make(C=d.hp(), lam1=d.hp(-2, 3), lam2=d.hp(-2, 3))},
           dropped=(("lam1", 0.0, "the margin variance"), ("lam2", 0.0, "the margin mean"))),
    # verify runs ODM by seed 002's own method, the dual coordinate descent (Alg. 1), which
    # shares its compiled epoch loop with the other DCD rows: fast.solve's default, "auto",
    # takes TRON on the linear kernel, whose compilation made both a first and a warm run
    # of the table slower (validation/decisions.md); TRON is certified against the
    # reference by the test suite (tests/test_fast_odm.py, tests/test_scales.py)
    Family("ODM", "odm", "§4", "ODMClassifier", "optimal margin distribution machine",
           path_param="lam", path_method="auto", adapter=True,
           verify=(VerifyCase(_ODM),), verify_fast={"method": "dcd"},
           suite=_odm_suite, draws={"ODM": _odm_draw},
           dropped=(("theta", 0.0, "the insensitive band (theta)"),
                    ("mu", 1.0, "mu (the weight of the loss above the band)"))),
    Family("McODM", "mcodm", "§5", "McODMClassifier", "multi-class ODM (Alg. 3 outer loop)",
           multiclass=True, verify=(VerifyCase(_ODM),),
           draws={"McODM": lambda d: d.make(lam=d.hp(-1, 2), mu=d.uniform(0.1, 1),
                                            theta=d.uniform(0, 0.8))}),
    Family("RelaxedMcODM", "mcodm", "§5", None, "mcODM's convex relaxed QP at a given M",
           command_line=False, multiclass=True),
    Family("SVMm", "svmm", "§6", "SVMmClassifier", "SVM with a margin upper bound (eps)",
           path_param="C1", adapter=True, verify=(VerifyCase(_SVMM, first_half=True),),
           suite=lambda d: {"C1": d.hp(), "C2": d.hp(-3, 2), "eps": d.uniform(0, 3),
                            "fit_intercept": True},
           draws={"SVMm": lambda d: d.make(C1=d.hp(), C2=d.hp(-3, 2), eps=d.uniform(0, 3))},
           dropped=(("eps", 0.0, "the band's width eps"), ("C2", 0.0, "the loss above the band"))),
    Family("EpsSVM", "svmm", "§6", None, "SVMm with eps = 0",
           verify=(VerifyCase({"C1": 1.0, "C2": 0.5}, first_half=True),),
           suite=lambda d: {"C1": d.hp(), "C2": d.hp(-3, 2), "fit_intercept": True},
           draws={"EpsSVM": lambda d: d.make(C1=d.hp(), C2=d.hp(-3, 2))},
           dropped=(("C2", 0.0, "the loss above the margin"),)),
    Family("MKLm", "mklm", "§7", "MKLmClassifier", "multiple kernel learning with SVMm",
           verify=(VerifyCase(_SVMM, first_half=True),),
           draws={"MKLm": lambda d: d.cls(d.X, d.y, kernels=[d.kernel, d.other_kernel()],
                                          C1=d.hp(), C2=d.hp(-3, 2), eps=d.uniform(0, 2))}),
    Family("EpsMKL", "mklm", "§7", None, "MKLm with eps = 0"),
    Family("DRR", "drr", "§8", "DRRClassifier", "discriminative ridge regression",
           verify=(VerifyCase({"alpha": 1.0, "beta": 1.0, "q": 2, "r": 1, "rho": "identity"},
                              "q=2, r=1", first_half=("rbf",)),),
           draws={"DRR": _drr_draw}),
    Family("DRM", "drr", "§8", "DRMClassifier", "DRR with q = r = 2, rho = t^2/2",
           verify=(VerifyCase({"alpha": 1.0, "beta": 1.0}, first_half=("rbf",)),),
           draws={"DRM": lambda d: d.cls(d.X, d.labels01(), d.test_points(),
                                         alpha=d.hp(-2, 1), beta=d.hp(-2, 2), kernel=d.kernel)}),
)}


def get(name):
    """The family called ``name`` (case-insensitive); ``ValueError`` listing the names."""
    if isinstance(name, str):
        for key, fam in FAMILIES.items():
            if key.lower() == name.strip().lower():
                return fam
    raise ValueError(f"family must be one of {list(FAMILIES)}; got {name!r}")


def of(problem):
    """The family of a problem instance (its class or the nearest registered base class)."""
    for cls in type(problem).__mro__:
        fam = FAMILIES.get(cls.__name__)
        if fam is not None and cls.__module__ == fam.ref_path:
            return fam
    raise ValueError(f"prob must be a refmodels problem ({', '.join(FAMILIES)}); "
                     f"got {type(problem).__name__}")


def register(family):
    """Add a :class:`Family` (e.g. one written outside the package, with ``ref_module`` and
    ``solver_module``); ``fast.solve`` and ``refmodels certify`` then serve it."""
    if not isinstance(family, Family):
        raise ValueError(f"family must be a refmodels.registry.Family; got {family!r}")
    FAMILIES[family.name] = family
    return family
