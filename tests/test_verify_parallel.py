"""``refmodels verify`` in two processes: the same rows as in one, every row accounted for
when a process dies, the first-run detection of numba's cache and the progress lines.
(Speed is measured in validation/, never asserted here.)"""
import argparse
import json
import os
import subprocess
import sys

import pytest

from refmodels.cli import CLIError
from refmodels.cli import verify as V

_FORK = pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(),
                           reason="two processes need fork")

# Two processes are forked only from a process that has not used CVXPY yet (Clarabel's state
# after a solve deadlocks a forked copy): the parallel runs happen in a fresh interpreter.
_SCRIPT = """
import argparse, json, os, sys
from refmodels.cli import verify as V
args = argparse.Namespace(family=["SVM,DRM"], no_fast=True, json=True, jobs=2)
cases = [c for c in V._cases() if c["family"] in ("SVM", "DRM")]
assert V._parallel(cases, 2), "expected two processes"
if sys.argv[1] == "die":
    real = V._verify_row
    def dying(case, use_fast, progress=None):
        if case["family"] == "DRM" and V._half(case) == 0:   # a forked process (kernel row)
            os._exit(3)
        return real(case, use_fast, progress)
    V._verify_row = dying
code = V.cmd_verify(args)
print("EXIT", code)
"""


def _run_fresh(mode):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", _SCRIPT, mode], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    body, _, code = r.stdout.rpartition("EXIT")
    return int(code), json.loads(body)


def _args(families, jobs, fast=False):
    return argparse.Namespace(family=families, no_fast=not fast, json=True, jobs=jobs)


@_FORK
def test_two_processes_give_the_rows_of_one_in_table_order(capsys):
    # SVM with an intercept and DRM's kernel row run in the first half, the others in the
    # second
    cases = [c for c in V._cases() if c["family"] in ("SVM", "DRM")]
    assert {V._half(c) for c in cases} == {0, 1}
    code2, two = _run_fresh("ok")
    code1 = V.cmd_verify(_args(["SVM,DRM"], 1))
    one = json.loads(capsys.readouterr().out)
    assert code1 == code2 == 0
    key = [(r["family"], r["setting"], r["kernel"]) for r in one]
    assert key == [(c["family"], c["setting"], c["kernel"]) for c in cases]
    assert [(r["family"], r["setting"], r["kernel"]) for r in two] == key
    for a, b in zip(one, two):
        assert a["verdict"] == b["verdict"] == "OK"
        assert a["P"] == pytest.approx(b["P"], rel=1e-9, abs=1e-12)
        assert a["D"] == pytest.approx(b["D"], rel=1e-9, abs=1e-12)


@_FORK
def test_a_process_that_dies_leaves_its_rows_as_errors():
    code, rows = _run_fresh("die")
    assert code == 1
    halves = [V._half(c) for c in V._cases() if c["family"] in ("SVM", "DRM")]
    drm = [r for r, h in zip(rows, halves) if r["family"] == "DRM" and h == 0]
    assert drm and all(r["verdict"] == "ERROR" and "exit code 3" in r["error"] for r in drm)
    # every row is there; the other process's rows came back certified (a row of the dying
    # process may be lost in its queue and is then reported as not run, never as OK)
    assert [r["family"] for r in rows] == ["SVM"] * 4 + ["DRM"] * 2
    other = [r for r, h in zip(rows, halves) if h == 1]
    assert len(other) >= 1 and all(r["verdict"] == "OK" for r in other)
    assert all(r["verdict"] == "OK" or "not run" in r["error"] for r in rows)


def test_after_a_cvxpy_solve_the_rows_run_in_this_process():
    cases = [c for c in V._cases() if c["family"] in ("SVM", "DRM")]
    import cvxpy  # noqa: F401

    assert not V._fork_safe() and not V._parallel(cases, 2)
    assert not V._parallel(cases, 1)


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True])
def test_jobs_must_be_a_positive_integer(jobs):
    with pytest.raises(CLIError, match="--jobs"):
        V.cmd_verify(_args(["DRM"], jobs))


