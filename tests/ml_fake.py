"""A tiny fake MovieLens-100k folder (same file formats as the real one)."""
import random
from pathlib import Path

GENRE_FLAGS = 19


def write_fake_ml100k(folder, num_users=20, num_items=12, ratings_per_user=6, seed=0, extra_lines=()):
    """Write u.data, u.user and u.item; returns (ratings, users, genres) as Python lists.

    ratings: (user, item, rating, timestamp) in file order; users: (id, age, gender);
    genres: per item id its list of flagged genre indices. Item 1 has two genres.
    """
    rng = random.Random(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    users = [(u, rng.randint(7, 73), "F" if u % 2 else "M") for u in range(1, num_users + 1)]
    genres = {}
    item_lines = []
    for i in range(1, num_items + 1):
        flags = [0] * GENRE_FLAGS
        gs = [1, 5] if i == 1 else [rng.randrange(GENRE_FLAGS)]
        for g in gs:
            flags[g] = 1
        genres[i] = sorted(gs)
        title = "Café Society (1995)" if i == 2 else f"Movie {i} (1995)"
        item_lines.append(f"{i}|{title}|01-Jan-1995||http://x|" + "|".join(map(str, flags)))
    ratings = []
    for u, _, _ in users:
        for i in rng.sample(range(1, num_items + 1), ratings_per_user):
            ratings.append((u, i, rng.randint(1, 5), 880000000 + rng.randrange(50)))
    rng.shuffle(ratings)
    (folder / "u.user").write_text("".join(f"{u}|{a}|{g}|other|00000\n" for u, a, g in users))
    (folder / "u.item").write_bytes(("\n".join(item_lines) + "\n").encode("latin-1"))
    text = "".join(f"{u}\t{i}\t{r}\t{t}\n" for u, i, r, t in ratings) + "".join(extra_lines)
    (folder / "u.data").write_text(text)
    return ratings, users, genres
