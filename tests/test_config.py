"""Settings are checked before any work: the typed tree (cleaner/settings.py) describes every key of
conf/default.toml, and a bad overlay stops the library, the `cleaner` commands and the job with one
line naming the key and the file (exit 4)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tomllib
import typing

import pytest

from conftest import ROOT
from cleaner.config import DEFAULT_CONFIG_PATH, ConfigError, load_config
from cleaner.settings import CLASS_PREFIX, Settings

CLI = [sys.executable, "-m", "cleaner.tools.cli"]


def _keys(cls, prefix: str = "") -> set[str]:
    """Every dotted key the tree describes (`features.class_*` as one pattern)."""
    out = set()
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(hints[f.name]):
            out |= _keys(hints[f.name], f"{prefix}{f.name}.")
        elif "prefix" in f.metadata:
            out.add(f"{prefix}{f.metadata['prefix']}*")
        else:
            out.add(f"{prefix}{f.name}")
    return out


def _toml_keys(data: dict, prefix: str = "", open_tables=("train.convention_of", "model.by_convention",
                                                      "model.html5_by_convention", "features.cues.idclass",
                                                      "features.cues.text", "features.cues.page.types",
                                                      "features.cues.page.og_type", "features.cues.page.itemprop")
               ) -> set[str]:
    out = set()
    for k, v in data.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and name not in open_tables:
            out |= _toml_keys(v, name + ".")
        elif k.startswith(CLASS_PREFIX):
            out.add(f"{prefix}{CLASS_PREFIX}*")
        else:
            out.add(name)
    return out


def test_the_tree_describes_every_key_of_the_default_file_and_no_other():
    with open(DEFAULT_CONFIG_PATH, "rb") as fh:
        data = tomllib.load(fh)
    assert _keys(Settings) == _toml_keys(data)
    settings = load_config().settings
    assert settings.limits.max_blocks == data["limits"]["max_blocks"]
    assert settings.features.bins.count == [float(v) for v in data["features"]["bins"]["count"]]
    assert set(settings.features.classes) == {k for k in data["features"] if k.startswith(CLASS_PREFIX)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.limits.max_blocks = 1  # frozen
    load_config(ROOT / "conf" / "onepass.toml")  # the packaged overlay is valid


BAD = [
    ('[limits]\nmax_blocks = "lots"\n', '[limits] max_blocks must be an integer'),
    ("[limitz]\nmax_blocks = 3\n", "unknown section [limitz]"),
    ("[limits]\nmax_block = 3\n", "unknown key [limits] max_block"),
    ("[limits]\nmax_html_bytes = 0\n", "[limits] max_html_bytes must be more than 0"),
    ("[limits]\ntime_budget_s = true\n", "[limits] time_budget_s must be a number"),
    ("[features.bins]\ncount = [3, 2]\n", "[features.bins] count must be in ascending order"),
    ("[features.regexp]\nurl = '('\n", "[features.regexp] url is not a valid regular expression"),
    # a removed variant's setting says so and where its figures are
    ("[features.title]\nmax_words = 40\n", "[features.title] was removed (measured and rejected: the `title` feature"),
    ('[features]\nclass_nav = "nav"\n', "[features] class_nav must be a list"),
    ("[decision]\ncontent_threshold = 1.5\n", "[decision] content_threshold must be at most 1"),
    ('[decode]\ninvalid_declared_utf8 = "guess"\n', "[decode] invalid_declared_utf8 must be one of"),
    ('[decode]\ndetector = "cchardet"\n', "[decode] detector was removed (measured and rejected: resiliparse's"),
    ('[stacking]\nfirst_pass_labels = "decided"\n', "[stacking] first_pass_labels was removed"),
    ("[runtime]\ngc_thresholds = [1, 2]\n", "[runtime] gc_thresholds must hold 0 or 3 values"),
    ('[job]\ntask_bytes = "256M"\n', "[job] task_bytes must be an integer"),
    ("[stacking]\nwindows = 3\n", "[stacking] windows must be a list"),
    ("limits = 3\n", "[limits] must be a table"),
    # the model of a convention is a packaged model, named as `cleaner models` lists them
    ('[model.by_convention]\ndragnet = "dragnet-2013"\n',
     "[model.by_convention] dragnet must name a packaged model (cleaneval-2012, default), not 'dragnet-2013'"),
]


@pytest.mark.parametrize("text,message", BAD, ids=[m for _, m in BAD])
def test_a_bad_overlay_is_one_line_naming_the_key_and_the_file(tmp_path, text, message):
    overlay = tmp_path / "bad.toml"
    overlay.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(overlay)
    assert str(info.value).startswith(f"{overlay}: ") and message in str(info.value)
    assert "\n" not in str(info.value)


def test_the_commands_refuse_a_bad_config_before_any_work(tmp_path, data_dir):
    """clean, train and eval: exit 4, one line on stderr naming the key and the file, nothing written."""
    overlay = tmp_path / "bad.toml"
    overlay.write_text('[limits]\nmax_blocks = "lots"\n')
    page = data_dir / "cleaneval-dev" / "html" / "1.html"
    runs = {
        "clean": ["clean", page, "--out", tmp_path / "cleaned", "--config", overlay],
        "train": ["train", data_dir / "cleaneval-dev", "--out", tmp_path / "m.crfsuite", "--config", overlay],
        "eval": ["eval", data_dir / "cleaneval-dev", "--config", overlay],
    }
    for name, args in runs.items():
        r = subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert r.returncode == 4, (name, r.returncode, r.stderr[-2000:])
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in r.stderr, (name, r.stderr[-2000:])
        assert str(overlay) in lines[0] and "[limits] max_blocks" in lines[0], (name, lines)
    assert not (tmp_path / "cleaned").exists() and not (tmp_path / "m.crfsuite").exists()


def test_settings_read_once_per_config_are_read_again_for_another():
    """What a run builds from its config once (config.PerConfig: the decision's settings, the markup limits, the page
    typer) is never another config's: an overlay that changes a setting gets its own value at once."""
    from cleaner.api import decision_settings
    from cleaner.label.decide import DecisionSettings

    config = load_config()
    first = decision_settings(config)
    assert decision_settings(config) is first  # (built once for the run's config)
    assert first == DecisionSettings.from_config(config)
    other = config.overlay({"decision": {"content_threshold": 0.7}})
    assert decision_settings(other).content_threshold == 0.7
    assert decision_settings(config) == first and decision_settings(config).content_threshold != 0.7
