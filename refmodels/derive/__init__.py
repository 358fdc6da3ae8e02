"""Executable derivations: ``derive(FAMILY)`` walks primal → Lagrangian → stationarity →
dual → map back to the primal → the solver's step, every step with a numerical check.

Each step of a walk-through carries

* its formula, as Unicode text (terminal) and as LaTeX (``--latex``, the documentation),
* the paper and equation it corresponds to (the papers are listed in :data:`REFERENCES`;
  "seed 000" … "seed 004" in docstrings across the package name these five papers),
* one or more :class:`Check` objects: two quantities computed **independently** (for
  instance the optimum of the primal solved by CVXPY and the optimum of the dual solved by
  CVXPY, or a gradient derived by SymPy and the gradient typed from the paper), their
  residual and the tolerance it must meet. A check can fail: perturb one side
  (:meth:`Check.perturbed`) and it does;
* where the paper has an erratum, an :class:`Erratum`: the printed version evaluated on the
  same instance and shown **failing**, beside the corrected one, with both residuals.

**Symbolic steps.** The gradients of the Lagrangians are computed by SymPy, not typed: the
Lagrangian of each family is built as a SymPy expression over explicit symbols
(``w0, w1, …``, ``xi0, …``, multipliers) on the walk-through's small instance,
differentiated by ``sympy.diff`` and evaluated by ``sympy.lambdify``; the check compares
that gradient with the stationarity condition as the paper states it, at a random point.
Everything else (eliminations, duals) is checked numerically on the instance.

The problem classes of :mod:`refmodels` (``rm.ODM``, ``rm.SVMm``, …) supply the reference
optima and certificates; the solver steps (coordinate descent, SMO, the mcODM block
solver by sorting, the reduced gradient, the proximal step) are re-derived here in plain
NumPy so that they read like the papers.

Usage::

    import refmodels as rm
    wt = rm.derive("ODM", seed=0)     # or refmodels.derive.derive
    print(wt)                         # Unicode
    wt.ok                             # every check passes, every erratum's printed form fails
    wt.to_latex(); wt.to_markdown(); wt.to_rst()

and on the console ``refmodels derive ODM [--latex] [--seed N]``.

Layout: :mod:`.core` holds the shared registries and data types (the papers, the families
and their errata, :class:`Check`, :class:`Erratum`, :class:`Step`, :class:`Walkthrough` and
its renderings), :mod:`.render` the tables and the conversion of prose to LaTeX,
:mod:`.numerics` the numerical helpers (reference solves, SymPy gradients, line search,
coordinate descent), :mod:`.algebra` the symbolic steps, :mod:`.figures` the pictures and
:mod:`.exercises` the exercises (their checks in :mod:`.exercise_checks`); one module per
family mirrors the package (:mod:`.svm`, :mod:`.odml` for ODML and LDM, :mod:`.odm`,
:mod:`.mcodm`, :mod:`.svmm`, :mod:`.mklm`, :mod:`.drr`); this module holds the entry points
(:func:`derive`, and ``add_parser`` / ``run`` for ``refmodels derive``).
"""
from __future__ import annotations

import math

import numpy as np

from .core import (ERRATA, FAMILIES, NOTES, REFERENCES, _ALIASES, Check, Erratum, Figure, Note,
                   Step, Walkthrough)
from .drr import _drr
from .mcodm import _mcodm, mcodm_block_alg4_printed, mcodm_block_sort
from .mklm import _mklm, reduced_gradient_direction
from .odm import _odm
from .odml import _margin_distribution
from .svm import _svm, _svmb, smo_svm
from .svmm import _svmm, smo_pair_step

__all__ = ["derive", "FAMILIES", "REFERENCES", "ERRATA", "NOTES", "Walkthrough", "Step",
           "Check", "Erratum", "Note", "Figure", "add_parser", "run",
           # the solver steps re-derived in NumPy, for the exercises and the tests
           "smo_svm", "smo_pair_step", "mcodm_block_sort", "mcodm_block_alg4_printed",
           "reduced_gradient_direction"]


_BUILDERS = {
    "SVM": _svm,
    "SVMb": _svmb,
    "ODML": lambda s: _margin_distribution("ODML", s),
    "LDM": lambda s: _margin_distribution("LDM", s),
    "ODM": _odm,
    "McODM": _mcodm,
    "SVMm": _svmm,
    "MKLm": _mklm,
    "DRR": _drr,
}


def _family(name):
    if not isinstance(name, str):
        raise ValueError(f"family must be a string, one of {list(FAMILIES)}; got {name!r}")
    for f in FAMILIES:
        if f.lower() == name.lower():
            return f
    if name.upper() in _ALIASES:
        return _ALIASES[name.upper()]
    covered = _covered()
    for f in covered:
        if f.lower() == name.lower():
            return covered[f]
    raise ValueError(f"family must be one of {list(FAMILIES)} (or {', '.join(covered)}); "
                     f"got {name!r}")


def _covered():
    """``{registry family: walk-through}`` for the registry's families without a walk-through
    of their own: the walk-through of the first family of the same module (EpsSVM's is
    SVMm's)."""
    from refmodels import registry

    by_module = {}
    for fam in registry.FAMILIES.values():
        if fam.name in FAMILIES:
            by_module.setdefault(fam.module, fam.name)
    return {fam.name: by_module[fam.module] for fam in registry.FAMILIES.values()
            if fam.name not in FAMILIES and fam.module in by_module}


