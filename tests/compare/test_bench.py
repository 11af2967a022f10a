"""`compare bench`: the FLOP count, the figures bench.json derives, stage reuse, and the app load counter."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from compare.bench.command import model_flags, report_runs, run_stage
from compare.bench.flops import EncoderShape, forward_flops, training_flops, utilisation
from compare.bench.results import assemble, expand_lengths, training_entry
from compare.render.bench import render_markdown
from core import sides
from tests.compare.records import partial


def mm(m: int, k: int, n: int) -> int:
    """FLOPs of an (m x k) @ (k x n) product: m*n dot products of k multiply-adds."""
    return 2 * m * k * n


def hand_forward(t: int, d: int, f: int, heads: int, k: int, layers: int, pooler: bool) -> int:
    """Every matrix product of a BERT-style forward pass written out, head by head."""
    dh = d // heads
    layer = 0
    layer += 3 * mm(t, d, d)  # Q, K, V projections
    layer += heads * mm(t, dh, t)  # scores, one head at a time
    layer += heads * mm(t, t, dh)  # weights times values
    layer += mm(t, d, d)  # output projection
    layer += mm(t, d, f) + mm(t, f, d)  # feed-forward
    head = (mm(1, d, d) if pooler else 0) + mm(1, d, k)
    return layers * layer + head


def test_flop_count_matches_a_hand_count_for_a_tiny_config():
    shape = EncoderShape(layers=2, d_model=4, d_ff=8, num_labels=3, pooler=True)
    # T=3: per layer 3*96 + 2*36 + 2*36 + 96 + 192 + 192 = 912; two layers 1824; pooler 32; classifier 24.
    assert forward_flops(shape, 3) == 1880
    # T=5: per layer 3*160 + 2*100 + 2*100 + 160 + 320 + 320 = 1680; two layers 3360; pooler 32; classifier 24.
    assert forward_flops(shape, 5) == 3416
    assert training_flops(shape, [3, 5]) == 3 * (1880 + 3416)
    for t in (1, 7, 128):
        assert forward_flops(shape, t) == hand_forward(t, 4, 8, heads=2, k=3, layers=2, pooler=True)
    no_pooler = EncoderShape(layers=1, d_model=6, d_ff=10, num_labels=2, pooler=False)
    assert forward_flops(no_pooler, 4) == hand_forward(4, 6, 10, heads=3, k=2, layers=1, pooler=False)


def test_flop_count_covers_every_weight_matrix_of_the_scratch_model():
    """The weight-matrix part of the count is 2 FLOPs per weight per token: check it against the real layers."""

    from scratch.model import ModelConfig, build_classifier
    from scratch.throughput import model_shape

    config = ModelConfig(num_labels=3, vocab_size=50, num_layers=2, d_model=8, num_heads=2, d_ff=16, dropout=0.0)
    classifier = build_classifier(config)
    shape = EncoderShape.from_dict(model_shape(config, classifier))
    encoder_weights = sum(
        int(np.prod(w.shape))
        for w in classifier.weights
        if w.name.startswith("encoder_") and "kernel" in w.name  # (d, d) projections and the two (d, f) / (f, d)
    )
    head_weights = int(np.prod(classifier.get_layer("logits").kernel.shape))
    t = 6
    attention = config.num_layers * 2 * mm(t, config.d_model, t)  # scores and weighted values, all heads
    assert forward_flops(shape, t) == 2 * t * encoder_weights + attention + 2 * head_weights


def stage(real: float, pad: float, lengths: dict[str, int], batch: int, gflops: float, rss: float) -> dict:
    examples = sum(lengths.values())
    return {
        "model": "m",
        "shape": {"layers": 1, "d_model": 4, "d_ff": 8, "num_labels": 2, "pooler": False, "params": 99},
        "batch_size": batch,
        "max_length": 128,
        "tokenize": {"texts_per_s": 1000.0},
        "rounds": [
            {
                "examples": examples,
                "lengths": lengths,
                "real_positions": examples * 10,
                "pad_positions": examples * 128,
                "real_seconds": real,
                "pad_seconds": pad,
                "matmul_gflops": gflops,
            }
        ],
        "final_matmul_gflops": gflops,
        "peak_rss_mb": rss,
    }


def test_bench_figures_are_ratios_of_the_measurements_and_targets_are_judged():
    lengths = {"3": 2, "5": 2}
    training = {
        "finetune": stage(real=2.0, pad=12.0, lengths=lengths, batch=4, gflops=100.0, rss=2000.0),
        "scratch": stage(real=1.0, pad=2.0, lengths=lengths, batch=4, gflops=50.0, rss=2500.0),
    }
    predict = {
        "finetune": {"p50_ms": 14.0, "p95_ms": 20.0, "batch_per_s": 300.0, "peak_rss_mb": 900.0},
        "scratch": {"p50_ms": 4.0, "p95_ms": 6.0, "batch_per_s": 3000.0, "peak_rss_mb": 700.0},
    }
    app = {"requests": 200, "clients": 8, "errors": 0, "p50_ms": 30.0, "p95_ms": 60.0}
    bench = assemble(training, predict, app)

    flops = 3 * 2 * (hand_forward(3, 4, 8, 1, 2, 1, False) + hand_forward(5, 4, 8, 1, 2, 1, False))
    finetune = bench["finetune"]
    assert finetune["speedup_vs_pad128"] == pytest.approx(6.0)
    assert finetune["examples_per_s"] == pytest.approx(4 / 2.0)
    assert finetune["pad128_examples_per_s"] == pytest.approx(4 / 12.0)
    assert finetune["useful_flops_utilisation"] == pytest.approx(flops / 2.0 / 100e9)
    assert finetune["pad128_useful_flops_utilisation"] == pytest.approx(flops / 12.0 / 100e9)
    assert finetune["real_token_share"] == pytest.approx((2 * 3 + 2 * 5) / 40)
    assert bench["scratch"]["speedup_vs_pad128"] == pytest.approx(2.0)
    assert bench["matmul_gflops"] == pytest.approx(75.0)
    assert bench["tokenize"] == {"finetune": 1000.0, "scratch": 1000.0}
    assert bench["predict"]["scratch"]["p50_ms"] == 4.0

    met = {t["key"]: t["met"] for t in bench["targets"]}
    assert met["finetune.speedup_vs_pad128"] is True  # 6x >= 5x
    assert met["scratch.speedup_vs_pad128"] is False  # 2x < 3x
    assert met["finetune.useful_flops_utilisation"] is False
    assert met["predict.finetune.p50_ms"] is True and met["predict.scratch.p50_ms"] is False
    assert met["finetune.peak_rss_mb"] is True and met["scratch.peak_rss_mb"] is False  # 2500 > 2048
    assert met["app.errors"] is True

    page = render_markdown({**bench, "profile": "quick", "runs": {"finetune": "f", "scratch": "s"}, "environment": {}})
    assert "4 of 8 targets are not met" in page
    assert "| from-scratch examples/s vs 128-padded | >= 3 | 2 | ✗ not met |" in page
    assert "| fine-tuning peak memory (MB) | <= 3072 | 2,000 | ✓ met |" in page


def test_length_histogram_expands_to_one_length_per_text():
    assert sorted(expand_lengths({"3": 2, "10": 1}).tolist()) == [3, 3, 10]
    entry = training_entry(stage(1.0, 1.0, {"7": 3}, 3, 10.0, 1.0))
    assert entry["useful_gflop_per_example"] == pytest.approx(
        training_flops(EncoderShape(1, 4, 8, 2, False), [7]) / 1e9
    )


def test_utilisation_refuses_a_zero_rate():
    with pytest.raises(ValueError, match="positive"):
        utilisation(1.0, 1.0, 0.0)


def test_model_flags_rebuild_the_runs_model():
    finetune = {"model": {"name": "minilm"}, "hyperparameters": {"batch_size": 32, "learning_rate": 1e-4}}
    assert model_flags(sides.get("finetune"), partial(finetune)) == ["--model", "minilm", "--batch-size", "32"]
    scratch = {
        "model": {"name": "Transformer"},
        "hyperparameters": {"preset": "small", "d_model": None, "causal": True, "norm": "pre", "batch_size": 64},
    }
    assert model_flags(sides.get("scratch"), partial(scratch)) == [
        "--preset",
        "small",
        "--norm",
        "pre",
        "--causal",
        "--batch-size",
        "64",
    ]


def test_the_throughput_command_is_the_side_s_own_with_its_bench_steps():
    from compare.bench.command import bench_sides, throughput_command
    from compare.run.launch import data_flags
    from core.args import DataArguments

    assert [side.name for side in bench_sides()] == ["finetune", "scratch"]
    finetune = {"model": {"name": "minilm"}, "hyperparameters": {"batch_size": 32}}
    data = DataArguments(task="sst2")
    cmd = throughput_command(sides.get("finetune"), data, partial(finetune), "full")
    assert cmd[:3] == [sys.executable, "-m", "finetune.throughput"]
    assert cmd[3:] == [
        *data_flags(data),
        *("--model", "minilm", "--batch-size", "32"),
        *("--rounds", "6", "--steps", "6", "--warmup", "3"),  # the full bench profile's rounds; the side's steps
    ]


def test_a_finished_stage_is_reused_and_a_changed_one_measured_again(tmp_path):
    counter = tmp_path / "count"
    script = f"import json,pathlib; p=pathlib.Path({str(counter)!r}); p.write_text(p.read_text()+'x' if p.exists() else 'x'); print('log'); print(json.dumps({{'n': len(p.read_text())}}))"
    (tmp_path / "logs").mkdir()
    assert run_stage("s", [sys.executable, "-c", script], tmp_path) == {"n": 1}
    assert run_stage("s", [sys.executable, "-c", script], tmp_path) == {"n": 1}
    assert counter.read_text() == "x"
    assert run_stage("s", [sys.executable, "-c", script, "again"], tmp_path) == {"n": 2}


def test_a_failing_stage_reports_the_end_of_its_log(tmp_path):
    from core.processes import ProcessError

    (tmp_path / "logs").mkdir()
    with pytest.raises(ProcessError, match=r"failed \(exit 1\); full output in .*bad.log:\nno model here"):
        run_stage("bad", [sys.executable, "-c", "import sys; sys.exit('no model here')"], tmp_path)


def test_report_runs_come_from_results_json(tmp_path):
    from tests.compare.fakes import fake_run, tiny_data

    data = tiny_data(tmp_path / "data")
    runs = [fake_run(tmp_path / "r" / "runs" / side, side, data) for side in ("finetune", "scratch")]
    (tmp_path / "r" / "results.json").write_text(
        json.dumps({"runs": {"finetune": str(runs[0]), "scratch": str(runs[1])}})
    )
    assert report_runs(tmp_path / "r") == runs
    (tmp_path / "r" / "results.json").unlink()
    assert report_runs(tmp_path / "r") == runs  # the runs/ folder when there is no results.json


def check_timing(result: dict, rounds: int, steps: int, batch: int, max_length: int, train_rows: int) -> None:
    """What a throughput command must report, whatever the timings are."""
    assert len(result["rounds"]) == rounds
    assert result["tokenize"]["texts"] == train_rows
    for r in result["rounds"]:
        lengths = expand_lengths(r["lengths"])
        assert r["examples"] == len(lengths) <= steps * batch
        assert 1 <= lengths.min() and lengths.max() <= max_length
        # Own-length batches compute at least the real tokens; the padded copies exactly max_length per text.
        assert lengths.sum() <= r["real_positions"] <= r["pad_positions"] == r["examples"] * max_length
        assert r["real_seconds"] > 0 and r["pad_seconds"] > 0 and r["matmul_gflops"] > 0
    assert all(np.isfinite(result["warmup_loss"]))


@pytest.mark.slow
def test_scratch_throughput_times_its_real_batches_against_padded_copies(tiny_csv):
    from core.args import DataArguments
    from core.throughput import ThroughputArguments
    from scratch.args import ScratchArguments
    from scratch.throughput import measure

    data = DataArguments(train_file=str(tiny_csv), max_length=24)
    bench = ThroughputArguments(rounds=2, steps=2, warmup=1, matmul_size=64)
    result = measure(data, ScratchArguments(preset="tiny", batch_size=8), bench)
    check_timing(result, rounds=2, steps=2, batch=8, max_length=24, train_rows=162)
    assert result["shape"] == {"layers": 2, "d_model": 32, "d_ff": 64, "num_labels": 2, "pooler": False,
                               "params": result["shape"]["params"]}  # fmt: skip


@pytest.mark.slow
def test_finetune_throughput_times_its_real_batches_against_padded_copies(tmp_path, tiny_csv):
    from core.args import DataArguments
    from core.throughput import ThroughputArguments
    from finetune.args import FinetuneArguments
    from finetune.throughput import measure
    from tests.finetune.tiny import make_tiny_bert

    bert = make_tiny_bert(tmp_path / "bert")
    data = DataArguments(train_file=str(tiny_csv), max_length=32)
    bench = ThroughputArguments(rounds=2, steps=2, warmup=1, matmul_size=64)
    result = measure(data, FinetuneArguments(model=str(bert), batch_size=8), bench)
    check_timing(result, rounds=2, steps=2, batch=8, max_length=32, train_rows=162)
    assert {k: result["shape"][k] for k in ("layers", "d_model", "d_ff", "pooler")} == {
        "layers": 2, "d_model": 32, "d_ff": 64, "pooler": True,
    }  # fmt: skip


def test_load_test_counts_raised_and_answered_errors():
    """Against a stand-in app with the same `classify` endpoint: every request is counted once."""
    import gradio as gr

    from compare.bench.app_load import free_port, load_test

    def classify(text: str, model: str) -> dict:
        if text == "raise":
            raise ValueError("broken model")
        if text == "refuse":
            return {"error": "text too long"}
        return {model: {"negative": 0.4, "positive": 0.6}}

    with gr.Blocks() as demo:
        text, model, answer = gr.Textbox(), gr.Textbox(), gr.JSON()
        gr.Button().click(classify, [text, model], answer, api_name="classify")
    port = free_port()
    demo.queue().launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        result = load_test(f"http://127.0.0.1:{port}/", ["fine", "raise", "fine", "refuse"], requests=12, clients=3)
    finally:
        demo.close()
    assert (result["requests"], result["clients"]) == (12, 3)
    assert result["errors"] == 6  # requests 1, 5, 9 raise and 3, 7, 11 are refused
    assert any("text too long" in e for e in result["first_errors"])
    assert 0 < result["p50_ms"] <= result["p95_ms"]


def serving_entry(
    current: float, float_: float, int8: float | None, change: float | None, onnx_int8: float | None = None
) -> dict:
    timed = lambda p50: {"p50_ms": p50, "p95_ms": 2 * p50, "batch_per_s": 1000.0 / p50}  # noqa: E731
    entry = {
        "runtime": "onnxruntime" if onnx_int8 else "tensorflow",
        "current": timed(current),
        "float": timed(float_),
        "int8": timed(int8) if int8 else None,
        "float_vs_current_p50": float_ / current,
        "int8_vs_current_p50": int8 / current if int8 else None,
        "float_accuracy": 0.88,
        "int8_accuracy": None if change is None else 0.88 + change,
        "int8_accuracy_change": change,
        "int8_agreement": None if change is None else 0.99,
        "peak_rss_mb": 800.0,
    }
    if onnx_int8:
        entry.update(
            onnx_int8=timed(onnx_int8),
            onnx_int8_vs_current_p50=onnx_int8 / current,
            onnx_int8_accuracy=0.877,
            onnx_int8_accuracy_change=-0.003,
            onnx_int8_agreement=0.995,
        )
    return entry


def test_serving_targets_read_nested_figures_and_the_table_shows_each_path():
    lengths = {"3": 2, "5": 2}
    training = {side: stage(1.0, 6.0, lengths, 4, 100.0, 1000.0) for side in ("finetune", "scratch")}
    predict = {side: {"p50_ms": 1.0, "p95_ms": 2.0, "batch_per_s": 9.0, "peak_rss_mb": 9.0} for side in training}
    app = {"requests": 1, "clients": 1, "errors": 0, "p50_ms": 1.0, "p95_ms": 1.0}
    serving = {
        "finetune": serving_entry(current=4.0, float_=5.0, int8=3.5, change=-0.007, onnx_int8=2.0),
        "scratch": serving_entry(current=2.0, float_=1.2, int8=None, change=None),
    }
    bench = assemble(training, predict, app, serving)
    met = {t["key"]: (t["value"], t["met"]) for t in bench["targets"]}
    assert "serving.finetune.float.p50_ms" not in met  # the SavedModel is an artifact, the Classifier the path
    assert met["serving.finetune.int8.p50_ms"] == (3.5, False)
    assert met["serving.finetune.int8_accuracy_change"] == (-0.007, False)  # more than half a point lost
    assert met["serving.finetune.current.p50_ms"] == (4.0, True)
    assert met["serving.finetune.onnx_int8.p50_ms"] == (2.0, True)
    assert met["serving.finetune.onnx_int8_accuracy_change"] == (-0.003, True)
    assert met["serving.scratch.current.p50_ms"] == (2.0, False)
    without = {t["key"]: t["met"] for t in assemble(training, predict, app)["targets"]}
    assert without["serving.finetune.current.p50_ms"] is None  # not measured, not judged

    page = render_markdown({**bench, "profile": "quick", "runs": {}, "environment": {}})
    assert "| finetune | core.classifier.load (onnxruntime) | 4.0 | 8.0 | 1.00x | 250 | – |" in page
    assert "| finetune | export, int8 TFLite | 3.5 | 7.0 | 0.88x | 286 | 0.8730 |" in page
    assert "| finetune | export, int8 ONNX | 2.0 | 4.0 | 0.50x | 500 | 0.8770 |" in page
    assert "| scratch | export, float SavedModel | 1.2 | 2.4 | 0.60x | 833 | 0.8800 |" in page
    assert "finetune export, int8 TFLite -0.70 points (99.0% same labels)" in page
    assert "finetune export, int8 ONNX -0.30 points (99.5% same labels)" in page
    assert "| scratch | export, int8" not in page


def test_serving_paths_take_turns_and_each_is_timed_on_every_sample():
    from compare.bench.serving import ROUNDS, time_single_texts

    calls: list[str] = []
    paths = {name: (lambda texts, name=name: calls.append(name)) for name in ("current", "float", "int8")}
    timed = time_single_texts(paths, ["a", "b", "c"], samples=8)
    assert set(timed) == set(paths) and all(t["p95_ms"] >= t["p50_ms"] >= 0 for t in timed.values())
    measured = calls[3:]  # after one warm-up call each
    # round by round, each path's turn: one untimed call after the switch, then its share of the 8 samples
    assert measured == [name for _ in range(ROUNDS) for name in paths for _ in range(1 + 8 // ROUNDS)]
    one = {name: (lambda texts: None) for name in ("current", "int8")}
    assert set(time_single_texts(one, ["a"], samples=ROUNDS - 1)) == set(one)  # fewer samples than rounds


def test_an_export_of_the_same_run_is_reused_and_one_of_another_run_redone(tmp_path, monkeypatch):
    import compare.bench.command as command
    from tests.compare.fakes import fake_run, tiny_data

    run = fake_run(tmp_path / "runs" / "scratch", "scratch", tiny_data(tmp_path / "data"))
    created = json.loads((run / "run.json").read_text())["created"]
    export_dir = tmp_path / "bench" / "exports" / "scratch"
    export_dir.mkdir(parents=True)
    (tmp_path / "bench" / "logs").mkdir()
    commands: list[list[str]] = []
    monkeypatch.setattr(command, "run_command", lambda cmd, log: commands.append(cmd))

    record = {"run": str(run.resolve()), "run_created": created}
    (export_dir / "export.json").write_text(json.dumps(record))
    assert command.export_run(sides.get("scratch"), run, tmp_path / "bench") == export_dir
    assert commands == []
    (export_dir / "export.json").write_text(json.dumps({**record, "run_created": "2000-01-01T00:00:00+00:00"}))
    command.export_run(sides.get("scratch"), run, tmp_path / "bench")
    assert commands == [
        [sys.executable, "-m", "scratch", "export", str(run), "--output-dir", str(export_dir), "--overwrite"]
    ]


def test_batched_rates_cover_every_text_once_per_path():
    from compare.bench.serving import batch_rates

    seen: dict[str, list[str]] = {"a": [], "b": []}

    def path(name):
        def predict(texts):
            seen[name].extend(texts)
            return np.full((len(texts), 2), 0.5)

        return predict

    texts = [f"text {i}" * (i % 5 + 1) for i in range(30)]
    rates = batch_rates({name: path(name) for name in seen}, texts)
    assert set(rates) == {"a", "b"} and all(rate > 0 for rate in rates.values())
    for name in seen:
        assert sorted(seen[name][8:]) == sorted(texts)  # after the warm-up call of 8 texts
