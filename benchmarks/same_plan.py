"""Whether a change left dream's plans as they were: `mem0-dream --plan --json` of another git
revision (default `main`) and of this working tree, on the benchmark's cached stores with
vectors, compared byte for byte (docs/dream.md: the plan is a pure function of the memories,
their vectors, the policy and `now`).

    .venv/bin/python benchmarks/same_plan.py [--ref main] [--sizes 10000 100000]

The other revision's `plugin/` is exported with `git archive` into a temporary folder and put
first on PYTHONPATH; both runs use this environment's packages. The wall time and peak RSS of
each run are printed too (one run each: alternate and repeat for timing figures).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import generate as gen  # noqa: E402  (the benchmark's cached stores)

NOW = gen.NOW.isoformat()
TIME = Path("/usr/bin/time")
MAIN = "import sys; from mem0_plugin.cli.dream_cli import main; sys.argv[0] = 'mem0-dream'; sys.exit(main())"


def export(ref: str, folder: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "plugin"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder / "plugin"


def plan(store: Path, out: Path, home: Path, pythonpath: Path | None) -> str:
    """Runs --plan; returns "wall s, peak MB" as /usr/bin/time measured them."""
    env = {**os.environ, "MEM0_HOME": str(home)}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    argv = [sys.executable, "-c", MAIN, "--plan", "--json", "-o", str(out), "--store", f"sqlite:///{store}"]
    argv += ["--user-id", gen.USER, "--project-id", gen.PROJECT, "--now", NOW]
    stats = home / "time.txt"
    wrapped = [str(TIME), "-f", "%e s, %M KB", "-o", str(stats), *argv] if TIME.exists() else argv
    subprocess.run(wrapped, check=True, env=env, stdout=subprocess.DEVNULL, cwd=home)
    return stats.read_text().strip() if stats.exists() else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="main")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    args = parser.parse_args()
    different = 0
    with tempfile.TemporaryDirectory(prefix="same-plan-") as tmp:
        work = Path(tmp)
        other = export(args.ref, work)
        for n in args.sizes:
            store = work / f"vec-{n}.sqlite3"
            shutil.copyfile(gen.build_vector_store(n), store)
            before = plan(store, work / f"plan-{n}-ref.json", work, other)
            after = plan(store, work / f"plan-{n}-tree.json", work, None)
            same = (work / f"plan-{n}-ref.json").read_bytes() == (work / f"plan-{n}-tree.json").read_bytes()
            different += not same
            print(f"{n:>7,}: {'identical' if same else 'DIFFERENT'}  ({args.ref}: {before}; tree: {after})")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
