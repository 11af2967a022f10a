"""Every trial's flags are accepted by its side's own argument classes and arrive with the sampled values."""

from __future__ import annotations

import dataclasses

import pytest

from compare.tune.space import sample_trials, search_space, trial_flags, tuned_sides
from core import sides


@pytest.mark.parametrize("side", tuned_sides())
def test_the_side_parses_every_trial_into_the_sampled_values(side):
    from core.args import DataArguments, RunArguments
    from core.parsing import parse_args

    arguments = sides.get(side).options()
    assert set(search_space(side)) <= {field.name for field in dataclasses.fields(arguments)}
    for trial in sample_trials(side, 5, seed=11):
        argv = ["--task", "sst2", "--output-dir", "unused", *trial_flags(trial)]
        *_, parsed = parse_args((DataArguments, RunArguments, arguments), argv)
        assert {key: getattr(parsed, key) for key in trial} == trial
