"""Summaries: prompts, providers, offline summarizer, compaction and branch-summary runs."""
