"""Where the pretrained checkpoint comes from and how it becomes a TF model for the task's labels.

A local directory, a hub id or an alias (`minilm`, `bert-base`) resolves to a folder holding a config,
a tokenizer and weights. `TFAutoModelForSequenceClassification.from_pretrained` cannot read a PyTorch-only
`model.safetensors` (transformers #40028), so such weights are converted once with
`load_pytorch_state_dict_in_tf2_model` and cached as a native TF checkpoint outside the repository.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import tensorflow as tf

from core import kinds
from core.errors import UserError
from core.kinds import REGRESSION, SINGLE_LABEL, Kind
from core.pretrained import ALIASES, resolve_model

logger = logging.getLogger(__name__)

CACHE_ENV = "TEXTCLS_CACHE"
TF_WEIGHTS = "tf_model.h5"
PT_SAFETENSORS = "model.safetensors"
PT_BIN = "pytorch_model.bin"
# Weights whose absence means the pretrained encoder did not load; a missing pooler or head is re-learned.
ENCODER_PARTS = ("embeddings", "encoder", "layer.")


class CheckpointError(UserError):
    """A pretrained checkpoint that cannot be used, with what to pass instead."""


@dataclass
class Checkpoint:
    """A resolved pretrained checkpoint.

    Attributes:
        name: what the user passed to `--model`.
        directory: a local folder with `config.json`, tokenizer files and weights.
        weights: `tf` (ships `tf_model.h5`) or `safetensors` (PyTorch-only, converted before loading).
    """

    name: str
    directory: Path
    weights: str
    tf_directory: Path | None = field(default=None, repr=False)  # set by `tf_checkpoint`, once

    @property
    def source(self) -> str:
        return str(self.directory)


def cache_root() -> Path:
    """Converted checkpoints live here: $TEXTCLS_CACHE, else ~/.cache/textcls."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "textcls")


def resolve_checkpoint(name: str) -> Checkpoint:
    """Turns `--model` into a local checkpoint folder, or raises CheckpointError saying what is wrong."""
    try:
        resolved = resolve_model(name)
    except ValueError as error:
        raise CheckpointError(str(error)) from None
    if Path(resolved).is_dir():
        directory = Path(resolved)
    elif _looks_like_path(name):
        raise CheckpointError(f"--model {name}: no such directory. Pass an existing checkpoint folder.")
    else:
        directory = _download(resolved, name)
    return Checkpoint(name, directory, _weights_kind(directory))


def _looks_like_path(name: str) -> bool:
    # Hub ids are `name` or `owner/name`; anything else with a slash is meant as a folder.
    return name.startswith((".", "/", "~")) or name.count("/") > 1


def _weights_kind(directory: Path) -> str:
    if not (directory / "config.json").is_file():
        raise CheckpointError(
            f"{directory} is not a model checkpoint: it has no config.json. Pass a folder written by "
            "save_pretrained, a hub id, or minilm."
        )
    if (directory / TF_WEIGHTS).is_file():
        return "tf"
    if (directory / PT_SAFETENSORS).is_file():
        return "safetensors"
    if (directory / PT_BIN).is_file():
        raise CheckpointError(
            f"{directory} holds only {PT_BIN}, which needs PyTorch to read. Re-save it with "
            "safe_serialization=True (model.safetensors) or as a TF checkpoint (tf_model.h5)."
        )
    raise CheckpointError(f"{directory} has no weights: expected {TF_WEIGHTS} or {PT_SAFETENSORS} beside config.json.")


def _download(repo_id: str, name: str) -> Path:
    """Fetches config, tokenizer and weights of a hub model (TF weights when it has them)."""
    from huggingface_hub import hf_hub_download, snapshot_download

    known = ", ".join(["minilm", *ALIASES])
    try:
        directory = Path(snapshot_download(repo_id, allow_patterns=["*.json", "*.txt", TF_WEIGHTS]))
        if not (directory / TF_WEIGHTS).is_file():
            hf_hub_download(repo_id, PT_SAFETENSORS)
    except Exception as error:  # noqa: BLE001 - offline, unknown id and missing file all mean the same here
        raise CheckpointError(
            f"Unknown model {name!r}: it is not an alias ({known}), not an existing directory, and the hub "
            f"could not provide it ({type(error).__name__}). Check the name, or pass a local checkpoint folder."
        ) from None
    return directory


def tf_checkpoint(checkpoint: Checkpoint) -> Path:
    """A folder `TFAutoModel*.from_pretrained` can read: the checkpoint itself, or its cached TF conversion.

    The conversion's cache key hashes the whole weights file, so the answer is kept on `checkpoint`.
    """
    if checkpoint.tf_directory is None:
        checkpoint.tf_directory = (
            checkpoint.directory
            if checkpoint.weights == "tf"
            else convert_safetensors(checkpoint.directory, cache_root())
        )
    return checkpoint.tf_directory


