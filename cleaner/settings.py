"""The typed settings tree: every section and key of conf/default.toml, with its type.

`Settings.from_mapping(data, source)` reads the merged TOML mapping (conf/default.toml with an
overlay laid over it, cleaner.config) into frozen dataclasses, one per section, and refuses with a
one-line `SettingsError` naming the key and the file: an unknown section or key (`[limitz]`,
`max_block`), a value of the wrong type (`max_blocks = "lots"`), or one out of its obvious range
(a negative size, a probability above 1, a policy that does not exist).

The dataclasses give no defaults: conf/default.toml is the one place where a default is written,
and every key of it must be described here (tests/test_config.py checks both ways). Code reads the
settings through `cleaner.config.Config`, the checked mapping, until the access sites move to the
attributes of this tree.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import typing
from dataclasses import dataclass, field

from .packaged import packaged_model_names


class SettingsError(ValueError):
    """A setting is unknown, of the wrong type or out of range (the message is one line)."""


def setting(**rules) -> typing.Any:
    """A required field and the rules its value must keep: ge / gt / le (numbers, list items), choices
    (strings, list items), regexp (compiles), packaged_model (names a model in cleaner/models), nonempty,
    nonempty_items, ascending, length (lists); items: the rules of each value of a table; prefix: the field
    gathers every key starting with it (a table of such keys)."""
    return field(metadata=rules)


# Settings of variants that were measured, rejected and deleted, with the document that keeps their figures:
# a config that still names one is refused with that reason rather than as an unknown key.
REMOVED = {
    ("features", "title"): "the `title` feature family, docs/ablation.md",
    ("decode", "detector"): "resiliparse's charset detector beside faust-cchardet, docs/decoding.md",
    ("stacking", "first_pass_labels"): "a second pass reading the first pass's Viterbi path, docs/ablation.md",
}

POSITIVE = {"gt": 0}
SHARE = {"ge": 0, "le": 1}


@dataclass(frozen=True)
class Limits:
    max_html_bytes: int = setting(**POSITIVE)
    max_blocks: int = setting(**POSITIVE)
    max_nodes: int = setting(**POSITIVE)
    time_budget_s: float = setting(ge=0)  # 0: no budget
    max_nesting: int = setting(**POSITIVE)
    max_attributes: int = setting(**POSITIVE)
    max_select_options: int = setting(**POSITIVE)
    max_reopened_formatting: int = setting(**POSITIVE)


@dataclass(frozen=True)
class Decode:
    prescan_bytes: int = setting(ge=0)
    min_detector_confidence: float = setting(**SHARE)
    detector_bytes: int = setting(**POSITIVE)
    invalid_declared_utf8: str = setting(choices=("trust", "detect", "repair"))
    valid_utf8_wins: bool = setting()
    utf8_first: bool = setting()
    detector_whatwg_only: bool = setting()
    western_guard: bool = setting()
    western_min_share: float = setting(**SHARE)
    western_max_letter_ratio: float = setting(ge=0)


@dataclass(frozen=True)
class Segment:
    drop_tags: list[str] = setting()
    block_tags: list[str] = setting()
    img_alt_min_chars: int = setting(ge=0)
    max_block_chars: int = setting(**POSITIVE)
    fallback_below_chars: int = setting(ge=0)  # 0: never
    fallback_min_gain_chars: int = setting(ge=0)


@dataclass(frozen=True)
class Bins:
    count: list[float] = setting(nonempty=True, ascending=True)
    relative: list[float] = setting(nonempty=True, ascending=True)
    position: list[float] = setting(nonempty=True, ascending=True)
    document: list[float] = setting(nonempty=True, ascending=True)
    split: list[float] = setting(nonempty=True, ascending=True)


@dataclass(frozen=True)
class PageType:
    order: list[str] = setting(nonempty=True)  # page types, the first named by the evidence wins
    listing_min_items: int = setting(**POSITIVE)
    listing_of: list[str] = setting()
    itemprop_min: int = setting(**POSITIVE)
    code_min: int = setting(**POSITIVE)
    listing_min_articles: int = setting(**POSITIVE)
    types: dict[str, list[str]] = setting()  # page type -> schema.org types (JSON-LD @type, itemtype), lower case
    og_type: dict[str, list[str]] = setting()  # page type -> og:type values
    itemprop: dict[str, list[str]] = setting()  # page type -> microdata itemprop names, lower case


@dataclass(frozen=True)
class Repeat:
    min_siblings: int = setting(gt=1)
    bins: list[float] = setting(nonempty=True, ascending=True)
    links_min_share: float = setting(**SHARE)
    heaviest: bool = setting()
    skip_tags: list[str] = setting()


@dataclass(frozen=True)
class CodeCue:
    tags: list[str] = setting()


@dataclass(frozen=True)
class MainCue:
    min_words: int = setting(**POSITIVE)
    share: float = setting(**SHARE)


@dataclass(frozen=True)
class UrlCue:
    enabled: bool = setting()
    index_segments: list[str] = setting()  # path segments of index pages ("category", "tag"), lower case
    index_queries: list[str] = setting()  # query keys of index pages ("page", "q")
    slug_min_separators: int = setting(**POSITIVE)


@dataclass(frozen=True)
class Cues:
    max_words: int = setting(ge=0)
    idclass: dict[str, list[str]] = setting()  # cue -> substrings of an id/class token
    text: dict[str, str] = setting()  # cue -> regexp searched in a short block's text
    page: PageType = setting()
    repeat: Repeat = setting()
    code: CodeCue = setting()
    main: MainCue = setting()
    url: UrlCue = setting()


@dataclass(frozen=True)
class Regexps:
    url: str = setting(regexp=True)
    date: str = setting(regexp=True)
    time: str = setting(regexp=True)
    bullet: str = setting(regexp=True)
    sentence_end: str = setting(regexp=True)
    sentence_split: str = setting(regexp=True)


# [features] keys `class_<name>`: any number of container classes (cleaner.page.features), tag lists.
CLASS_PREFIX = "class_"


@dataclass(frozen=True)
class Features:
    inline_tags: list[str] = setting()
    window: int = setting(ge=0)
    window_families: list[str] = setting()
    max_idclass_tokens_per_block: int = setting(ge=0)
    per_character_tokens: bool = setting()
    url_hints: list[str] = setting(nonempty_items=True)
    bins: Bins = setting()
    cues: Cues = setting()
    regexp: Regexps = setting()
    # every `class_<name> = [tags]` key, by name (class_header, class_nav, ..., and any new one)
    classes: dict[str, list[str]] = setting(prefix=CLASS_PREFIX)


@dataclass(frozen=True)
class Model:
    labels: list[str] = setting(nonempty=True)
    convention: str = setting()  # "" = the model's default (checked against the model, cleaner.label.convention)
    # convention -> the packaged model that cleans by it when no model is given
    # (cleaner.label.model.model_for_convention)
    by_convention: dict[str, str] = setting(items={"packaged_model": True})
    # convention -> the packaged model that cleans its pages in HTML5 markup instead (cleaner.page.doctype)
    html5_by_convention: dict[str, str] = setting(items={"packaged_model": True})


@dataclass(frozen=True)
class Train:
    min_alignment: float = setting(**SHARE)
    max_iterations: int = setting(**POSITIVE)
    seed: int = setting()
    c1_grid: list[float] = setting(nonempty=True, ge=0)
    c2_grid: list[float] = setting(nonempty=True, ge=0)
    c1: float = setting(ge=0)
    c2: float = setting(ge=0)
    conventions: list[str] = setting(nonempty=True)
    convention_of: dict[str, str] = setting()
    convention_attributes: list[str] = setting()


@dataclass(frozen=True)
class Job:
    master: str = setting(nonempty=True)
    app_name: str = setting(nonempty=True)
    driver_memory: str = setting(nonempty=True)
    log_level: str = setting(choices=("ALL", "DEBUG", "ERROR", "FATAL", "INFO", "OFF", "TRACE", "WARN"))
    progress_bar: bool = setting()
    distribution: str = setting(choices=("split", "packed", "files"))  # jobs/plan.py MODES
    task_bytes: int = setting(**POSITIVE)
    min_task_bytes: int = setting(**POSITIVE)
    tasks_per_core: int = setting(**POSITIVE)
    split_factor: float = setting(**POSITIVE)
    plain_byte_weight: float = setting(**POSITIVE)
    max_payload_bytes: int = setting(**POSITIVE)
    format: str = setting(choices=("parquet", "jsonl"))  # jobs/formats.py FORMATS
    compression: str = setting(choices=("none", "uncompressed", "snappy", "gzip", "lz4", "zstd", "brotli"))
    jsonl_compression: str = setting(choices=("gzip", "zstd"))  # jobs/formats.py JSONL_COMPRESSIONS
    compression_level: int = setting()
    target_file_mb: float = setting(**POSITIVE)
    shuffle_bytes_per_output_byte: float = setting(**POSITIVE)
    partition_by: list[str] = setting()  # the columns are checked by the job (cleaner.output.schema.PARTITION_COLUMNS)
    crawl_pattern: str = setting(regexp=True)
    default_crawl: str = setting(nonempty=True)
    marker_dir: str = setting()
    local_max_failures: int = setting(ge=1)
    lease_renew_s: float = setting(**POSITIVE)
    lease_stale_s: float = setting(**POSITIVE)  # more than lease_renew_s: checked by the job


@dataclass(frozen=True)
class Runtime:
    gc_thresholds: list[int] = setting(gt=0, length=(0, 3))


@dataclass(frozen=True)
class Decision:
    content_threshold: float = setting(**SHARE)
    f1_optimal_threshold: bool = setting()
    fallback_min_kept_share: float = setting(**SHARE)
    keep_headline: list[str] = setting()
    fill_main: list[str] = setting()
    fill_main_threshold: float = setting(**SHARE)
    fill_main_skip: list[str] = setting()
    fill_main_heaviest: list[str] = setting()
    fill_main_to_end: list[str] = setting()
    drop_repeats: list[str] = setting()
    drop_repeats_min_words: int = setting(gt=0)


@dataclass(frozen=True)
class Stacking:
    enabled: bool = setting()
    windows: list[int] = setting(nonempty=True, ge=0)
    inner_folds: int = setting(gt=1)
    first_pass_neighbours: bool = setting()


@dataclass(frozen=True)
class Markers:
    enabled: bool = setting()
    word_bins: list[int] = setting(nonempty=True, ascending=True)
    ancestor_tags: list[str] = setting()
    c1: float = setting(ge=0)
    c2: float = setting(ge=0)
    max_iterations: int = setting(**POSITIVE)


@dataclass(frozen=True)
class Corpus:
    langid_min_letters: int = setting(ge=0)
    langid_min_share: float = setting(**SHARE)
    langid_max_chars: int = setting(ge=2)
    shingle_words: int = setting(**POSITIVE)
    minhash_permutations: int = setting(**POSITIVE)
    minhash_bands: int = setting(**POSITIVE)
    minhash_seed: int = setting(ge=0)
    minhash_signature: bool = setting()
    markdown: bool = setting()
    markdown_links: bool = setting()
    markdown_images: bool = setting()
    markdown_emphasis: bool = setting()


@dataclass(frozen=True)
class Settings:
    limits: Limits = setting()
    decode: Decode = setting()
    segment: Segment = setting()
    features: Features = setting()
    model: Model = setting()
    train: Train = setting()
    job: Job = setting()
    runtime: Runtime = setting()
    decision: Decision = setting()
    stacking: Stacking = setting()
    markers: Markers = setting()
    corpus: Corpus = setting()

    @classmethod
    def from_mapping(cls, data: dict, source: str) -> Settings:
        """The tree of `data` (a merged config mapping); SettingsError names the key and `source`."""
        try:
            return _build(cls, data, ())
        except SettingsError as exc:
            raise SettingsError(f"{source}: {exc}") from None


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
        if meta.get("packaged_model") and item not in packaged_model_names():
            raise SettingsError(f"{where} must name a packaged model ({', '.join(packaged_model_names())}), "
                                f"not {_shown(item)}")
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


def _value(tp, value, meta: dict, path: tuple[str, ...]):
    where = _where(path)
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise SettingsError(f"[{'.'.join(path)}] must be a table, not {_shown(value)} ({_kind(value)})")
        return _build(tp, value, path)
    out: typing.Any  # the checked value: a list, a table or a scalar
    if origin is list:
        (item_tp,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise SettingsError(f"{where} must be a list, not {_shown(value)} ({_kind(value)})")
        out = [_scalar(item_tp, v, where) for v in value]
    elif origin is dict:
        key_tp, item_tp = typing.get_args(tp)
        if not isinstance(value, dict):
            raise SettingsError(f"{where} must be a table, not {_shown(value)} ({_kind(value)})")
        out = {k: _value(item_tp, v, meta.get("items", {}), path + (k,)) for k, v in value.items()}
    else:
        out = _scalar(tp, value, where)
    _check_rules(out, meta, where)
    return out


@functools.cache
def _fields(cls) -> tuple[dict, dict]:
    """({name: type}, {name: field}) of a section's dataclass, resolved once."""
    return typing.get_type_hints(cls), {f.name: f for f in dataclasses.fields(cls)}


def _build(cls, data: dict, path: tuple[str, ...]):
    hints, known = _fields(cls)
    prefixed = {f.metadata["prefix"]: f for f in known.values() if "prefix" in f.metadata}
    values: dict = {}
    gathered: dict[str, dict] = {f.name: {} for f in prefixed.values()}
    for key, value in data.items():
        f = known.get(key)
        if f is not None and "prefix" not in f.metadata:
            values[key] = _value(hints[key], value, dict(f.metadata), path + (key,))
            continue
        owner = next((g for p, g in prefixed.items() if key.startswith(p)), None)
        if owner is not None:
            item_tp = typing.get_args(hints[owner.name])[1]
            gathered[owner.name][key] = _value(item_tp, value, {}, path + (key,))
            continue
        if path + (key,) in REMOVED:
            what = f"[{'.'.join(path + (key,))}]" if isinstance(value, dict) else _where(path + (key,))
            raise SettingsError(f"{what} was removed (measured and rejected: "
                                f"{REMOVED[path + (key,)]}): delete it")
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
