"""Sphinx extension: the family pages are generated from :mod:`refmodels.derive`.

A source file whose content contains a line ``.. derive-page:: FAMILY`` has that line
replaced, when Sphinx reads it, by ``refmodels.derive.derive(FAMILY).to_rst()``: the same
walk-through that ``refmodels derive FAMILY`` prints, with its checks executed at build
time. A walk-through that does not hold (a check failing, or an erratum's printed version
passing) is a build error.
"""
import re

_MARK = re.compile(r"^\.\. derive-page:: *(\S+) *$", re.M)


def _source_read(app, docname, source):
    text = source[0]
    match = _MARK.search(text)
    if not match:
        return
    from refmodels.derive import derive

    wt = derive(match.group(1), seed=app.config.derive_seed)
    if not wt.ok:
        raise RuntimeError(f"the {match.group(1)} walk-through does not hold:\n{wt}")
    source[0] = text[:match.start()] + wt.to_rst() + text[match.end():]


def setup(app):
    app.add_config_value("derive_seed", 0, "env")
    app.connect("source-read", _source_read)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
