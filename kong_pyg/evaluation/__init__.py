"""The evaluation harness: grids of settings, features, cross-validation, reports.

The public entry points are re-exported lazily by :mod:`kong_pyg`
(:func:`~kong_pyg.classify`, :func:`~kong_pyg.cross_validate`,
:func:`~kong_pyg.evaluate_features`,
:func:`~kong_pyg.expand_grid`, :func:`~kong_pyg.paper_grid`,
:func:`~kong_pyg.sketch_curve`); the modules here, by concern:

* :mod:`~kong_pyg.evaluation.grid`: settings and grids
  (:class:`~kong_pyg.evaluation.grid.Setting`, :func:`expand_grid`,
  :func:`paper_grid`, the presets);
* :mod:`~kong_pyg.evaluation.features`: a setting's features and what the
  classifier is fit on (:func:`setting_features`, :func:`design_matrix`);
* :mod:`~kong_pyg.evaluation.splits`: repeated stratified k-fold and
  random splits (:func:`make_splits`, :func:`random_splits`);
* :mod:`~kong_pyg.evaluation.svm`: LinearSVC's problem solved exactly for
  many training sets and a C path at once;
* :mod:`~kong_pyg.evaluation.liblinear`: LIBLINEAR, one fit at a time, for
  designs too wide for it;
* :mod:`~kong_pyg.evaluation.basis`: the design every SVM problem is solved
  on (an exact basis of the features' span; re-exported by ``svm``);
* :mod:`~kong_pyg.evaluation.cv`: scoring a grid of settings and its two
  protocols (:func:`cross_validate`);
* :mod:`~kong_pyg.evaluation.harness`: :func:`evaluate_features`, each
  named feature map with its own C (Table 2, the order test);
* :mod:`~kong_pyg.evaluation.progress`: the progress bar;
* :mod:`~kong_pyg.evaluation.classify`: :func:`classify` and
  :func:`sketch_curve`;
* :mod:`~kong_pyg.evaluation.stats`: confidence intervals and paired tests;
* :mod:`~kong_pyg.evaluation.plots`: the figures (matplotlib);
* :mod:`~kong_pyg.evaluation.baselines`: the WL, k-walk and GraKeL
  baselines.

Importing this package imports none of its modules (no scikit-learn, SciPy
or matplotlib until they are used).
"""
