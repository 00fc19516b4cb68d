"""RLX-MLIR: a transformer compiler built on MLIR (Python package).

The compiled extension and the HIR builder arrive with the Python package
work; today the package holds the pure-NumPy pieces that tools and tests
share (``rlx.random``: the seeded values rlx-run generates).
"""
