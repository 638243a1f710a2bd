"""The settings that shape an output, recorded with it so that a run resumed into it (`--skip-done`) cannot mix
another kind of output in silently: the format, the convention, the model (its hash) and the config (the hash of
the sections that shape a page's output, cleaner.config.OUTPUT_SECTIONS).

`cleaner clean` keeps them in `OUT/.cleaner-settings.json` (a hidden file: never taken as a page), the WARC jobs
in each run's `.run.json` (`output_settings`). A run into an output recorded with other settings is refused with
one line naming each difference (exit 5), unless `--overwrite`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..config import OUTPUT_SECTIONS, Config

SETTINGS_FILE = ".cleaner-settings.json"
# what each setting is called in the refusal line
_NAMES = {"format": "format", "convention": "convention", "model_hash": "model", "config_hash": "config"}


def output_settings(fmt: str, convention: str | None, model_hash: str | None, config: Config) -> dict[str, Any]:
    """The settings that shape an output, as recorded (convention None: a model trained without conventions)."""
    return {"format": fmt, "convention": convention, "model_hash": model_hash,
            "config_hash": config.section_hash(OUTPUT_SECTIONS)}


def settings_difference(recorded: dict[str, Any] | None, now: dict[str, Any]) -> str | None:
    """How `now` differs from the `recorded` settings ("format txt, this run cleaneval; ..."), None when it does not
    (or when nothing was recorded: an output written before the settings were)."""
    if not recorded:
        return None
    diffs = [f"{_NAMES[k]} {recorded.get(k) or '(none)'}, this run {now.get(k) or '(none)'}"
             for k in _NAMES if k in recorded and recorded.get(k) != now.get(k)]
    return "; ".join(diffs) or None


def read_folder_settings(folder: Path) -> dict[str, Any] | None:
    """The settings recorded in a folder of page outputs, None when it holds none (or an unreadable record)."""
    try:
        data = json.loads((folder / SETTINGS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
