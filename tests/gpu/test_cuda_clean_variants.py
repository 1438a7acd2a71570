"""The kinds that need a GPU leave no stale value_info either (see
tests/core/convert/test_clean_variants.py): their variant runs with every tensor exposed."""

import pytest

from tests.core.convert.test_clean_variants import GPU_KINDS, check_variant

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda")]


@pytest.mark.parametrize("kind, maker, options", GPU_KINDS)
def test_a_gpu_kinds_variant_runs_with_all_its_tensors_exposed(tmp_path, kind, maker, options):
    check_variant(tmp_path, kind, maker, options)
