r"""Sums of kernels as one kernel: over depths (:obj:`depths="sum"`) and over a grid (:obj:`"kong-mean"`).

The Weisfeiler-Lehman subtree kernel adds up one kernel per iteration. The
same for KONG: with :obj:`depths="sum"` a setting's kernel is

.. math::
    K(G, H) = \sum_{j=0}^{h} K_j(G, H),

where :math:`K_j` is the setting's kernel (base kernel, degree, relabelling,
normalisation, sketch) on the strings of depth :math:`j` alone:

* BFS: the level-:math:`j` string :math:`s_v^j` (the neighbors' strings of
  depth :math:`j - 1`, no own label after level 0), which is the WL
  traversal's last string without the node's own label at :obj:`hops=j`
  (and the label itself at :math:`j = 0`);
* WL: the WL traversal's string at :obj:`hops=j`.

So :math:`K_j` is an ordinary :class:`~kong_pyg.KongConfig` map
(:func:`depth_settings`), computed by the same code as any setting, and the
sum is taken here, in the evaluation layer: explicit maps are concatenated
column-wise (:math:`\langle [x_0, \ldots, x_h], [y_0, \ldots, y_h] \rangle =
\sum_j \langle x_j, y_j \rangle`), Gram matrices are added.

This differs from the joint map of BFS with :obj:`hops=h` (one node vector
:math:`c_v` holding all levels as blocks, then the base kernel) except for
the plain linear kernel (poly, :math:`p = 1`, no constant, no normalisation):
there :math:`\kappa(c_v, c_w) = \sum_j \langle c_v^j, c_w^j \rangle` and both
are the same. For :math:`p \geq 2` the joint map multiplies levels together
(:math:`(\sum_j a_j)^p`) while the sum keeps them apart (:math:`\sum_j
a_j^p`); the cosine base kernel and graph normalisation normalise per depth
here, over all levels in the joint map.

The method :obj:`"kong-mean"` (:func:`grid_mean_features`) averages, instead
of choosing among, the kernels of a whole KONG grid, each normalised first:

.. math::
    K(G, H) = \frac{1}{|S|} \sum_{s \in S} \frac{K_s(G, H)}{\sqrt{K_s(G, G)\, K_s(H, H)}},

over the settings :math:`S` of a named grid (:obj:`"paper"`,
:obj:`"extended"`, ...), as the WL subtree kernel adds up its iterations.
The mean rather than the sum keeps :math:`K(G, G) = 1` whatever the grid's
size, so a :math:`C` means the same for every grid. Model selection then
chooses only :math:`C` (and which grid's mean): far fewer choices than a
grid's settings times :math:`C`, so less of the nested protocol's accuracy
is lost to the noise of the choice.
"""
from typing import Any, List, Optional, Sequence, Union

import numpy as np
import scipy.sparse as sp

from .features import Gram, Matrix
from .grid import Setting, make_setting


def depth_settings(setting: Setting) -> List[Setting]:
    r"""The per-depth settings :math:`K_0, \ldots, K_h` of a KONG setting.

    Args:
        setting (Setting): A KONG setting (its :obj:`depths` is ignored).

    Returns:
        A list of :class:`Setting` with :obj:`depths="joint"`, one per depth
        :math:`j` (from 1 when the node's own label is not part of the
        strings, as BFS then has no level-0 block).
    """
    if setting.method != "kong":
        raise ValueError(f"depth sums are KONG settings (got method {setting.method!r})")
    p = setting.config
    hops, own, bfs = p["hops"], p["own_label"], p["traversal"] == "bfs"
    out = []
    for j in range(0 if own else 1, hops + 1):
        # BFS level j = the WL string of depth j without the own label (level 0: the label)
        own_j = (j == 0) if bfs else own
        out.append(make_setting("kong", {**p, "traversal": "wl", "hops": j, "own_label": own_j,
                                         "depths": "joint"}))
    return out


