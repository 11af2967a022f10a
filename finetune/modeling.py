"""BERT for sequence classification from the mean of its token vectors instead of the [CLS] pooler.

Sentence-embedding checkpoints such as the packaged all-MiniLM-L6-v2 were trained with mean pooling and never
trained BERT's pooler, so `--pooling mean` classifies from the mean over the real (unpadded) tokens' last
hidden states, with no pooler at all. The config type `textcls-bert-mean` is registered with the Auto classes
when this module is imported, so `TFAutoModelForSequenceClassification.from_pretrained(run_dir)` rebuilds the
same subclass from a saved run:

    >>> import finetune.modeling  # doctest: +SKIP
    >>> TFAutoModelForSequenceClassification.from_pretrained("runs/mean")  # doctest: +SKIP
    <TFBertMeanPooledForSequenceClassification ...>

A process that did not import it gets an error naming the unknown model type, never the [CLS] model.
"""

from __future__ import annotations

import tensorflow as tf
from transformers import AutoConfig, BertConfig, TFAutoModelForSequenceClassification, TFBertForSequenceClassification
from transformers.modeling_tf_outputs import TFSequenceClassifierOutput
from transformers.modeling_tf_utils import get_initializer, unpack_inputs
from transformers.models.bert.modeling_tf_bert import TFBertMainLayer

MEAN_MODEL_TYPE = "textcls-bert-mean"


class MeanPooledBertConfig(BertConfig):
    """A `BertConfig` whose model type tells the Auto classes to build the mean-pooled classifier."""

    model_type = MEAN_MODEL_TYPE


def masked_mean(hidden: tf.Tensor, attention_mask: tf.Tensor | None) -> tf.Tensor:
    """Mean of `hidden` (B, T, H) over the positions where `attention_mask` (B, T) is 1: (B, H)."""
    if attention_mask is None:
        return tf.reduce_mean(hidden, axis=1)
    # expand_dims, not [:, :, None]: TFLite has no builtin for a strided slice that adds an axis.
    mask = tf.expand_dims(tf.cast(attention_mask, hidden.dtype), -1)  # (B, T, 1)
    total = tf.reduce_sum(hidden * mask, axis=1)  # (B, H)
    count = tf.maximum(tf.reduce_sum(mask, axis=1), tf.cast(1.0, hidden.dtype))  # (B, 1)
    return total / count


class TFBertMeanPooledForSequenceClassification(TFBertForSequenceClassification):
    """`TFBertForSequenceClassification` without the pooler: dropout and the linear head on the masked mean."""

    config_class = MeanPooledBertConfig
    _keys_to_ignore_on_load_unexpected = [*TFBertForSequenceClassification._keys_to_ignore_on_load_unexpected, "pooler"]

    def __init__(self, config: MeanPooledBertConfig, *inputs, **kwargs):
        # Skips the parent's __init__, which would build the pooler this model never uses.
        super(TFBertForSequenceClassification, self).__init__(config, *inputs, **kwargs)
        self.num_labels = config.num_labels
        self.bert = TFBertMainLayer(config, add_pooling_layer=False, name="bert")
        dropout = config.classifier_dropout if config.classifier_dropout is not None else config.hidden_dropout_prob
        self.dropout = tf.keras.layers.Dropout(rate=dropout)
        self.classifier = tf.keras.layers.Dense(
            units=config.num_labels, kernel_initializer=get_initializer(config.initializer_range), name="classifier"
        )
        self.config = config

    @unpack_inputs
    def call(
        self,
        input_ids=None,
        attention_mask=None,
        token_type_ids=None,
        position_ids=None,
        head_mask=None,
        inputs_embeds=None,
        output_attentions=None,
        output_hidden_states=None,
        return_dict=None,
        labels=None,
        training=False,
    ):
        outputs = self.bert(
            input_ids=input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            position_ids=position_ids,
            head_mask=head_mask,
            inputs_embeds=inputs_embeds,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            return_dict=True,
            training=training,
        )
        pooled = masked_mean(outputs.last_hidden_state, attention_mask)  # (B, H)
        logits = self.classifier(self.dropout(pooled, training=training))  # (B, K)
        loss = None if labels is None else self.hf_compute_loss(labels=labels, logits=logits)
        return TFSequenceClassifierOutput(
            loss=loss, logits=logits, hidden_states=outputs.hidden_states, attentions=outputs.attentions
        )


AutoConfig.register(MEAN_MODEL_TYPE, MeanPooledBertConfig, exist_ok=True)
TFAutoModelForSequenceClassification.register(
    MeanPooledBertConfig, TFBertMeanPooledForSequenceClassification, exist_ok=True
)
