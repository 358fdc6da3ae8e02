"""Progress bars of long work (refmodels._progress): tqdm when installed, nothing otherwise;
off by default where scikit-learn's convention says so (verbose)."""
import builtins

import numpy as np
import pytest

import fast
import refmodels as rm
from refmodels import _progress


def _data(m=90, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(m, d))
    y = np.where(X[:, 0] + 0.2 * rng.normal(size=m) > 0.5, 1, -1)
    return X, y


@pytest.fixture
def no_tqdm(monkeypatch):
    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "tqdm" or name.startswith("tqdm."):
            raise ImportError("no tqdm here")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)


def test_bar_without_tqdm_is_nothing(no_tqdm):
    assert not _progress.available()
    b = _progress.bar(total=3, desc="x")
    assert isinstance(b, _progress._NoBar)
    b.update(1)
    b.close()
    with _progress.stage("y"):
        pass


def test_cv_bar_on_verbose_only(capsys):
    pytest.importorskip("tqdm")
    X, y = _data()
    kw = dict(kernel="linear", lams=[1.0, 16.0], mus=[0.5], thetas=[0.2, 0.4], cv=2)
    quiet = fast.ODMClassifierCV(**kw).fit(X, y)
    assert capsys.readouterr().err == ""                        # off by default
    loud = fast.ODMClassifierCV(verbose=1, **kw).fit(X, y)
    err = capsys.readouterr().err
    assert "fold paths of lam" in err and "refit" in err
    np.testing.assert_array_equal(quiet.cv_results_["mean_test_score"],
                                  loud.cv_results_["mean_test_score"])


def test_cv_verbose_without_tqdm_falls_back(no_tqdm, capsys):
    X, y = _data()
    cv = fast.ODMClassifierCV(kernel="linear", lams=[1.0], mus=[0.5], thetas=[0.2], cv=2,
                              verbose=1).fit(X, y)
    out = capsys.readouterr()
    assert "fold paths" not in out.err and "Fitting 2 folds" in out.out
    assert cv.best_params_["lam"] == 1.0


def test_path_bar(capsys):
    pytest.importorskip("tqdm")
    X, y = _data()
    prob = rm.ODM(X, y, lam=1.0, mu=0.5, theta=0.3)
    a = fast.path(prob, lam=[1.0, 4.0, 16.0])
    assert capsys.readouterr().err == ""
    b = fast.path(prob, lam=[1.0, 4.0, 16.0], progress=True)
    assert "fast.path lam" in capsys.readouterr().err
    assert [s.objective for s in a] == [s.objective for s in b]


def test_certificate_reference_bar_above_the_threshold(monkeypatch, capsys):
    pytest.importorskip("tqdm")
    X, y = _data(m=60)
    prob = rm.ODM(X, y, lam=4.0, mu=0.5, theta=0.3)
    sol = fast.solve(prob)
    assert prob.certify(sol).ok
    assert capsys.readouterr().err == ""                        # m = 60: no bar
    monkeypatch.setattr(_progress, "REFERENCE_BAR_M", 50)
    prob = rm.ODM(X, y, lam=4.0, mu=0.5, theta=0.3)
    assert prob.certify(sol).ok
    assert "reference optimum, m=60" in capsys.readouterr().err


def test_verify_json_bar_on_a_terminal_only(capsys, monkeypatch):
    """``refmodels verify --json`` prints nothing until its end: on a terminal a bar counts
    the rows on stderr; the JSON on stdout is the same either way."""
    pytest.importorskip("tqdm")
    import json

    from refmodels.cli import main
    from refmodels.cli import verify

    def run():
        code = main(["verify", "--family", "drm", "--no-fast", "--json"])
        out, err = capsys.readouterr()
        return code, json.loads(out), err

    code, rows, err = run()
    assert code == 0 and "refmodels verify" not in err          # not a terminal: no bar
    monkeypatch.setattr(verify, "_is_terminal", lambda stream: True)
    code2, rows2, err2 = run()
    assert code2 == 0 and "refmodels verify" in err2 and "row" in err2
    assert [r["verdict"] for r in rows2] == [r["verdict"] for r in rows] == ["OK", "OK"]
