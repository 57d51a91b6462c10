"""Session files: read, index, migrate, tree, append. No Textual, no Rich."""
