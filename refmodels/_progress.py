"""Progress bars for long work: ``tqdm`` when it is installed (the ``validation`` extra),
nothing otherwise (it is imported on first use, never required).

Where bars show: the cross-validated estimators and ``fast.path`` when asked (``verbose``,
``progress``: off by default, scikit-learn's convention), and the certificate's reference
optimum (one CVXPY solve, or one per DRR test point) for a problem of more than
:data:`REFERENCE_BAR_M` points, the silent wait the user did not ask for.
"""
from __future__ import annotations

import contextlib

#: a certificate that computes the reference optimum of more points than this shows a bar
REFERENCE_BAR_M = 1000


class _NoBar:
    """What :func:`bar` returns when there is no bar: every call does nothing."""

    def update(self, n=1):
        pass

    def set_postfix_str(self, s=""):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def available():
    """Whether ``tqdm`` can be imported."""
    try:
        import tqdm
    except ImportError:
        return False
    return tqdm is not None


def bar(total=None, desc=None, enabled=True, unit="it"):
    """A ``tqdm`` bar on stderr (``leave=False``: it clears itself when done), or a
    :class:`_NoBar` when ``enabled`` is false or ``tqdm`` is not installed."""
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, desc=desc, unit=unit, leave=False, dynamic_ncols=True)


@contextlib.contextmanager
def stage(desc, enabled=True):
    """A bar of one step around a long call (its description shows while it runs)."""
    b = bar(total=1, desc=desc, enabled=enabled, unit="step")
    try:
        yield b
        b.update(1)
    finally:
        b.close()
