"""`compare curve`: the test score against train size for both sides (curve.json and its pages)."""
