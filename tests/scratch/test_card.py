from core.rundir import read_run_json
from scratch.card import render_card


def test_card_states_the_run_s_figures(tiny_run):
    run = read_run_json(tiny_run)
    card = (tiny_run / "README.md").read_text(encoding="utf-8")
    assert card == render_card(run)
    assert card.startswith(f"# {run['model']['name']}")
    assert f"Validation accuracy {run['validation']['accuracy']:.4f}" in card
    assert f"Parameters: {run['model']['params']:,}" in card
    assert (
        card.count("\n| ") - card.count("\n| ---")
        == len(run["training"]["history"]) + 1 + len(run["hyperparameters"]) + 1
    )
