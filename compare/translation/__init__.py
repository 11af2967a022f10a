"""Translation reports: `compare run --task pt_en` and `compare report` over translation runs (docs/formats.md)."""
