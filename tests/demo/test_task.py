"""What the app reads of a run: one text or a pair and the columns they came from, the kind, the value range."""

from __future__ import annotations

from core import kinds
from demo.task import Task, page_task, task_of
from tests.demo.fakes import FakeClassifier, FakeMultiLabel, FakeRegression, record_of, run_record


def test_a_pair_run_names_the_columns_its_texts_came_from() -> None:
    task = task_of(FakeMultiLabel("finetune", pairs=True).record)
    multi_label = kinds.get("multi_label_classification")
    assert task == Task("pairs.csv", multi_label, "sentence1", "sentence2", None)
    assert task.has_pairs and task.signature == (multi_label, True)
    assert task.describe() == "multi-label classification on pairs of texts (sentence1, sentence2)"


def test_a_named_task_s_text_column_is_its_mirror_s_and_the_range_is_read() -> None:
    body = run_record("scratch", [], "regression", value_range=[0.0, 5.0])
    body["data"]["text_pair_column"] = "sentence2"  # as `compare run --task stsb` records it: no column options
    task = task_of(record_of(body))
    assert (task.name, task.text_column, task.pair_column, task.value_range) == (
        "stsb",
        "sentence1",
        "sentence2",
        (0.0, 5.0),
    )
    assert task_of(FakeRegression("scratch", value_range=None).record).value_range is None


def test_a_run_without_the_newer_keys_is_single_label_of_single_texts() -> None:
    body = run_record("scratch")
    for key in ("problem_type", "headline_metric", "text_pair_column"):
        del body["data"][key]
    body["data"]["options"]["text_column"] = ["title", "body"]
    task = task_of(record_of(body))
    assert task == Task("sst2", kinds.get("single_label_classification"), "title + body", None, None)
    assert task.describe() == "single-label classification"


def test_the_page_s_task_is_its_first_model_s() -> None:
    assert page_task({}) == Task()
    models = {"finetune": FakeClassifier("finetune", pairs=True), "scratch": FakeClassifier("scratch")}
    assert page_task(models).has_pairs
