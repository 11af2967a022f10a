"""`--strategy multiworker` for real: two worker processes on loopback ports train each side's tiny model
(and the from-scratch side's tiny translation model, whose only distributed-training test this is: two replicas in
sync, the chief alone writing).

Both workers train; the chief (worker 0) writes the one finished run, the other worker writes into a
temporary directory that it removes.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from core.record import read_run
from core.translator import read_translation_run
from tests.conftest import ROOT, separable_rows, write_csv
from tests.scratch.translation.toy import toy_pairs, write_tsv

pytestmark = pytest.mark.slow  # two worker processes train each side


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def side_flags(side: str, tmp_path: Path) -> list[str]:
    if side == "finetune":
        from tests.finetune.tiny import make_tiny_bert

        model = make_tiny_bert(tmp_path / "tiny-bert")
        return ["--model", str(model), "--epochs", "1", "--batch-size", "8", "--learning-rate", "5e-3", "--no-onnx"]
    if side == "translation":
        train_file = write_tsv(tmp_path / "train.tsv", toy_pairs(200))
        return [
            "--train-file", str(train_file), "--source-column", "pt", "--target-column", "en", "--preset", "tiny",
            "--epochs", "1", "--max-steps", "2", "--early-stopping", "loss",
        ]  # fmt: skip
    return ["--preset", "tiny", "--epochs", "2", "--batch-size", "16", "--warmup-steps", "5", "--max-steps", "12"] + [
        "--no-onnx"  # the export is a single process's; these runs show the training
    ]


@pytest.mark.parametrize("side", ["finetune", "scratch", "translation"])
def test_two_workers_train_and_the_chief_writes_one_run(side: str, tmp_path: Path) -> None:
    command = "scratch" if side == "translation" else side
    data = (
        [] if side == "translation" else ["--train-file", str(write_csv(tmp_path / "train.csv", separable_rows(100)))]
    )
    output = tmp_path / "run"
    argv = [
        sys.executable, "-m", command, *data, "--output-dir", str(output),
        "--max-length", "16", "--seed", "0", "--strategy", "multiworker", *side_flags(side, tmp_path),
    ]  # fmt: skip
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(2)]}
    scratch_space = tmp_path / "tmp"
    scratch_space.mkdir()
    workers = []
    for index in range(2):
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "TMPDIR": str(scratch_space),
            "TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}}),
        }
        log = (tmp_path / f"worker{index}.log").open("w")
        workers.append((subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT), log))
    try:
        codes = [process.wait(timeout=900) for process, _ in workers]
    finally:
        for process, log in workers:
            if process.poll() is None:
                process.kill()
            log.close()
    logs = [(tmp_path / f"worker{i}.log").read_text(errors="replace")[-3000:] for i in range(2)]
    assert codes == [0, 0], logs

    if side == "translation":
        run = read_translation_run(output)
        assert run.hyperparameters["strategy"] == "multiworker" and run.hyperparameters["replicas"] == 2
        assert run.training.steps == 2 and (output / "saved_model").is_dir()
    else:
        run = read_run(output)
        assert run.hyperparameters["strategy"] == "multiworker"
        assert run.hyperparameters["replicas"] == 2
        assert run.training.epochs_run >= 1 and run.validation["accuracy"] > 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("run")) == ["run"]  # no .partial
    assert not [p for p in scratch_space.iterdir() if p.name.startswith("textcls-worker-")]  # removed by worker 1
