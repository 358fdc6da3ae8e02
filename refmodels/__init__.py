"""refmodels: the ground truth for margin-distribution classifiers and discriminative ridge
regression, stated in CVXPY in SPEC's canonical scaling, with KKT certificates.

Families are imported on first use (``rm.ODM`` imports :mod:`refmodels.odm`); the families
are listed once, in :mod:`refmodels.registry`.
"""
from importlib import import_module

from . import kernels
from .certify import Certificate
from .solution import Solution, SolverError
from .workspace import Workspace

__version__ = "0.1.0"

from .registry import FAMILIES as _REGISTRY

_FAMILIES = {name: fam.module for name, fam in _REGISTRY.items()}
_SUBMODULES = {"regularizers", "certify", "base", "cli", "datasets", "kernels", "registry",
               "adapters", "formats", "derive", "workspace", "diagnose", "explain",
               "testing"}

__all__ = ["kernels", "Certificate", "Solution", "SolverError", "Workspace", "derive",
           "from_sklearn",
           *_FAMILIES]


def __getattr__(name):
    """Families and submodules on first use. ``rm.derive`` is the walk-through module, which
    is callable (``rm.derive("ODM")``); ``rm.from_sklearn`` the adapter function."""
    if name == "from_sklearn":
        from .adapters import from_sklearn

        return from_sklearn
    if name in _FAMILIES:
        return getattr(import_module(f".{_FAMILIES[name]}", __name__), name)
    if name in _SUBMODULES:
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module 'refmodels' has no attribute {name!r}")
