"""The run record (`.run.json`): what a published run did, file by file, from the outcomes of its pieces."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cleaner
from cleaner.label.model import ServingModel
from cleaner.output.run_settings import output_settings
from cleaner.output.schema import SCHEMA_VERSION

from .outcomes import Outcome, PieceOutcome
from .report import log
from .runs import OutputDir
from .storage import InputFile, base_name

ROOT = Path(__file__).resolve().parent.parent


def code_version() -> dict:
    out: dict[str, str | bool] = {"webcleaner": cleaner.__version__, "schema": SCHEMA_VERSION}
    try:
        import pyspark
        out["pyspark"] = pyspark.__version__
    except ImportError:  # pragma: no cover
        pass
    if (ROOT / ".git").exists():
        try:
            out["git_commit"] = subprocess.run(
                ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                timeout=5, check=True).stdout.strip()
            dirty = subprocess.run(
                ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                capture_output=True, text=True, timeout=5).stdout.strip()
            out["git_dirty"] = bool(dirty)
        except Exception:
            pass
    return out


def _model_record(serving: ServingModel) -> dict:
    assert serving.path is not None  # (a model named on the command line, or a packaged one)
    model = serving.model
    return {"path": str(serving.path.resolve()),  # a packaged model's name: its file
            "hash": model.hash, "feature_version": model.feature_version,
            # the convention the model was given as input (None: a model trained without conventions, which
            # [model.by_convention] names for the run's convention: it cleans as it was trained)
            "tagging_convention": serving.convention,
            "labels": model.labels}


def run_record(*, run_id: str, job: str, command: list[str], started: datetime, elapsed: float, config: Any,
               settings: dict, serving: ServingModel, files: list[InputFile],
               todo: list[InputFile],
               inputs_skipped: list[dict], skipped_done: dict, superseded: dict, crawl_of: dict[str, str],
               per_file: dict[str, list[PieceOutcome]], pieces: dict[str, PieceOutcome], dist: dict,
               out: OutputDir, staging: str, parquet_files: list, rows_written: int, engine: dict) -> dict:
    """The record of a run about to be published; `settings` are its [job] settings, `per_file` the outcomes of
    each file's pieces, `pieces` every piece's by its key."""
    j = settings
    file_records = {}
    errors = []
    whole: list[Outcome] = []
    for f in todo:
        uri = f.uri
        m = Outcome.total(p.outcome for p in sorted(per_file[uri], key=lambda p: p.start)).whole_file()
        whole.append(m)
        file_records[uri] = {"name": base_name(uri), "size": f.size, "mtime_ns": f.mtime_ns, "crawl": crawl_of[uri],
                             **m.file_entry()}
        if not m.accounted:
            log.error("accounting mismatch in %s: %s", uri, file_records[uri])
        if m.first_internal_error:
            log.warning("%s: %d records rejected as internal_error, first at offset %s: %s",
                        base_name(uri), m.rejected.get("internal_error", 0),
                        m.first_internal_error["offset"], m.first_internal_error["error"])
        if m.open_error:
            errors.append({"file": uri, "offset": None, "error": m.open_error})
        errors.extend({"file": uri, **e} for e in m.errors)
    totals = Outcome.totals_entry(whole)
    workers: dict[str, dict] = {}
    for s in pieces.values():
        w = workers.setdefault(str(s.pid), {"pieces": 0, "tasks": set(), "model_loads": 0,
                                            "max_rss_mb": 0.0, "clean_seconds": 0.0})
        w["pieces"] += 1
        w["tasks"].add(s.task)
        w["model_loads"] = max(w["model_loads"], s.model_loads_in_process)
        w["max_rss_mb"] = max(w["max_rss_mb"], round(s.max_rss_kb / 1024, 1))
        w["clean_seconds"] = round(w["clean_seconds"] + s.outcome.clean_seconds, 3)
        w["gc_thresholds"] = s.gc_thresholds  # as the worker cleaned ([runtime], cleaner/tools/runtime.py)
        # whether it ran the compiled stages (cleaner/__init__.py): without them a page costs 15-20 % more CPU
        w["native"] = s.native
    for w in workers.values():
        w["tasks"] = len(w["tasks"])
    per_task: dict[int, list[float]] = {}
    for s in pieces.values():
        t = per_task.setdefault(int(s.task), [0.0, 0.0])
        t[0] += s.outcome.seconds
        t[1] += s.outcome.cpu_seconds
    dist = dict(dist, task_seconds=[round(per_task[i][0], 3) for i in sorted(per_task)],
                task_cpu_seconds=[round(per_task[i][1], 3) for i in sorted(per_task)])
    run_dir = out.run_dir(run_id)
    staged_root = staging.rstrip("/") + "/"
    out_files = [{"path": p[len(staged_root):] if p.startswith(staged_root) else p, "bytes": n}
                 for p, n in parquet_files]
    return {
        "run_id": run_id,
        "job": job,
        "status": "published",
        "started_at": started.isoformat(timespec="seconds"),
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "elapsed_s": round(elapsed, 3),
        "docs_per_s": round(totals["html_records"] / elapsed, 2) if elapsed > 0 else None,
        "code_version": code_version(),
        "command": command,
        **engine,
        "config_source": config.source,
        "config": dict(config.data, job=j),
        "model": {**_model_record(serving),
                  # the convention the pages were cleaned by (None: --model named a model trained without conventions)
                  "convention": serving.chosen,
                  # the model of the pages in HTML5 markup, where the convention has its own
                  # ([model.html5_by_convention]; each row's model_hash says which cleaned it); None: the model above
                  # cleaned every page
                  "html5_pages": _model_record(serving.html5) if serving.html5 is not None else None},
        # what shapes the rows (format, convention, models, config): a run into this output with others is refused
        "output_settings": output_settings(j["format"], serving.chosen, serving.hash, config),
        "inputs": [f.uri for f in files],
        "inputs_skipped": inputs_skipped,
        "skipped_done": skipped_done,
        # files cleaned again because they changed: {uri: the run whose rows of it this run supersedes}
        "supersedes": {u: rid for u, (rid, _) in superseded.items()},
        "output": {"root": out.root, "run_dir": run_dir, "partition_by": list(j["partition_by"]),
                   "format": j["format"],  # parquet_files counts the data files of either format
                   "compression": j["compression"] if j["format"] == "parquet" else j["jsonl_compression"],
                   "target_file_mb": j["target_file_mb"],
                   "rows_written": rows_written, "parquet_files": len(out_files),
                   "bytes_written": sum(f["bytes"] for f in out_files), "files": out_files},
        "distribution": dist,
        "totals": totals,
        "files": file_records,
        "errors": errors,
        "workers": workers,
    }


def recorded_settings(record: dict[str, Any]) -> dict[str, Any]:
    """The settings that shaped a published run's rows: its `output_settings`, or for a run recorded before them
    what its record says of them (format, convention, model hash; its config hash was not kept)."""
    if record.get("output_settings"):
        return dict(record["output_settings"])
    model, output = record.get("model") or {}, record.get("output") or {}
    return {"format": output.get("format"), "convention": model.get("convention"), "model_hash": model.get("hash")}
