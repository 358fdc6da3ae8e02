"""Workspaces: where what is computed from a problem is kept, outside the problem.

A problem (:class:`refmodels.base.Problem`) holds its data, its hyperparameters and its
formulation, and nothing else: it is never written to after construction. What is computed
from it (the Gram matrix, the feature map, factorizations, a solver's data layout, the
reference optimum) lives in a :class:`Workspace`. Every public call that computes such
things (``prob.solve``, ``prob.certify``, ``fast.solve``, ``fast.path``, the estimators'
``fit``) runs inside one: the workspace the caller passes (``workspace=ws``), else the one
already active (a call made from inside another call shares its caller's), else the
problem's own default workspace (:func:`of`), which lives as long as the problem does,
beside it and not in it: the problem's attributes never change.

A workspace makes things faster and never changes a number: each quantity has exactly one
builder (the problem's), and what a certificate computes is chosen by the problem's size,
never by what a workspace happens to hold.

Entries are keyed by what they are computed from:

* ``data`` entries (the Gram, the feature map) by the identity of the arrays and the kernel
  they are built from, so that the problems of a regularization path, which share ``X``,
  share them;
* ``problem`` entries (everything that depends on a hyperparameter too, and the reference
  optimum) by the problem object itself.

An entry keeps references to the objects it was keyed on, so an identity is never reused
by another object while the entry lives.

>>> ws = Workspace()
>>> ref = prob.solve(workspace=ws)               # doctest: +SKIP
>>> prob.certify(sol, workspace=ws)              # the Gram and the reference are reused
"""
from __future__ import annotations

import contextlib
import functools
import contextvars
import weakref

_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("refmodels_workspace", default=None)
#: each problem's default workspace, kept beside the problem (weakly keyed: dropped with it)
_DEFAULTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class Workspace:
    """Computed quantities of one or more problems (see the module docstring).

    ``len(ws)`` is the number of entries; ``ws.clear()`` drops them all. A workspace may be
    shared by the problems of one data set (a path, the folds' refits); it is not meant
    to be shared between threads.
    """

    def __init__(self, owner=None):
        self._entries = {}
        # a problem's default workspace refers to its problem weakly (it is dropped with it)
        self._owner = weakref.ref(owner) if owner is not None else None

    def __len__(self):
        return len(self._entries)

    def __bool__(self):                  # an empty workspace is still a workspace
        return True

    def __repr__(self):
        names = sorted({k[0] for k in self._entries})
        return f"Workspace({len(self)} entries: {', '.join(names)})"

    def clear(self):
        self._entries.clear()

    def keys(self):
        """The names of the entries held (for inspection)."""
        return [k[0] for k in self._entries]

    # ---- keyed access ------------------------------------------------------------------
    @staticmethod
    def _key(name, on):
        return (name,) + tuple(_ident(o) for o in on)

    def _kept(self, on):
        """What an entry keeps of ``on``: the objects themselves (so that their identities
        are not reused while it lives), the owner of a default workspace as a marker."""
        owner = self._owner() if self._owner is not None else None
        return tuple(_OWNER if o is owner and owner is not None else o for o in on)

    def get(self, name, on, build):
        """The entry ``name`` computed from the objects ``on``; built by ``build()`` and kept
        when absent."""
        key = self._key(name, on)
        hit = self._entries.get(key)
        if hit is not None and _same(hit[0], self._kept(on)):
            return hit[1]
        value = build()
        self._entries[key] = (self._kept(on), value)
        return value

    def peek(self, name, on):
        """The entry if held, else None (never builds)."""
        hit = self._entries.get(self._key(name, on))
        if hit is not None and _same(hit[0], self._kept(on)):
            return hit[1]
        return None

    def put(self, name, on, value):
        self._entries[self._key(name, on)] = (self._kept(on), value)

    def pop(self, name, on):
        hit = self._entries.pop(self._key(name, on), None)
        return hit[1] if hit is not None and _same(hit[0], self._kept(on)) else None


_OWNER = object()


def _ident(o):
    """The key part of one object: strings and numbers by value, everything else by identity
    (arrays, kernels, problems)."""
    if o is None or isinstance(o, (str, int, float, bool)):
        return o
    return id(o)


def _same(kept, on):
    """The entry was keyed on these very objects (values for strings and numbers)."""
    return len(kept) == len(on) and all(
        a is b or (_ident(a) is a and a == b) for a, b in zip(kept, on))


def active():
    """The workspace of the call being run, or None outside every call."""
    return _ACTIVE.get()


def of(problem):
    """The default workspace of ``problem``: the one its calls use when none is passed and
    none is active (created on first use, dropped with the problem)."""
    ws = _DEFAULTS.get(problem)
    if ws is None:
        ws = _DEFAULTS[problem] = Workspace(owner=problem)
    return ws


@contextlib.contextmanager
def using(workspace=None, owner=None):
    """Run a block inside ``workspace``, else the active one, else ``owner``'s default
    workspace (:func:`of`), else a new one (dropped at the end of the block). Yields the
    workspace in use."""
    if workspace is not None and not isinstance(workspace, Workspace):
        raise ValueError(f"workspace must be a refmodels.Workspace or None; got "
                         f"{type(workspace).__name__}")
    ws = workspace if workspace is not None else _ACTIVE.get()
    if ws is None:
        ws = of(owner) if owner is not None else Workspace()
    token = _ACTIVE.set(ws)
    try:
        yield ws
    finally:
        _ACTIVE.reset(token)


#: the public methods that compute from the data: each runs inside a workspace (the one
#: passed as ``workspace=``, else the caller's, else its own; see :mod:`refmodels.workspace`)
IN_WORKSPACE = ("solve", "certify", "solution_from", "primal_value", "dual_value",
                "decision_function", "predict", "reference_solution", "closed_form",
                "objective_at")


def in_workspace(fn):
    """``fn`` run inside a workspace; ``workspace=`` is taken from its arguments (and passed
    on when ``fn`` declares it)."""
    import inspect

    takes = "workspace" in inspect.signature(fn).parameters

    @functools.wraps(fn)
    def run(self, *args, **kwargs):
        ws = kwargs.get("workspace") if takes else kwargs.pop("workspace", None)
        with using(ws, owner=self):
            return fn(self, *args, **kwargs)

    run.in_workspace = True
    return run
