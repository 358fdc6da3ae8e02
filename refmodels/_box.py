"""A family's dual stated as data: the box QP that the dual solvers (DCD, SMO) take.

``min_alpha 1/2 u^T G u + sum_k p_k e^T alpha_k + 1/2 sum_k dg_k ||alpha_k||^2`` over
``0 <= alpha_k <= hi_k``, with ``u = Y sum_k sign_k alpha_k``: one block ``alpha_k`` of
``m`` variables per signed copy ``k`` of the points (ODM: ``zeta`` with sign +1 and
``beta`` with sign -1; the SVM: ``alpha`` alone). It is the negated maximisation dual of
the family (``D_min = -D_max``), so a solver that minimises it and a certificate that
evaluates ``D_max`` read the same numbers from the problem.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class BoxDual(NamedTuple):
    """Per copy ``k``: the dual variable's name, ``sign``, linear term ``p``, diagonal
    ``dg`` and upper bound ``hi`` (``lo`` is 0)."""

    names: tuple
    sign: np.ndarray
    p: np.ndarray
    dg: np.ndarray
    hi: np.ndarray
