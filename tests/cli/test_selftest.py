def test_self_test_runs_every_step(ortune):
    result = ortune("--self-test")
    assert result.code == 0, result.stdout + result.stderr
    assert "self-test passed" in result.stdout
    assert result.stdout.count("ok ") == 5
    assert "benchmark" in result.stdout and "fp16" in result.stdout
