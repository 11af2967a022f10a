"""`compare report`: scoring runs on one split and writing results.json, predictions.jsonl and the report pages."""
