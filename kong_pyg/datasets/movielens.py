r"""MovieLens-100k as ordered ego graphs (the KONG paper's Table 2 data).

**How these graphs differ from the paper's.** The paper's Table 2 gives
MovieLens graphs only in words (2-hop ego graphs of users, edges in time
order, users labelled by age group, movies by genre, class = gender). The
authors' public experiment code (``movielens_to_graph.py``,
``read_write_utilities.read_my_format`` and ``string_subtree_kernels.py`` of
github.com/kokiche/KONG) fixes the details; against it:

* **Data**: their code reads MovieLens-1M (``ratings.dat``, ``users.dat``,
  ``movies.dat``; ages there are the codes 1, 18, 25, 35, 45, 50, 56, so
  :math:`\lfloor age / 15 \rfloor` gives 4 groups) and takes the first 1700
  men and 1700 women in order of first rating. We read MovieLens-100k (943
  users, ages in years, 5 groups) and choose users with :obj:`balance` /
  :obj:`max_graphs` (seeded subsets).
* **Ties in time** (:obj:`ties`): 50.7 % of consecutive ratings of
  ``u.data`` share their second with the previous one (99.5 % of those are
  one user's ratings; 25.6 % among the 30,062 ratings of single-genre
  movies), so the tie rule decides much of every user's item order.
  :obj:`"row"` (the default) keeps the file's row order;
  :obj:`"authors"` sorts ties by user id, then movie id, both compared as
  strings (their ``sorted()`` of ``(timestamp, [user, movie, rating])``
  string triples).
* **Movies with one genre** (:obj:`genre="single"`, the default) and
  **users by age // 15**: as in their code.
* **Graph layout** (:obj:`layout`): :obj:`"ego"` (the default; directed,
  the ego sees each movie once, 2-hop users are leaves unless
  :obj:`symmetric`) or :obj:`"authors"` (their edge list read as undirected:
  the ego sees each movie twice, each movie sees the ego first and then its
  raters, 2-hop users see the shared movies in the ego's order); see
  :mod:`kong_pyg.datasets.interactions`.
* **Class coding**: here 0 = F, 1 = M; theirs 0 = M, 1 = F (no effect).
* **Features** (not a data-set option): their strings hold the neighbors'
  labels only (:obj:`own_label=False`), "K-2" counts 1-grams and 2-grams
  (:obj:`blended=True`), summed over nodes and L2-normalized per graph
  (:obj:`normalize=True`); see ``tests/test_authors_variant.py``.

Every graph carries :obj:`edge_order`, the global time rank of each edge's
rating under the chosen tie rule: the same rating has the same key in every
graph, so :obj:`order="consistent"` (random timestamps, the honest shuffled
control) and :obj:`order="reverse"` work on these graphs.
"""
import os
import os.path as osp
import re
import shutil
import zipfile
from typing import Callable, Dict, List, NamedTuple, Optional

import torch
from torch import Tensor
from torch_geometric.data import Data, download_url, extract_zip

from ..config import MAX_SEED, check_bool, check_int
from ..devices import cpu_by_default
from ..files import atomic_file, file_text, regular_file
from ..warn import warn
from .interactions import LAYOUTS, build_ego_graphs
from .safe_cache import SafeInMemoryDataset

#: The MovieLens-100k archive (the one PyG's ``MovieLens100K`` downloads).
ML100K_URL = "https://files.grouplens.org/datasets/movielens/ml-100k.zip"

#: The 19 genres of ``u.item``, in file order (``u.genre``).
GENRES = ("unknown", "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime",
          "Documentary", "Drama", "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery",
          "Romance", "Sci-Fi", "Thriller", "War", "Western")

#: Gender codes (the graph label :obj:`y`).
GENDERS = ("F", "M")
#: Fields of a line of ``u.item``: id, title, release date, video release date, IMDb url, genre flags.
ITEM_FIELDS = 5 + len(GENRES)
#: The largest age (years) `u.user` may give: users are labelled by age // 15, a handful of groups.
MAX_AGE = 150

GENRE_MODES = ("single", "first")

