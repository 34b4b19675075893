r"""How node strings are built and which of them count: the traversals.

A traversal fixes two things (SPEC section 2):

* **the string rule**: :math:`s_v^0 = l(v)` and, for :math:`i \geq 1`,
  :math:`s_v^i` = (:attr:`Traversal.label_in_string`: :math:`l(v)`) then,
  for each neighbor :math:`u` in neighbor order, an optional edge symbol and
  :math:`s_u^{i-1}`;
* **the blocks**: with :attr:`Traversal.all_levels` every level
  :math:`i = 0..h` is its own block of the feature vector (its k-grams are
  counted apart); otherwise only :math:`s_v^h` counts, in one block.

``"bfs"`` is (no label, all levels), ``"wl"`` is (label, last level).
Everything downstream (k-gram steps, exact rows, sketches, the linear
readout, streams) asks the :class:`Traversal` object, so a new traversal is
one entry of :data:`TRAVERSAL_RULES` (and its name in
:data:`kong_pyg.config.TRAVERSALS`).
"""
from dataclasses import dataclass
from typing import Dict, Iterator, List, Tuple


@dataclass(frozen=True)
class Traversal:
    """A string rule and a block layout.

    Attributes:
        name (str): The option value.
        label_in_string (bool): :math:`s_v^i` starts with :math:`l(v)` for
            every :math:`i` (WL); otherwise only :math:`s_v^0 = l(v)` holds it.
        all_levels (bool): Every level :math:`0..h` is a block (BFS);
            otherwise only level :math:`h` counts.
    """

    name: str
    label_in_string: bool
    all_levels: bool

    def label_step(self, step: int) -> bool:
        """Whether :math:`l(v)` is a symbol of :math:`s_v^{step}` (its 1-gram counts)."""
        return step == 0 or self.label_in_string

    def blocks(self, hops: int) -> List[int]:
        """The levels that are blocks of the feature vector, in block order."""
        return list(range(hops + 1)) if self.all_levels else [hops]

    def num_blocks(self, hops: int) -> int:
        """How many blocks the feature vector has."""
        return hops + 1 if self.all_levels else 1

    def block_of(self, level: int, hops: int) -> int:
        """The block index of level :obj:`level` (which must be one of :meth:`blocks`)."""
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


def get_traversal(name: str) -> Traversal:
    """The :class:`Traversal` called :obj:`name`."""
    try:
        return TRAVERSAL_RULES[name]
    except KeyError:
        raise ValueError(f"'traversal' must be one of {list(TRAVERSAL_RULES)} (got {name!r})") from None


__all__ = ["Traversal", "TRAVERSAL_RULES", "get_traversal"]
