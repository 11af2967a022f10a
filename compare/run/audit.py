"""`compare run --audit-train K`: out-of-sample probabilities of the train split, to doubt its gold labels too.

Neither compared model can judge the labels it trained on: it has fitted them. Here the train split, as the
from-scratch side sees it, is cut into K folds (stratified for a single label), and K small from-scratch models are
trained, each on the other K - 1 folds, with the side's own flags under the profile and a step budget of at most
`AUDIT_STEPS` (and no ONNX conversion), then predict their held-out fold. Each fold's run is `python -m scratch`
through `compare.run.launch.train_side` on CSV files written under `DIR/runs/audit-train/fold-<k>/`
(the fold's train rows, the task's validation split for early stopping and calibration, the held-out rows as
test), so a finished fold is reused as any run is. The cost is about K small from-scratch trainings (the report
says how long they took). The report's label audit (`compare.report.trust`) reads the result.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

import numpy as np

from compare.progress import Progress
from compare.run.launch import train_side
from compare.run.profiles import get_profile, give_way, side_data
from core import sides
from core.args import DataArguments
from core.classifier import load
from core.data import TaskData, load_task
from core.errors import UserError
from core.sides import FROM_SCRATCH
from core.tasks import MIRROR_LABEL_SEPARATOR

AUDIT_STEPS = 300  # the most optimizer steps a fold's model trains
FOLDER = "audit-train"


def check_audit(task: TaskData, folds: int) -> None:
    """Refuses `--audit-train` where there are no labels to doubt, or fewer train rows than folds."""
    if not task.kind.has_labels:
        raise UserError(
            f"--audit-train doubts class labels, but this is a {task.kind.title} task whose answers are values; "
            "leave --audit-train out."
        )
    rows = len(task.texts("train"))
    if rows < 2 * folds:
        raise UserError(f"--audit-train {folds} needs at least {2 * folds} train rows, the train split has {rows}.")


def fold_flags(args: Any) -> list[str]:
    """The from-scratch side's flags under the profile, with a step budget of at most `AUDIT_STEPS` (unless the
    user's flags bound the steps themselves) and no ONNX conversion (only these fold models' probabilities are
    wanted)."""
    user = args.extra.get(FROM_SCRATCH, [])
    class_weight = ["--class-weight", args.class_weight] if args.class_weight else []
    budget = ["--max-steps", str(AUDIT_STEPS), "--no-onnx"]
    profile = get_profile(args.profile)[FROM_SCRATCH].side_flags(True)
    return [*give_way(profile, [*budget, *user]), *class_weight, *budget, *user]  # the user's own bound wins


def fold_ids(task: TaskData, folds: int, seed: int) -> np.ndarray:
    """Each train row's fold (n,): stratified by class for a kind that stratifies, else plain K-fold, shuffled."""
    from sklearn.model_selection import KFold, StratifiedKFold

    gold = task.targets("train")
    n = len(gold)
    splitter = StratifiedKFold if task.kind.stratify() else KFold
    which = np.zeros(n, np.int64)
    rows = np.zeros(n) if splitter is KFold else gold
    for k, (_, held_out) in enumerate(splitter(folds, shuffle=True, random_state=seed).split(np.zeros(n), rows)):
        which[held_out] = k
    return which


def write_fold(folder: Path, task: TaskData, split: str, rows: np.ndarray, name: str) -> Path:
    """Rows of a split as a CSV the data loader reads back: text (text_pair) and label (names joined by
    `MIRROR_LABEL_SEPARATOR` for multi-label)."""
    texts, pairs, gold = task.texts(split), task.text_pairs(split), task.targets(split)
    path = folder / name
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", *(["text_pair"] if pairs is not None else []), "label"])
        for i in rows:
            answer = task.kind.answer(task.labels, gold[i])
            label = MIRROR_LABEL_SEPARATOR.join(answer) if isinstance(answer, list) else answer
            writer.writerow([texts[i], *([pairs[i]] if pairs is not None else []), label])
    return path


def fold_data(folder: Path, task: TaskData, which: np.ndarray, k: int, options: DataArguments) -> DataArguments:
    """The data options of fold `k`'s run: its train rows, the task's validation split, its held-out rows as test."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "labels.txt").write_text("".join(f"{label}\n" for label in task.labels), encoding="utf-8")
    validation = np.arange(len(task.texts("validation")))
    return DataArguments(
        train_file=str(write_fold(folder, task, "train", np.flatnonzero(which != k), "train.csv")),
        validation_file=str(write_fold(folder, task, "validation", validation, "validation.csv")),
        test_file=str(write_fold(folder, task, "train", np.flatnonzero(which == k), "test.csv")),
        text_pair_column="text_pair" if task.has_pairs else None,
        problem=task.kind.name,
        label_separator=MIRROR_LABEL_SEPARATOR,
        labels_file=str(folder / "labels.txt"),
        max_length=options.max_length,
        seed=options.seed,
    )


def audit_train(data: DataArguments, args: Any, folds: int, progress: Progress) -> dict[str, Any]:
    """K-fold cross-validated probabilities of small from-scratch models on the train split.

    Returns:
        `{"folds", "max_steps", "seconds", "runs", "gold", "probabilities"}`: the train split's gold answers and
        each row's probabilities from the fold model that did not train on it, in the split's row order.
    """
    start = time.perf_counter()
    options = side_data(data, FROM_SCRATCH, args.profile, data.seed)
    task = load_task(options)
    check_audit(task, folds)
    which = fold_ids(task, folds, options.seed)
    root = Path(args.output_dir) / "runs" / FOLDER
    probabilities = np.zeros((len(which), len(task.labels)), np.float32)
    texts, pairs = task.texts("train"), task.text_pairs("train")
    for k in range(folds):
        fold = fold_data(root / f"fold-{k}", task, which, k, options)
        run_dir, reused = train_side(
            sides.get(FROM_SCRATCH), fold, fold_flags(args), root / f"fold-{k}" / "run", args.retrain
        )
        held_out = np.flatnonzero(which == k)
        model = load(run_dir)
        given = [texts[i] for i in held_out], None if pairs is None else [pairs[i] for i in held_out]
        probabilities[held_out] = model.predict_proba(*given)
        progress.stage(
            "audit of train: fold %d of %d %s (%d rows held out)",
            k + 1,
            folds,
            "reused" if reused else "trained",
            len(held_out),
        )
    return {
        "folds": folds,
        "max_steps": AUDIT_STEPS,
        "seconds": time.perf_counter() - start,
        "runs": str(root),
        "gold": task.targets("train"),
        "probabilities": probabilities,
    }
