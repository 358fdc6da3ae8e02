"""Built-in data (see ``refmodels/data/README.md`` for sources) and data-file readers."""
from __future__ import annotations

from importlib import resources

import numpy as np

BUILTIN = ("heart", "sonar", "iris", "wine")


def load(name, standardize=True):
    """``(X, y)`` of a built-in data set; features standardised to zero mean, unit variance."""
    if name not in BUILTIN:
        raise ValueError(f"name must be one of {BUILTIN}; got {name!r}")
    path = resources.files("refmodels") / "data" / f"{name}.csv"
    with resources.as_file(path) as p:
        X, y = read_csv(p)
    if standardize:
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return X, y


def _label(s):
    try:
        v = float(s)
        return int(v) if v == int(v) else v
    except ValueError:
        return s.strip()


def read_csv(path):
    """A CSV file with the label in the last column (no header; a non-numeric first line is
    taken for a header and skipped)."""
    rows, labels = [], []
    with open(path) as fh:
        for n, line in enumerate(fh):
            line = line.strip()
            if not line or line.startswith(("#", "@")):
                continue
            parts = [p.strip() for p in line.split(",")]
            try:
                rows.append([float(p) for p in parts[:-1]])
            except ValueError:
                if n == 0 and not rows:
                    continue  # header
                raise ValueError(f"data file {path}: line {n + 1} has a non-numeric feature") from None
            labels.append(_label(parts[-1]))
    if not rows:
        raise ValueError(f"data file {path} has no data rows")
    if len({len(r) for r in rows}) != 1:
        raise ValueError(f"data file {path}: rows have different numbers of columns")
    return np.asarray(rows, float), np.asarray(labels)


def read_svmlight(path):
    """A LIBSVM / svmlight file (``label idx:val ...``; 1-based indices), returned dense."""
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(str(path))
    except ValueError as exc:
        raise ValueError(f"data file {path} is not valid LIBSVM/svmlight format: {exc}") from None
    y = np.asarray([_label(str(v)) for v in y])
    return X.toarray(), y


def read_data(path):
    """CSV (label last) or LIBSVM/svmlight format, told apart by the ``idx:value`` tokens."""
    with open(path) as fh:
        first = next((ln for ln in fh if ln.strip() and not ln.startswith("#")), "")
    if ":" in first and "," not in first:
        return read_svmlight(path)
    return read_csv(path)
