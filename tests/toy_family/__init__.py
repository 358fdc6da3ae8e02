"""A toy family added by following ``CONTRIBUTING.md`` (the L2-loss SVM), kept as a test that
the guide works: its reference, its fast solver and its registration are the guide's steps."""
