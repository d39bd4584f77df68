"""The memory loop's figures (docs/hooks.md, "Figures"), each beside today's cold CLI search in
the same run:

    .venv/bin/python benchmarks/hooks.py              # every figure (about 3 minutes)
    .venv/bin/python benchmarks/hooks.py --quick      # fewer repetitions

* latency of a prompt's recall on a store of 10,000 memories (every one with a vector of the
  default model): `scripts/hook.py claude UserPromptSubmit` as a real process, as Claude Code
  runs it, warm (the recall service running) and with nothing warm (no service: the hook starts
  it); the session start's opening on the same store, warm and with nothing warm; beside `mem0-memories search` (a cold
  process, what an agent's shell call costs);
* recall precision: the off-topic prompts (tests/data/off_topic_prompts.json) that get any
  memory; recall recall: the labelled questions whose recalled memories hold a relevant one,
  beside search's hit@5 (both with the default model, as the hook runs); on the development set
  (where the relevance floor was chosen) and on the held-out set;
* capture: 20 compactions of one branch.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "plugin"))
sys.path.insert(0, str(ROOT.parent / "tests"))

import generate as gen  # noqa: E402

HOOK = ROOT.parent / "scripts" / "hook.py"
BIN = Path(sys.executable).parent


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def timed(argv: list[str], payload: str, env: dict, cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, input=payload, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
    return time.perf_counter() - started, done.stdout


def stop_services(home: Path) -> None:
    """End every recall service of `home` (as an idle one ends) and wait until its socket is gone."""
    subprocess.run(["pkill", "-f", f"mem0-hook --serve {home}"], check=False)
    deadline = time.monotonic() + 10
    while list((home / "run").glob("*.sock")) and time.monotonic() < deadline:
        time.sleep(0.05)


def latency(args, work: Path) -> dict:
    store = work / "mem-10000.sqlite3"
    shutil.copyfile(gen.build_vector_store(10_000), store)
    home = work / "home"
    home.mkdir()
    project = work / "acme-api"
    project.mkdir()
    env = {
        **os.environ,
        "MEM0_HOME": str(home),
        "MEM0_STORE": f"sqlite:///{store}",
        "MEM0_USER_ID": gen.USER,
        "MEM0_PROJECT_ID": gen.PROJECT,
        "MEM0_PLUGIN_USE_PATH": "1",
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    }
    env.pop("MEM0_EMBEDDER", None)
    subprocess.run(
        [str(BIN / "mem0-memories"), "list", "--page-size", "1"], env=env, cwd=project, check=True, capture_output=True
    )  # migrate once
    prompts = [f"{q}: what do we know about it?" for q in gen.queries(args.repeat * 2, 11)]

    def prompt(text: str, session: str) -> str:
        return json.dumps(
            {
                "session_id": session,
                "transcript_path": str(work / "t.jsonl"),
                "cwd": str(project),
                "permission_mode": "default",
                "hook_event_name": "UserPromptSubmit",
                "prompt": text,
            }
        )

    hook = [sys.executable, "-S", str(HOOK), "claude", "UserPromptSubmit", "--budget", "30"]
    cold = []
    for i in range(max(3, args.repeat // 10)):
        stop_services(home)
        seconds, _ = timed(hook, prompt(prompts[i], f"cold{i}"), env, project)
        cold.append(seconds)
    warm = [timed(hook, prompt(text, f"warm{i}"), env, project)[0] for i, text in enumerate(prompts)]
    start = json.dumps(
        {
            "session_id": "s",
            "transcript_path": "",
            "cwd": str(project),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    )
    opening = [sys.executable, "-S", str(HOOK), "claude", "SessionStart", "--budget", "30"]
    session_start = [timed(opening, start, env, project)[0] for _ in range(5)]
    session_start_cold = []
    for _ in range(3):
        stop_services(home)
        session_start_cold.append(timed(opening, start, env, project)[0])
    stop_services(home)
    cli = [
        timed([str(BIN / "mem0-memories"), "search", text, "--top-k", "5"], "", env, project)[0]
        for text in prompts[: max(3, args.repeat // 10)]
    ]
    return {
        "prompt recall, warm (p50 / p95)": (1000 * statistics.median(warm), 1000 * percentile(warm, 95)),
        "prompt recall, nothing warm (median)": 1000 * statistics.median(cold),
        "session start, warm (median)": 1000 * statistics.median(session_start),
        "session start, nothing warm (median)": 1000 * statistics.median(session_start_cold),
        "cold CLI search (median)": 1000 * statistics.median(cli),
    }


def quality() -> dict:
    figures: dict = {}
    for name, path in (("dev", "DATA"), ("held-out", "HELD_OUT")):
        figures.update({f"{label} ({name})": value for label, value in quality_of(name, path).items()})
    return figures


def quality_of(name: str, path: str) -> dict:
    """Recall's precision and recall on one labelled set and its off-topic prompts."""
    import labelled
    import search_quality
    from mem0_plugin import operations
    from mem0_plugin.hooks import recall
    from mem0_plugin.semantic import Semantic
    from mem0_plugin.store import open_store

    data = labelled.load(getattr(labelled, path))
    prompts = [
        p
        for p in json.loads((ROOT.parent / "tests/data/off_topic_prompts.json").read_text())["prompts"]
        if p["set"] == name
    ]
    key_of_id = {labelled.memory_id(m["key"]): m["key"] for m in data["memories"]}
    with tempfile.TemporaryDirectory(prefix="mem0-hooks-quality-") as tmp:
        folder = Path(tmp)
        url = labelled.build_store(data, folder)
        semantic = Semantic.from_home(folder)
        with open_store(url) as store:
            search_quality.embed_store(store, data, semantic)

            def caller(project: str) -> operations.Caller:
                return operations.Caller(store, labelled.identity(url, folder, project), semantic=semantic)

            answered = hit5 = 0
            for query in data["queries"]:
                c = caller(query["project"])
                given = {key_of_id[m.id] for m, _ in recall.for_prompt(c, query["query"]).memories}
                answered += bool(given & set(query["relevant"]))
                found = operations.search_memories(c, query["query"], top_k=5)["results"]
                hit5 += any(key_of_id[r["id"]] in query["relevant"] for r in found)
            noisy = 0
            for i, prompt in enumerate(prompts):
                project = prompt["project"] or data["queries"][i % len(data["queries"])]["project"]
                noisy += bool(recall.for_prompt(caller(project), prompt["prompt"]).memories)
    n = len(data["queries"])
    return {
        "off-topic prompts given any memory": (noisy, len(prompts)),
        "questions whose recalled memories hold the answer": (answered, n),
        "search hit@5 on the same questions": (hit5, n),
    }