def sum_of_kernels(parts: Sequence[Union[Matrix, Gram]]) -> Union[Matrix, Gram]:
    r"""Features (or a Gram matrix) of the sum of the parts' kernels.

    Args:
        parts (sequence): Per kernel, :obj:`[n, d_j]` features (CSR or
            dense) or a :class:`~kong_pyg.evaluation.features.Gram`.

    Returns:
        The column-wise concatenation of the features (CSR if any part is
        sparse) or, when some part is a Gram matrix, the :class:`Gram` of the
        sum :math:`\sum_j X_j X_j^\top` or :math:`\sum_j K_j`.
    """
    if not parts:
        raise ValueError("'parts' is empty")
    if any(isinstance(x, Gram) for x in parts):
        total = np.zeros(parts[0].shape[:1] * 2)
        for x in parts:
            if isinstance(x, Gram):
                total += x.K
            else:
                kx: Any = x @ x.T
                total += kx.toarray() if sp.issparse(kx) else np.asarray(kx)
        return Gram(total)
    if any(sp.issparse(x) for x in parts):
        return sp.hstack([sp.csr_matrix(x) for x in parts], format="csr")
    return np.hstack([np.asarray(x) for x in parts])


def depth_sum_features(setting: Setting, graphs: Any, seed: int = 0) -> Union[Matrix, Gram]:
    r"""The features of a :obj:`depths="sum"` setting: :func:`sum_of_kernels` of its depths.

    Args:
        setting (Setting): A KONG setting.
        graphs: A PyG dataset or a list of :class:`~torch_geometric.data.Data`.
        seed (int, optional): The seed of KONG's hash tables. (default: :obj:`0`)

    Returns:
        :obj:`[num_graphs, D]` features, or a
        :class:`~kong_pyg.evaluation.features.Gram`.
    """
    from .features import setting_features

    return sum_of_kernels([setting_features(s, graphs, seed) for s in depth_settings(setting)])


def normalized_gram(features: Union[Matrix, Gram]) -> np.ndarray:
    r"""The Gram matrix of :obj:`features` scaled to :math:`K(G, G) = 1`.

    :math:`K(G, H) / \sqrt{K(G, G) K(H, H)}`; a graph with :math:`K(G, G) = 0`
    (no features) gets a zero row and column (so the mean of :func:`grid_mean_features` has
    :math:`K(G, G) = 1` where every setting gives the graph features, less elsewhere).

    Args:
        features: :obj:`[n, d]` features (CSR or dense) or a
            :class:`~kong_pyg.evaluation.features.Gram`.

    Returns:
        numpy.ndarray: :obj:`[n, n]`.
    """
    from ..gram import kernel_matrix

    K = np.array(features.K, dtype=np.float64) if isinstance(features, Gram) else kernel_matrix(features)
    norm = np.sqrt(np.clip(np.diag(K), 0.0, None))
    scale = np.divide(1.0, norm, out=np.zeros_like(norm), where=norm > 0)
    K *= scale[:, None]
    K *= scale[None, :]
    return K


def grid_mean_features(setting: Setting, graphs: Any, seed: int = 0) -> Gram:
    r"""The :class:`~kong_pyg.evaluation.features.Gram` of a :obj:`"kong-mean"` setting.

    The mean of :func:`normalized_gram` over the settings of the KONG grid
    named by the setting's :obj:`grid` (:data:`~kong_pyg.evaluation.grid.GRID_PRESETS`),
    each computed as that setting alone would be
    (:func:`~kong_pyg.evaluation.features.setting_features`), one at a time.

    Args:
        setting (Setting): A :obj:`"kong-mean"` setting.
        graphs: A PyG dataset or a list of :class:`~torch_geometric.data.Data`.
        seed (int, optional): The seed of KONG's hash tables. (default: :obj:`0`)

    Returns:
        :class:`~kong_pyg.evaluation.features.Gram`
    """
    from .features import setting_features
    from .grid import expand_grid

    if setting.method != "kong-mean":
        raise ValueError(f"grid means are 'kong-mean' settings (got method {setting.method!r})")
    name = setting.config["grid"]
    total: Optional[np.ndarray] = None
    parts = expand_grid("kong", name)
    for part in parts:
        K = normalized_gram(setting_features(part, graphs, seed))
        if total is None:
            total = K
        else:
            total += K
    assert total is not None  # a preset grid is never empty
    total /= len(parts)
    return Gram(total, f"mean of the {len(parts)} normalised kernels of the {name!r} grid")


__all__ = ["depth_settings", "sum_of_kernels", "depth_sum_features", "normalized_gram", "grid_mean_features"]
