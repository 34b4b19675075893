import warnings
from pathlib import Path

import pytest
import torch
from ml_fake import write_fake_ml100k

from kong_pyg import kong_strings
from kong_pyg.datasets import MovieLensOrdered, read_ml100k

SHARED_ML = Path(__file__).resolve().parents[2] / "shared" / "data" / "ml-100k"


@pytest.fixture
def fake(tmp_path):
    folder = tmp_path / "ml"
    # an unknown user (0) and a trailing tab, as in real-world copies of the file
    info = write_fake_ml100k(folder, extra_lines=["0\t3\t4\t880000001\t\n"])
    return folder, info


def no_network(self):
    raise AssertionError("the network was touched")


def test_read_ml100k_tolerates_trailing_tab_and_drops_unknown_users(fake):
    folder, (ratings, users, genres) = fake
    with pytest.warns(UserWarning, match=r"dropped 1 rating\(s\) of unknown users \[0\]"):
        t = read_ml100k(str(folder))
    assert t.dropped == 1 and t.user.numel() == len(ratings)
    assert t.user_ids.tolist() == [u for u, _, _ in users]
    assert t.gender.tolist() == [int(g == "M") for _, _, g in users]
    assert t.genres.shape == (12, 19) and t.genres[0].nonzero().view(-1).tolist() == [1, 5]


def test_malformed_lines_name_the_file_and_line(tmp_path):
    folder = tmp_path / "ml"
    write_fake_ml100k(folder, extra_lines=["1\t2\tthree\t4\n"])
    with pytest.raises(ValueError, match=r"u.data, line 121: expected integers"):
        read_ml100k(str(folder))
    write_fake_ml100k(folder, extra_lines=["1\t2\t3\n"])
    with pytest.raises(ValueError, match=r"line 121: expected 4 tab-separated fields"):
        read_ml100k(str(folder))
    write_fake_ml100k(folder, extra_lines=["1\t2\t300\t4\n"])
    with pytest.raises(ValueError, match=r"u.data, line 121: a rating is 1 to 5, got 300"):
        read_ml100k(str(folder))
    # empty files: once a RuntimeError from deep inside
    for name, what in (("u.user", "users"), ("u.item", "items"), ("u.data", "ratings")):
        write_fake_ml100k(folder)
        (folder / name).write_text("\n")
        with pytest.raises(ValueError, match=rf"{name}: no {what} \(an empty file\)"):
            read_ml100k(str(folder))
    # a repeated id: the message named neither the id nor its lines
    for name in ("u.user", "u.item"):
        write_fake_ml100k(folder)
        lines = (folder / name).read_text(encoding="latin-1").splitlines(keepends=True)
        (folder / name).write_text("".join(lines[:3] + ["\n", lines[1]] + lines[3:]), encoding="latin-1")
        key = lines[1].split("|")[0]
        again = rf"{name}, line 5: {name[2:]} id {key} again \(first on line 2\)"
        with pytest.raises(ValueError, match=again):
            read_ml100k(str(folder))