#: Tie rules for ratings in the same second.
TIE_RULES = ("row", "authors")


class MovieLensTables(NamedTuple):
    """The three MovieLens-100k files, parsed.

    Attributes:
        user, item, rating, time (torch.Tensor): :obj:`[E]` the ratings of
            ``u.data`` in file order; :obj:`user`/:obj:`item` are dense row
            indices into the tables below (rows of unknown users or items
            are dropped).
        user_ids (torch.Tensor): :obj:`[U]` MovieLens id of every user row.
        age (torch.Tensor): :obj:`[U]` age in years.
        gender (torch.Tensor): :obj:`[U]` 0 for "F", 1 for "M".
        item_ids (torch.Tensor): :obj:`[I]` MovieLens id of every item row.
        genres (torch.Tensor): :obj:`[I, 19]` genre flags (0/1).
        dropped (int): Ratings dropped for an unknown user or item id.
    """

    user: Tensor
    item: Tensor
    rating: Tensor
    time: Tensor
    user_ids: Tensor
    age: Tensor
    gender: Tensor
    item_ids: Tensor
    genres: Tensor
    dropped: int


def _read_lines(path: str, encoding: str) -> List[str]:
    r"""The lines of a file, which end at ``\n``, ``\r\n`` or ``\r`` only.

    A UTF-8 byte-order mark at the start is dropped (:func:`~kong_pyg.files.file_text`, as the TU
    reader does). (``str.splitlines`` also breaks at latin-1's ``\x85``, ``\x1c``-``\x1e``, ``\x0b``
    and ``\x0c``, bytes a title may hold.)
    """
    with open(path, "rb") as raw:
        return file_text(raw.read(), encoding).split("\n")


#: An integer field: ASCII digits, an optional sign (``int()`` also takes '1_0' and other scripts' digits).
_INT = re.compile(r"\s*[+-]?[0-9]+\s*", re.ASCII)


def _first_time(lines: Dict[int, int], key: int, line_no: int, path: str, name: str) -> None:
    """Note the line of :obj:`key`; a :class:`ValueError` naming both lines if it was seen before."""
    first = lines.setdefault(key, line_no)
    if first != line_no:
        raise ValueError(f"{path}, line {line_no}: {name} id {key} again (first on line {first}); ids must "
                         "be distinct")


def _ints(fields, path: str, line_no: int) -> List[int]:
    if not all(_INT.fullmatch(f) for f in fields):
        raise ValueError(f"{path}, line {line_no}: expected integers, got {fields!r}")
    out = [int(f) for f in fields]
    if any(not -(2**63) <= v < 2**63 for v in out):
        raise ValueError(f"{path}, line {line_no}: expected 64-bit integers, got {fields!r}")
    return out


def _rows(ids: Tensor, table: Tensor) -> Tensor:
    """The row of every id in :obj:`table` (distinct ids), :obj:`-1` where it is absent.

    A binary search in the sorted table: no lookup array as long as the
    largest id, and a negative id is just an id (absent unless listed).
    """
    if table.numel() == 0:
        return torch.full_like(ids, -1)
    ids = ids.contiguous()
    known, row = torch.sort(table)
    pos = torch.searchsorted(known, ids).clamp_(max=table.numel() - 1)
    return torch.where(known[pos] == ids, row[pos], torch.full_like(ids, -1))


