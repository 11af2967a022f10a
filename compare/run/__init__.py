"""`compare run`: training both sides by starting their commands (or reusing their runs), then the report."""
