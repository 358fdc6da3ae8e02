"""Rows of a raw file, read by slices at every pass (:func:`fast.distributed.memmap_rows`)."""
from __future__ import annotations

import os

import numpy as np


class _RowFile:
    """A raw C-order file of rows, sliced like an array: each slice of rows is read with
    ordinary file reads (no mapping kept), so that a pass holds the partitions it is
    working on and nothing else, and pickles as its path (for process workers)."""

    def __init__(self, path, m, d, offset, dtype):
        self.path, self.offset, self.dtype = os.fspath(path), int(offset), np.dtype(dtype)
        self.shape = (m, d)
        self.ndim = 2

    def __dask_tokenize__(self):
        st = os.stat(self.path)
        return (self.path, self.shape, self.offset, str(self.dtype), st.st_size, st.st_mtime_ns)

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        key = key + (slice(None),) * (2 - len(key))
        rows, cols = key
        m, d = self.shape
        if not isinstance(rows, slice) or rows.step not in (None, 1):
            full = np.memmap(self.path, dtype=self.dtype, mode="r", offset=self.offset,
                             shape=self.shape)
            return np.array(full[key])
        a, b, _ = rows.indices(m)
        n = max(b - a, 0)
        with open(self.path, "rb") as fh:
            fh.seek(self.offset + a * d * self.dtype.itemsize)
            out = np.fromfile(fh, dtype=self.dtype, count=n * d)
        if out.size != n * d:
            raise OSError(f"{self.path}: expected {n * d} values at row {a}, read {out.size} "
                          "(the file changed?)")
        return out.reshape(n, d)[:, cols]
