"""The typed settings tree: every section and key of conf/default.toml, with its type.

`Settings.from_mapping(data, source)` reads the merged TOML mapping (conf/default.toml with an
overlay laid over it, cleaner.config) into frozen dataclasses, one per section, and refuses with a
one-line `SettingsError` naming the key and the file: an unknown section or key (`[limitz]`,
`max_block`), a value of the wrong type (`max_blocks = "lots"`), or one out of its obvious range
(a negative size, a probability above 1, a detector that does not exist).

The dataclasses give no defaults: conf/default.toml is the one place where a default is written,
and every key of it must be described here (tests/test_config.py checks both ways). Code reads the
settings through `cleaner.config.Config`, the checked mapping, until the access sites move to the
attributes of this tree.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from dataclasses import dataclass, field


class SettingsError(ValueError):
    """A setting is unknown, of the wrong type or out of range (the message is one line)."""


def _rule(**kw) -> typing.Any:
    """A required field with its range rule: ge / gt / le (numbers, list items), choices (str, list
    items), ascending (lists), nonempty (lists, str)."""
    return field(metadata=kw)


POSITIVE = {"gt": 0}
SHARE = {"ge": 0, "le": 1}


@dataclass(frozen=True)
class Limits:
    max_html_bytes: int = _rule(**POSITIVE)
    max_blocks: int = _rule(**POSITIVE)
    time_budget_s: float = _rule(ge=0)  # 0: no budget
    max_nesting: int = _rule(**POSITIVE)


@dataclass(frozen=True)
class Decode:
    prescan_bytes: int = _rule(ge=0)
    min_detector_confidence: float = _rule(**SHARE)
    detector_bytes: int = _rule(**POSITIVE)
    detector: str = _rule(choices=("cchardet", "resiliparse"))
    invalid_declared_utf8: str = _rule(choices=("trust", "detect", "repair"))
    valid_utf8_wins: bool = _rule()
    utf8_first: bool = _rule()
    detector_whatwg_only: bool = _rule()
    western_guard: bool = _rule()
    western_min_share: float = _rule(**SHARE)
    western_max_letter_ratio: float = _rule(ge=0)


@dataclass(frozen=True)
class Segment:
    drop_tags: list[str] = _rule()
    block_tags: list[str] = _rule()
    img_alt_min_chars: int = _rule(ge=0)
    max_block_chars: int = _rule(**POSITIVE)


@dataclass(frozen=True)
class Bins:
    count: list[float] = _rule(nonempty=True, ascending=True)
    relative: list[float] = _rule(nonempty=True, ascending=True)
    position: list[float] = _rule(nonempty=True, ascending=True)
    document: list[float] = _rule(nonempty=True, ascending=True)
    split: list[float] = _rule(nonempty=True, ascending=True)


@dataclass(frozen=True)
class Title:
    max_words: int = _rule(**POSITIVE)
    precision_bins: list[float] = _rule(nonempty=True, ascending=True)
    coverage_bins: list[float] = _rule(nonempty=True, ascending=True)
    anchor_min: float = _rule(**SHARE)


@dataclass(frozen=True)
class Regexps:
    url: str = _rule(regexp=True)
    date: str = _rule(regexp=True)
    time: str = _rule(regexp=True)
    bullet: str = _rule(regexp=True)
    sentence_end: str = _rule(regexp=True)
    sentence_split: str = _rule(regexp=True)


# [features] keys `class_<name>`: any number of container classes (cleaner.features), tag lists.
CLASS_PREFIX = "class_"


@dataclass(frozen=True)
class Features:
    inline_tags: list[str] = _rule()
    window: int = _rule(ge=0)
    window_families: list[str] = _rule()
    max_idclass_tokens_per_block: int = _rule(ge=0)
    url_hints: list[str] = _rule(nonempty_items=True)
    bins: Bins = _rule()
    title: Title = _rule()
    regexp: Regexps = _rule()
    # every `class_<name> = [tags]` key, by name (class_header, class_nav, ..., and any new one)
    classes: dict[str, list[str]] = _rule(prefix=CLASS_PREFIX)


@dataclass(frozen=True)
class Model:
    labels: list[str] = _rule(nonempty=True)
    convention: str = _rule()  # "" = the model's default (checked against the model, cleaner.convention)


@dataclass(frozen=True)
class Train:
    min_alignment: float = _rule(**SHARE)
    max_iterations: int = _rule(**POSITIVE)
    seed: int = _rule()
    c1_grid: list[float] = _rule(nonempty=True, ge=0)
    c2_grid: list[float] = _rule(nonempty=True, ge=0)
    c1: float = _rule(ge=0)
    c2: float = _rule(ge=0)
    conventions: list[str] = _rule(nonempty=True)
    convention_of: dict[str, str] = _rule()
    convention_attributes: list[str] = _rule()


@dataclass(frozen=True)
class Job:
    master: str = _rule(nonempty=True)
    app_name: str = _rule(nonempty=True)
    driver_memory: str = _rule(nonempty=True)
    log_level: str = _rule(choices=("ALL", "DEBUG", "ERROR", "FATAL", "INFO", "OFF", "TRACE", "WARN"))
    progress_bar: bool = _rule()
    distribution: str = _rule(choices=("split", "packed", "files"))  # jobs/plan.py MODES
    task_bytes: int = _rule(**POSITIVE)
    min_task_bytes: int = _rule(**POSITIVE)
    tasks_per_core: int = _rule(**POSITIVE)
    split_factor: float = _rule(**POSITIVE)
    plain_byte_weight: float = _rule(**POSITIVE)
    max_payload_bytes: int = _rule(**POSITIVE)
    compression: str = _rule(choices=("none", "uncompressed", "snappy", "gzip", "lz4", "zstd", "brotli"))
    compression_level: int = _rule()
    target_file_mb: float = _rule(**POSITIVE)
    shuffle_bytes_per_output_byte: float = _rule(**POSITIVE)
    partition_by: list[str] = _rule()  # the columns are checked by the job (cleaner.schema.PARTITION_COLUMNS)
    crawl_pattern: str = _rule(regexp=True)
    default_crawl: str = _rule(nonempty=True)
    marker_dir: str = _rule()


@dataclass(frozen=True)
class Runtime:
    gc_thresholds: list[int] = _rule(gt=0, length=(0, 3))


@dataclass(frozen=True)
class Decision:
    content_threshold: float = _rule(**SHARE)
    f1_optimal_threshold: bool = _rule()
    fallback_min_kept_share: float = _rule(**SHARE)


@dataclass(frozen=True)
class Stacking:
    enabled: bool = _rule()
    windows: list[int] = _rule(nonempty=True, ge=0)
    inner_folds: int = _rule(gt=1)
    first_pass_labels: str = _rule(choices=("viterbi", "decided"))
    first_pass_neighbours: bool = _rule()


@dataclass(frozen=True)
class Markers:
    enabled: bool = _rule()
    word_bins: list[int] = _rule(nonempty=True, ascending=True)
    ancestor_tags: list[str] = _rule()
    c1: float = _rule(ge=0)
    c2: float = _rule(ge=0)
    max_iterations: int = _rule(**POSITIVE)


@dataclass(frozen=True)
class Settings:
    limits: Limits = _rule()
    decode: Decode = _rule()
    segment: Segment = _rule()
    features: Features = _rule()
    model: Model = _rule()
    train: Train = _rule()
    job: Job = _rule()
    runtime: Runtime = _rule()
    decision: Decision = _rule()
    stacking: Stacking = _rule()
    markers: Markers = _rule()

    @classmethod
    def from_mapping(cls, data: dict, source: str) -> "Settings":
        """The tree of `data` (a merged config mapping); SettingsError names the key and `source`."""
        try:
            return _build(cls, data, source, ())
        except SettingsError as exc:
            text = str(exc)
            if text.startswith(f"{source}: "):
                raise
            raise SettingsError(f"{source}: {text}") from None


# ------------------------------------------------------------------------------------------
# Reading a mapping into the tree
# ------------------------------------------------------------------------------------------

_TYPE_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def _where(path: tuple[str, ...]) -> str:
    """`[section.sub] key` as the TOML file spells it."""
    if len(path) == 1:
        return f"[{path[0]}]"
    return f"[{'.'.join(path[:-1])}] {path[-1]}"


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(value) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def _scalar(tp, value, where: str):
    """`value` as the scalar type `tp` (an int is a float; a bool is neither)."""
    ok = (isinstance(value, tp) and not (tp is not bool and isinstance(value, bool))) or (
        tp is float and isinstance(value, int) and not isinstance(value, bool))
    if not ok:
        raise SettingsError(f"{where} must be {_TYPE_NAMES[tp]}, not {_shown(value)} ({_kind(value)})")
    return float(value) if tp is float else value


def _check_rules(value, meta: dict, where: str) -> None:
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, (int, float)) and not isinstance(item, bool):
            if "ge" in meta and item < meta["ge"]:
                raise SettingsError(f"{where} must be at least {meta['ge']}, not {_shown(item)}")
            if "gt" in meta and item <= meta["gt"]:
                raise SettingsError(f"{where} must be more than {meta['gt']}, not {_shown(item)}")
            if "le" in meta and item > meta["le"]:
                raise SettingsError(f"{where} must be at most {meta['le']}, not {_shown(item)}")
        if "choices" in meta and item not in meta["choices"]:
            raise SettingsError(f"{where} must be one of {', '.join(map(repr, meta['choices']))}, "
                                f"not {_shown(item)}")
        if meta.get("nonempty_items") and item == "":
            raise SettingsError(f"{where} must hold no empty string")
        if meta.get("regexp"):
            try:
                re.compile(item)
            except re.error as exc:
                raise SettingsError(f"{where} is not a valid regular expression: {exc}") from None
    if meta.get("nonempty") and not value:
        raise SettingsError(f"{where} must not be empty")
    if meta.get("ascending") and list(value) != sorted(value):
        raise SettingsError(f"{where} must be in ascending order, not {_shown(value)}")
    if "length" in meta and len(value) not in meta["length"]:
        raise SettingsError(f"{where} must hold {' or '.join(map(str, meta['length']))} values, "
                            f"not {len(value)}")


def _value(tp, value, meta: dict, source: str, path: tuple[str, ...]):
    where = _where(path)
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise SettingsError(f"[{'.'.join(path)}] must be a table, not {_shown(value)} ({_kind(value)})")
        return _build(tp, value, source, path)
    if origin is list:
        (item_tp,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise SettingsError(f"{where} must be a list, not {_shown(value)} ({_kind(value)})")
        out = [_scalar(item_tp, v, where) for v in value]
    elif origin is dict:
        key_tp, item_tp = typing.get_args(tp)
        if not isinstance(value, dict):
            raise SettingsError(f"{where} must be a table, not {_shown(value)} ({_kind(value)})")
        out = {k: _value(item_tp, v, {}, source, path + (k,)) for k, v in value.items()}
    else:
        out = _scalar(tp, value, where)
    _check_rules(out, meta, where)
    return out


def _build(cls, data: dict, source: str, path: tuple[str, ...]):
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls)}
    prefixed = {f.metadata["prefix"]: f for f in known.values() if "prefix" in f.metadata}
    values: dict = {}
    gathered: dict[str, dict] = {f.name: {} for f in prefixed.values()}
    for key, value in data.items():
        f = known.get(key)
        if f is not None and "prefix" not in f.metadata:
            values[key] = _value(hints[key], value, dict(f.metadata), source, path + (key,))
            continue
        owner = next((g for p, g in prefixed.items() if key.startswith(p)), None)
        if owner is not None:
            item_tp = typing.get_args(hints[owner.name])[1]
            gathered[owner.name][key] = _value(item_tp, value, {}, source, path + (key,))
            continue
        if path:
            names = ", ".join(sorted(n for n, g in known.items() if "prefix" not in g.metadata))
            raise SettingsError(f"unknown key {_where(path + (key,))} "
                                f"(known: {names}{', ' + next(iter(prefixed)) + '<name>' if prefixed else ''})")
        raise SettingsError(f"unknown section [{key}] (known: {', '.join(known)})")
    values.update(gathered)
    missing = [n for n in known if n not in values]
    if missing:
        what = _where(path + (missing[0],)) if path else f"[{missing[0]}]"
        raise SettingsError(f"{what} is missing")
    return cls(**values)