def capture(work: Path) -> dict:
    sys.path.insert(0, str(ROOT.parent / "tests"))
    from mem0_plugin.hooks.dispatch import Hooks

    home = work / "capture-home"
    project = work / "capture-project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "feature/x", str(project)], check=True)
    hooks = Hooks({**os.environ, "MEM0_HOME": str(home), "MEM0_USER_ID": "bench", "MEM0_EMBEDDER": "none"})
    transcript = project / "t.jsonl"
    for n in range(20):
        lines = [
            {"type": "user", "message": {"role": "user", "content": f"Fix the export, round {n}"}},
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "text", "text": f"Round {n} done."}]},
            },
        ]
        transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
        payload = {
            "session_id": "s",
            "transcript_path": str(transcript),
            "cwd": str(project),
            "hook_event_name": "PreCompact",
            "trigger": "auto",
            "custom_instructions": "",
        }
        hooks.answer("claude", "PreCompact", payload)
    identity = hooks.identity(str(project))
    caller = hooks.caller(identity)
    from mem0_plugin import operations

    states = [
        r
        for r in operations.get_memories(caller, None, page_size=1000, include_merged=True)["results"]
        if r["metadata"].get("type") == "session_state"
    ]
    hooks.close()
    return {
        "active session_state": sum(r["lifecycle_state"] == "active" for r in states),
        "superseded": sum(r["lifecycle_state"] == "superseded" for r in states),
        "written": len(states),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    args.repeat = 20 if args.quick else 60
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="mem0-hooks-bench-") as tmp:
        work = Path(tmp)
        figures = {**latency(args, work), **quality(), **capture(work)}
    print(f"benchmarks/hooks.py — {time.strftime('%Y-%m-%d')}, load average {load:.1f} at the start")
    for name, value in figures.items():
        if isinstance(value, tuple) and isinstance(value[0], float):
            shown = " / ".join(f"{v:.0f} ms" for v in value)
        elif isinstance(value, tuple):
            shown = f"{value[0]} of {value[1]} ({value[0] / value[1]:.2f})"
        elif isinstance(value, float):
            shown = f"{value:.0f} ms"
        else:
            shown = str(value)
        print(f"  {name:<52} {shown}")
    cli = figures["cold CLI search (median)"]
    print(
        f"  warm prompt recall is {cli / figures['prompt recall, warm (p50 / p95)'][0]:.1f}x faster than a cold CLI search"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
