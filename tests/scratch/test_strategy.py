import json
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT, separable_rows, write_csv
from tests.scratch.tiny import tiny_argv

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    from scratch.__main__ import main
    main(json.loads(sys.argv[1]))
    """
)


@pytest.mark.slow  # trains under two distribution strategies
def test_mirrored_strategy_trains_over_two_logical_cpus(tmp_path):
    train_file = write_csv(tmp_path / "train.csv", separable_rows(100))
    argv = tiny_argv(tmp_path / "run", train_file, strategy="mirrored", max_steps=6, epochs=2)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(argv)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["hyperparameters"]["replicas"] == 2 and record["hyperparameters"]["strategy"] == "mirrored"
    assert record["hyperparameters"]["max_steps"] == 6 and 1 <= record["training"]["steps"] <= 6
