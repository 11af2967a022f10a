"""Bad data, each case once: the data options that load it and the error message it must give (a regex; for the
cases of pairs, multi-label and regression, `KIND_CASES`, the whole message escaped).

`tests/core/test_data.py` checks each case through `load_task`, `tests/core/test_cli.py` through both sides'
command lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from tests.conftest import separable_rows, write_csv

Case = Callable[[Path], tuple[dict, str]]  # tmp_path -> (DataArguments fields, regex of the message)


def missing_file(tmp: Path) -> tuple[dict, str]:
    return {"train_file": str(tmp / "nope.csv")}, r"nope\.csv does not exist"


def directory_as_data_file(tmp: Path) -> tuple[dict, str]:
    (tmp / "data").mkdir()
    return {"train_file": str(tmp / "data")}, r"Data file \S+data is a directory, not a file; give the file itself\."


def broken_jsonl_line(tmp: Path) -> tuple[dict, str]:
    path = tmp / "train.jsonl"
    lines = [json.dumps({"text": text, "label": label}) for text, label in separable_rows(20)]
    lines[6] = '{"text": "a great film" "label": "positive"}'  # the comma after column 24 is missing
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"train_file": str(path)}, r"train\.jsonl, line 7, column 25: not valid JSON \(Expecting ',' delimiter\)"


def unclosed_quote_in_csv(tmp: Path) -> tuple[dict, str]:
    rows = "".join(f"{text},{label}\n" for text, label in separable_rows(20))
    path = tmp / "train.csv"
    path.write_text('text,label\na dull mess,negative\nsuperb acting,positive\n"i loved it,positive\n' + rows)
    return {"train_file": str(path)}, r"train\.csv, line 4: a quoted field that begins on this line is never closed"


def unknown_task(tmp: Path) -> tuple[dict, str]:
    return {"task": "sst3"}, r"Unknown task 'sst3'.*sst2"


def unknown_column(tmp: Path) -> tuple[dict, str]:
    train = write_csv(tmp / "train.csv", separable_rows(40))
    return {"train_file": str(train), "text_column": ["review"]}, r"no column 'review'.*columns are: text, label"


def nothing_left_after_dropping_empty_texts(tmp: Path) -> tuple[dict, str]:
    return {"train_file": str(write_csv(tmp / "t.csv", [("", "a"), (" ", "b")]))}, "every row has empty or missing text"


def label_outside_the_label_set(tmp: Path) -> tuple[dict, str]:
    rows = separable_rows(20)
    rows[4] = (rows[4][0], "neutral")
    labels = tmp / "labels.txt"
    labels.write_text("negative\npositive\n")
    options = {"train_file": str(write_csv(tmp / "t.csv", rows)), "labels_file": str(labels)}
    return options, r"row 5 has label 'neutral'"


def train_split_with_one_class(tmp: Path) -> tuple[dict, str]:
    path = write_csv(tmp / "t.csv", [(f"text {i}", "positive") for i in range(30)])
    return {"train_file": str(path)}, r"one class only \('positive'\)"


def file_that_is_not_utf8(tmp: Path) -> tuple[dict, str]:
    path = tmp / "latin1.csv"
    path.write_bytes("text,label\ncaf\xe9 cr\xe8me,positive\n".encode("latin-1"))
    return {"train_file": str(path)}, r"latin1\.csv is not UTF-8"


def empty_file(tmp: Path) -> tuple[dict, str]:
    path = tmp / "empty.csv"
    path.write_text("")
    return {"train_file": str(path)}, r"empty\.csv is empty"


def header_only_file(tmp: Path) -> tuple[dict, str]:
    path = tmp / "header.csv"
    path.write_text("text,label\n")
    return {"train_file": str(path)}, r"header\.csv has no rows"


def unquoted_separator_in_the_first_row(tmp: Path) -> tuple[dict, str]:
    path = tmp / "t.csv"  # pandas alone would read the first field as an index and shift every row
    path.write_text("text,label\ngreat, moving film,positive\n" + "".join(f"{t},{y}\n" for t, y in separable_rows(20)))
    return {
        "train_file": str(path)
    }, r"t\.csv, line 2: more fields than the header's 2 \(text, label\).*quote the fields"


def same_text_column_twice(tmp: Path) -> tuple[dict, str]:
    train = write_csv(tmp / "train.csv", separable_rows(40))
    return {"train_file": str(train), "text_column": ["text", "text"]}, "--text-column names 'text' more than once"


def validation_label_never_seen_in_train(tmp: Path) -> tuple[dict, str]:
    train = write_csv(tmp / "train.csv", separable_rows(40))
    valid = write_csv(tmp / "valid.csv", [*separable_rows(4), ("meh", "neutral")])
    labels = tmp / "labels.txt"
    labels.write_text("negative\npositive\nneutral\n")
    options = {"train_file": str(train), "validation_file": str(valid), "labels_file": str(labels)}
    return options, "validation split has label 'neutral', which the train split never has"


def unseen_string_label_without_labels_file(tmp: Path) -> tuple[dict, str]:
    train = write_csv(tmp / "train.csv", separable_rows(40))
    test = write_csv(tmp / "test.csv", [*separable_rows(4), ("meh", "neutral")])
    return {"train_file": str(train), "test_file": str(test)}, r"test\.csv: row 5 has label 'neutral'"


def missing_label(tmp: Path) -> tuple[dict, str]:
    rows = separable_rows(20)
    rows[2] = (rows[2][0], "")
    return {"train_file": str(write_csv(tmp / "t.csv", rows))}, "row 3 of the train split has no label"


def missing_label_after_a_dropped_row(tmp: Path) -> tuple[dict, str]:
    rows = separable_rows(20)
    rows[1] = ("", rows[1][1])  # dropped for its empty text; the row numbers still count it
    rows[4] = (rows[4][0], "")
    return {"train_file": str(write_csv(tmp / "t.csv", rows))}, "row 5 of the train split has no label"


def number_labels_are_names_not_ids(tmp: Path) -> tuple[dict, str]:
    rows = [(text, 1 + (label == "positive")) for text, label in separable_rows(40)]
    train = write_csv(tmp / "train.csv", rows)
    test = write_csv(tmp / "test.csv", [*rows[:4], (rows[4][0], 0)])
    message = r"test\.csv: row 5 has label 0, which is not one of the 2 classes \(1, 2\)\. Fix"
    return {"train_file": str(train), "test_file": str(test)}, message


def task_and_files_together(tmp: Path) -> tuple[dict, str]:
    train = write_csv(tmp / "train.csv", separable_rows(40))
    return {"task": "sst2", "train_file": str(train)}, "exactly one of --task NAME or --train-file"


def offline_hub_failure(tmp: Path) -> tuple[dict, str]:
    return {"task": "trec", "data_dir": str(tmp)}, r"Could not load task 'trec'.*--data-dir.*--train-file"


# --- pairs, multi-label and regression: the message is exact (re.escape), so tests may match it whole --------------


def pair_rows(n: int) -> list[tuple[str, str, float]]:
    """`n` sentence pairs with a similarity score: the first half close paraphrases (4.5), the rest unrelated (0.5)."""
    return [
        (f"{text} {i}", f"{text} again {i}" if i < n // 2 else f"something else {i}", 4.5 if i < n // 2 else 0.5)
        for i, (text, _) in enumerate(separable_rows(n))
    ]


def pair_column_that_does_not_exist(tmp: Path) -> tuple[dict, str]:
    train = write_csv(tmp / "pairs.csv", pair_rows(20), header="sentence1,sentence2,score")
    options = {
        "train_file": str(train),
        "text_column": ["sentence1"],
        "text_pair_column": "sentence3",
        "label_column": "score",
        "problem": "regression",
    }
    message = (
        f"{train} has no column 'sentence3'. Its columns are: sentence1, sentence2, score. Choose with "
        "--text-pair-column."
    )
    return options, re.escape(message)


def every_second_text_empty(tmp: Path) -> tuple[dict, str]:
    rows = [(a, "", score) for a, _, score in pair_rows(20)]
    train = write_csv(tmp / "pairs.csv", rows, header="text,second,score")
    options = {"train_file": str(train), "text_pair_column": "second", "label_column": "score", "problem": "regression"}
    return options, re.escape(f"{train}: every row has empty or missing text in column(s) text, second.")


def multi_label_row_with_an_unknown_label_name(tmp: Path) -> tuple[dict, str]:
    rows = [(text, "joy;surprise" if label == "positive" else "anger") for text, label in separable_rows(20)]
    rows[3] = (rows[3][0], "joy;love")
    labels = tmp / "labels.txt"
    labels.write_text("anger\njoy\nsurprise\n")
    train = write_csv(tmp / "t.csv", rows)
    options = {"train_file": str(train), "labels_file": str(labels), "problem": "multi_label_classification"}
    message = (
        f"{train}: row 4 has label 'love', which is not one of the 3 classes (anger, joy, surprise) nor a label id "
        "0..2. Fix the row or the labels file."
    )
    return options, re.escape(message)


def regression_label_that_is_not_a_number(tmp: Path) -> tuple[dict, str]:
    rows = pair_rows(20)
    rows[2] = (rows[2][0], rows[2][1], "n/a")
    train = write_csv(tmp / "pairs.csv", rows, header="text,text2,score")
    options = {"train_file": str(train), "text_pair_column": "text2", "label_column": "score", "problem": "regression"}
    message = (
        f"{train}: row 3 has label 'n/a', which is not a number; a regression label is a number such as 3 or 0.25. "
        "Fix the row or drop it."
    )
    return options, re.escape(message)


def label_column_that_is_not_0_or_1(tmp: Path) -> tuple[dict, str]:
    rows = [(text, int(label == "positive"), int(label != "positive")) for text, label in separable_rows(20)]
    rows[4] = (rows[4][0], 2, 0)
    train = write_csv(tmp / "wide.csv", rows, header="text,joy,anger")
    message = (
        f"{train}: column 'joy' holds '2' in data row 5; a --label-columns column holds only 0 (the label does not "
        "apply) or 1 (it does). Fix the row."
    )
    return {"train_file": str(train), "label_columns": ["joy", "anger"]}, re.escape(message)


def several_labels_per_row_without_problem(tmp: Path) -> tuple[dict, str]:
    rows = [(text, "joy" if label == "positive" else "anger") for text, label in separable_rows(20)]
    rows[0] = (rows[0][0], "joy;surprise")
    rows[3] = (rows[3][0], "anger; joy")
    train = write_csv(tmp / "t.csv", rows)
    message = (
        f"{train}: column 'label' holds several labels in a row (data rows 1, 4, such as 'joy;surprise'). For "
        "several labels per text pass --problem multi_label_classification (with --label-separator if they are not "
        "joined by ';'), or name such classes in --labels-file."
    )
    return {"train_file": str(train)}, re.escape(message)


def real_number_labels_without_problem(tmp: Path) -> tuple[dict, str]:
    rows = [(text, score) for text, _, score in pair_rows(20)]
    train = write_csv(tmp / "t.csv", rows)
    message = (
        f"{train}: column 'label' holds real numbers (data rows 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 10 more, such as "
        "'4.5'). For a number to predict pass --problem regression, or name such classes in --labels-file."
    )
    return {"train_file": str(train)}, re.escape(message)


def label_columns_with_label_column(tmp: Path) -> tuple[dict, str]:
    train = write_csv(tmp / "t.csv", separable_rows(20))
    options = {"train_file": str(train), "label_column": "label", "label_columns": ["joy", "anger"]}
    return options, re.escape("--label-columns and --label-column contradict each other")


def label_columns_for_regression(tmp: Path) -> tuple[dict, str]:
    train = write_csv(tmp / "t.csv", separable_rows(20))
    options = {"train_file": str(train), "label_columns": ["joy", "anger"], "problem": "regression"}
    message = (
        "--label-columns gives multi-label data (one 0/1 column per label), but --problem is regression; drop "
        "--problem or pass --problem multi_label_classification."
    )
    return options, re.escape(message)


def problem_that_contradicts_the_task(tmp: Path) -> tuple[dict, str]:
    options = {"task": "stsb", "problem": "multi_label_classification"}
    message = (
        "Task 'stsb' is regression, not multi_label_classification; drop --problem (a named task has its own kind)."
    )
    return options, re.escape(message)


def by_name(*cases: Case) -> dict[str, Case]:
    return {case.__name__: case for case in cases}


KIND_CASES = by_name(
    pair_column_that_does_not_exist,
    every_second_text_empty,
    multi_label_row_with_an_unknown_label_name,
    regression_label_that_is_not_a_number,
    label_column_that_is_not_0_or_1,
    several_labels_per_row_without_problem,
    real_number_labels_without_problem,
    label_columns_with_label_column,
    label_columns_for_regression,
    problem_that_contradicts_the_task,
)

CASES = (
    by_name(
        missing_file,
        directory_as_data_file,
        broken_jsonl_line,
        unclosed_quote_in_csv,
        unknown_task,
        unquoted_separator_in_the_first_row,
        unknown_column,
        nothing_left_after_dropping_empty_texts,
        label_outside_the_label_set,
        train_split_with_one_class,
        file_that_is_not_utf8,
        empty_file,
        header_only_file,
        same_text_column_twice,
        validation_label_never_seen_in_train,
        unseen_string_label_without_labels_file,
        missing_label,
        missing_label_after_a_dropped_row,
        number_labels_are_names_not_ids,
        task_and_files_together,
        offline_hub_failure,
    )
    | KIND_CASES
)


def as_flags(options: dict) -> list[str]:
    """DataArguments fields as command-line flags."""
    flags = []
    for key, value in options.items():
        flags += ["--" + key.replace("_", "-"), *(value if isinstance(value, list) else [str(value)])]
    return flags
