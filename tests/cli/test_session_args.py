def test_cli_level_names_match_the_core():
    from app.cli.session_args import OPT_LEVEL_NAMES
    from app.core.session.config import OPT_LEVELS
    assert OPT_LEVEL_NAMES == list(OPT_LEVELS)


def test_image_choices_match_the_input_spec():
    from app.cli.session_args import IMAGE_LAYOUTS, IMAGE_PRESETS
    from app.core.session import input_spec
    assert IMAGE_PRESETS == list(input_spec.IMAGE_PRESETS) and IMAGE_LAYOUTS == list(input_spec.IMAGE_LAYOUTS)