def derive(family, seed=0, latex=False):
    """Walk through the derivation of ``family`` on a small random instance.

    Parameters
    ----------
    family : str
        ``"SVM"``, ``"SVMb"`` (the SVM with an intercept, also ``"SVC"``), ``"ODML"``,
        ``"LDM"``, ``"ODM"``, ``"McODM"``, ``"SVMm"`` (also for ``"EpsSVM"``), ``"MKLm"``
        (also ``"EpsMKL"``) or ``"DRR"`` (also ``"DRM"``); case-insensitive.
    seed : int
        Seed of the random instance (every check must hold on every seed).
    latex : bool
        If True, return the LaTeX rendering (a string) instead of the :class:`Walkthrough`.

    Returns
    -------
    Walkthrough or str
        The steps (primal → Lagrangian → stationarity → dual → map back → complementary
        slackness → solver step), each with its formula, source and checks; ``.ok`` is True
        when every check passes, every erratum's printed version fails and every note's
        checks pass. A step whose computation raises (a solver failing on the instance) is
        kept as a step that could not run, and the walk-through then does not hold.
    """
    import warnings

    fam = _family(family)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {seed!r}")
    if not isinstance(latex, (bool, np.bool_)):
        raise ValueError(f"latex must be True or False; got {latex!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            wt = _BUILDERS[fam](int(seed))
        except Exception as exc:                 # noqa: BLE001 - the instance itself failed
            msg = " ".join(f"{type(exc).__name__}: {exc}".split())
            wt = Walkthrough(fam, int(seed), "(the instance could not be built)",
                             [Step("Instance", "-", "The teaching instance could not be built: "
                                   + msg[:300], "(could not run)", r"\text{(could not run)}",
                                   error=msg)])
    return wt.to_latex() if latex else wt


def add_parser(subparsers):
    """Add ``derive FAMILY [--latex [--standalone]] [--markdown] [--seed N] [--figures DIR]
    [--exercise N [--answer FILE]]`` to the ``refmodels`` command line."""
    p = subparsers.add_parser(
        "derive", help="walk through a family's derivation, every step checked numerically",
        description="Print the derivation of a family (primal, Lagrangian, stationarity, dual, "
                    "map back, complementary slackness, the solver's step) with a numerical "
                    "check per step and the papers' errata shown failing. Exit 0 iff every "
                    "check holds. With --exercise N: print exercise N of the family, or with "
                    "--answer FILE check your answer (exit 0 iff it passes).")
    p.add_argument("family", help=f"one of {', '.join(FAMILIES)} (EpsSVM, EpsMKL, DRM, SVC "
                                  "accepted)")
    p.add_argument("--latex", action="store_true", help="print LaTeX instead of Unicode")
    p.add_argument("--standalone", action="store_true",
                   help="with --latex: a complete document (preamble, \\begin{document}), "
                        "ready for pdflatex or xelatex")
    p.add_argument("--markdown", action="store_true", help="print Markdown instead of Unicode")
    p.add_argument("--seed", type=int, default=0, help="seed of the random instance (default 0)")
    p.add_argument("--figures", metavar="DIR",
                   help="also draw the walk-through's figures into DIR as PNG (needs "
                        "matplotlib); --latex and --markdown then include them")
    p.add_argument("--exercise", type=int, metavar="N",
                   help="print exercise N of this family (0 lists them)")
    p.add_argument("--answer", metavar="FILE",
                   help="with --exercise N: a Python file defining the function the exercise "
                        "asks for; its numerical check is run (exit 0 iff it passes)")
    p.set_defaults(func=run)
    return p


def run(args):
    """Run ``refmodels derive``: print the walk-through; 0 if it holds, 1 if not. With
    ``--exercise``: print the exercise, or check ``--answer`` (0 if it passes, 1 if not)."""
    if getattr(args, "exercise", None) is not None:
        from .exercises import run_exercise

        return run_exercise(_family(args.family), args.exercise, getattr(args, "answer", None),
                            seed=args.seed)
    if getattr(args, "answer", None):
        raise ValueError("--answer needs --exercise N (the exercise it answers)")
    if getattr(args, "standalone", False) and not args.latex:
        raise ValueError("--standalone needs --latex (it makes the LaTeX a complete document)")
    if args.seed < 0:
        raise ValueError(f"--seed must be a non-negative integer; got {args.seed}")
    wt = derive(args.family, seed=args.seed)
    figures = None
    if getattr(args, "figures", None):
        figures = wt.save_figures(args.figures)
    if args.latex:
        print(wt.to_latex(standalone=getattr(args, "standalone", False), figures=figures))
    elif getattr(args, "markdown", False):
        print(wt.to_markdown(figures=figures))
    else:
        print(wt)
        if figures:
            print("figures: " + ", ".join(figures.values()))
    return 0 if wt.ok else 1


class _CallableModule(type(math)):
    """``refmodels.derive`` is both this module and the function :func:`derive`: importing
    the submodule rebinds the package attribute ``refmodels.derive`` to the module, so the
    module forwards calls to the function (``rm.derive("ODM")`` works either way)."""

    def __call__(self, family, seed=0, latex=False):
        return derive(family, seed=seed, latex=latex)


import sys as _sys  # noqa: E402

_sys.modules[__name__].__class__ = _CallableModule

# ``rm.derive`` may be bound to the function (``from .derive import derive`` in the package)
# while the command line asks ``refmodels.derive`` for ``add_parser``/``run``: the function
# carries both, so either binding serves both uses.
derive.add_parser = add_parser
derive.run = run
