"""refmodels: the ground truth for margin-distribution classifiers and discriminative ridge
regression, stated in CVXPY in SPEC's canonical scaling, with KKT certificates.

Families are imported on first use (``rm.ODM`` imports :mod:`refmodels.odm`).
"""
from importlib import import_module

from . import kernels
from .certify import Certificate
from .solution import Solution, SolverError

__version__ = "0.1.0"

_FAMILIES = {
    "SVM": "svm",
    "ODML": "odml", "LDM": "odml",
    "ODM": "odm",
    "McODM": "mcodm", "RelaxedMcODM": "mcodm",
    "SVMm": "svmm", "EpsSVM": "svmm",
    "MKLm": "mklm", "EpsMKL": "mklm",
    "DRR": "drr", "DRM": "drr",
}
_SUBMODULES = {"regularizers", "certify", "base", "cli", "datasets", "kernels"}

__all__ = ["kernels", "Certificate", "Solution", "SolverError", *_FAMILIES]


def __getattr__(name):
    if name in _FAMILIES:
        return getattr(import_module(f".{_FAMILIES[name]}", __name__), name)
    if name in _SUBMODULES:
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module 'refmodels' has no attribute {name!r}")
