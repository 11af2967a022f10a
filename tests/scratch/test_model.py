import functools

import numpy as np
import pytest
import tensorflow as tf

from core import kinds
from scratch.model import DEFAULT_PRESET, PRESETS, ModelConfig, build_classifier, build_end_to_end, config_from_preset
from scratch.tokenizer import WordTokenizer, make_tokenizer

TINY = {"vocab_size": 50, "num_layers": 2, "d_model": 16, "num_heads": 2, "d_ff": 32, "dropout": 0.0}


def expected_params(config: ModelConfig, vocab_size: int) -> int:
    """Parameter count from the architecture, written independently of Keras."""
    c, f = config.d_model, config.d_ff
    block = 4 * (c * c + c) + (c * f + f) + (f * c + c) + 2 * 2 * c
    final_norm = 2 * c if config.norm == "pre" else 0
    segments = 2 * c if config.pair_reading == "joint" else 0  # the two texts apart need no segment vectors
    pair_hidden = (4 * c * c + c) if config.pair_reading in ("siamese", "cross") else 0  # [u, v, |u-v|, u*v] -> C
    compare = (4 * c * c + c) if config.pair_reading == "cross" else 0  # [a, ã, a-ã, a*ã] -> C
    head = c * config.num_labels + config.num_labels
    return vocab_size * c + segments + config.num_layers * block + final_norm + pair_hidden + compare + head


# The shapes the README gives: (layers, d_model, heads, d_ff, dropout, vocabulary).
DOCUMENTED = {
    "tiny": (2, 32, 2, 64, 0.0, 1000),
    "small": (2, 128, 4, 512, 0.2, 20000),
    "base": (4, 256, 8, 1024, 0.1, 30000),
}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_has_its_documented_shape_and_builds(preset):
    config = config_from_preset(preset, num_labels=2)
    shape = (config.num_layers, config.d_model, config.num_heads, config.d_ff, config.dropout, config.vocab_size)
    assert shape == DOCUMENTED[preset]
    assert build_classifier(config).count_params() == expected_params(config, config.vocab_size)


def test_a_config_built_with_no_arguments_is_the_default_preset():
    assert DEFAULT_PRESET == "small"
    assert ModelConfig() == config_from_preset(DEFAULT_PRESET) == config_from_preset()
    assert ModelConfig() != config_from_preset("base")


def test_overrides_replace_preset_fields_and_none_keeps_them():
    config = config_from_preset("tiny", d_model=48, num_heads=None, norm="pre")
    assert (config.d_model, config.num_heads, config.norm) == (48, PRESETS["tiny"]["num_heads"], "pre")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"d_model": 30, "num_heads": 4}, "--d-model 30 is not divisible by --num-heads 4"),
        ({"vocab_size": 2}, "--vocab-size 2 is not larger than the 2 reserved tokens"),
        ({"num_labels": 1}, "at least 2 labels"),
        ({"num_labels": 2, "problem_type": "regression"}, "one value per example, got num_labels=2"),
        ({"problem_type": "ranking"}, "problem_type must be one of single_label_classification, multi_label"),
        ({"dropout": 1.0}, "dropout"),
        ({"tokenizer": "bytes"}, "tokenizer must be"),
    ],
)
def test_bad_configs_name_the_value(overrides, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**{**TINY, **overrides})


def test_unknown_preset_is_refused():
    with pytest.raises(ValueError, match="--preset must be one of tiny, small, base, got 'huge'"):
        config_from_preset("huge")


@pytest.mark.parametrize(("norm", "causal"), [("post", False), ("pre", False), ("post", True)])
def test_parameter_count_matches_the_architecture(norm, causal):
    config = ModelConfig(**TINY, norm=norm, causal=causal, num_labels=3)
    model = build_classifier(config)
    assert model.count_params() == expected_params(config, 50)


