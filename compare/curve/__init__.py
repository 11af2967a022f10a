"""`compare curve`: accuracy against train size for both sides (curve.json and its pages)."""