@cpu_by_default
def read_ml100k(folder: str, named: Optional[str] = None, quiet: bool = False) -> MovieLensTables:
    r"""Parse ``u.data``, ``u.user`` and ``u.item`` of MovieLens-100k.

    * ``u.data``: ``user item rating timestamp``, tab-separated (empty
      trailing fields are tolerated; anything else malformed raises a
      :class:`ValueError` naming the file and line);
    * ``u.user``: ``id|age|gender|occupation|zip``;
    * ``u.item``: ``id|title|release|video release|url|`` and 19 genre flags,
      latin-1 encoded.

    Ratings whose user or item id is missing from ``u.user``/``u.item``
    (negative ids included) have no label, so they are dropped with a
    warning (their number is in :obj:`dropped`). Ids are looked up by binary
    search, so their size does not matter; every integer must fit in 64
    bits (a :class:`ValueError` naming the file and line otherwise).

    Args:
        folder (str): The folder holding the three files.
        named (str, optional): The folder messages name instead (the user's, of which
            :obj:`folder` holds copies). (default: :obj:`folder`)
        quiet (bool, optional): No warning about dropped ratings (their
            number is still in :obj:`dropped`). (default: :obj:`False`)
    """
    check_bool("quiet", quiet)
    data_path, user_path, item_path = (osp.join(named or folder, f) for f in ("u.data", "u.user", "u.item"))
    users, ages, genders = [], [], []
    user_lines: Dict[int, int] = {}  # (the line of each id: a repeated id names both)
    for no, line in enumerate(_read_lines(osp.join(folder, "u.user"), "latin-1"), start=1):
        if not line.strip():
            continue
        f = line.split("|")
        if len(f) < 3:
            raise ValueError(f"{user_path}, line {no}: expected 'id|age|gender|...', got {line!r}")
        uid, age = _ints(f[:2], user_path, no)
        if not 0 <= age <= MAX_AGE:
            raise ValueError(f"{user_path}, line {no}: age must be in years, 0 to {MAX_AGE}, got {age}")
        if f[2] not in GENDERS:
            raise ValueError(f"{user_path}, line {no}: gender must be 'M' or 'F', got {f[2]!r}")
        _first_time(user_lines, uid, no, user_path, "user")
        users.append(uid)
        ages.append(age)
        genders.append(GENDERS.index(f[2]))
    items, flags = [], []
    item_lines: Dict[int, int] = {}
    for no, line in enumerate(_read_lines(osp.join(folder, "u.item"), "latin-1"), start=1):
        if not line.strip():
            continue
        f = line.split("|")
        if len(f) != ITEM_FIELDS:  # (the flags are the last 19: one field more or less shifts them all)
            raise ValueError(f"{item_path}, line {no}: expected {ITEM_FIELDS} '|'-separated fields (id, "
                             f"title, release, video release, url, {len(GENRES)} genre flags), got {len(f)}")
        items.append(_ints(f[:1], item_path, no)[0])
        _first_time(item_lines, items[-1], no, item_path, "item")
        row = _ints(f[-len(GENRES):], item_path, no)
        if any(v not in (0, 1) for v in row):
            raise ValueError(f"{item_path}, line {no}: genre flags must be 0 or 1, got {row}")
        flags.append(row)
    rows = []
    for no, line in enumerate(_read_lines(osp.join(folder, "u.data"), "latin-1"), start=1):
        f = line.split("\t")
        while f and not f[-1].strip():
            f.pop()
        if not f:
            continue
        if len(f) != 4:
            raise ValueError(f"{data_path}, line {no}: expected 4 tab-separated fields "
                             f"(user item rating timestamp), got {line!r}")
        row = _ints(f, data_path, no)
        if not 1 <= row[2] <= 5:  # (stored as int8 'edge_rating': 300 wrapped to 44)
            raise ValueError(f"{data_path}, line {no}: a rating is 1 to 5, got {row[2]}")
        rows.append(row)
    parts = (("user", users, user_path), ("item", items, item_path), ("rating", rows, data_path))
    for name, ids, path in parts:
        if not ids:
            raise ValueError(f"{path}: no {name}s (an empty file)")
    log = torch.tensor(rows, dtype=torch.long).view(-1, 4)
    user_ids = torch.tensor(users, dtype=torch.long)
    item_ids = torch.tensor(items, dtype=torch.long)

    user = _rows(log[:, 0], user_ids)
    item = _rows(log[:, 1], item_ids)
    keep = (user >= 0) & (item >= 0)
    dropped = int((~keep).sum())
    if dropped and not quiet:
        bad_users = torch.unique(log[user < 0, 0]).tolist()
        bad_items = torch.unique(log[item < 0, 1]).tolist()
        warn(
            f"{data_path}: dropped {dropped} rating(s) of unknown users {bad_users[:10]} "
            f"or items {bad_items[:10]} (not in u.user/u.item, so they have no label)")
    return MovieLensTables(
        user[keep], item[keep], log[keep, 2], log[keep, 3], user_ids,
        torch.tensor(ages, dtype=torch.long), torch.tensor(genders, dtype=torch.long), item_ids,
        torch.tensor(flags, dtype=torch.long).view(-1, len(GENRES)), dropped,
    )