@pytest.mark.parametrize("causal", [False, True])
def test_padding_a_batch_does_not_change_the_logits_of_unpadded_texts(causal):
    model = build_classifier(ModelConfig(**TINY, causal=causal))
    texts = [np.array([5, 7, 9]), np.array([4, 8, 12, 16, 20, 24, 28]), np.array([3])]
    alone = np.concatenate([model(row[None]).numpy() for row in texts])
    batch = np.zeros([3, 7], np.int64)
    for i, row in enumerate(texts):
        batch[i, : len(row)] = row
    np.testing.assert_allclose(model(batch).numpy(), alone, atol=1e-5)


def test_causal_model_reads_the_last_token_and_ignores_nothing_before_it():
    model = build_classifier(ModelConfig(**TINY, causal=True))
    base = np.array([[5, 7, 9, 11]])
    changed_last = np.array([[5, 7, 9, 12]])
    changed_first = np.array([[6, 7, 9, 11]])
    assert not np.allclose(model(base).numpy(), model(changed_last).numpy(), atol=1e-4)
    assert not np.allclose(model(base).numpy(), model(changed_first).numpy(), atol=1e-4)


def fit_losses(config: ModelConfig, steps: int = 30) -> list[float]:
    """Trains on "does the sequence contain token 3" and returns the loss per step."""
    rng = np.random.default_rng(0)
    ids = rng.integers(4, 50, size=(64, 6))
    labels = rng.integers(0, 2, size=64)
    ids[labels == 1, rng.integers(0, 6, size=(labels == 1).sum())] = 3
    tf.keras.utils.set_random_seed(0)  # before building: the weights must not depend on the tests run earlier
    model = build_classifier(config)
    model.compile(tf.keras.optimizers.Adam(3e-3), tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    losses = tf.keras.callbacks.LambdaCallback()
    losses.values = []
    losses.on_train_batch_end = lambda batch, logs: losses.values.append(logs["loss"])
    repeated = np.tile(ids, (steps // 2, 1)), np.tile(labels, steps // 2)  # one epoch of `steps` batches of 32
    model.fit(*repeated, batch_size=32, epochs=1, shuffle=False, verbose=0, callbacks=[losses])
    return losses.values


@pytest.mark.slow
@pytest.mark.parametrize("norm", ["post", "pre"])
def test_post_and_pre_layer_norm_both_train(norm):
    losses = fit_losses(ModelConfig(**TINY, norm=norm))
    assert len(losses) == 30
    assert np.mean(losses[-2:]) < 0.5 * np.mean(losses[:2])  # Keras logs the running mean of the epoch


def test_end_to_end_model_saves_and_reloads_in_safe_mode(tmp_path):
    tokenizer = WordTokenizer.adapt(["a great film", "a dull film", "truly great"], vocab_size=20, max_length=8)
    classifier = build_classifier(ModelConfig(**TINY), vocab_size=len(tokenizer.vocabulary))
    model = build_end_to_end(tokenizer, classifier)
    texts = tf.constant(["a great film", "dull", "", "never seen words"])
    probabilities = model(texts).numpy()
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-6)
    model.save(tmp_path / "model.keras")
    reloaded = tf.keras.models.load_model(tmp_path / "model.keras", compile=False, safe_mode=True)
    np.testing.assert_allclose(reloaded(texts).numpy(), probabilities, atol=1e-6)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"d_model": 30, "num_heads": 4}, "--d-model 30 is not divisible by --num-heads 4: each head gets"),
        ({"num_layers": 0}, "--num-layers must be at least 1, got 0"),
        ({"dropout": -0.1}, r"--dropout must be in \[0, 1\), got -0.1"),
        ({"norm": "sandwich"}, "--norm must be one of post, pre, got 'sandwich'"),
    ],
)
def test_classifier_and_translator_configs_refuse_a_bad_shape_alike(overrides, message):
    from scratch.translation.model import TranslationConfig

    with pytest.raises(ValueError, match=message):
        ModelConfig(**{**TINY, **overrides})
    with pytest.raises(ValueError, match=message):
        TranslationConfig(**overrides)


