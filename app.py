"""Gradio demo: type a text (two for a pair task) and see what the fine-tuned and the from-scratch model (and a
distilled student, when the report has one) say, side by side: class probabilities, the labels of a multi-label
task with each label's probability and threshold, or a regression value.

    python app.py                                   # serves the newest report under reports/
    python app.py --report reports/sst2             # a report directory and its runs
    python app.py --runs reports/sst2/runs          # run directories, or a folder of runs
    python app.py --report reports/pt_en            # a translation report: the Translate tab
    python app.py --host 0.0.0.0 --port 8080 --max-chars 2000 --share [--verbose]

The entry point over the `demo` package: `demo.sources` finds and loads the report and runs (once, at start,
through `core.classifier` and `core.translator`, never through training code), `demo.task` reads what the runs
take and give, `demo.prediction` predicts (each kind's answer in `demo.answers`), `demo.translation` translates,
`demo.page` builds the page, whose report tab says what `compare.render` says in the report itself. Each model
makes one prediction before the server starts. The prediction is also an API endpoint (with `text_pair`, the
second text, for a pair task), and so is translation when translation runs are loaded:

    >>> from gradio_client import Client                                  # doctest: +SKIP
    >>> Client("http://127.0.0.1:7860/").predict("a gripping film", "both", api_name="/classify")  # doctest: +SKIP
    {'finetune': {'negative': 0.03, 'positive': 0.97}, 'scratch': {'negative': 0.21, 'positive': 0.79}}
    >>> Client("http://127.0.0.1:7860/").predict("A man plays", "scratch", "He sings", api_name="/classify")  # doctest: +SKIP
    {'scratch': {'value': 2.4}}
    >>> Client("http://127.0.0.1:7860/").predict("Bom dia.", "all", 1, api_name="/translate")  # doctest: +SKIP
    {'scratch': 'Good morning.', 'bergamot': 'Good morning.'}
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# TensorFlow's start-up notices (oneDNN, CUDA) only with --verbose; set before anything imports TensorFlow.
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0" if "--verbose" in sys.argv[1:] else os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2")

from core.cli import Command  # noqa: E402
from core.errors import UserError  # noqa: E402
from demo.arguments import AppArguments  # noqa: E402

if TYPE_CHECKING:  # Gradio, TensorFlow and the models load once the command line is accepted: `load_app`
    import gradio as gr

    from demo.sources import Example, Report

logger = logging.getLogger(__name__)

CONCURRENCY = 4


@dataclass
class Loaded:
    """Everything the page shows, read once at start."""

    models: dict[str, Any]
    report: Report | None
    examples: list[Example]
    problems: list[str]
    translators: dict[str, Any] = field(default_factory=dict)


def load_app(args: AppArguments) -> Loaded:
    """Reads the report and runs `args` name and warms each model up with one prediction.

    Classifiers are named as `demo.sources.load_models` says (`finetune`, `scratch`, `scratch-distilled`);
    translation runs (run.json `task_kind: "translation"`) load as translators, named as the report names them,
    else by their directories. A missing report or an unloadable run is reported, not fatal.
    """
    from core.translator import is_translation_run
    from demo.prediction import warm_up
    from demo.sources import CREATE_COMMAND, live_examples, load_models, load_report, load_translators, resolve_sources
    from demo.translation import warm_up_translators

    report_dir, run_dirs = resolve_sources(args.report, args.runs)
    report = load_report(report_dir) if report_dir is not None else None
    translation_dirs = [path for path in run_dirs if is_translation_run(path)]
    models, problems = load_models([path for path in run_dirs if path not in translation_dirs], report_dir)
    translators, failed = load_translators(translation_dirs, report_dir)
    problems += failed
    if not models and not translators and run_dirs:
        problems.append(f"None of the runs could be loaded; `{CREATE_COMMAND}` trains a fresh pair.")
    problems += warm_up(models)  # before anything else predicts, and before the server takes requests
    problems += warm_up_translators(translators)
    examples = report.examples if report is not None and report.examples else live_examples(models)
    return Loaded(models, report, examples, problems, translators)


def create_demo(args: AppArguments) -> gr.Blocks:
    """Loads what `args` name (once) and builds the page."""
    from demo.page import build_demo

    loaded = load_app(args)
    return build_demo(
        loaded.models,
        loaded.report,
        max_chars=args.max_chars,
        examples=loaded.examples,
        problems=loaded.problems,
        translators=loaded.translators,
    )


def quiet_requests() -> None:
    """Keeps what is not news to a user out of the request log: Gradio's reading of a status constant that its
    Starlette deprecates (a warning per queued request), and each request Gradio makes to itself at start."""
    warnings.filterwarnings("ignore", "'HTTP_422_UNPROCESSABLE_ENTITY' is deprecated", module="gradio")
    logging.getLogger("httpx").setLevel(logging.WARNING)


def serve(demo: gr.Blocks, args: AppArguments, block: bool = True) -> gr.Blocks:
    """Starts the server: a queue of `CONCURRENCY` workers, loopback by default, no share link unless asked.

    Gradio's start-up lines (which advise `share=True` in `launch()`, where this app's flag is `--share`) give
    way to one line of ours; `quiet_requests` keeps the request log to what the app says.
    """
    from demo.page import CSS, THEME

    quiet_requests()
    demo.queue(default_concurrency_limit=CONCURRENCY)
    _, url, share_url = demo.launch(
        server_name=args.host,
        server_port=args.port,
        share=args.share,
        prevent_thread_lock=True,
        theme=THEME,
        css=CSS,
        footer_links=["api"],
        quiet=True,
    )
    if share_url:
        logger.info("Serving the demo on %s and, for anyone with the link, on %s", url, share_url)
    else:
        logger.info("Serving the demo on %s (--share also opens a public link)", url)
    if block:
        demo.block_thread()
    return demo


def run(args: AppArguments) -> None:
    """Loads and serves what `args` name; a report or run that cannot be read is refused (exit status 2)."""
    try:
        demo = create_demo(args)
    except (OSError, ValueError) as error:
        raise UserError(str(error)) from None
    serve(demo, args)


APP = Command(
    prog="python app.py",
    description="Serves the Gradio demo: classify a text with the fine-tuned and the from-scratch model side by "
    "side, translate with the translation runs, and read the report.",
    arguments=(AppArguments,),
    work=run,
)


def main(argv: list[str] | None = None) -> int:
    return APP.main(argv)


if __name__ == "__main__":
    sys.exit(main())
