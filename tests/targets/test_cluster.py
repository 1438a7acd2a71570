"""A sweep and a comparison spread over a local Ray cluster of two workers: the results
have the form of local ones, say which worker measured what, and form every ratio on one."""

from tests import models


def _local_and_spread(ortune, *args, cluster):
    local = ortune(*args, "--json", "--no-history")
    spread = ortune(*args, "--json", "--cluster", cluster.address)
    assert local.code == 0, local.stderr
    assert spread.code == 0, spread.stderr
    return local.json(), spread.json()


def test_a_sweep_of_six_cells_over_two_workers(ray_cluster, ortune, tmp_path):
    # batch 2 and 4 dealt one to each worker, each with its own copy of batch 1: four cells a task
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    local, spread = _local_and_spread(ortune, "bench", model, "--sweep", "batch=1,2,4", "--sweep-concurrency",
                                      "1,2", "--duration", "0.05", cluster=ray_cluster)   # the form, not the figures
    assert set(local) - {"history_id", "history_warnings"} <= set(spread)
    assert len(spread["cells"]) == len(local["cells"]) == 6
    assert [(c["dim_value"], c["concurrency"]) for c in spread["cells"]] == \
        [(c["dim_value"], c["concurrency"]) for c in local["cells"]]
    for mine, theirs in zip(spread["cells"], local["cells"]):
        assert set(mine) - {"measured_on"} == set(theirs)
    hosts = {c["measured_on"]["node"] for c in spread["cells"]}
    assert len(hosts) == 2 and len(spread["cluster"]["workers"]) == 2
    # each worker measured its own copy of the first cell: every ratio is formed on one machine
    for task in spread["cluster"]["tasks"]:
        assert task["cells"]
    assert spread["cells"][0]["verdict"] == "reference" and spread["history_id"]
    row = next(r for r in ortune("history", "--json").json()["results"] if r["id"] == spread["history_id"])
    assert row["target"].startswith("Ray workers") and all(n in row["target"] for n in hosts)   # not "local"


def test_a_comparison_over_two_workers(ray_cluster, ortune, tmp_path):
    paths = [models.save(models.mlp(depth=d), tmp_path / f"mlp{d}.onnx") for d in (2, 4, 8)]
    local, spread = _local_and_spread(ortune, "compare", *paths, "--duration", "0.1", "--max-seconds", "1",
                                      "--pairs", "2", cluster=ray_cluster)   # where each ratio forms, not the pairs
    assert [m["path"] for m in spread["models"]] == [m["path"] for m in local["models"]] == list(map(str, paths))
    assert spread["models"][0]["verdict"] == "reference"
    assert all(m["verdict"] in ("faster", "slower", "no-difference", "could-not-tell") for m in spread["models"][1:])
    assert {m["measured_on"]["node"] for m in spread["models"][1:]} and len(spread["cluster"]["tasks"]) == 2


def test_an_unreachable_cluster_is_one_line(ortune, tmp_path):
    from tests.targets.sshd import free_port
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    done = ortune("bench", model, "--sweep-concurrency", "1,2", "--cluster", f"127.0.0.1:{free_port()}",
                  timeout=120)
    assert done.code == 2 and "cannot be reached" in done.stderr and done.stderr.count("\n") == 1


def test_an_address_where_something_else_listens_is_one_line(ortune, tmp_path):
    import socket
    import threading
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held = []
    threading.Thread(target=lambda: held.append(server.accept()), daemon=True).start()   # accepts, never answers
    try:
        done = ortune("bench", model, "--sweep-concurrency", "1,2", "--cluster",
                      f"127.0.0.1:{server.getsockname()[1]}", timeout=60)
    finally:
        server.close()
    assert done.code == 2 and "does not answer like a Ray cluster" in done.stderr and done.stderr.count("\n") == 1


def test_a_tuning_race_over_two_workers(ray_cluster, ortune, tmp_path):
    model = models.save(models.mlp(width=32, depth=2), tmp_path / "mlp.onnx")
    done = ortune("tune", model, "--budget-trials", "8", "--block-runs", "3", "--confirm-seconds", "0.2",
                  "--json", "--cluster", ray_cluster.address)
    assert done.code == 0, done.stderr
    result = done.json()
    tasks = result["cluster"]["tasks"]
    assert len(tasks) == 2 and {t["node"] for t in tasks} == {w["node"] for w in result["cluster"]["workers"]}
    labels = [{t["label"] for t in result["trials"] if t["measured_on"]["node"] == task["node"]} for task in tasks]
    assert labels[0] and labels[1] and not labels[0] & labels[1], "each worker raced its own share"
    assert result["space_size"] == sum(t["space_size"] for t in tasks)
    assert result["verdict"] in ("faster", "reference") and "best" in result and "speedup_ci" in result
    if result["clearly_faster"]:
        assert result["best"]["measured_on"]["node"] in {t["node"] for t in tasks}
