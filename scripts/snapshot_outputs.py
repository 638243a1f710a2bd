"""Fingerprint the cleaner's output on every shared page, to prove a change keeps it byte for byte.

A restructuring (issue "One page pipeline") must change no output. Run this on the code before
the change and after it, and compare:

    .venv/bin/python scripts/snapshot_outputs.py --out /tmp/before.tsv
    ... change the code ...
    .venv/bin/python scripts/snapshot_outputs.py --out /tmp/after.tsv --against /tmp/before.tsv

One line per page (`dataset/id`, then a SHA-256 of each part of the result): the status and
reason, the CleanEval text, the plain text, and the blocks with their labels, confidences and
every label's marginal (the `--format json` view), so a change that moves one probability in
the 17th digit shows. Timings are left out. Every page of every set is read, the gzip-compressed
ones (`wcxb/html/ID.html.gz`) too, whatever `cleaner.gold.data.find_pages` covers today.
Exit 0 when `--against` finds no difference, 1 when it finds some (each listed), 2 on usage.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.api import clean_html  # noqa: E402
from cleaner.config import load_config  # noqa: E402
from cleaner.label.model import load_model  # noqa: E402
from cleaner.tools.runtime import tune_gc  # noqa: E402


def shared_pages(data: Path) -> list[tuple[str, Path]]:
    """(`dataset/id`, path) of every page of every set under `data`, `.html` and `.html.gz`."""
    out = []
    for d in sorted(p for p in data.iterdir() if (p / "html").is_dir()):
        for f in sorted((d / "html").iterdir()):
            for suffix in (".html.gz", ".html"):
                if f.name.endswith(suffix):
                    out.append((f"{d.name}/{f.name[: -len(suffix)]}", f))
                    break
    return out


def _digest(value: object) -> str:
    blob = value if isinstance(value, bytes) else json.dumps(value, ensure_ascii=False, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:20]


def fingerprint(data: bytes, model, config) -> list[str]:
    r = clean_html(data, model=model, config=config, keep_blocks=True, all_marginals=True)
    blocks = [
        {"text": b.text, "containers": list(b.containers), "label": lab, "confidence": repr(c),
         "marginals": {k: repr(v) for k, v in (m or {}).items()}}
        for b, lab, c, m in zip(r.blocks or [], r.labels or [], r.confidences or [], r.marginals or [[]] * 10**6)
    ]
    head = [r.status, r.reason or "", r.encoding or "", str(r.blocks_truncated), r.decision or "", r.title]
    return [_digest(head), _digest(r.cleaneval.encode()), _digest(r.plain.encode()), _digest(blocks)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, required=True, help="the fingerprint table to write (TSV)")
    ap.add_argument("--against", type=Path, help="a table written earlier: list every page that differs")
    ap.add_argument("--model", help="model file (default: the packaged default)")
    ap.add_argument("--every", type=int, default=1, help="every Nth page only (a quick check)")
    args = ap.parse_args(argv)
    tune_gc()
    model, config = load_model(args.model), load_config()
    pages = shared_pages(args.data)[:: args.every]
    t0 = time.time()
    with open(args.out, "w") as fh:
        fh.write("page\thead\tcleaneval\tplain\tblocks\n")
        for i, (key, path) in enumerate(pages):
            raw = path.read_bytes()
            data = gzip.decompress(raw) if path.name.endswith(".gz") else raw
            fh.write("\t".join([key, *fingerprint(data, model, config)]) + "\n")
            if i % 500 == 499:
                print(f"{i + 1}/{len(pages)} pages, {time.time() - t0:.0f} s", file=sys.stderr)
    print(f"{len(pages)} pages fingerprinted in {time.time() - t0:.0f} s -> {args.out}", file=sys.stderr)
    if not args.against:
        return 0
    before = _read(args.against)
    after = _read(args.out)
    differ = sorted(k for k in after if k in before and before[k] != after[k])
    missing = sorted(set(before) - set(after)) if args.every == 1 else []
    for k in differ:
        parts = [name for name, a, b in zip(("head", "cleaneval", "plain", "blocks"), before[k], after[k]) if a != b]
        print(f"differs: {k} ({', '.join(parts)})")
    for k in missing:
        print(f"missing: {k}")
    compared = sum(1 for k in after if k in before)
    print(f"{compared} pages compared, {len(differ)} differ, {len(missing)} missing")
    return 1 if differ or missing else 0


def _read(path: Path) -> dict[str, tuple[str, ...]]:
    rows = Path(path).read_text().splitlines()[1:]
    return {r.split("\t")[0]: tuple(r.split("\t")[1:]) for r in rows}


if __name__ == "__main__":
    sys.exit(main())
