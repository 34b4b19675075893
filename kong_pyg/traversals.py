r"""How node strings are built and which of them count: the traversals.

A traversal (the paper's composite string generation traversal) fixes two things:

* **the string rule**: :math:`s_v^0 = l(v)` and, for :math:`i \geq 1`,
  :math:`s_v^i` = (:attr:`Traversal.label_in_string`: :math:`l(v)`) then,
  for each neighbor :math:`u` in neighbor order, an optional edge symbol and
  :math:`s_u^{i-1}`;
* **the blocks**: with :attr:`Traversal.all_levels` every level
  :math:`i = 0..h` is its own block of the feature vector (its k-grams are
  counted apart); otherwise only :math:`s_v^h` counts, in one block.

``"bfs"`` is (no label, all levels), ``"wl"`` is (label, last level).
Without the node's own label (:obj:`own_label=False`, the KONG authors'
experiment code) the strings hold the neighbors' strings only, which lack
their own labels too: BFS drops the level-0 block (the label alone), and
WL's depth-:math:`h` string is BFS's level-:math:`h` block (not WL's string
less its leading :math:`l(v)`; the two agree at :math:`h = 1`).
Everything downstream (k-gram steps, exact rows, sketches, the linear
readout, streams) asks the :class:`Traversal` object
(:func:`traversal_rule`), so a new traversal is one entry of
:data:`TRAVERSAL_RULES` (and its name in :data:`kong_pyg.config.TRAVERSALS`).
"""
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Dict, Iterator, List, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from .config import KongConfig


@dataclass(frozen=True)
class Traversal:
    """A string rule and a block layout.

    Attributes:
        name (str): The option value.
        label_in_string (bool): :math:`s_v^i` starts with :math:`l(v)` for
            every :math:`i` (WL); otherwise only :math:`s_v^0 = l(v)` holds it.
        all_levels (bool): Every level :math:`0..h` is a block (BFS);
            otherwise only level :math:`h` counts.
        first_level (int): With :attr:`all_levels`, the first level that is
            a block (1 drops the label-only level 0).
    """

    name: str
    label_in_string: bool
    all_levels: bool
    first_level: int = 0

    def without_own_label(self) -> "Traversal":
        """The same traversal on strings that hold the neighbors' strings only."""
        return replace(self, label_in_string=False, first_level=1 if self.all_levels else 0)

    def label_step(self, step: int) -> bool:
        """Whether :math:`l(v)` is a symbol of :math:`s_v^{step}` (its 1-gram counts)."""
        return step == 0 or self.label_in_string

    def blocks(self, hops: int) -> List[int]:
        """The levels that are blocks of the feature vector, in block order."""
        return list(range(self.first_level, hops + 1)) if self.all_levels else [hops]

    def block_of(self, level: int, hops: int) -> int:
        """The block id of level :obj:`level` (one of :meth:`blocks`): the level itself, or 0 alone."""
        return level if self.all_levels else 0

    def shifted(self) -> bool:
        """Whether sketches place each level in its own (shifted) block.

        With a single block the level shift is the identity.
        """
        return self.all_levels

    def linear_terms(self, num_steps: int, hops: int) -> Iterator[Tuple[int, int, int]]:
        r"""Yield :obj:`(step, level, block)` of the linear map's terms.

        The count vector of level :math:`\ell` is :math:`Y^{(\ell)} =
        \sum_{j \le \ell} A^{\ell - j} X^j` (occurrences :math:`X^j` of
        step :math:`j`, sum aggregation :math:`A`), so occurrences of step
        :math:`j` count in every block whose level is at least :math:`j`,
        with walk weight :math:`\omega_{\ell - j}`.
        """
        for j in range(num_steps):
            for level in self.blocks(hops):
                if level >= j:
                    yield j, level, self.block_of(level, hops)


#: Every traversal by name.
TRAVERSAL_RULES: Dict[str, Traversal] = {
    "bfs": Traversal("bfs", label_in_string=False, all_levels=True),
    "wl": Traversal("wl", label_in_string=True, all_levels=False),
}


def traversal_rule(cfg: "KongConfig") -> Traversal:
    """The :class:`Traversal` of a config (its :obj:`traversal` and :obj:`own_label`)."""
    rule = get_traversal(cfg.traversal)
    return rule if cfg.own_label else rule.without_own_label()


def get_traversal(name: str) -> Traversal:
    """The :class:`Traversal` called :obj:`name`."""
    try:
        return TRAVERSAL_RULES[name]
    except KeyError:
        raise ValueError(f"'traversal' must be one of {list(TRAVERSAL_RULES)} (got {name!r})") from None


__all__ = ["Traversal", "TRAVERSAL_RULES", "get_traversal", "traversal_rule"]
