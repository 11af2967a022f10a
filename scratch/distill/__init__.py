"""Distilling a finished classification run into the from-scratch Transformer (`python -m scratch --teacher RUN`).

`teacher` checks the teacher against the student's data and reads its logits, `augment` makes the transfer
set's extra texts, `transfer` has the teacher label them once and caches them with the run, `loss` is the
distillation loss, and `distillation` ties them into what `scratch.train` trains with.
"""
