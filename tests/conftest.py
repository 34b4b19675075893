import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def one_thread():
    """Tests use tiny tensors: intra-op threads only add scheduling waits
    (seconds on a busy machine), so every test runs single-threaded."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
