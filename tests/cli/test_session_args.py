def test_cli_level_names_match_the_core():
    from app.cli.session_args import OPT_LEVEL_NAMES
    from app.core.session.config import OPT_LEVELS
    assert OPT_LEVEL_NAMES == list(OPT_LEVELS)
