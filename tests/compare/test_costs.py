"""What a model cost: its steps and passes over the training data, from its own record."""

from __future__ import annotations

from compare.render.tables import cost
from compare.scoring.costs import passes, run_costs
from tests.compare.records import partial


def record(history: list[dict], train_rows: int = 5174) -> dict:
    training = {"seconds": 290.0, "epochs_run": len(history), "steps": 100 * len(history), "history": history}
    return partial({"model": {"params": 1000}, "data": {"splits": {"train": train_rows}}, "training": training})


def test_passes_count_the_examples_every_period_saw_over_the_train_split(tmp_path):
    # three 100-step periods of 32-example batches over 5,174 rows: the second and last cross an epoch's end
    run = record([{"examples": 3200}, {"examples": 3030}, {"examples": 3200}])
    costs = run_costs(run, tmp_path)
    assert costs["steps"] == 300 and costs["epochs"] == 3
    assert costs["passes"] == (3200 + 3030 + 3200) / 5174


def test_a_record_without_example_counts_has_no_passes():
    assert passes(record([{"examples": 3200}, {"loss": 0.5}])) is None
    assert passes(record([])) is None


def test_the_cost_table_gives_steps_and_passes():
    models = {
        "finetune": {
            "params": 22_700_000,
            "disk_bytes": 183_000_000,
            "train_rows": 5174,
            "steps": 500,
            "passes": 3.093,
            "train_seconds": 290.0,
            "latency_p50_ms": 4.7,
            "latency_p95_ms": 6.5,
            "throughput_per_s": 192.0,
        }
    }
    table = cost({"models": models})
    column = table.header.index("steps (passes over train)")
    assert table.rows[0][column] == "500 (3.1)"
