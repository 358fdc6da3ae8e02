"""The one Solution type returned by every reference and fast solver."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


class SolverError(RuntimeError):
    """A reference solve that CVXPY did not report optimal (the solver's status is in the message)."""


@dataclass
class Solution:
    """A point (and the optimum, when a solver produced it) in SPEC's canonical scaling.

    Attributes
    ----------
    objective : float or ndarray
        Canonical **primal** objective of SPEC at this point, every constant included
        (an array with one value per test point for DRR/DRM).
    coef, intercept :
        ``f(x) = sum_i coef_i k(x_i, x) + intercept``. ``coef`` is None for a user's
        point given only by linear weights ``w`` (then ``variables["w"]`` is used).
    variables : dict
        Primal and dual variables by their SPEC names (``w``, ``b``, ``xi``, ``alpha``, ...).
        For a kernel problem, ``w`` lives in the coordinates of the problem's empirical
        kernel map.
    status : str
        ``"optimal"`` or, for an iterative solver that stopped early, ``"max_iter"`` etc.
    solver, form : str
        Who produced the point (``"CLARABEL"``, ``"fast:dcd"``, ``"user"``) and how
        (``"primal"``, ``"dual"``, ``"fast"``, ``"user"``).
    time : float
        Wall-clock seconds of the solve (CVXPY: solve call including canonicalisation).
    n_iter : int or None
    info : dict
        Anything else a solver reports (kernel path, residual reached, rounds, ...).
    """

    objective: Any
    coef: np.ndarray | None
    intercept: float = 0.0
    variables: dict = field(default_factory=dict)
    status: str = "optimal"
    solver: str = ""
    form: str = ""
    time: float = 0.0
    n_iter: int | None = None
    info: dict = field(default_factory=dict)

    @property
    def w(self):
        return self.variables.get("w")

    def __repr__(self):
        obj = self.objective
        obj_s = f"{obj:.10g}" if np.ndim(obj) == 0 else f"array(shape={np.shape(obj)})"
        return (f"Solution(objective={obj_s}, status={self.status!r}, solver={self.solver!r}, "
                f"form={self.form!r}, time={self.time:.3g}s, variables={sorted(self.variables)})")
