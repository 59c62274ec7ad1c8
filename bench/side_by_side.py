"""Run benchmark scripts on two checkouts in alternating rounds, so that a shared machine's changing speed hits
both alike (A B B A A B ...), and keep every round's output.

    .venv/bin/python bench/side_by_side.py --old /path/to/old/checkout --rounds 3 console_pages.py cards_bundle.py
    .venv/bin/python bench/side_by_side.py --old ../old --rounds 2 "approvals_load.py --seconds 20"

Each checkout runs with its own `.venv` (make one there with `make install`) and its own code. Output:
bench/out/side_by_side/<script>/<round>-<old|new>.txt, and the last lines of each run printed side by side.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(checkout: Path, command: list[str], out: Path) -> float:
    python = checkout / ".venv" / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"{checkout}: no .venv (run `make install` there first)")
    start = time.monotonic()
    with out.open("w") as sink:
        result = subprocess.run(
            [str(python), str(checkout / "bench" / command[0]), *command[1:]],
            cwd=checkout,
            stdout=sink,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if result.returncode != 0:
        raise SystemExit(f"{checkout}: {' '.join(command)} failed (exit {result.returncode}); see {out}")
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--new", type=Path, default=ROOT, help="this checkout by default")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tail", type=int, default=25, help="lines of each run's output to print")
    parser.add_argument("scripts", nargs="+", help='a bench script with its arguments, e.g. "console_pages.py"')
    args = parser.parse_args()
    checkouts = {"old": args.old.resolve(), "new": args.new.resolve()}
    for script in args.scripts:
        command = shlex.split(script)
        folder = ROOT / "bench" / "out" / "side_by_side" / Path(command[0]).stem
        folder.mkdir(parents=True, exist_ok=True)
        for number in range(1, args.rounds + 1):
            order = ["old", "new"] if number % 2 else ["new", "old"]
            for label in order:
                out = folder / f"{number}-{label}.txt"
                seconds = run(checkouts[label], command, out)
                lines = out.read_text().splitlines()[-args.tail :]
                print(f"\n=== {script} · round {number} · {label} ({checkouts[label]}) · {seconds:.0f} s")
                print("\n".join(lines))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
