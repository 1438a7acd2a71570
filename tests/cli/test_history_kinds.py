"""Every job that keeps its result does so once a run, whichever command starts it, and
`ortune history` lists each kind and prints each in full as its own command does."""

import pytest

from tests import models


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("history-kinds")
    models.save(models.mlp(), folder / "mlp.onnx")
    return folder


@pytest.fixture
def own_history(tmp_path, monkeypatch):
    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))


def _listed(ortune) -> list[dict]:
    done = ortune("history", "--json")
    assert done.code == 0, done.stderr
    return done.json()["results"]


def test_a_benchmark_from_the_command_line_is_kept_once(ortune, folder, own_history):
    done = ortune("bench", folder / "mlp.onnx", "--iterations", "20", "--json")
    assert done.code == 0, done.stderr
    rows = _listed(ortune)
    assert [(r["id"], r["kind"]) for r in rows] == [(done.json()["history_id"], "bench")]
    assert "history_samples" not in done.json(), "the chart's latencies go to the history only"


COMMANDS = {
    "bench": ["bench", "mlp.onnx", "--iterations", "10"],
    "compare": ["compare", "mlp.onnx", "mlp.onnx", "--duration", "0.05", "--pairs", "1", "--max-seconds", "1"],
    "sweep": ["bench", "mlp.onnx", "--sweep", "batch=1,2", "--iterations", "10"],
    "convert": ["convert", "fp16", "mlp.onnx", "-o", "mlp16.onnx", "--no-speed", "--force"],
    "drift": ["drift", "mlp.onnx", "mlp16.onnx"],
    "profile": ["profile", "mlp.onnx", "--runs", "5"],
    "tune": ["tune", "mlp.onnx", "--budget-trials", "2", "--block-runs", "1", "--finalists", "1",
             "--confirm-seconds", "0.05", "--max-threads", "1"],
    "optimize": ["optimize", "mlp.onnx", "-o", "shipped", "--kinds", "fp16", "--screen-seconds", "0.05", "--no-tune",
                 "--force"],
    "gate": ["gate", "mlp.onnx", "--against", "mlp.onnx", "--duration", "0.05", "--pairs", "1", "--max-seconds", "1"],
}
EXIT_CODES = {"gate": (0, 5, 6)}      # its verdict is its exit code; any verdict is kept


def test_every_kind_the_registry_records_is_run_here_and_has_a_renderer():
    from app.cli.history import renderers
    from app.core.launch.registry import RECORDED, RECORDED_KINDS

    assert set(COMMANDS) == set(RECORDED_KINDS), "a kind of result no test records and shows"
    assert set(renderers()) == set(RECORDED), "an entry whose stored result `ortune history --show` cannot print"


def test_each_kind_is_kept_listed_and_shown(ortune, folder, own_history):
    ids = {}
    for kind, command in COMMANDS.items():     # in order: drift reads the conversion's variant
        done = ortune(*command, "--json", cwd=folder)
        assert done.code in EXIT_CODES.get(kind, (0,)), f"{kind}: {done.stderr}"
        ids[kind] = done.json()["history_id"]
        assert ids[kind], f"{kind} was not kept: {done.json().get('history_warnings')}"
    rows = _listed(ortune)
    assert sorted((r["kind"], r["id"]) for r in rows) == sorted((kind, ids[kind]) for kind in COMMANDS), \
        "each run kept exactly once"
    assert all(r["model_path"] == str((folder / "mlp.onnx").resolve()) for r in rows)
    for kind in COMMANDS:
        assert _listed_kind(ortune, kind) == [ids[kind]]
        shown = ortune("history", "--show", ids[kind])
        assert shown.code == 0 and shown.stdout.strip(), f"{kind}: {shown.stderr}"
        as_json = ortune("history", "--show", ids[kind], "--json")
        assert as_json.code == 0 and as_json.json() and "error" not in as_json.json()
    text = ortune("history")
    assert all(kind in text.stdout for kind in COMMANDS)


@pytest.mark.parametrize("flag", ["--show", "--delete"])
@pytest.mark.parametrize("given", ["1" + "0" * 39, "0", "-3", str(2 ** 63)])
def test_an_id_out_of_range_is_one_line_and_exit_2(ortune, own_history, flag, given):
    done = ortune("history", flag, given)
    assert done.code == 2 and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert "no stored result" in done.stderr


def test_an_unknown_kind_names_the_kinds(ortune, own_history):
    done = ortune("history", "--kind", "bogus")
    assert done.code == 2 and "gate" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def _listed_kind(ortune, kind: str) -> list[int]:
    return [r["id"] for r in ortune("history", "--kind", kind, "--json").json()["results"]]


def test_a_damaged_history_is_one_line_for_the_listing(ortune, tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    (data / "history.sqlite").write_bytes(b"not a database" * 100)
    monkeypatch.setenv("ORTUNE_DATA_DIR", str(data))
    done = ortune("history")
    assert done.code == 0 and "was damaged" in done.stderr and done.stderr.count("\n") == 1


def test_history_delete_removes_the_entries_and_their_kept_copies(ortune, folder, own_history):
    from app.core.store import kept
    from app.core.store.history import History

    history = History()
    identity = history.model_identity(folder / "mlp.onnx")
    copy = kept.root() / "k1"
    copy.mkdir(parents=True)
    (copy / "c.onnx").write_bytes(b"x")
    entry = history.record("convert", {"output": str(copy / "c.onnx"), "model": identity}, facts={"model": identity})
    missing = ortune("history", "--delete", entry, entry + 99)
    assert missing.code == 2 and "no stored result" in missing.stderr and copy.exists(), "checked before any goes"
    done = ortune("history", "--delete", entry, "--json")
    assert done.code == 0, done.stderr
    assert done.json()["removed_copies"] == [str(copy)] and not copy.exists()
    assert [r["id"] for r in _listed(ortune)] == []
