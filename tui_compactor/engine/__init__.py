"""Pure compaction algorithms: tokens, cut points, context, serialization, file ops, branches."""