@pytest.mark.slow
def test_minilm_embeddings_start_from_the_checkpoint_and_stay_frozen_while_the_rest_learns():
    from scratch.embedding import minilm_vectors

    config = ModelConfig(**{**TINY, "d_model": 32}, tokenizer="wordpiece", embeddings="minilm")
    classifier = build_classifier(config, vocab_size=30522)
    table = classifier.get_layer("embedding").token_embedding
    np.testing.assert_array_equal(table.embeddings.numpy(), minilm_vectors(32)[0])
    before = [w.numpy().copy() for w in classifier.weights]
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    classifier.compile(optimizer=tf.keras.optimizers.Adam(1e-2), loss=loss)
    classifier.fit(np.array([[101, 2307, 102], [101, 11771, 102]]), np.array([1, 0]), epochs=2, verbose=0)
    moved = [not np.array_equal(w.numpy(), old) for w, old in zip(classifier.weights, before)]
    frozen = [w is table.embeddings for w in classifier.weights]
    assert sum(frozen) == 1 and moved == [not f for f in frozen]  # the table alone kept its values
    assert classifier.count_params() == expected_params(config, 30522)


PAIR_TRAIN = ["a great film", "a dull film", "truly great", "the plot was thin and the acting wooden"]
PAIRS = [("a great film", "truly great"), ("dull", "a great film, truly great, the plot was thin"), ("", "great")]


@functools.cache  # the tests only call the model: one build per configuration serves them all
def pair_model(problem_type: str, num_labels: int, tokenizer: str = "words") -> tf.keras.Model:
    tokenizer_layer = make_tokenizer(tokenizer, PAIR_TRAIN, vocab_size=30, max_length=12, pairs=True)
    config = ModelConfig(**TINY, num_labels=num_labels, problem_type=problem_type, pairs=True, tokenizer=tokenizer)
    classifier = build_classifier(config, len(tokenizer_layer.vocabulary), tokenizer_layer.separator_id)
    assert classifier.count_params() == expected_params(config, len(tokenizer_layer.vocabulary))
    return build_end_to_end(tokenizer_layer, classifier, kinds.get(problem_type), pairs=True)


def pair_inputs(pairs: list[tuple[str, str]]) -> dict[str, tf.Tensor]:
    texts, text_pairs = zip(*pairs)
    return {"text": tf.constant(texts), "text_pair": tf.constant(text_pairs)}


KINDS = [("single_label_classification", 3), ("multi_label_classification", 3), ("regression", 1)]


