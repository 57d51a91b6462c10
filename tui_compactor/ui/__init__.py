"""The Textual app: renders state and dispatches work; holds no algorithm."""
