"""Every trial's flags are accepted by its side's own argument classes and arrive with the sampled values."""

from __future__ import annotations

import dataclasses
import importlib

import pytest

from compare.tune.space import SEARCH_SPACE, sample_trials, trial_flags

ARGUMENTS = {"finetune": ("finetune.args", "FinetuneArguments"), "scratch": ("scratch.args", "ScratchArguments")}


@pytest.mark.parametrize("side", sorted(SEARCH_SPACE))
def test_the_side_parses_every_trial_into_the_sampled_values(side):
    from core.args import DataArguments, RunArguments, parse_args

    module, name = ARGUMENTS[side]
    arguments = getattr(importlib.import_module(module), name)
    assert set(SEARCH_SPACE[side]) <= {field.name for field in dataclasses.fields(arguments)}
    for trial in sample_trials(side, 5, seed=11):
        argv = ["--task", "sst2", "--output-dir", "unused", *trial_flags(trial)]
        *_, parsed = parse_args((DataArguments, RunArguments, arguments), argv)
        assert {key: getattr(parsed, key) for key in trial} == trial