@pytest.mark.slow
@pytest.mark.parametrize(("problem_type", "num_labels"), KINDS)
@pytest.mark.parametrize("tokenizer", ["words", "wordpiece"])
def test_a_pair_s_output_does_not_depend_on_the_pairs_batched_with_it(problem_type, num_labels, tokenizer):
    model = pair_model(problem_type, num_labels, tokenizer)
    together = model(pair_inputs(PAIRS)).numpy()  # the second pair is the longest: the others are padded
    alone = np.concatenate([model(pair_inputs([pair])).numpy() for pair in PAIRS])
    np.testing.assert_allclose(together, alone, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize(("problem_type", "num_labels"), KINDS)
def test_each_kind_s_output_and_its_reload(problem_type, num_labels, tmp_path):
    model = pair_model(problem_type, num_labels)
    out = model(pair_inputs(PAIRS)).numpy()
    logits = model.get_layer("classifier")(model.get_layer("tokenizer")(*pair_inputs(PAIRS).values())).numpy()
    expected = {
        "single_label_classification": tf.nn.softmax(logits).numpy(),
        "multi_label_classification": 1 / (1 + np.exp(-logits)),
        "regression": logits[:, 0],
    }[problem_type]
    np.testing.assert_allclose(out, expected, atol=1e-6)
    assert model.output_names == ["values" if problem_type == "regression" else "probabilities"]
    model.save(tmp_path / "model.keras")
    reloaded = tf.keras.models.load_model(tmp_path / "model.keras", compile=False, safe_mode=True)
    np.testing.assert_allclose(reloaded(pair_inputs(PAIRS)).numpy(), out, atol=1e-6)


def test_a_pair_model_needs_the_separator():
    with pytest.raises(ValueError, match="needs the tokenizer's separator id"):
        build_classifier(ModelConfig(**TINY, pairs=True))


@pytest.mark.slow
def test_minilm_segment_vectors_of_a_pair_model_start_from_the_checkpoint_and_stay_frozen():
    from scratch.embedding import minilm_vectors

    config = ModelConfig(
        **{**TINY, "d_model": 32}, tokenizer="wordpiece", embeddings="minilm", pairs=True, pair_reading="joint"
    )
    classifier = build_classifier(config, vocab_size=30522, separator_id=102)
    embedding = classifier.get_layer("embedding")
    tokens, segments = minilm_vectors(32)
    np.testing.assert_array_equal(embedding.token_embedding.embeddings.numpy(), tokens)
    np.testing.assert_array_equal(embedding.segment_embedding.embeddings.numpy(), segments)
    frozen = {id(w) for w in (embedding.token_embedding.embeddings, embedding.segment_embedding.embeddings)}
    assert not frozen & {id(w) for w in classifier.trainable_weights}
    assert classifier.count_params() == expected_params(config, 30522)


# --- pair readings: one sequence, two texts through one encoder (siamese), or two texts attending to each other ---

READINGS = ["joint", "siamese", "cross"]
SHORT, LONG_PAIR = ("a great film", "truly great"), ("the plot was thin", "a dull film and the acting wooden truly")


@functools.cache  # the tests only call the model and read its layers: one build per configuration serves them all
def reading_model(reading: str, num_labels: int = 3, problem_type: str = "single_label_classification"):
    tokenizer_layer = make_tokenizer("words", PAIR_TRAIN, vocab_size=30, max_length=12, pairs=True)
    config = ModelConfig(**TINY, num_labels=num_labels, problem_type=problem_type, pairs=True, pair_reading=reading)
    classifier = build_classifier(config, len(tokenizer_layer.vocabulary), tokenizer_layer.separator_id)
    assert classifier.count_params() == expected_params(config, len(tokenizer_layer.vocabulary))
    return build_end_to_end(tokenizer_layer, classifier, kinds.get(problem_type), pairs=True)


# The default reading in the fast tier; the others build models of their own, slow on two cores.
@pytest.mark.parametrize(
    "reading", [pytest.param("joint", marks=pytest.mark.slow), pytest.param("siamese", marks=pytest.mark.slow), "cross"]
)
def test_a_pair_alone_and_batched_beside_a_longer_pair_give_the_same_output(reading):
    model = reading_model(reading)
    alone = model(pair_inputs([SHORT])).numpy()
    for batch in ([SHORT, LONG_PAIR], [SHORT, LONG_PAIR[::-1]], [SHORT, ("", "great")]):
        np.testing.assert_allclose(model(pair_inputs(batch)).numpy()[:1], alone, atol=1e-5)


@pytest.mark.parametrize("reading", ["siamese", pytest.param("cross", marks=pytest.mark.slow)])
def test_swapping_the_two_texts_swaps_u_and_v_and_nothing_else(reading):
    """[u, v, |u - v|, u * v] of (b, a) is that of (a, b) with u and v swapped (cross: u and v pooled after the
    alignment, which reads the texts alike in either order)."""
    model = reading_model(reading)
    classifier, tokenizer = model.get_layer("classifier"), model.get_layer("tokenizer")
    features = tf.keras.Model(classifier.input, classifier.get_layer("pair_features").output)
    pairs = [SHORT, LONG_PAIR, ("dull", "a great film, truly great, the plot was thin")]
    forward = features(tokenizer(*pair_inputs(pairs).values())).numpy()  # (B, 4C)
    backward = features(tokenizer(*pair_inputs([p[::-1] for p in pairs]).values())).numpy()
    c = TINY["d_model"]
    u, v = forward[:, :c], forward[:, c : 2 * c]
    np.testing.assert_allclose(backward[:, :c], v, atol=1e-5)
    np.testing.assert_allclose(backward[:, c : 2 * c], u, atol=1e-5)
    np.testing.assert_allclose(backward[:, 2 * c :], forward[:, 2 * c :], atol=1e-5)
    np.testing.assert_allclose(forward[:, 2 * c :], np.concatenate([np.abs(u - v), u * v], axis=1), atol=1e-6)
    assert not np.allclose(u, v, atol=1e-3)  # the two texts were read apart


@pytest.mark.slow  # a SavedModel written and read per reading
@pytest.mark.parametrize("reading", ["siamese", "cross"])
def test_a_reading_s_saved_model_reloads_in_safe_mode_and_gives_the_same_numbers(reading, tmp_path):
    model = reading_model(reading, num_labels=1, problem_type="regression")
    inputs = pair_inputs([SHORT, LONG_PAIR, ("", "great")])
    model.save(tmp_path / "model.keras")
    reloaded = tf.keras.models.load_model(tmp_path / "model.keras", compile=False, safe_mode=True)
    np.testing.assert_allclose(reloaded(inputs).numpy(), model(inputs).numpy(), atol=1e-6)
    embedding = reloaded.get_layer("classifier").get_layer("embedding")
    assert embedding.split_pairs and not hasattr(embedding, "segment_embedding")


def test_the_reading_is_a_pair_task_s_and_is_refused_for_single_texts():
    from scratch.config import DEFAULT_PAIR_READING

    assert ModelConfig(**TINY, pairs=True).pair_reading == DEFAULT_PAIR_READING
    assert ModelConfig(**TINY).pair_reading is None
    config = ModelConfig(**TINY, pairs=True, pair_reading="cross")
    assert ModelConfig(**config.to_dict()) == config
    with pytest.raises(ValueError, match="--pair-reading siamese says how to read the two texts of a pair task"):
        ModelConfig(**TINY, pair_reading="siamese")
    with pytest.raises(ValueError, match=r"--pair-reading must be one of joint, siamese, cross, got 'both'"):
        ModelConfig(**TINY, pairs=True, pair_reading="both")


@pytest.mark.slow  # builds every reading
def test_every_reading_looks_its_token_vectors_up_once_through_the_embedding_layer():
    """The one token-embedding call over the ids as the tokenizer gives them: what attributions over it need."""
    for reading in READINGS:
        classifier = reading_model(reading).get_layer("classifier")
        embedding = classifier.get_layer("embedding")
        assert len(embedding.inbound_nodes) == 1 and embedding.input is classifier.input


def test_a_siamese_pair_s_attention_maps_keep_each_text_to_itself():
    from scratch.model import attention_maps

    model = reading_model("siamese")
    classifier, tokenizer = model.get_layer("classifier"), model.get_layer("tokenizer")
    blocks = [classifier.get_layer(f"encoder_{i}") for i in range(TINY["num_layers"])]
    ids = tokenizer(*pair_inputs([SHORT]).values())  # "a great film [SEP] truly great": 3 + 1 + 2 tokens
    maps = attention_maps(classifier.get_layer("embedding"), blocks, ids).numpy()  # (L, H, 6, 6)
    assert maps.shape == (TINY["num_layers"], TINY["num_heads"], 6, 6)
    np.testing.assert_allclose(maps.sum(axis=-1), 1.0, atol=1e-5)
    assert not maps[..., :3, 3:].any() and not maps[..., 4:, :4].any()  # no attention across the separator
    np.testing.assert_array_equal(maps[..., 3, :], np.eye(6)[3] + np.zeros_like(maps[..., 3, :]))
    other = tokenizer(*pair_inputs([(SHORT[0], "the plot was thin and wooden")]).values())
    np.testing.assert_allclose(
        attention_maps(classifier.get_layer("embedding"), blocks, other).numpy()[..., :3, :3],
        maps[..., :3, :3],
        atol=1e-6,
    )  # the first text's maps owe nothing to the second
