"""`python -m compare curve <data options> --output-dir DIR [--sizes 500,2000,8000] [--seeds N]`: a learning curve.

Both sides are trained at each train size (the data layer's seeded `--max-train-samples` subset, stratified
for a single label; seed S draws its own subset and initialisation) and every run is scored on the same full
test split through `core.classifier.load`, in the task's two scores (`Kind.scores`: accuracy and
macro-F1, macro- and micro-F1, or Spearman and Pearson; the first is the curve's). Runs go to `DIR/runs/<side>-n<size>-seed<S>`, each run's test scores
to `<run>.score.json` beside it; both are reused when the command runs again with the same options, so an
interrupted curve resumes where it stopped. DIR receives `curve.json`, `curve.md`, `curve.html` and
`curve.png`. Pointing DIR at a report directory puts the curve beside the report, where the app shows it.
With `--distill`, each size's fine-tuned run also teaches a from-scratch student (`compare.run.distill`), whose
points are the curve's third line, side `scratch-distilled`, runs `DIR/runs/scratch-distilled-n<size>-seed<S>`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from compare.curve.arguments import CurveArguments
from compare.curve.points import catch_up_size
from compare.kinds import reported
from compare.progress import Progress
from compare.render.curve import FIGURE, curve_figure, render_html, render_markdown
from compare.report.runs import check_compatible, gold, read_runs
from compare.run.distill import STUDENT, TEACHER, train_student
from compare.run.launch import train_side
from compare.run.profiles import side_data
from compare.scoring import wording
from compare.scoring.scores import decide
from compare.scoring.timing import outputs
from compare.tune.study import run_grid
from core import kinds, sides
from core.args import DataArguments
from core.classifier import Classifier, load
from core.data import DataError, TaskData, load_task
from core.kinds import Kind
from core.record import read_run
from core.rundir import RunError, environment, write_json

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
SPLIT = "test"
STORAGE_FILE = "curve.journal"  # the grid studies of the curve's runs, without --storage

Loader = Callable[[Path], Classifier]


def main(argv: list[str] | None = None) -> int:
    """`python -m compare curve ...` (`compare.commands`)."""
    from compare.commands import CURVE

    return CURVE.main(argv)


@dataclass(frozen=True)
class ScoredSplit:
    """The split every point is scored on, read once per command."""

    texts: list[str]
    pairs: list[str] | None
    gold: np.ndarray
    num_labels: int
    kind: Kind
    fingerprint: str
    source: str

    @classmethod
    def of(cls, task: TaskData) -> ScoredSplit:
        kind = kinds.get(task.problem_type)
        return cls(
            task.texts(SPLIT),
            task.text_pairs(SPLIT),
            gold(task, SPLIT, kind),
            len(task.labels),
            kind,
            task.fingerprints[SPLIT],
            task.source,
        )


def run_path(output_dir: Path, side: str, size: int, seed: int) -> Path:
    return output_dir / "runs" / f"{side}-n{size}-seed{seed}"


def score_path(run_dir: Path) -> Path:
    return run_dir.with_name(run_dir.name + ".score.json")


def build_curve(
    data: DataArguments, args: CurveArguments, progress: Progress | None = None, loader: Loader = load
) -> dict | None:
    """Trains (or reuses) every point, scores it on the full test split, and writes the curve; returns curve.json
    (None when another process sharing the curve's studies finished the last training and writes it).

    `loader` turns a run directory into a Classifier; tests replace it.
    """
    progress = progress or Progress()
    if data.max_train_samples is not None:
        raise DataError("compare curve sets the train size itself from --sizes; leave out --max-train-samples.")
    output_dir, sizes = Path(args.output_dir), args.size_list()
    task = load_task(data)
    check_sizes(sizes, len(task.splits["train"]))
    seeds = [data.seed + i for i in range(args.seeds)]
    if task.carved and len(seeds) > 1:
        raise DataError(
            f"{task.source} has no {' or '.join(task.carved)} split, so each seed would hold out different "
            f"examples and the points would not be scored on the same {SPLIT} split. Pass "
            + " and ".join(f"--{name}-file" for name in task.carved)
            + ", or use --seeds 1."
        )
    test = ScoredSplit.of(task)
    progress.stage("curve: sizes %s, seeds %s, %d test examples", sizes, seeds, len(test.texts))
    names = [*sides.classifier_names(), *([STUDENT] if args.distill else [])]
    reused = {}
    if not train_points(data, args, task, sizes, seeds, reused, progress):
        progress.stage("the process that finished the last training writes the curve: %s", output_dir / "curve.html")
        return None
    points, paths = [], []
    for size in sizes:
        for seed in seeds:
            for side in names:
                path = run_path(output_dir, side, size, seed)
                point = score_point(path, test, side, size, seed, args.retrain or not reused.get(path, True), loader)
                progress.stage(
                    "%s at %d examples (seed %d): test %s %.4f",
                    side,
                    size,
                    seed,
                    wording.name(test.kind.headline),
                    point[test.kind.headline],
                )
                points.append(point)
                paths.append(path)
    check_compatible(read_runs(paths), SPLIT)
    curve = {
        "schema_version": SCHEMA_VERSION,
        "split": SPLIT,
        "source": task.source,
        "problem_type": test.kind.name,
        "metric": test.kind.headline,
        "sizes": sizes,
        "seeds": seeds,
        "profile": args.profile,
        "points": points,
        "catch_up_size": catch_up_size(points, scores=test.kind.scores),
        "environment": environment(),
    }
    write_curve(output_dir, curve)
    progress.stage("curve written: %s", output_dir / "curve.html")
    return curve


def train_points(
    data: DataArguments,
    args: CurveArguments,
    task: TaskData,
    sizes: list[int],
    seeds: list[int],
    reused: dict[Path, bool],
    progress: Progress,
) -> bool:
    """Trains this process's share of the curve's runs, each size x seed x side a trial of a grid study on
    `--storage` (the teachers and the other sides first, then with `--distill` the students they teach), and waits
    for the other processes' share; records in `reused` whether each run this process met was reused.

    Returns:
        Whether this process finished the last training or found every one finished: it then scores and writes.
    """
    output_dir = Path(args.output_dir)

    def side_run(side: str, size: int, seed: int) -> Callable[[], None]:
        def train() -> None:
            path = run_path(output_dir, side, size, seed)
            if side == STUDENT:
                options = dataclasses.replace(data, max_train_samples=size)
                _, reused[path] = train_student(options, args, run_path(output_dir, TEACHER, size, seed), path, seed)
            else:
                options = dataclasses.replace(side_data(data, side, args.profile, seed), max_train_samples=size)
                _, reused[path] = train_side(sides.get(side), options, args.side_flags(side), path, args.retrain)
            progress.stage("%s %s at %d examples (seed %d)", "reused" if reused[path] else "trained", side, size, seed)

        return train

    storage = args.storage or str(output_dir / "runs" / STORAGE_FILE)
    digest = hashlib.sha256(json.dumps(task.fingerprints, sort_keys=True).encode()).hexdigest()
    described = f"{data.task or data.train_file}, {len(task.splits['train'])} train rows, fingerprint {digest[:12]}"
    stages = [sides.classifier_names(), [STUDENT] if args.distill else []]
    finished = True
    for names in filter(None, stages):
        work = {
            f"{side}-n{size}-seed{seed}": side_run(side, size, seed)
            for size in sizes
            for seed in seeds
            for side in names
        }
        flags = {side: args.side_flags(side) for side in sides.classifier_names()}  # a student's: the scratch side's
        what = json.dumps([sorted(work), flags, data.to_dict(), args.profile, args.distill_args], sort_keys=True)
        name = f"{args.study or output_dir.resolve().name}/curve-{hashlib.sha256(what.encode()).hexdigest()[:10]}"
        finished = run_grid(
            storage, name, work, digest, described, lambda name=name: progress.stage("waiting for %s", name)
        )
    return finished


def check_sizes(sizes: list[int], train_rows: int) -> None:
    too_big = [size for size in sizes if size > train_rows]
    if too_big:
        raise DataError(
            f"--sizes asks for {too_big[0]:,} training examples but the train split has only {train_rows:,}; "
            f"choose sizes up to {train_rows:,}."
        )


def score_point(
    run_dir: Path, test: ScoredSplit, side: str, size: int, seed: int, rescore: bool = False, loader: Loader = load
) -> dict:
    """The run's two test scores (the task's headline first) as a curve point, read from `<run>.score.json` when
    still valid."""
    record = read_run(run_dir)
    fingerprint = test.fingerprint
    if record.data.fingerprints.get(SPLIT) != fingerprint:
        raise RunError(
            f"{run_dir} saw another {SPLIT} split than {test.source} gives now (the data changed); rerun with --retrain."
        )
    metrics = test.kind.scores
    cached = _read_score(score_path(run_dir))
    if (
        not rescore
        and cached
        and cached.get("created") == record.created
        and cached.get("fingerprint") == fingerprint
        and all(metric in cached["point"] for metric in metrics)
    ):
        return cached["point"]
    classifier = loader(run_dir)
    decisions = decide(classifier, outputs(classifier, test.texts, test.pairs))
    scores = reported(test.kind).quick_scores(decisions, test.gold, test.num_labels)
    del classifier
    point = {
        "side": side,
        "size": size,
        "seed": seed,
        **{metric: float(scores[metric]) for metric in metrics},
        "train_seconds": float(record.training.seconds),
        "train_rows": int(record.data.splits["train"]),
        "run": run_dir.name,
    }
    write_json(
        score_path(run_dir),
        {"schema_version": 1, "created": record.created, "fingerprint": fingerprint, "point": point},
    )
    return point


def write_curve(output_dir: Path, curve: dict) -> None:
    """Writes `curve.png`, `curve.md` and `curve.html`, then `curve.json`.

    Each file goes to a temporary name and is moved into place, `curve.json` last, so a reader that finds
    the new `curve.json` finds the figure and the pages that go with it.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    png = curve_figure(curve)
    files = {
        FIGURE: png,
        "curve.md": render_markdown(curve).encode("utf-8"),
        "curve.html": render_html(curve, png).encode("utf-8"),
    }
    for name, content in files.items():
        tmp = output_dir / f"{name}.tmp"
        tmp.write_bytes(content)
        os.replace(tmp, output_dir / name)
    write_json(output_dir / "curve.json", curve)


def _read_score(path: Path) -> dict | None:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None


if __name__ == "__main__":
    sys.exit(main())
