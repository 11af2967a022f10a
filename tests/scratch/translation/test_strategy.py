"""`--strategy mirrored` trains a translation model over two logical CPU devices."""

import json
import subprocess
import sys
import textwrap

from tests.conftest import ROOT
from tests.scratch.translation.conftest import tiny_command
from tests.scratch.translation.toy import toy_pairs, write_tsv

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    from scratch.translation.train import main
    main(json.loads(sys.argv[1]))
    """
)


def test_mirrored_strategy_trains_over_two_logical_cpus(tmp_path):
    train_file = write_tsv(tmp_path / "train.tsv", toy_pairs(200))
    argv = tiny_command(
        train_file, tmp_path / "run", "--strategy", "mirrored", "--max-steps", "6", "--epochs", "4",
        "--early-stopping", "loss",
    )  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(argv)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["training"]["replicas"] == 2 and record["hyperparameters"]["strategy"] == "mirrored"
    assert record["training"]["steps"] == 6 and record["training"]["stop_reason"] == "budget"
