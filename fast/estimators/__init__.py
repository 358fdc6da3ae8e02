"""scikit-learn estimators built on the fast solvers.

Every estimator builds the :mod:`refmodels` problem of its family and solves it with
:func:`fast.solve`, so a fitted estimator's numbers are SPEC's canonical ones.
Binary formulations handle more than two classes one-vs-one by default, as ``SVC`` does
(one problem per pair of classes, prediction by vote; ``multi_class="ovr"``: one problem per
class against the rest, as ``LinearSVC``, prediction by the largest score).
Kernels are given as in ``SVC``: ``kernel`` in ``"linear"``, ``"rbf"``, ``"poly"``,
``"precomputed"`` with ``gamma`` (``"scale"``, ``"auto"`` or a number), ``degree``, ``coef0``.

``sample_weight`` and ``class_weight`` are not supported: the formulations of SPEC weigh
every sample equally (the margin mean and variance are unweighted), and a weighted variant
would be a different problem; ``fit`` has no ``sample_weight`` argument rather than one
that is ignored.

Layout: :mod:`._base` holds :class:`BaseMarginClassifier`, the shared base (as
scikit-learn's ``BaseLibSVM`` serves ``SVC``): the kernel and stopping parameters, their
validation, the kernel object, the validation of ``X`` and ``y``, the problems of a fit,
their solution and certificates, and the one-vs-one / one-vs-rest fit and prediction of the binary
formulations. :mod:`.binary` holds those (SVM, ODML, LDM, ODM, SVMm: a class each, with
its problem class, hyperparameters and ``__init__``); the estimators with a ``fit`` of
their own have a module each: :mod:`.mcodm` (natively multi-class), :mod:`.mklm` (the
kernel is learnt), :mod:`.drr` (DRR and DRM, transductive). :mod:`._docs` holds the
documentation they share (parameter and attribute entries, Notes paragraphs, the
Examples), written once and composed into each docstring.
"""
from ._base import _KERNEL_PARAMS, BaseMarginClassifier, _nonnegative, _positive  # noqa: F401
from .binary import (LDMClassifier, ODMClassifier, ODMLClassifier, SVMClassifier,
                     SVMmClassifier)
from .drr import DRMClassifier, DRRClassifier
from .mcodm import McODMClassifier
from .mklm import MKLmClassifier, _CallableKernel  # noqa: F401

__all__ = ["BaseMarginClassifier", "SVMClassifier", "ODMLClassifier", "LDMClassifier",
           "ODMClassifier", "McODMClassifier", "SVMmClassifier", "MKLmClassifier",
           "DRRClassifier", "DRMClassifier"]
