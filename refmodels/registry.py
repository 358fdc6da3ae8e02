"""The one family registry: ``fast.solve``, the command line and the tests all read it.

A family is a problem class of :mod:`refmodels` (the name users type: ``rm.ODM``,
``refmodels certify --family ODM``), the module that states it (``refmodels/<module>.py``,
mirrored by ``fast/<module>.py`` and ``tests/test_<module>.py``), its SPEC section, and its
scikit-learn estimator in :mod:`fast` (if any). Adding a family: write the three mirrored
files and the estimator, then add one line here (see ``CONTRIBUTING.md``).
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module


@dataclass(frozen=True)
class Family:
    """One formulation family (see the module docstring)."""

    name: str                    #: problem class name in :mod:`refmodels`
    module: str                  #: ``refmodels/<module>.py``, ``fast/<module>.py``
    spec: str                    #: section of the mathematics (docs/conventions)
    estimator: str | None        #: estimator class in :mod:`fast`, or None
    summary: str                 #: one line for help texts
    ref_module: str = ""         #: dotted module of the problem class (default refmodels.<module>)
    solver_module: str = ""      #: dotted module with ``solve`` (default fast.<module>)
    #: ``fast.path``: the regularization parameter (larger = weaker), the dual variable
    #: whose box grows with it (the warm start is the previous one scaled by
    #: ``v_new / v_old``), and the method a path uses when the caller names none
    path_param: str | None = None
    path_scaled_dual: str | None = None
    path_method: str | None = None

    @property
    def ref_path(self):
        return self.ref_module or f"refmodels.{self.module}"

    def problem_class(self):
        """The problem class (imports its module on first use)."""
        return getattr(import_module(self.ref_path), self.name)

    def fast_module(self):
        """The module whose ``solve(prob, method, tol, max_iter, random_state, warm_start,
        **options)`` solves this family (``fast.<module>``)."""
        return import_module(self.solver_module or f"fast.{self.module}")


FAMILIES = {f.name: f for f in (
    Family("SVM", "svm", "§1", "SVMClassifier", "soft-margin SVM (hinge), optional intercept",
           path_param="C", path_scaled_dual="alpha", path_method="auto"),
    Family("ODML", "odml", "§2", "ODMLClassifier", "ODM^L: hinge + margin variance and mean",
           path_param="lam", path_scaled_dual="alpha"),
    Family("LDM", "odml", "§3", "LDMClassifier", "large margin distribution machine",
           path_param="C", path_scaled_dual="beta"),
    Family("ODM", "odm", "§4", "ODMClassifier", "optimal margin distribution machine",
           path_param="lam", path_method="auto"),
    Family("McODM", "mcodm", "§5", "McODMClassifier", "multi-class ODM (Alg. 3 outer loop)"),
    Family("RelaxedMcODM", "mcodm", "§5", None, "mcODM's convex relaxed QP at a given M"),
    Family("SVMm", "svmm", "§6", "SVMmClassifier", "SVM with a margin upper bound (eps)",
           path_param="C1"),
    Family("EpsSVM", "svmm", "§6", None, "SVMm with eps = 0"),
    Family("MKLm", "mklm", "§7", "MKLmClassifier", "multiple kernel learning with SVMm"),
    Family("EpsMKL", "mklm", "§7", None, "MKLm with eps = 0"),
    Family("DRR", "drr", "§8", "DRRClassifier", "discriminative ridge regression"),
    Family("DRM", "drr", "§8", "DRMClassifier", "DRR with q = r = 2, rho = t^2/2"),
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
