from core.record import read_run
from scratch.card import render_card


def test_card_states_the_run_s_figures(tiny_run):
    run = read_run(tiny_run)
    card = (tiny_run / "README.md").read_text(encoding="utf-8")
    assert card == render_card(run)
    assert card.startswith(f"# {run.model.name}")
    assert f"Accuracy {run.validation['accuracy']:.4f}" in card
    assert f"Parameters: {run.model.params:,}" in card
    assert run.data.fingerprints["train"] in card
    rows = [line for line in card.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    # split table, history table and hyperparameter table, each with its header row
    assert len(rows) == (1 + len(run.data.splits)) + (1 + len(run.training.history)) + (1 + len(run.hyperparameters))
    for row in run.training.history:
        assert f"| {row['epoch']} | {row['loss']:.4f} |" in card and f"| {row['train_seconds']:.1f} |" in card


def test_card_says_when_the_token_vectors_came_from_the_checkpoint(tiny_run):
    run = read_run(tiny_run)
    assert "(no pretraining)" in render_card(run) and "MiniLM" not in render_card(run)
    run.model.config["embeddings"] = "minilm"
    card = render_card(run)
    assert "(no pretraining)" not in card
    assert "except its token vectors: the packaged all-MiniLM-L6-v2's on their first d_model principal components" in (
        card
    )
