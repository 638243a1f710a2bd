"""Work distribution: input files -> pieces (whole files or record ranges) -> Spark tasks.

Pure Python (no Spark), so the planner is unit-tested on its own. The chosen scheme and
its measurement are in docs/spark_job.md. In short ("split", the default):

1. Every file gets a cost: its size in bytes, uncompressed files weighted down by
   `plain_byte_weight` (the same pages take ~3-4x more bytes uncompressed; gzip and zstd count whole).
2. The piece target is total cost / (cores x tasks_per_core), clamped to
   [min_task_bytes, task_bytes]: at least a few tasks per core so the last wave is short,
   and no task bigger than task_bytes.
3. Files costing more than split_factor x target are offered to the offset pre-scan
   (jobs/scan.py); those it accepts are cut at record boundaries into pieces of about the
   target, the others stay whole (zstd files always: they are not offered).
4. Pieces are packed into tasks by LPT (longest processing time first: largest piece into
   the least loaded task), so small files share tasks and every task costs about the same;
   tasks are numbered largest first, which is the order Spark launches them in.

"packed" does 1, 2 and 4 without splitting; "files" makes one task per file (what
cc-pyspark does), kept for the measurement.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

from .storage import InputFile, is_gzip_name

MODES = ("split", "packed", "files")


@dataclass
class PlanSettings:
    mode: str = "split"
    task_bytes: int = 256 << 20
    min_task_bytes: int = 4 << 20
    tasks_per_core: int = 3
    split_factor: float = 1.5
    plain_byte_weight: float = 0.3

    @classmethod
    def from_config(cls, job: dict, **overrides) -> PlanSettings:
        s = cls(**{k: job[k] for k in ("task_bytes", "min_task_bytes", "tasks_per_core",
                                       "split_factor", "plain_byte_weight") if k in job},
                mode=job["distribution"])
        for k, v in overrides.items():
            if v is not None:
                setattr(s, k, v)
        if s.mode not in MODES:
            raise ValueError(f"[job] distribution must be one of {', '.join(MODES)}, not {s.mode!r}")
        return s


def is_zstd_name(uri: str) -> bool:
    return uri.lower().endswith(".zst")


def file_cost(f: InputFile, settings: PlanSettings) -> float:
    compressed = is_gzip_name(f.uri) or is_zstd_name(f.uri)
    return float(f.size) if compressed else f.size * settings.plain_byte_weight


def piece_target(files: list[InputFile], cores: int, settings: PlanSettings) -> float:
    total = sum(file_cost(f, settings) for f in files)
    target = total / max(1, cores * settings.tasks_per_core)
    return max(float(settings.min_task_bytes), min(float(settings.task_bytes), target))


def split_candidates(files: list[InputFile], target: float, settings: PlanSettings) -> list[InputFile]:
    """Files worth an offset pre-scan (only in "split" mode)."""
    if settings.mode != "split":
        return []
    # zstd files are read whole: their record offsets are in the decompressed stream (cleaner/warc/zstd.py)
    return [f for f in files if file_cost(f, settings) > settings.split_factor * target
            and not is_zstd_name(f.uri)]


def make_pieces(files: list[InputFile], crawl_of: dict[str, str], target: float,
                settings: PlanSettings, offsets_cuts: dict[str, list[int]] | None = None) -> list[dict]:
    """Pieces: one per file, or one per record range for files with cut points."""
    offsets_cuts = offsets_cuts or {}
    pieces = []
    for f in files:
        cuts = offsets_cuts.get(f.uri) or [0, f.size]
        n = len(cuts) - 1
        cost = file_cost(f, settings)
        for i in range(n):
            start, end = cuts[i], cuts[i + 1]
            whole = n == 1
            pieces.append({
                "key": f"{f.uri}#{start}",
                "uri": f.uri,
                "start": start,
                "end": None if whole else end,
                "size": f.size,
                "part": i,
                "parts": n,
                "crawl": crawl_of.get(f.uri, ""),
                "cost": cost if whole else cost * (end - start) / max(1, f.size),
            })
    return pieces


def pieces_wanted(f: InputFile, target: float, settings: PlanSettings) -> int:
    return max(1, math.ceil(file_cost(f, settings) / target))


def pack(pieces: list[dict], target: float, cores: int, settings: PlanSettings) -> list[list[dict]]:
    """Pieces -> tasks (lists of pieces), largest task first."""
    if not pieces:
        return []
    if settings.mode == "files":
        by_file: dict[str, list[dict]] = {}
        for p in pieces:
            by_file.setdefault(p["uri"], []).append(p)
        return list(by_file.values())
    total = sum(p["cost"] for p in pieces)
    n_tasks = max(1, round(total / target)) if target > 0 else 1
    n_tasks = min(len(pieces), max(n_tasks, min(len(pieces), cores)))
    heap = [(0.0, i) for i in range(n_tasks)]
    tasks: list[list[dict]] = [[] for _ in range(n_tasks)]
    loads = [0.0] * n_tasks
    for p in sorted(pieces, key=lambda p: (-p["cost"], p["key"])):
        load, i = heapq.heappop(heap)
        tasks[i].append(p)
        loads[i] = load + p["cost"]
        heapq.heappush(heap, (loads[i], i))
    order = sorted(range(n_tasks), key=lambda i: -loads[i])
    return [tasks[i] for i in order if tasks[i]]


def describe(tasks: list[list[dict]]) -> dict:
    loads = [sum(p["cost"] for p in t) for t in tasks]
    split = sorted({p["uri"] for t in tasks for p in t if p["parts"] > 1})
    return {
        "tasks": len(tasks),
        "pieces": sum(len(t) for t in tasks),
        "split_files": len(split),
        "task_cost_max": int(max(loads)) if loads else 0,
        "task_cost_mean": int(sum(loads) / len(loads)) if loads else 0,
    }
