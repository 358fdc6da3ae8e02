"""The command line, end to end in a subprocess."""
import json
import subprocess
import sys

import numpy as np
import pytest

import refmodels as rm

CLI = [sys.executable, "-m", "refmodels.cli"]


def run(args, **kw):
    return subprocess.run(CLI + args, capture_output=True, text=True, timeout=600, **kw)


@pytest.fixture()
def data_file(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, "pos", "neg")
    path = tmp_path / "data.csv"
    with open(path, "w") as fh:
        for xi, yi in zip(X, y):
            fh.write(",".join(f"{v:.17g}" for v in xi) + f",{yi}\n")
    return path, X, y


def test_certify_json_solution_holds_and_fails(data_file, tmp_path):
    path, X, y = data_file
    prob = rm.SVM(X, y, C=0.5)
    ref = prob.solve()
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"w": ref.w.tolist()}))
    r = run(["certify", "--data", str(path), "--family", "svm", "--param", "C=0.5",
             "--solution", str(good), "--json"])
    assert r.returncode == 0, r.stderr + r.stdout
    out = json.loads(r.stdout)
    assert out["ok"] and out["residuals"]["objective gap"]["scaled"] < 1e-6
    bad = tmp_path / "bad.npz"
    np.savez(bad, w=ref.w * 0.9)
    r = run(["certify", "--data", str(path), "--family", "SVM", "--param", "C=0.5",
             "--solution", str(bad)])
    assert r.returncode == 1
    assert "FAILS" in r.stdout


def test_certify_svmlight_with_dual(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 4))
    y = np.where(X[:, 1] > 0, 1, -1)
    path = tmp_path / "data.svm"
    dump_svmlight_file(X, y, str(path))
    prob = rm.SVM(X, y, C=1.0, kernel=rm.kernels.RBF(gamma=0.5))
    ref = prob.solve()
    sol = tmp_path / "sol.npz"
    np.savez(sol, alpha=ref.variables["alpha"])
    r = run(["certify", "--data", str(path), "--family", "SVM", "--param", "C=1.0",
             "--kernel", "rbf", "--gamma", "0.5", "--solution", str(sol)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "HOLDS" in r.stdout


@pytest.mark.parametrize("content,needle", [
    ({"coef": [1.0, 2.0]}, "coef must have shape"),
    ({"nonsense": [1.0]}, "unknown arrays"),
    ({}, "at least one"),
])
def test_certify_bad_solution_file(data_file, tmp_path, content, needle):
    path, _, _ = data_file
    f = tmp_path / "s.json"
    f.write_text(json.dumps(content))
    r = run(["certify", "--data", str(path), "--family", "SVM", "--param", "C=1",
             "--solution", str(f)])
    assert r.returncode == 2
    assert needle in r.stderr


def test_certify_bad_family_and_param(data_file, tmp_path):
    path, _, _ = data_file
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"w": [0, 0, 0]}))
    r = run(["certify", "--data", str(path), "--family", "nope", "--solution", str(f)])
    assert r.returncode == 2 and "--family" in r.stderr
    r = run(["certify", "--data", str(path), "--family", "SVM", "--param", "C=-1",
             "--solution", str(f)])
    assert r.returncode == 2 and "C must be" in r.stderr


def test_verify_subset_runs():
    r = run(["verify", "--family", "SVM", "--no-fast"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SVM" in r.stdout and "OK" in r.stdout