class MovieLensOrdered(SafeInMemoryDataset):
    r"""MovieLens-100k users as ordered 2-hop ego graphs, class = gender.

    The data of the `"KONG: Kernels for ordered-neighborhood graphs"
    <https://arxiv.org/abs/1805.10014>`_ paper's Table 2: one graph per user,
    built by :class:`~kong_pyg.datasets.InteractionGraphs` from the ratings of
    ``u.data`` (edge time = rating timestamp): the user, the movies it rated
    in time order, and for each movie the users who rated it, in time order
    (ties: :obj:`ties`). Every edge's :obj:`edge_order` is its rating's
    global time rank (see :mod:`kong_pyg.datasets.movielens` for this and
    for every difference from the paper and the authors' code). Labels, as
    in the paper:

    * user nodes: age group :math:`\lfloor \mathrm{age} / 15 \rfloor`
      (:math:`L_U` = the largest group in ``u.user`` + 1, 5 on the real file);
    * movie nodes: :math:`L_U` + genre index (0..18, ``u.genre`` order). With
      :obj:`genre="single"` (the paper) only movies with exactly one genre
      are kept (ratings of the others are dropped before building graphs);
      with :obj:`genre="first"` every movie is kept and labelled by its first
      genre flag (:obj:`"unknown"` if none is set);
    * graph label :obj:`y`: the user's gender, 0 = F, 1 = M.

    Users without a rating left (after the genre filter) get no graph.

    The raw files are ``u.data``, ``u.user`` and ``u.item`` in
    :obj:`root/raw`. A filled :obj:`raw/` never touches the network;
    :obj:`ml_dir` copies missing raw files from an existing MovieLens-100k
    folder; otherwise the archive is downloaded from
    :obj:`ML100K_URL` (the URL of PyG's
    :class:`~torch_geometric.datasets.MovieLens100K`). The processed file
    is a plain-array cache keyed by the options and the raw files' content
    (see :class:`~kong_pyg.datasets.safe_cache.SafeInMemoryDataset`): it is
    rebuilt when they change, and never unpickled.

    .. warning::
        The neighbor order is the order of :obj:`edge_index`; never
        :obj:`coalesce`, sort or :obj:`ToUndirected` these graphs.

    Args:
        root (str): Root directory (:obj:`raw/` and :obj:`processed/`).
        ml_dir (str, optional): A folder holding the three files, copied to
            :obj:`root/raw` when missing there (a file there that differs from
            :obj:`ml_dir`'s is a :class:`ValueError`). (default: :obj:`None`)
        genre (str, optional): :obj:`"single"` or :obj:`"first"`.
            (default: :obj:`"single"`)
        symmetric (bool, optional): Also let 2-hop users see the ego's
            movies they rated (see :class:`InteractionGraphs`).
            (default: :obj:`False`)
        ties (str, optional): Ratings in the same second: :obj:`"row"` (file
            row order) or :obj:`"authors"` (user id, then movie id, compared
            as strings). (default: :obj:`"row"`)
        layout (str, optional): :obj:`"ego"` or :obj:`"authors"` (the
            authors' undirected graph; see :class:`InteractionGraphs`).
            (default: :obj:`"ego"`)
        edge_labels (bool, optional): :obj:`edge_attr` from both endpoint
            labels. (default: :obj:`False`)
        max_graphs (int, optional): Keep at most this many users (seeded).
            (default: :obj:`None`)
        balance (bool, optional): As many men as women (a seeded subset).
            (default: :obj:`False`)
        seed (int, optional): The seed of the subsets. (default: :obj:`0`)
        transform (callable, optional): A transform applied on access.
        force_reload (bool, optional): Re-process. (default: :obj:`False`)
    """

    collated_cls = Data  # (its graphs are plain Data: every slice checked along PyG's own rule)

    @cpu_by_default
    def __init__(
        self,
        root: str,
        ml_dir: Optional[str] = None,
        genre: str = "single",
        symmetric: bool = False,
        edge_labels: bool = False,
        max_graphs: Optional[int] = None,
        balance: bool = False,
        seed: int = 0,
        transform: Optional[Callable] = None,
        force_reload: bool = False,
        ties: str = "row",
        layout: str = "ego",
    ):
        if genre not in GENRE_MODES:
            raise ValueError(f"'genre' must be one of {list(GENRE_MODES)} (got {genre!r})")
        if ties not in TIE_RULES:
            raise ValueError(f"'ties' must be one of {list(TIE_RULES)} (got {ties!r})")
        if layout not in LAYOUTS:
            raise ValueError(f"'layout' must be one of {list(LAYOUTS)} (got {layout!r})")
        symmetric = check_bool("symmetric", symmetric)
        if layout == "authors" and symmetric:
            raise ValueError("layout='authors' fixes the 2-hop users' edges; leave 'symmetric' False")
        self.ties = ties
        self.layout = layout
        if root is None:
            raise ValueError("'root' is required (the folder for raw/ and processed/)")
        self.ml_dir = ml_dir
        self.genre = genre
        self.symmetric = symmetric
        self.edge_labels = check_bool("edge_labels", edge_labels)
        self.max_graphs = max_graphs
        self.balance = check_bool("balance", balance)
        self.seed = check_int("seed", seed, 0, MAX_SEED)
        if ml_dir is not None:
            self._copy_raw(root, ml_dir)
        super().__init__(root, transform, force_reload=force_reload)
        self.load(self.processed_paths[0])

    @property
    def raw_file_names(self) -> List[str]:
        """The three MovieLens-100k files."""
        return ["u.data", "u.user", "u.item"]

    @property
    def processed_file_names(self) -> str:
        """One file per set of options."""
        parts = [self.genre, "sym" if self.symmetric else "dir", "el" if self.edge_labels else "nl",
                 "bal" if self.balance else "all", f"max{self.max_graphs}", f"seed{self.seed}",
                 f"ties-{self.ties}", self.layout]
        return "ordered2_" + "_".join(parts) + ".npz"

    def _copy_raw(self, root: str, ml_dir: str) -> None:
        """Copy :obj:`ml_dir`'s files missing from :obj:`root/raw`; refuse raw files that differ from them."""
        import filecmp

        raw_dir = osp.join(root, "raw")
        # (a name there that is not a file, such as a broken link, is refused: never written through)
        missing = [f for f in self.raw_file_names if not regular_file(osp.join(raw_dir, f))]
        other = [f for f in self.raw_file_names if f not in missing and regular_file(osp.join(ml_dir, f))
                 and not filecmp.cmp(osp.join(raw_dir, f), osp.join(ml_dir, f), shallow=False)]
        if other:  # the data set read would not be ml_dir's: never silently
            ours, theirs = osp.join(raw_dir, other[0]), osp.join(ml_dir, other[0])
            raise ValueError(f"'root' ({root}) holds another MovieLens-100k than 'ml_dir' ({ml_dir}): {ours} "
                             f"differs from {theirs}. Empty {raw_dir}, or use another folder as root")
        if not missing:
            return
        absent = [f for f in missing if not regular_file(osp.join(ml_dir, f))]
        if absent:
            raise FileNotFoundError(f"'ml_dir' ({ml_dir}) lacks the MovieLens-100k file(s) {absent}")
        os.makedirs(raw_dir, exist_ok=True)
        for f in missing:  # (into a fresh temporary file renamed into place: a name planted since the
            # check above is replaced, not written through)
            with open(osp.join(ml_dir, f), "rb") as src, atomic_file(osp.join(raw_dir, f)) as dst:
                shutil.copyfileobj(src, dst)

    def download(self) -> None:
        """Fetch the MovieLens-100k archive (only when raw/ lacks a file)."""
        archive = osp.join(self.raw_dir, osp.basename(ML100K_URL))
        try:
            path = download_url(ML100K_URL, self.raw_dir)
            extract_zip(path, self.raw_dir)
        except (OSError, zipfile.BadZipFile) as err:
            if osp.exists(archive):  # a partial archive would be taken as downloaded by the next try
                os.remove(archive)
            here = all(osp.isfile(osp.join(self.root, f)) for f in self.raw_file_names)
            hint = (f"; {self.root} holds the MovieLens files itself: pass it as ml_dir= (and another "
                    "root for the processed data)") if here else ""
            raise OSError(f"could not download MovieLens-100k from {ML100K_URL}: {err}; put "
                          f"{', '.join(self.raw_file_names)} into {self.raw_dir}, or pass an existing "
                          f"MovieLens-100k folder as ml_dir={hint}") from err
        os.remove(path)
        folder = osp.join(self.raw_dir, "ml-100k")
        for f in self.raw_file_names:
            shutil.move(osp.join(folder, f), osp.join(self.raw_dir, f))
        shutil.rmtree(folder)

    def process(self) -> None:
        """Read the raw files and build the ego graphs."""
        t = read_ml100k(self.raw_dir, named=self.ml_dir)  # (raw/ holds ml_dir's files: name the user's)
        n_flags = t.genres.sum(dim=1)
        if self.genre == "single":
            item_label = t.genres.argmax(dim=1)
            keep = n_flags[t.item] == 1
        else:
            item_label = torch.where(n_flags > 0, t.genres.argmax(dim=1), torch.zeros_like(n_flags))
            keep = torch.ones_like(t.item, dtype=torch.bool)
        age_group = t.age // 15
        tie_key = authors_tie_key(t.user_ids[t.user], t.item_ids[t.item]) if self.ties == "authors" else None
        data, slices = build_ego_graphs(
            t.user[keep], t.item[keep], t.time[keep], age_group, item_label, t.gender,
            t.rating[keep].to(torch.int8), tie_key=None if tie_key is None else tie_key[keep],
            layout=self.layout,
            symmetric=self.symmetric, edge_labels=self.edge_labels, max_graphs=self.max_graphs,
            balance=self.balance, seed=self.seed, num_user_labels=int(age_group.max()) + 1,
            num_item_labels=len(GENRES),
        )
        # original MovieLens ids instead of table rows
        is_item = data.node_type == 1
        n_id = data.n_id.clone()
        n_id[is_item] = t.item_ids[data.n_id[is_item]]
        n_id[~is_item] = t.user_ids[data.n_id[~is_item]]
        data.n_id = n_id
        data.user_id = t.user_ids[data.user_id]
        self.save_collated(data, slices, self.processed_paths[0])

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({len(self)}, genre={self.genre!r}, ties={self.ties!r}, "
                f"layout={self.layout!r})")


def authors_tie_key(user_ids: Tensor, item_ids: Tensor) -> Tensor:
    """The rank of every rating under the KONG authors' tie rule.

    Their code sorts ``(timestamp, [user, movie, rating])`` with the ids as
    strings, so ratings in the same second are ordered by user id, then
    movie id, compared as text (``"10" < "9"``).

    Args:
        user_ids (torch.Tensor): :obj:`[E]` the MovieLens user id of every rating.
        item_ids (torch.Tensor): :obj:`[E]` its movie id.

    Returns:
        torch.Tensor: :obj:`[E]` ranks (a permutation of :obj:`0..E-1`).
    """
    import numpy as np

    users = user_ids.numpy().astype(str)
    items = item_ids.numpy().astype(str)
    order = torch.from_numpy(np.lexsort((items, users)).astype(np.int64))
    rank = torch.empty_like(order)
    rank[order] = torch.arange(order.numel())
    return rank


__all__ = ["MovieLensOrdered", "MovieLensTables", "read_ml100k", "authors_tie_key", "ML100K_URL", "GENRES",
           "GENDERS", "TIE_RULES"]
