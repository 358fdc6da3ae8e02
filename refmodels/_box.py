"""A family's formulation stated as data, for the fast solvers to read.

:class:`BoxDual`, the box QP that the dual solvers (DCD, SMO) take::

    min_alpha 1/2 u^T K u + sum_k p_k e^T alpha_k + 1/2 sum_k dg_k ||alpha_k||^2
    over 0 <= alpha_k <= hi_k,   u = Y (offset e + sum_k sign_k alpha_k),

with one block ``alpha_k`` of ``m`` variables per signed copy ``k`` of the points (ODM:
``zeta`` with sign +1 and ``beta`` with sign -1; the SVM: ``alpha`` alone) and ``K`` the
problem's Gram ``G`` (``metric = 0``) or, for ODML / LDM, ``G (I + A G)^{-1}`` with
``A = metric * P``, ``P = I - y y^T / m`` (the Gram of the whitened data, SPEC §2). It is
the negated maximisation dual of the family (``D_min = -D_max``, constant included), so a
solver that minimises it and a certificate that evaluates ``D_max`` read the same numbers
from the problem.

:class:`MarginLoss`, the per-sample loss of a primal ``1/2 ||w||^2 + sum_i ell(gamma_i)``
of the margins ``gamma_i`` (ODM's eq. 18), for the primal Newton methods (TRON, the kernel
Newton).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class BoxDual(NamedTuple):
    """Per copy ``k``: the dual variable's name, ``sign``, linear term ``p``, diagonal
    ``dg`` and upper bound ``hi`` (``lo`` is 0); for all copies the ``offset`` of ``u`` and
    the ``metric`` of the Gram (module docstring; 0 and 0 but for ODML / LDM)."""

    names: tuple
    sign: np.ndarray
    p: np.ndarray
    dg: np.ndarray
    hi: np.ndarray
    offset: float = 0.0
    metric: float = 0.0


class MarginLoss(NamedTuple):
    """``ell`` by name and parameters: ``"odm"`` with ``(c, mu, theta)``, ``ell(g) =
    c [max(0, 1-theta-g)^2 + mu max(0, g-1-theta)^2]`` (SPEC §4 eq. 18); ``"squared_hinge"``
    with ``(C,)``, ``ell(g) = C max(0, 1-g)^2``. :data:`fast._tron.LOSS_KINDS` maps the
    names to TRON's codes."""

    kind: str
    params: tuple