def test_an_empty_numba_cache_dir_is_a_first_run(tmp_path, monkeypatch):
    pytest.importorskip("numba")
    pytest.importorskip("fast")
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))
    assert V._fast_cache_cold() is True
    import fast

    pkg = os.path.dirname(os.path.abspath(fast.__file__))
    cache = V._fast_cache_dir(pkg)
    assert cache.startswith(str(tmp_path))
    os.makedirs(cache)
    for mod in V._VERIFY_NUMBA_MODULES:            # an index newer than every source
        open(os.path.join(cache, f"{mod}.f-1.py311.nbi"), "w").close()
    assert V._fast_cache_cold() is False


_MODULES_SCRIPT = """
import json, sys, warnings
warnings.simplefilter("ignore")
import fast
from numba.core.registry import CPUDispatcher
from refmodels.cli import verify as V
for case in V._cases():
    fast.solve(case["make"]())
print(json.dumps(sorted({name.split(".")[1] for name, mod in list(sys.modules.items())
                         if name.startswith("fast._") and mod is not None
                         and any(isinstance(o, CPUDispatcher) and o.signatures
                                 for o in vars(mod).values())})))
"""


def test_the_first_run_signs_are_modules_that_verify_compiles():
    # a module listed in _VERIFY_NUMBA_MODULES that verify's rows never compile has no index
    # in the cache after a full run, and then every run looks like a first one (``_prox``,
    # once DRR's rows ran its prox in numpy)
    pytest.importorskip("numba")
    pytest.importorskip("fast")
    r = subprocess.run([sys.executable, "-c", _MODULES_SCRIPT], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    compiled = set(json.loads(r.stdout.strip().splitlines()[-1]))
    assert set(V._VERIFY_NUMBA_MODULES) <= compiled, compiled


_STATS_SCRIPT = """
import json, sys
from refmodels.cli import verify as V
V._import_cvxpy()
out = {"cvxpy": "cvxpy" in sys.modules, "stats_after_cvxpy": "scipy.stats" in sys.modules}
taker = sys.modules.get("cvxpy.atoms.quantum_rel_entr")
if taker is not None and hasattr(taker, "entropy"):
    out["deferred"] = float(taker.entropy([0.2, 0.8], base=2))
import scipy.stats
out["real"] = float(scipy.stats.entropy([0.2, 0.8], base=2))
out["real_module"] = hasattr(scipy.stats, "norm") and scipy.stats.__file__ is not None
print(json.dumps(out))
"""


def test_cvxpy_is_imported_before_the_fork_without_scipy_stats():
    # the parent imports CVXPY for both processes; scipy.stats, which CVXPY's import pulls in
    # for one atom no row uses, is left for the first call of what CVXPY took from it
    r = subprocess.run([sys.executable, "-c", _STATS_SCRIPT], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["cvxpy"] and not out["stats_after_cvxpy"]
    assert out["real_module"]                          # a later import is the real module
    assert out["real"] == pytest.approx(0.7219280948873623, rel=1e-15)
    if "deferred" in out:                              # what CVXPY took: the same function
        assert out["deferred"] == out["real"]


def test_progress_lines_are_whole_lines_for_slow_rows_only(capsys):
    p = V._Progress(3, sys.stderr, lines=True)
    row = {"family": "SVM", "setting": "fit_intercept=True", "kernel": "rbf"}
    p.start(row)
    p.done(row, 0.1)                               # loaded from the cache: no line
    p.start(row)
    p.done(row, 7.3)
    p.start(row)
    p.done(row, None)                              # no fast solver
    err = capsys.readouterr().err
    assert err == ("  SVM fit_intercept=True rbf: fast solver compiled (or loaded from the "
                   "cache) in 7.3 s\n")
    assert p.compiled == pytest.approx(7.4)
