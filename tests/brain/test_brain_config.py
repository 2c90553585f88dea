"""BrainConfig from brain.toml: defaults, tables, extra keys kept, errors with file and line."""

from __future__ import annotations

import pytest

from brain.config import DEFAULT_INDEX_BUDGET, BrainConfig, ConfigError
from brain.scaffold import initial_files


def test_missing_file_gives_defaults(tmp_path):
    config = BrainConfig.load(tmp_path)
    assert config.owner is None and config.dream.backend is None
    assert config.index.budget == DEFAULT_INDEX_BUDGET


def test_reads_tables_and_keeps_extra_keys(tmp_path):
    (tmp_path / "brain.toml").write_text(
        'owner = "Nadia Rahman"\ntimezone = "Asia/Tokyo"\nlanguage = "en"\n\n'
        '[dream]\nbackend = "anthropic"\nmodel = "m-1"\nmax_pages = 40\n\n'
        "[index]\nbudget = 500\n\n[search]\nfuzzy = true\n",
        encoding="utf-8",
    )
    config = BrainConfig.load(tmp_path)
    assert (config.owner, config.timezone) == ("Nadia Rahman", "Asia/Tokyo")
    assert (config.dream.backend, config.dream.model, config.index.budget) == ("anthropic", "m-1", 500)
    assert config.dream.model_extra == {"max_pages": 40}
    assert config.model_extra == {"language": "en", "search": {"fuzzy": True}}


def test_the_file_brain_init_writes_is_all_defaults():
    assert BrainConfig.from_toml(initial_files()["brain.toml"]) == BrainConfig()


def test_invalid_toml_names_file_and_line():
    with pytest.raises(ConfigError) as err:
        BrainConfig.from_toml('owner = "Nadia"\n\n[dream]\nbackend = offline\n', "/b/brain.toml")
    assert err.value.message == "/b/brain.toml:4: invalid TOML: Invalid value"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('owner = "x"\n[index]\n# c\nbudget = "lots"\n', "/b/brain.toml:4: index.budget: Input should be a valid integer"),
        ("[index]\nbudget = -1\n", "/b/brain.toml:2: index.budget: Input should be greater than or equal to 0"),
        ('dream = "offline"\n', "/b/brain.toml:1: dream: Input should be a valid dictionary"),
        ("owner = 3\n", "/b/brain.toml:1: owner: Input should be a valid string"),
    ],
)
def test_wrong_values_name_the_key_and_line(text, message):
    with pytest.raises(ConfigError) as err:
        BrainConfig.from_toml(text, "/b/brain.toml")
    assert err.value.message.startswith(message)
