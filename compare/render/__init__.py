"""Rendering for people, shared by the report, the curve, the benchmark and the app: number formatting, tables,
Markdown, HTML and figures."""
