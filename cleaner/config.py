"""Configuration: one TOML file (conf/default.toml) read into a plain nested dict, checked.

`load_config` checks the merged mapping against the typed settings tree (cleaner/settings.py) before
any caller sees it: an unknown section or key, a wrong type or an out-of-range value is a ConfigError
of one line naming the key and the file.

The config is data, not code, so it can be broadcast to Spark executors and hashed into
a model's sidecar. `Config.section_hash` fingerprints only the sections that change
the features a model sees (segment, features), so that a model refuses to run with a
config it was not trained with.
"""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from .settings import Settings, SettingsError

T = TypeVar("T")

# conf/default.toml at the top of the repository is the one file; `cleaner/conf` links to it
# so that it is also inside the package when installed (wheels copy the linked file).
DEFAULT_CONFIG_PATH = Path(__file__).parent / "conf" / "default.toml"

# Sections whose content changes the feature vectors (and therefore must match the model).
FEATURE_SECTIONS = ("segment", "features")
# The sections that shape what a page's output is (its blocks, labels, text, corpus columns): what an output
# records as its config hash (cleaner.output.run_settings). [train], [job] and [runtime] change how a run goes,
# not what it writes; [model] names the model and convention, which the output records by themselves.
OUTPUT_SECTIONS = ("limits", "decode", "segment", "features", "decision", "stacking", "markers", "corpus")
# Keys of those sections that only make extraction faster and never change a feature: left out of
# `section_hash`, so that adding or tuning one does not make every stored model and cross-validation
# look stale. (url_hints: a pre-test before the url regexp; tests/test_features.py checks that rows
# are identical with and without it.)
SPEED_ONLY_KEYS = {"features": ("url_hints",)}
# Keys that configure one opt-in feature family (cleaner.page.features): hashed only for a model that reads
# the family, so that adding one does not make every stored model look stale either.
FAMILY_KEYS = {"features": {"cues": "cue"}}
# Keys added to those sections after models were trained, with the value that reproduces what such a model was
# trained with: a model whose own feature config (CrfModel.feature_config) lacks one reads it with this value, so
# that adding a key never changes what a shipped or stored model's features are.
LEGACY_VALUES = {"features": {"per_character_tokens": False}}


def with_legacy_values(own: dict | None) -> dict:
    """A model's own feature config with every key of LEGACY_VALUES it lacks (keys added after it was trained)
    set to the value it was trained with."""
    out = dict(own or {})
    for section, values in LEGACY_VALUES.items():
        have = out.get(section) or {}
        missing = {k: v for k, v in values.items() if k not in have}
        if missing:
            out[section] = dict(have, **missing)
    return out


class ConfigError(ValueError):
    """The configuration file is missing, unreadable or invalid."""


def _merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


class PerConfig(Generic[T]):
    """What a run builds from its config, built once and not per page: `PerConfig(build)(config)` is
    `build(config)` for the last config seen, compared by identity (a Config holds dicts: it cannot be hashed).
    A run has one config; a caller with several gets each rebuilt when it changes, never another's value. Settings
    read per page cost more than small pages' labelling (DecisionSettings.from_config: 37,000 instructions)."""

    def __init__(self, build: Callable[[Config], T]):
        self._build = build
        self._held: tuple[Config, T] | None = None

    def __call__(self, config: Config) -> T:
        held = self._held  # (one tuple: two threads at most build it twice)
        if held is None or held[0] is not config:
            held = self._held = (config, self._build(config))
        return held[1]


@dataclass(frozen=True)
class Config:
    data: dict[str, Any] = field(default_factory=dict)
    source: str = "<default>"

    def __getitem__(self, section: str) -> dict[str, Any]:
        return self.data[section]

    def section_hash(self, sections: tuple[str, ...] = FEATURE_SECTIONS, families=()) -> str:
        """Fingerprint of `sections`, for a model that reads the opt-in feature `families`."""
        sub = {}
        for s in sections:
            part = self.data.get(s, {})
            skip = SPEED_ONLY_KEYS.get(s, ()) + tuple(
                k for k, family in FAMILY_KEYS.get(s, {}).items() if family not in families)
            sub[s] = {k: v for k, v in part.items() if k not in skip} if isinstance(part, dict) else part
        blob = json.dumps(sub, sort_keys=True, ensure_ascii=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def overlay(self, override: dict[str, Any], source: str | None = None) -> Config:
        """This config with `override` merged over it (sections merged key by key)."""
        return Config(_merge(self.data, override), source or self.source)

    @property
    def settings(self) -> Settings:
        """The typed tree of this config (cleaner.settings); raises ConfigError."""
        try:
            return Settings.from_mapping(self.data, self.source)
        except SettingsError as exc:
            raise ConfigError(str(exc)) from None

    def to_json(self) -> str:
        return json.dumps(self.data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str, source: str = "<json>") -> Config:
        return cls(json.loads(text), source)


def _read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file not found: {path}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"invalid config file {path}: {exc}") from exc


def _validate(data: dict, source: str) -> None:
    """Read `data` into the typed tree (cleaner.settings): every section and key known, of its type and
    range; a ConfigError names the key and the file in one line."""
    try:
        Settings.from_mapping(data, source)
    except SettingsError as exc:
        raise ConfigError(str(exc)) from None


_DEFAULT: Config | None = None


def load_config(path: str | Path | None = None) -> Config:
    """Load the default config, overlaid with `path` when given (only the keys it sets change)."""
    global _DEFAULT
    if _DEFAULT is None:
        data = _read_toml(DEFAULT_CONFIG_PATH)
        _validate(data, str(DEFAULT_CONFIG_PATH))
        _DEFAULT = Config(data, str(DEFAULT_CONFIG_PATH))
    if path is None:
        return _DEFAULT
    override = _read_toml(Path(path))
    merged = _merge(_DEFAULT.data, override)
    _validate(merged, str(path))
    return Config(merged, str(path))
