from __future__ import annotations

from pathlib import Path

import pytest

from compare.run.command import CompareRunArguments, run_dirs
from compare.run.profiles import PROFILES, side_data
from core.args import DataArguments


def test_profiles_give_each_side_its_subset_unless_the_user_chose_one() -> None:
    data = DataArguments(task="sst2", seed=42)
    assert side_data(data, "finetune", "quick", 43).max_train_samples == 12000
    assert side_data(data, "scratch", "quick", 43).max_train_samples is None
    assert side_data(data, "scratch", "quick", 43).seed == 43
    assert side_data(data, "scratch", "full", 42).max_train_samples is None
    chosen = DataArguments(task="sst2", max_train_samples=500)
    assert side_data(chosen, "finetune", "quick", 42).max_train_samples == 500
    assert PROFILES["full"]["finetune"].flags == () and PROFILES["full"]["scratch"].flags == ()


def test_extra_flags_follow_the_profile() -> None:
    args = CompareRunArguments(output_dir="x", finetune_args="--epochs 3 --batch-size 8", scratch_args="--preset tiny")
    assert args.side_flags("finetune") == ["--epochs", "1", "--epochs", "3", "--batch-size", "8"]
    assert args.side_flags("scratch") == ["--epochs", "1", "--preset", "tiny"]
    with pytest.raises(ValueError, match="Unknown profile 'fast'"):
        CompareRunArguments(output_dir="x", profile="fast")
    with pytest.raises(ValueError, match="--scratch-args cannot be split"):
        CompareRunArguments(output_dir="x", scratch_args='--preset "tiny')


def test_run_directories_name_seeds_only_when_there_are_several(tmp_path: Path) -> None:
    assert run_dirs(tmp_path, [42]) == {
        ("finetune", 42): tmp_path / "runs/finetune",
        ("scratch", 42): tmp_path / "runs/scratch",
    }
    dirs = run_dirs(tmp_path, [42, 43])
    assert dirs[("scratch", 43)] == tmp_path / "runs/scratch-seed43" and len(dirs) == 4


def test_tensorflow_notices_stay_quiet_unless_verbose(capsys) -> None:
    """The level `python -m compare` sets before TensorFlow loads; core.processes hands it to the sides."""
    import os
    import subprocess
    import sys

    from compare.__main__ import main

    probe = "import os, compare; print(os.environ['TF_CPP_MIN_LOG_LEVEL'])"
    env = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
    for flags, level in (([], "2"), (["report", "--verbose"], "0")):
        done = subprocess.run([sys.executable, "-c", probe, *flags], capture_output=True, text=True, env=env)
        assert done.stdout.strip() == level, done.stderr[-500:]
    assert main(["--verbose"]) == 2 and "usage: python -m compare" in capsys.readouterr().out
