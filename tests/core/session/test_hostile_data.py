"""A data folder from anywhere: every sample that cannot be read is one UserError, decided
from its header before its data is read (a header may claim 200 GB in a 200-byte file)."""

import struct
import zlib

import numpy as np
import pytest

from app.core.jobs.errors import UserError
from app.core.session import data_folder
from app.core.session.data_folder import read_folder
from app.core.session.inputs import FeedSpec, make_feeds

ONE_INPUT = [{"name": "x", "dtype": "float", "shape": [1, 4]}]
IMAGE_INPUT = [{"name": "pixels", "dtype": "tensor(float)", "shape": [1, 3, 8, 8]}]


def _npy_header(path, shape, data=b""):
    with open(path, "wb") as out:
        np.lib.format.write_array_header_1_0(out, {"descr": "<f4", "fortran_order": False, "shape": shape})
        out.write(data)


def _feed(folder, inputs=ONE_INPUT):
    return make_feeds(inputs, FeedSpec(data=str(folder)))


def test_a_tiny_npy_whose_header_claims_200_gb_is_refused(tmp_path):
    _npy_header(tmp_path / "big.npy", (50_000_000_000,), b"\0" * 64)
    assert (tmp_path / "big.npy").stat().st_size < 300
    with pytest.raises(UserError, match=r"big.npy: its header claims 186\.3 GB of data but the file holds"):
        _feed(tmp_path)


def test_a_sparse_npy_past_the_budget_is_refused_without_reading_its_data(tmp_path, monkeypatch):
    path = tmp_path / "sparse.npy"
    _npy_header(path, (512 << 20,))                       # 2 GiB of float32, all of it a hole
    with open(path, "r+b") as out:
        out.truncate(out.seek(0, 2) + (2 << 30))
    monkeypatch.setattr(data_folder, "budget_bytes", lambda limit=None: 1 << 30)
    monkeypatch.setattr(np, "load", lambda *a, **k: pytest.fail("np.load read the data"))
    with pytest.raises(UserError, match=r"sparse.npy: its array takes 2.0 GB, more than the memory budget"):
        _feed(tmp_path)


def test_an_npz_holding_python_objects_is_refused(tmp_path):
    np.savez(tmp_path / "objects.npz", x=np.array([{"a": 1}, None], dtype=object))
    with pytest.raises(UserError, match=r"objects.npz: .*x.npy: it holds Python objects"):
        _feed(tmp_path)


def test_an_npz_that_is_not_a_zip_inside_is_refused(tmp_path):
    (tmp_path / "broken.npz").write_bytes(b"PK\x03\x04" + b"\0" * 100)
    with pytest.raises(UserError, match="broken.npz: is not an .npy or .npz file"):
        _feed(tmp_path)


def test_labels_that_are_not_utf8_are_refused(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((1, 4), np.float32))
    (tmp_path / "labels.csv").write_bytes("a,1\nb\xe9,2\n".encode("latin-1"))
    with pytest.raises(UserError, match="labels.csv: is not UTF-8 text"):
        read_folder(tmp_path)


def test_a_csv_header_is_accepted(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((1, 4), np.float32))
    (tmp_path / "labels.csv").write_text("sample,label\na.npy,3\n")
    assert read_folder(tmp_path).labels == {"a": 3}


def test_a_wrong_first_line_that_is_no_header_is_still_refused(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((1, 4), np.float32))
    (tmp_path / "labels.csv").write_text("a.npy,three\n")
    with pytest.raises(UserError, match="labels.csv line 1"):
        read_folder(tmp_path)


def _png_header_only(path, width, height):
    """A PNG whose header says width × height; no pixel data follows."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b""))


@pytest.mark.parametrize("side", [30_000, 10_000])      # 900 and 100 megapixels: PIL's error, then its warning
def test_a_decompression_bomb_is_refused_before_decoding(tmp_path, side):
    _png_header_only(tmp_path / "bomb.png", side, side)
    with pytest.raises(UserError, match="bomb.png: is "):
        _feed(tmp_path, IMAGE_INPUT)


def test_a_broken_image_is_refused(tmp_path):
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 40)
    with pytest.raises(UserError, match="broken.png: cannot be read as an image"):
        _feed(tmp_path, IMAGE_INPUT)


def test_a_sparse_npy_within_the_budget_is_mapped_and_refused_by_its_shape_without_reading_it(tmp_path, monkeypatch):
    path = tmp_path / "sparse.npy"
    _npy_header(path, (1, 512 << 20))                     # 2 GiB of float32, all of it a hole
    with open(path, "r+b") as out:
        out.truncate(out.seek(0, 2) + (2 << 30))
    monkeypatch.setattr(data_folder, "budget_bytes", lambda limit=None: 8 << 30)
    monkeypatch.setattr(np, "load", lambda *a, **k: pytest.fail("np.load read the data"))
    monkeypatch.setattr(np, "fromfile", lambda *a, **k: pytest.fail("np.fromfile read the data"))
    with pytest.raises(UserError, match=r"input 'x' is declared \[1, 4\], the file holds shape \[1, 536870912\]"):
        _feed(tmp_path)


def test_an_npy_is_read_with_its_values_and_a_large_one_mapped(tmp_path, monkeypatch):
    values = np.arange(4096, dtype=np.float32).reshape(1, 4096)
    np.save(tmp_path / "a.npy", values)
    np.save(tmp_path / "f.npy", np.asfortranarray(values.reshape(64, 64)))
    np.save(tmp_path / "empty.npy", np.zeros((0, 3), np.int64))
    small = data_folder._load(tmp_path / "a.npy")
    assert not isinstance(small, np.memmap) and np.array_equal(small, values)
    assert np.array_equal(data_folder._load(tmp_path / "f.npy"), values.reshape(64, 64))
    assert data_folder._load(tmp_path / "empty.npy").shape == (0, 3)
    monkeypatch.setattr(data_folder, "SMALL_ARRAY_BYTES", 1024)
    mapped = data_folder._load(tmp_path / "a.npy")
    assert isinstance(mapped, np.memmap) and np.array_equal(mapped, values)
    assert np.array_equal(data_folder._load(tmp_path / "f.npy"), values.reshape(64, 64))