def test_dataset_labels_order_and_no_network(fake, tmp_path, monkeypatch):
    folder, (ratings, users, genres) = fake
    monkeypatch.setattr(MovieLensOrdered, "download", no_network)
    root = tmp_path / "root"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = MovieLensOrdered(str(root), ml_dir=str(folder), genre="first")
    assert sorted(p.name for p in (root / "raw").iterdir()) == ["u.data", "u.item", "u.user"]
    assert len(ds) == 20
    data = ds._data
    ages = {u: a for u, a, _ in users}
    is_user = data.node_type == 0
    assert data.x[is_user].tolist() == [ages[int(u)] // 15 for u in data.n_id[is_user]]
    L_U = max(a // 15 for _, a, _ in users) + 1
    assert data.x[~is_user].tolist() == [L_U + genres[int(i)][0] for i in data.n_id[~is_user]]
    assert data.y.tolist() == [int(g == "M") for _, _, g in users]
    # the time order survives: each ego's string lists its movies' genres by rating time
    # (ties in time keep the file's row order)
    for gi in (0, 7, 19):
        g = ds[gi]
        u = int(g.user_id)
        mine = [(t, row, i) for row, (uu, i, _, t) in enumerate(ratings) if uu == u]
        expected = tuple(L_U + genres[i][0] for _, _, i in sorted(mine))
        assert kong_strings(g.edge_index, g.x.tolist(), 1)[0][1] == expected
        assert g.edge_time[: len(mine)].tolist() == sorted(t for t, _, _ in mine)
        # and every movie sees its raters in time order
        s = kong_strings(g.edge_index, g.x.tolist(), 1)
        for node in range(1, 1 + len(mine)):
            item = int(g.n_id[node])
            raters = sorted((t, row, uu) for row, (uu, i, _, t) in enumerate(ratings) if i == item)
            assert s[node][1] == tuple(ages[uu] // 15 for _, _, uu in raters)
    # reload from processed/, raw/ already there: no ml_dir, no network
    again = MovieLensOrdered(str(root), genre="first")
    assert torch.equal(again._data.edge_index, data.edge_index)


def test_genre_modes_balance_and_caps(fake, tmp_path, monkeypatch):
    folder, (ratings, users, genres) = fake
    monkeypatch.setattr(MovieLensOrdered, "download", no_network)
    root = str(tmp_path / "root")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        single = MovieLensOrdered(root, ml_dir=str(folder))
        first = MovieLensOrdered(root, genre="first")
        capped = MovieLensOrdered(root, max_graphs=6, balance=True, seed=1)
        edge = MovieLensOrdered(root, edge_labels=True, symmetric=True)
    items_single = set(single._data.n_id[single._data.node_type == 1].tolist())
    assert 1 not in items_single  # item 1 has two genres: dropped in "single" mode
    assert 1 in set(first._data.n_id[first._data.node_type == 1].tolist())
    assert single._data.edge_index.size(1) < first._data.edge_index.size(1)
    assert len(capped) == 6 and capped._data.y.tolist().count(0) == 3
    assert "edge_attr" in edge[0] and edge[0].edge_index.size(1) > single[0].edge_index.size(1)
    assert len({single.processed_file_names, first.processed_file_names, capped.processed_file_names}) == 3
    with pytest.raises(ValueError, match="'genre'"):
        MovieLensOrdered(root, genre="all")


def test_ml_dir_missing_files(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="lacks the MovieLens-100k file"):
        MovieLensOrdered(str(tmp_path / "root"), ml_dir=str(tmp_path / "empty"))


def test_ml_dir_with_other_files_in_root_raw_is_refused(tmp_path, monkeypatch):
    """A root whose raw/ already holds another MovieLens-100k than ml_dir's: a clear error naming both files
    (it used to read root's files silently); the same ml_dir again, or no ml_dir, reads root's."""
    monkeypatch.setattr(MovieLensOrdered, "download", lambda self: None)
    write_fake_ml100k(tmp_path / "a", num_users=20)
    write_fake_ml100k(tmp_path / "b", num_users=40, seed=1)
    root = str(tmp_path / "root")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = MovieLensOrdered(root, ml_dir=str(tmp_path / "a"), genre="first")
        with pytest.raises(ValueError, match=r"'root' .* holds another MovieLens-100k than 'ml_dir'"):
            MovieLensOrdered(root, ml_dir=str(tmp_path / "b"), genre="first")
        assert len(MovieLensOrdered(root, ml_dir=str(tmp_path / "a"), genre="first")) == len(first)
        other = MovieLensOrdered(str(tmp_path / "root2"), ml_dir=str(tmp_path / "b"), genre="first")
        assert len(other) > len(first)


@pytest.mark.skipif(not (SHARED_ML / "u.data").is_file(), reason="MovieLens-100k copy not available")
def test_real_movielens_smoke(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = MovieLensOrdered(str(tmp_path), ml_dir=str(SHARED_ML), balance=True, max_graphs=10)
    assert len(ds) == 10 and ds._data.y.tolist().count(1) == 5
    data = ds._data
    assert int(data.x[data.node_type == 0].max()) < 5 <= int(data.x[data.node_type == 1].min())
    # one user's string against u.data read directly (single-genre movies, time order, row ties)
    flags = {}
    for line in (SHARED_ML / "u.item").read_text(encoding="latin-1").splitlines():
        f = line.split("|")
        flags[int(f[0])] = [int(v) for v in f[-19:]]
    g = ds[3]
    u = int(g.user_id)
    rows = [line.split() for line in (SHARED_ML / "u.data").read_text().splitlines()]
    mine = sorted((int(r[3]), n, int(r[1])) for n, r in enumerate(rows) if int(r[0]) == u
                  and sum(flags[int(r[1])]) == 1)
    expected = tuple(5 + flags[i].index(1) for _, _, i in mine)
    assert kong_strings(g.edge_index, g.x.tolist(), 1)[0][1] == expected


def test_tie_rules_layout_and_event_key(fake, tmp_path, monkeypatch):
    folder, (ratings, users, genres) = fake
    monkeypatch.setattr(MovieLensOrdered, "download", no_network)
    root = str(tmp_path / "root")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row = MovieLensOrdered(root, ml_dir=str(folder), genre="first")
        authors = MovieLensOrdered(root, genre="first", ties="authors")
        both = MovieLensOrdered(root, genre="first", ties="authors", layout="authors")
    assert len({row.processed_file_names, authors.processed_file_names, both.processed_file_names}) == 3
    ages = {u: a for u, a, _ in users}
    L_U = max(a // 15 for _, a, _ in users) + 1
    # the fake log has 50 distinct seconds for 120 ratings: ties decide much of the order
    moved = 0
    for gi in range(len(authors)):
        g, r = authors[gi], row[gi]
        u = int(g.user_id)
        mine = [(t, str(uu), str(i), i) for uu, i, _, t in ratings if uu == u]
        expected = tuple(L_U + genres[i][0] for *_, i in sorted(mine))
        assert kong_strings(g.edge_index, g.x.tolist(), 1)[0][1] == expected
        moved += kong_strings(r.edge_index, r.x.tolist(), 1)[0][1] != expected
        # a movie's raters: ties by user id as a string ("10" before "9")
        s = kong_strings(g.edge_index, g.x.tolist(), 1)
        item = int(g.n_id[1])
        raters = sorted((t, str(uu)) for uu, i, _, t in ratings if i == item)
        assert s[1][1] == tuple(ages[int(uu)] // 15 for _, uu in raters)
    assert moved > 0  # the two tie rules give different orders on this log
    # the event key: the same rating (user, movie) has the same key in every graph, and the
    # keys rank the ratings by (time, user id string, movie id string)
    rank = {(int(uu), int(i)): n for n, (_, uu, i) in enumerate(sorted(
        (t, str(uu), str(i)) for uu, i, _, t in ratings))}
    for gi in range(len(authors)):
        g = authors[gi]
        for (s_, d), key in zip(g.edge_index.t().tolist(), g.edge_order.tolist()):
            u, i = (s_, d) if int(g.node_type[s_]) == 0 else (d, s_)
            assert key == rank[int(g.n_id[u]), int(g.n_id[i])]
    # the authors' layout: the ego sees each movie twice
    g = both[0]
    ego = kong_strings(g.edge_index, g.x.tolist(), 1)[0][1]
    assert ego[::2] == ego[1::2] == kong_strings(authors[0].edge_index, authors[0].x.tolist(), 1)[0][1]
    with pytest.raises(ValueError, match="'ties'"):
        MovieLensOrdered(root, ties="movie")
    with pytest.raises(ValueError, match="'layout'"):
        MovieLensOrdered(root, layout="directed")


def test_authors_tie_key_compares_ids_as_strings():
    from kong_pyg.datasets.movielens import authors_tie_key

    users = torch.tensor([9, 10, 9, 100, 2])
    items = torch.tensor([5, 1, 40, 7, 3])
    # as strings: ("10","1") < ("100","7") < ("2","3") < ("9","40") < ("9","5")
    assert authors_tie_key(users, items).tolist() == [4, 0, 3, 1, 2]


def write_tiny_ml100k(folder, ratings, users=(1, 2), items=(1, 2)):
    folder.mkdir(parents=True, exist_ok=True)
    flags = "|".join(["0"] * 18 + ["1"])
    (folder / "u.user").write_text("".join(f"{u}|24|{'MF'[u % 2]}|x|1\n" for u in users))
    (folder / "u.item").write_text("".join(f"{i}|T|d||u|{flags}\n" for i in items))
    (folder / "u.data").write_text(ratings)


def test_negative_ids_are_unknown_ids_and_dropped(tmp_path):
    # -1 used to index the lookup table from its end: the rating went to the user and item of largest id
    write_tiny_ml100k(tmp_path, "1\t1\t5\t100\n-1\t-1\t3\t101\n2\t-2\t4\t102\n")
    with pytest.warns(UserWarning, match=r"dropped 2 rating\(s\) of unknown users \[-1\] "
                                         r"or items \[-2, -1\]"):
        t = read_ml100k(str(tmp_path))
    assert t.dropped == 2
    assert t.user.tolist() == [0] and t.item.tolist() == [0] and t.rating.tolist() == [5]
    assert t.time.tolist() == [100]


def test_id_lookup_does_not_depend_on_the_size_of_the_ids(tmp_path):
    # a lookup table of max(id) + 1 entries: 10^15 asked for 8 PB, 10^9 took 8 GB
    big = 10**15
    write_tiny_ml100k(tmp_path, f"1\t1\t5\t100\n{big}\t1\t3\t101\n2\t{big}\t4\t102\n{2**62}\t3\t2\t103\n",
                      users=(2, big, 1), items=(3, 1))
    with pytest.warns(UserWarning, match=rf"dropped 2 rating\(s\) of unknown users \[{2**62}\] "
                                          rf"or items \[{big}\]"):
        t = read_ml100k(str(tmp_path))
    assert t.dropped == 2 and t.user.tolist() == [2, 1] and t.item.tolist() == [1, 1]
    assert t.user_ids[t.user].tolist() == [1, big] and t.item_ids[t.item].tolist() == [1, 1]
    write_tiny_ml100k(tmp_path, f"1\t1\t5\t100\n1\t{2**64}\t4\t102\n")
    with pytest.raises(ValueError, match=r"u.data, line 2: expected 64-bit integers"):
        read_ml100k(str(tmp_path))


def test_id_lookup_matches_a_dict_on_the_fake_data(fake):
    folder, (ratings, users, genres) = fake
    with pytest.warns(UserWarning, match="dropped 1"):
        t = read_ml100k(str(folder))
    user_row = {u: r for r, (u, _, _) in enumerate(users)}
    item_row = {i: r for r, i in enumerate(t.item_ids.tolist())}
    assert t.user.tolist() == [user_row[u] for u, _, _, _ in ratings]
    assert t.item.tolist() == [item_row[i] for _, i, _, _ in ratings]


def test_dataset_flags_must_be_bools(tmp_path, monkeypatch):
    monkeypatch.setattr(MovieLensOrdered, "download", no_network)
    for flag in ("symmetric", "edge_labels", "balance"):
        with pytest.raises(TypeError, match=rf"'{flag}' must be True or False \(got 'no'\)"):
            MovieLensOrdered(str(tmp_path), **{flag: "no"})


def test_an_age_that_is_not_years_is_refused_with_its_line(tmp_path):
    write_fake_ml100k(tmp_path)
    lines = (tmp_path / "u.user").read_text().splitlines()
    for bad in ("-5", "151"):
        lines[2] = f"3|{bad}|M|other|00000"
        (tmp_path / "u.user").write_text("\n".join(lines) + "\n")
        with pytest.raises(ValueError, match=rf"u.user, line 3: age must be in years, 0 to 150, got {bad}"):
            read_ml100k(str(tmp_path))


def test_a_genre_flag_that_is_not_0_or_1_is_refused_with_its_line(tmp_path):
    write_fake_ml100k(tmp_path)
    lines = (tmp_path / "u.item").read_bytes().decode("latin-1").splitlines()
    lines[1] = lines[1][: lines[1].rindex("|")] + "|2"
    (tmp_path / "u.item").write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    with pytest.raises(ValueError, match=r"u.item, line 2: genre flags must be 0 or 1, got \[.*2\]"):
        read_ml100k(str(tmp_path))


def test_a_failed_download_says_where_to_put_the_files(tmp_path, monkeypatch):
    import kong_pyg.datasets.movielens as ml

    def broken(url, folder, **kwargs):  # the connection drops: half an archive is left
        Path(folder, "ml-100k.zip").write_bytes(b"PK\x03\x04 half")
        raise OSError("connection reset")

    monkeypatch.setattr(ml, "download_url", broken)
    with pytest.raises(OSError, match=r"could not download MovieLens-100k .*connection reset; put u.data, "
                                      r"u.user, u.item into .*raw, or pass an existing MovieLens-100k "
                                      r"folder as ml_dir=$"):
        MovieLensOrdered(str(tmp_path))
    assert not (tmp_path / "raw" / "ml-100k.zip").exists()  # the next try downloads again
    # the MovieLens folder itself given as root: the files there are named (they were not read)
    folder = tmp_path / "ml-100k"
    write_fake_ml100k(folder)
    with pytest.raises(OSError, match=r"ml-100k holds the MovieLens files itself: pass it as ml_dir="):
        MovieLensOrdered(str(folder))


def test_messages_name_the_users_files_not_the_copies_in_root(fake, tmp_path):
    """With ml_dir, raw/ holds copies of its files: warnings and errors name ml_dir's files (a CLI's
    temporary root said /tmp/tmpXXXX/ml/raw/u.data)."""
    folder, _ = fake
    root = tmp_path / "root"
    with pytest.warns(UserWarning, match="dropped 1 rating") as caught:
        MovieLensOrdered(str(root), ml_dir=str(folder), genre="first")
    text = " ".join(str(w.message) for w in caught if "dropped" in str(w.message))
    assert str(folder / "u.data") in text and str(root) not in text
    bad = tmp_path / "bad"
    write_fake_ml100k(bad, extra_lines=["1\t2\tthree\t4\n"])
    with pytest.raises(ValueError, match="line 121: expected integers") as err:
        MovieLensOrdered(str(tmp_path / "root2"), ml_dir=str(bad), genre="first")
    assert str(bad / "u.data") in str(err.value) and "root2" not in str(err.value)


def test_an_extra_or_missing_item_field_is_refused_not_shifted(tmp_path):
    # the genre flags are the last 19 fields: one field more would move Action's flag to 'unknown'
    write_fake_ml100k(tmp_path)
    lines = (tmp_path / "u.item").read_bytes().decode("latin-1").split("\n")
    for bad, got in ((lines[1] + "|0", 25), (lines[1].replace("|http://x", ""), 23)):
        (tmp_path / "u.item").write_bytes("\n".join(lines[:1] + [bad] + lines[2:]).encode("latin-1"))
        with pytest.raises(ValueError, match=rf"u.item, line 2: expected 24 '\|'-separated .*got {got}"):
            read_ml100k(str(tmp_path))


def test_lines_break_only_at_line_ends(tmp_path):
    # latin-1 bytes that str.splitlines breaks at (\x85, \x1c, \x0c) are characters of a title or a field
    ratings, _, _ = write_fake_ml100k(tmp_path)
    good = read_ml100k(str(tmp_path))
    lines = (tmp_path / "u.item").read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"Movie 3", b"Movie\x85\x1c\x0c 3")
    (tmp_path / "u.item").write_bytes(b"\r\n".join(lines))  # (CRLF line ends read as line ends)
    again = read_ml100k(str(tmp_path))
    assert torch.equal(good.genres, again.genres) and torch.equal(good.item, again.item)
    # a rating line holding \x85 is one malformed line, not two ratings
    (tmp_path / "u.data").write_bytes((tmp_path / "u.data").read_bytes() + b"1\t1\t3\t100\x852\t1\t4\t101\n")
    with pytest.raises(ValueError, match=rf"u.data, line {len(ratings) + 1}: expected 4 tab-separated"):
        read_ml100k(str(tmp_path))


def test_integers_are_ascii_digits(tmp_path):
    # int() takes '1_0': a user id 1_0 was read as user 10, silently
    ratings, _, _ = write_fake_ml100k(tmp_path, extra_lines=["1_0\t1\t3\t100\n"])
    with pytest.raises(ValueError, match=rf"u.data, line {len(ratings) + 1}: expected integers"):
        read_ml100k(str(tmp_path))


def test_a_cache_of_other_building_code_is_rebuilt(fake, tmp_path, monkeypatch):
    """The cache key named the raw files and options but not the code that built the graphs: a cache written
    before a parser fix was read as the fixed code's (found with an older kong_pyg). Now the key holds the
    package's version and the class's cache_version."""
    from kong_pyg import __version__

    folder, _ = fake
    monkeypatch.setattr(MovieLensOrdered, "download", no_network)
    calls = []
    process = MovieLensOrdered.process
    monkeypatch.setattr(MovieLensOrdered, "process", lambda self: calls.append(1) or process(self))
    root = str(tmp_path / "root")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = MovieLensOrdered(root, ml_dir=str(folder), genre="first")
        assert f"kong_pyg-{__version__}|MovieLensOrdered-1|" in ds.cache_key()
        MovieLensOrdered(root, genre="first")
        assert calls == [1]  # (the same code: read from the cache)
        monkeypatch.setattr(MovieLensOrdered, "cache_version", 2)
        again = MovieLensOrdered(root, genre="first")
    assert calls == [1, 1] and len(again) == len(ds)


def test_processed_that_is_a_file_and_a_planted_link_in_raw(fake, tmp_path, monkeypatch):
    """root/processed as a file gave a bare FileExistsError; a broken link planted at root/raw/u.item was
    written through by the copy from ml_dir (a file created outside root)."""
    folder, _ = fake
    monkeypatch.setattr(MovieLensOrdered, "download", no_network)
    root = tmp_path / "root"
    (root / "raw").mkdir(parents=True)
    outside = tmp_path / "outside.txt"
    (root / "raw" / "u.item").symlink_to(outside)
    with pytest.raises(ValueError, match=r"u.item is a broken link, not a file"):
        MovieLensOrdered(str(root), ml_dir=str(folder), genre="first")
    assert not outside.exists()
    other = tmp_path / "other"
    other.mkdir()
    (other / "processed").write_text("")
    with pytest.raises(ValueError, match=r"processed must be a folder for the processed files"):
        MovieLensOrdered(str(other), ml_dir=str(folder), genre="first")


def test_a_byte_order_mark_at_the_start_of_each_file_is_dropped(tmp_path):
    """As the TU and StreamSpot readers do (Windows editors write one): it was read into the first field."""
    write_fake_ml100k(tmp_path)
    good = read_ml100k(str(tmp_path))
    for name in ("u.user", "u.item", "u.data"):
        crlf = (tmp_path / name).read_bytes().replace(b"\n", b"\r\n")
        (tmp_path / name).write_bytes(b"\xef\xbb\xbf" + crlf)
    again = read_ml100k(str(tmp_path))
    for key in ("user", "item", "rating", "time", "genres", "gender", "user_ids"):
        assert torch.equal(getattr(good, key), getattr(again, key)), key
