#!/usr/bin/env python
"""Write schemas/cleaned_record.json from the one schema definition (cleaner/output/schema.py).

  python scripts/export_schema.py            # (re)write the file
  python scripts/export_schema.py --check    # exit 1 when the file differs from the code
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.output.schema import schema_json_text  # noqa: E402

TARGET = ROOT / "schemas" / "cleaned_record.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only compare, do not write")
    ap.add_argument("--out", type=Path, default=TARGET, help="file to write (default: %(default)s)")
    args = ap.parse_args(argv)
    text = schema_json_text()
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else None
        if current != text:
            print(f"{args.out} is out of date: run python scripts/export_schema.py", file=sys.stderr)
            return 1
        print(f"{args.out} is up to date")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
