"""`python -m compare bench <data options> --output-dir DIR [--profile quick|full] [--report DIR | --runs RUN ...]`.

Measures, each stage in its own process (which is also how its peak memory is told apart):

1. training throughput of each side's real pipeline against the same model fed batches padded to
   `--max-length`, with useful-FLOPs utilisation and tokenizer speed (`python -m <command>.throughput` of
   each side `core.sides` benchmarks: `finetune.throughput`, `scratch.throughput`; compare never imports
   training code);
2. prediction through each run's Classifier (`python -m compare.bench.predict`);
3. each run's serving export (`python -m <command> export`, into `DIR/exports/<side>`), and its float and int8
   paths timed against the Classifier in one process (`python -m compare.bench.serving`);
4. the app under load (`app.py` on a free loopback port, concurrent gradio clients).

Prediction and app load use the runs of `--report`/`--runs`; without them a quick pair is trained first
into `DIR/runs`. Writes `bench.json` (keys in docs/formats.md) and `bench.md`, with each stage's log in `DIR/logs`.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from compare.bench.app_load import measure_app
from compare.bench.arguments import BENCH_PROFILES, BenchArguments
from compare.bench.results import assemble
from compare.progress import Progress
from compare.render.bench import render_markdown
from compare.report.locate import report_run_dirs
from compare.run.launch import data_flags, train_side
from compare.run.profiles import side_data
from core import sides
from core.args import DataArguments
from core.classifier import find_runs
from core.data import load_task
from core.errors import WorkFailed
from core.processes import run_command
from core.record import RunRecord, read_run
from core.rundir import RunError, environment, write_json

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1


def bench_sides() -> list[sides.Side]:
    """The sides `compare bench` measures: those `core.sides` says how to time."""
    return [side for side in sides.classifiers() if side.bench]


def main(argv: list[str] | None = None) -> int:
    """`python -m compare bench ...` (`compare.commands`)."""
    from compare.commands import BENCH

    return BENCH.main(argv)


def bench(data: DataArguments, args: BenchArguments) -> None:
    """`compare bench`'s work; a stage that fails or times out is a failure while working (exit status 1)."""
    for chatty in ("httpx", "gradio_client"):  # a line per request of the load test otherwise
        logging.getLogger(chatty).setLevel(logging.WARNING)
    try:
        run_bench(data, args)
    except TimeoutError as error:
        raise WorkFailed(f"compare bench: {error}") from error


class StageError(WorkFailed):
    """A measuring process finished without printing its result."""


def run_bench(data: DataArguments, args: BenchArguments, progress: Progress | None = None) -> dict:
    progress = progress or Progress()
    output_dir = Path(args.output_dir)
    (output_dir / "logs").mkdir(parents=True, exist_ok=True)
    profile = BENCH_PROFILES[args.profile]
    runs = resolve_runs(data, args, output_dir)
    records = {side: read_run(path) for side, path in runs.items()}
    progress.stage("measuring runs %s", ", ".join(f"{side}: {path}" for side, path in runs.items()))

    training = {}
    for side in bench_sides():
        cmd = throughput_command(side, data, records[side.name], args.profile)
        training[side.name] = run_stage(f"train-{side.name}", cmd, output_dir)
        progress.stage("%s training throughput measured", side.name)

    texts = load_task(data).texts("test")
    predict = {}
    texts_file = output_dir / "stages" / "test-texts.json"
    texts_file.parent.mkdir(parents=True, exist_ok=True)
    write_json(texts_file, texts)
    for name in runs:
        cmd = [sys.executable, "-m", "compare.bench.predict", "--run", str(runs[name]), "--texts-file", str(texts_file)]
        predict[name] = run_stage(f"predict-{name}", [*cmd, "--samples", str(profile.latency_samples)], output_dir)
        progress.stage("%s prediction measured", name)

    serving = {}
    for side in bench_sides():
        export_dir = export_run(side, runs[side.name], output_dir)
        cmd = [
            sys.executable,
            "-m",
            "compare.bench.serving",
            "--run",
            str(runs[side.name]),
            "--export",
            str(export_dir),
        ]
        cmd += ["--texts-file", str(texts_file), "--samples", str(profile.latency_samples)]
        serving[side.name] = run_stage(f"serve-{side.name}", cmd, output_dir)
        progress.stage("%s serving export measured", side.name)

    app = measure_app(list(runs.values()), texts, output_dir / "logs" / "app.log", profile.requests, profile.clients)
    progress.stage("app measured: %d errors in %d requests", app["errors"], app["requests"])

    bench = assemble(training, predict, app, serving)
    bench = {
        "schema_version": SCHEMA_VERSION,
        **bench,
        "profile": args.profile,
        "runs": {side: str(path) for side, path in runs.items()},
        "data": data.to_dict(),
        "environment": environment(),
    }
    write_json(output_dir / "bench.json", bench)
    (output_dir / "bench.md").write_text(render_markdown(bench), encoding="utf-8")
    progress.stage("bench written: %s", output_dir / "bench.md")
    return bench


