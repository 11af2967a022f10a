"""One `compare run --tune` process for the multi-process tests, its sides' commands replaced by a stand-in.

`python -m tests.compare.tune.sweep_worker CONFIG` with CONFIG a JSON object: `train_file`, `validation_file`,
`test_file` (the data, written by the test), `output_dir`, `storage`, `tune` (N), `seconds` (how long each stand-in
training takes), `grace` (seconds of silence after which a trial is retried) and `trainings` (a file where each
stand-in training appends a line when it starts and when it ends: this process, the run directory).

The stand-in writes a finished run whose validation accuracy follows the trial's learning rate, as
`tests/compare/test_run_tuning.py`'s does; the report loads the runs through a stand-in loader. The process exits
with `compare run`'s status.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path

from compare.run import launch
from compare.run.command import CompareRunArguments, run_comparison
from compare.scoring.statistics import StatisticsArguments
from compare.tune import study as sweeps
from core.args import DataArguments
from core.cli import setup_logging
from core.errors import UserError
from tests.compare.fakes import fake_loader, fake_run


def log(path: str, **event) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"pid": os.getpid(), **event}) + "\n")


def main(config: dict) -> int:
    sweeps.POLL_SECONDS, sweeps.HEARTBEAT_SECONDS, sweeps.GRACE_SECONDS = 0.3, 1, config["grace"]
    data = DataArguments(
        train_file=config["train_file"], validation_file=config["validation_file"], test_file=config["test_file"]
    )

    def train(cmd: list[str], log_file: Path | None = None, **options) -> None:
        side, run_dir = cmd[2], Path(cmd[cmd.index("--output-dir") + 1])
        flags = cmd[cmd.index("--overwrite") + 1 :]
        given = dict(zip(flags[::2], flags[1::2]))
        log(config["trainings"], event="start", run=str(run_dir))
        time.sleep(config["seconds"])
        accuracy = 0.9 - 0.1 * abs(math.log10(float(given.get("--learning-rate", "1e-3")) / 1e-3))
        seed = int(cmd[cmd.index("--seed") + 1])
        shutil.rmtree(run_dir, ignore_errors=True)
        fake_run(run_dir, side, dataclasses.replace(data, seed=seed), validation={"accuracy": accuracy})
        log(config["trainings"], event="end", run=str(run_dir))

    launch.run_command = train
    names = [f"trial-{i:03d}" for i in range(config["tune"] + 4)]
    loader = fake_loader({name: 0.7 for name in [*names, "finetune"]}, data)
    args = CompareRunArguments(
        output_dir=config["output_dir"],
        tune=config["tune"],
        tune_sides="scratch",
        tune_storage=config["storage"],
        scratch_args="--preset tiny",
    )
    setup_logging(False)
    try:
        results = run_comparison(data, args, StatisticsArguments(bootstrap_resamples=100), loader=loader)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    log(config["trainings"], event="report" if results else "no report")
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
