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

import functools

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


@functools.lru_cache(maxsize=None)
def _lapack_dpotrf():
    """LAPACK's ``dpotrf`` (SciPy's, through its Cython table) as a ctypes function, which
    releases the interpreter while it runs; None where the table cannot be read."""
    import ctypes

    try:
        from numba.extending import get_cython_function_address

        address = get_cython_function_address("scipy.linalg.cython_lapack", "dpotrf")
    except Exception:  # noqa: BLE001 - an unusual SciPy build: the plain call is used
        return None
    ptr = ctypes.POINTER(ctypes.c_int)
    return ctypes.CFUNCTYPE(None, ctypes.c_char_p, ptr, ctypes.c_void_p, ptr, ptr)(address)


def cholesky_lower(F):
    """``F = L L^T`` in place: ``L`` in the lower triangle of the Fortran-ordered square
    ``F`` (the upper triangle is left as it was). Returns LAPACK's ``info`` (``k > 0``: the
    leading minor of order ``k`` is not positive definite).

    One LAPACK call cannot be stopped, and it holds the interpreter when called from Python
    (SciPy's wrapper), so Ctrl-C would wait for its end (tens of seconds at 15,000 points).
    It runs here in a worker thread, through a ctypes call that releases the interpreter,
    while this thread waits in short steps: Ctrl-C raises ``KeyboardInterrupt`` at once.
    The worker then finishes the factorisation it started (LAPACK has no way to stop it) on
    ``F``, which the caller drops; nothing else is touched, and an interpreter that exits
    meanwhile waits for it."""
    import ctypes
    import threading

    from scipy.linalg.lapack import dpotrf

    m = F.shape[0]
    if not (F.flags.f_contiguous and F.shape == (m, m)):
        raise ValueError("cholesky_lower needs a square Fortran-ordered array")
    fn = _lapack_dpotrf()
    if fn is None:
        c, info = dpotrf(F, lower=1, overwrite_a=1, clean=0)
        if c is not F:
            F[...] = c
        return int(info)
    n, info = ctypes.c_int(m), ctypes.c_int(0)

    done = threading.Event()

    def factor(F=F):
        # the worker holds F itself (not only its address): after Ctrl-C the caller's
        # frames are gone, and LAPACK must not write into freed memory
        try:
            fn(b"L", ctypes.byref(n), F.ctypes.data, ctypes.byref(n), ctypes.byref(info))
        finally:
            done.set()

    # waiting on an Event, not Thread.join: a join interrupted by Ctrl-C can leave the
    # thread's state lock held, and the interpreter's exit then waits for ever. Not a
    # daemon: an interpreter that exits while LAPACK runs waits for it (OpenBLAS's threads
    # shut down under a running factorisation crash the process)
    threading.Thread(target=factor, name="refmodels-cholesky").start()
    while not done.wait(0.05):
        pass
    return int(info.value)