def convert_safetensors(directory: Path, cache: Path) -> Path:
    """Converts `directory/model.safetensors` to a native TF checkpoint under `cache`, once.

    The cache entry is keyed by the weights' and config's content and written to a temporary folder that
    is renamed into place, so concurrent or interrupted conversions never leave half a checkpoint.

    Raises:
        CheckpointError: when embeddings or encoder weights found no match in the file.
    """
    from safetensors.numpy import load_file
    from transformers import AutoConfig, TFAutoModel, TFAutoModelForSequenceClassification
    from transformers.modeling_tf_pytorch_utils import load_pytorch_state_dict_in_tf2_model

    digest = hashlib.sha256()
    for part in (directory / "config.json", directory / PT_SAFETENSORS):
        digest.update(part.read_bytes())
    target = cache / "tf-checkpoints" / f"{directory.name}-{digest.hexdigest()[:16]}"
    if (target / TF_WEIGHTS).is_file():
        logger.info("Using the cached TF conversion of %s: %s", directory, target)
        return target

    logger.info("Converting the PyTorch weights of %s to a TF checkpoint (once; cached in %s)", directory, target)
    config = AutoConfig.from_pretrained(directory)
    has_head = any(a.endswith("ForSequenceClassification") for a in config.architectures or [])
    model_class = TFAutoModelForSequenceClassification if has_head else TFAutoModel
    model = model_class.from_config(config)
    state = load_file(directory / PT_SAFETENSORS)
    _, info = load_pytorch_state_dict_in_tf2_model(model, state, allow_missing_keys=True, output_loading_info=True)
    missing = list(info["missing_keys"])
    unexpected = [k for k in info["unexpected_keys"] if not k.endswith("position_ids")]
    if missing:
        logger.warning("Weights the checkpoint does not provide (initialised afresh): %s", ", ".join(missing))
    if unexpected:
        logger.warning("Weights in the checkpoint the model does not use: %s", ", ".join(unexpected))
    lost = [k for k in missing if any(part in k for part in ENCODER_PARTS)]
    if lost:
        raise CheckpointError(
            f"{directory / PT_SAFETENSORS}: {len(lost)} encoder weights did not load (e.g. {lost[0]}), so this "
            f"is not a {config.model_type} checkpoint the {model_class.__name__} can use. Check --model."
        )

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        model.save_pretrained(staging)
        os.replace(staging, target)
    except OSError:
        if not (target / TF_WEIGHTS).is_file():  # not another process winning the race: a real failure
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def load_for_task(
    checkpoint: Checkpoint, labels: list[str], pooling: str = "cls", kind: Kind | None = None
) -> tf.keras.Model:
    """The pretrained encoder with a head for `labels` (names stored in its config) and the `kind` of task (default
    single label): `kind.num_outputs` logits, a logit per class or label, or one output for regression (`labels`
    empty). The config records transformers'
    `problem_type`, so `from_pretrained` on the saved run rebuilds the same model.

    `pooling` is what the head reads: `cls`, BERT's [CLS] pooler (any architecture), or `mean`, the mean of the
    real tokens' last hidden states (`finetune.modeling`, BERT checkpoints only). A checkpoint already
    fine-tuned on these labels (and kind) keeps its head; one fine-tuned on another label set or kind gets a new,
    randomly initialised head, and the log says so.
    """
    from transformers import AutoConfig, BertConfig, TFAutoModelForSequenceClassification

    from finetune.modeling import MEAN_MODEL_TYPE, MeanPooledBertConfig

    kind = kind or kinds.get(None)  # single label

    source_config = AutoConfig.from_pretrained(checkpoint.directory)
    if pooling == "mean" and source_config.model_type not in ("bert", MEAN_MODEL_TYPE):
        raise CheckpointError(
            f"--pooling mean needs a BERT checkpoint; {checkpoint.name} is a {source_config.model_type!r} model. "
            "Pass --pooling cls, or a BERT checkpoint such as minilm."
        )
    if pooling == "mean":
        config_class = MeanPooledBertConfig
    elif source_config.model_type == MEAN_MODEL_TYPE:
        config_class = BertConfig  # a mean-pooled run fine-tuned further with the [CLS] pooler
    else:
        config_class = AutoConfig
    names = {"id2label": dict(enumerate(labels)), "label2id": {label: i for i, label in enumerate(labels)}}
    config = config_class.from_pretrained(
        checkpoint.directory,
        num_labels=kind.num_outputs(len(labels)),
        problem_type=kind.name,
        **(names if labels else {}),  # regression: transformers' own name for its one output
    )
    model = TFAutoModelForSequenceClassification.from_pretrained(
        tf_checkpoint(checkpoint), config=config, ignore_mismatched_sizes=True
    )
    trained_labels = trained_head_labels(source_config)
    if trained_labels is not None:
        if trained_labels == labels and head_kind(source_config) == kind:
            logger.info("%s was fine-tuned on these labels; keeping its classification head.", checkpoint.name)
        else:
            logger.warning(
                "%s was fine-tuned on the labels %s (%s); starting a new head for %s (%s).",
                checkpoint.name,
                trained_labels,
                head_kind(source_config).name,
                labels,
                kind.name,
            )
            reset_head(model, config.initializer_range)
    return model


def trained_head_labels(config) -> list[str] | None:
    """The label names a checkpoint's classification head was trained on ([] for a regression head), or None when it
    has no head."""
    if not any(a.endswith("ForSequenceClassification") for a in config.architectures or []):
        return None
    if not head_kind(config).has_labels:
        return []
    return [config.id2label[i] for i in sorted(config.id2label)]


def head_kind(config) -> Kind:
    """The kind of task a checkpoint's head was trained for: its `problem_type`'s, else as transformers reads a
    config without one (one output is regression)."""
    return kinds.get(config.problem_type or (REGRESSION if config.num_labels == 1 else SINGLE_LABEL))


def reset_head(model: tf.keras.Model, initializer_range: float) -> None:
    """Re-initialises the classification layer the way transformers initialises a new head."""
    init = tf.keras.initializers.TruncatedNormal(stddev=initializer_range)
    for weight in model.classifier.weights:
        value = init(weight.shape) if "kernel" in weight.name else tf.zeros(weight.shape)
        weight.assign(tf.cast(value, weight.dtype))