def resolve_runs(data: DataArguments, args: BenchArguments, output_dir: Path) -> dict[str, Path]:
    """One run per side: from --runs, from --report's results.json (or its runs/ folder), or trained now."""
    if args.runs:
        paths = find_runs(args.runs)
    elif args.report:
        paths = report_runs(Path(args.report))
    else:
        paths = [
            train_side(
                side,
                side_data(data, side.name, "quick", data.seed),
                side.profiles["quick"].side_flags(),
                output_dir / "runs" / side.name,
            )[0]
            for side in bench_sides()
        ]
    by_side: dict[str, Path] = {}
    for path in paths:
        by_side.setdefault(sides.of_run(read_run(path)).name, Path(path))
    missing = [side.name for side in bench_sides() if side.name not in by_side]
    if missing:
        raise RunError(f"No {' or '.join(missing)} run among {', '.join(map(str, paths))}; give one run of each side.")
    return {side.name: by_side[side.name] for side in bench_sides()}


def report_runs(report: Path) -> list[Path]:
    """The runs of a report directory (see `compare.report.locate`); refuses a directory without any."""
    paths = report_run_dirs(report)
    if not paths:
        raise RunError(
            f"{report} is not a report directory with runs: it has no results.json naming runs and no runs/ folder."
        )
    return paths


def model_flags(side: sides.Side, run: RunRecord) -> list[str]:
    """The side's command-line flags that rebuild the run's model and batch size."""
    hyper, bench = run.hyperparameters, side.bench
    flags = [bench.model_flag, run.model.name] if bench.model_flag else []
    for key in bench.model_options:
        value = hyper.get(key)
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        flags += [flag] if value is True else [flag, str(value)]
    return flags


def throughput_command(side: sides.Side, data: DataArguments, run: dict, profile: str) -> list[str]:
    steps, warmup = side.bench.steps[profile]
    timing = ["--rounds", str(BENCH_PROFILES[profile].rounds), "--steps", str(steps), "--warmup", str(warmup)]
    return [sys.executable, "-m", f"{side.command}.throughput", *data_flags(data), *model_flags(side, run), *timing]


def export_run(side: sides.Side, run_dir: Path, output_dir: Path) -> Path:
    """`DIR/exports/<side>`: the run's serving export, written by the side's command unless already there.

    An export is reused when its export.json names the same run directory and the run's `created` time.
    """
    export_dir = output_dir / "exports" / side.name
    record_file = export_dir / "export.json"
    if record_file.is_file():
        export = json.loads(record_file.read_text(encoding="utf-8"))
        if export.get("run") == str(Path(run_dir).resolve()) and export.get("run_created") == read_run(run_dir).created:
            logger.info("Stage export-%s: reusing the export in %s", side.name, export_dir)
            return export_dir
    log_file = output_dir / "logs" / f"export-{side.name}.log"
    cmd = [sys.executable, "-m", side.command, "export", str(run_dir), "--output-dir", str(export_dir), "--overwrite"]
    logger.info("Stage export-%s: %s (log: %s)", side.name, " ".join(cmd[1:]), log_file)
    run_command(cmd, log=log_file)
    return export_dir


def run_stage(name: str, cmd: list[str], output_dir: Path) -> dict:
    """Runs one measuring process and returns the JSON object it printed last; its stderr goes to logs/<name>.log.

    Raises:
        core.processes.ProcessError: the process failed (the message carries its error line or log's end).

    The result is kept in `stages/<name>.json` with the command, so an interrupted benchmark run again with
    the same options measures only the stages it had not finished.
    """
    log_file = output_dir / "logs" / f"{name}.log"
    kept = output_dir / "stages" / f"{name}.json"
    if kept.is_file():
        cached = json.loads(kept.read_text(encoding="utf-8"))
        if cached.get("command") == cmd[1:]:
            logger.info("Stage %s: reusing the measurement in %s", name, kept)
            return cached["result"]
    logger.info("Stage %s: %s (log: %s)", name, " ".join(cmd[1:]), log_file)
    stdout = run_command(cmd, log=log_file, capture_stdout=True)
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise StageError(f"stage {name} printed no result; see {log_file}.")
    result = json.loads(lines[-1])
    kept.parent.mkdir(parents=True, exist_ok=True)
    write_json(kept, {"schema_version": 1, "command": cmd[1:], "result": result})
    return result


if __name__ == "__main__":
    sys.exit(main())
