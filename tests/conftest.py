"""Hypothesis profiles: ``ci`` (fast, used when CI=true), ``dev`` (default), ``thorough``.

Select with ``HYPOTHESIS_PROFILE=thorough pytest``.
"""
import os
import warnings

from hypothesis import HealthCheck, settings

_common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                        HealthCheck.data_too_large],
               )
settings.register_profile("ci", max_examples=8, derandomize=True, **_common)
settings.register_profile("dev", max_examples=25, derandomize=False, **_common)
settings.register_profile("thorough", max_examples=300, derandomize=False, **_common)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE",
                                     "ci" if os.environ.get("CI") else "dev"))

warnings.filterwarnings("ignore", message=".*Solution may be inaccurate.*")
