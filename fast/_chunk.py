"""Compiled solver loops run in bounded chunks of work, so that Ctrl-C stops a solve.

Compiled (numba) code holds the interpreter: a SIGINT only sets a flag that Python reads at
its next bytecode, so a loop that runs for a minute in one compiled call ignores Ctrl-C for a
minute. Every long compiled loop of :mod:`fast` therefore does a bounded amount of work per
call, its *budget*, counted in work units: one unit is a streamed multiply-add over a kernel
row or a dense array, and each loop weighs what else it does in these units (an entry of a
data row read at a random place, a point visited, a kernel row computed on a cache miss;
the calibration is in ``validation/decisions.md``). It keeps its whole state in arrays held
by its Python driver, and returns. The driver
calls it again until it reports that it is done (:data:`PAUSED`: not yet). The state is
complete, so a chunked run takes exactly the steps of a run in one call: the same iterates,
bit for bit. (The randomised loops draw from numba's generator, whose state is per thread
and carries over from one call to the next; nothing else draws from it between two calls
of a driver.) ``KeyboardInterrupt`` is then raised between two calls, where the driver
holds a consistent state, and propagates; the partial point is discarded with the
driver's local arrays, and nothing is left half-written on the problem.

A compiled function that returns a NumPy array calls back into Python to box it: if a SIGINT
arrived during the call, the ``KeyboardInterrupt`` is raised inside that callback and the
call ends in ``SystemError: ... returned a result with an exception set``. The chunked loops
therefore return scalars only; :func:`call` turns that ``SystemError`` back into the
``KeyboardInterrupt`` for the compiled functions that return arrays.

:data:`CHUNK_WORK` is read at every call (a test may lower it to force many chunks).
"""
from __future__ import annotations

#: work units of one call of a chunked compiled loop: a small fraction of a second of one
#: core (``validation/bench_chunks.py`` measures the calls), so that Ctrl-C is answered well
#: within a second on a loaded machine, while the calls cost nothing measurable
CHUNK_WORK = 1e8

#: what a chunked compiled loop returns while its work is not done
PAUSED = -1


def budget():
    """The work budget of one call (:data:`CHUNK_WORK`, as a float for the compiled code)."""
    return float(CHUNK_WORK)


def call(fn, *args):
    """``fn(*args)`` for a compiled ``fn`` that returns an array: a ``KeyboardInterrupt``
    raised while numba boxes the result surfaces as ``SystemError`` (module docstring) and
    is raised here as the ``KeyboardInterrupt`` it is."""
    try:
        return fn(*args)
    except SystemError as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):
            raise KeyboardInterrupt from None
        raise
