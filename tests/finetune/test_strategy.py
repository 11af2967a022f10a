"""`--strategy`: mirrored over two logical CPU devices matches one device; multiworker constructs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.record import read_run
from tests.conftest import ROOT

SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path

    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

    from core.record import read_run
    from core.runtime import make_strategy
    from tests.finetune.tiny import train_tiny_run

    # no ONNX file: the strategy changes how the model trains, not how its run is served
    run = read_run(train_tiny_run(Path(sys.argv[1]), Path(sys.argv[2]), strategy="mirrored", no_onnx=True))
    multiworker = make_strategy("multiworker")
    print(json.dumps({"replicas": run.hyperparameters["replicas"], "validation": run.validation,
                      "multiworker": isinstance(multiworker, tf.distribute.MultiWorkerMirroredStrategy)}))
    """
)


@pytest.mark.slow  # trains under two distribution strategies
def test_mirrored_matches_one_device_and_multiworker_constructs(base_run: Path, runs_dir: Path, train_file: Path):
    env = {**os.environ, "TF_USE_LEGACY_KERAS": "1", "PYTHONPATH": str(ROOT)}
    env.pop("TF_CONFIG", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(runs_dir / "mirrored"), str(train_file)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["replicas"] == 2
    assert result["multiworker"] is True
    single = read_run(base_run).validation["accuracy"]
    assert abs(result["validation"]["accuracy"] - single) <= 0.01
