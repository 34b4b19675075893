"""The evaluation harness: grids of settings, features, cross-validation, reports.

The public entry points are re-exported lazily by :mod:`kong_pyg`
(:func:`~kong_pyg.classify`, :func:`~kong_pyg.cross_validate`,
:func:`~kong_pyg.expand_grid`, :func:`~kong_pyg.paper_grid`,
:func:`~kong_pyg.sketch_curve`); the modules here, by concern:

* :mod:`~kong_pyg.evaluation.grid`: settings and grids
  (:class:`~kong_pyg.evaluation.grid.Setting`, :func:`expand_grid`,
  :func:`paper_grid`, the presets);
* :mod:`~kong_pyg.evaluation.features`: a setting's features and what the
  classifier is fit on (:func:`setting_features`, :func:`design_matrix`);
* :mod:`~kong_pyg.evaluation.cv`: repeated stratified CV and its two
  protocols (:func:`cross_validate`);
* :mod:`~kong_pyg.evaluation.classify`: :func:`classify` and
  :func:`sketch_curve`;
* :mod:`~kong_pyg.evaluation.stats`: confidence intervals and paired tests;
* :mod:`~kong_pyg.evaluation.plots`: the figures (matplotlib);
* :mod:`~kong_pyg.evaluation.baselines`: the WL, k-walk and GraKeL
  baselines.

Importing this package imports none of its modules (no scikit-learn, SciPy
or matplotlib until they are used).
"""
