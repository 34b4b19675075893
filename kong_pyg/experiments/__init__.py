"""Experiments that reproduce the KONG paper's tables.

* :mod:`~kong_pyg.experiments.table2`: ordered neighborhoods on
  MovieLens-100k, true against shuffled neighbor order (the paper's Table 2;
  ``kong-pyg table2``).

Table 1 is :func:`kong_pyg.classify` over :func:`kong_pyg.paper_grid`
(``kong-pyg classify``, ``benchmarks/table1.py``).
"""
