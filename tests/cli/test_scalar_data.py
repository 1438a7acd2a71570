"""Compare and tune on a data folder whose samples hold a scalar input (a sample rate): each
member past the reference reads it back and runs (ONNX Runtime takes no numpy scalar)."""

from tests.core.bench.test_scalar_samples import data_folder, scalar_rate_model


def test_compare_and_tune_on_data_with_a_scalar_input(ortune, tmp_path):
    model = scalar_rate_model(tmp_path / "rate.onnx")
    data = data_folder(tmp_path)
    done = ortune("compare", model, model, "--data", data, "--iterations", "10", "--max-seconds", "5",
                  "--no-history", "--json")
    assert done.code == 0, done.stderr
    tuned = ortune("tune", model, "--data", data, "--budget-seconds", "10", "--json")
    assert tuned.code == 0, tuned.stderr
