"""Headless commands: one module per command, each with add_arguments() and run()."""
