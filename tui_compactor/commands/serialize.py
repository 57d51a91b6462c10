"""``tui-compactor serialize``: the exact text that would be sent to the summarizer.

``--scope context`` (default): the messages of the context at the node. ``--scope branch``:
every message-bearing entry on the root..node path (older summaries included).
``--format pi`` is pi's transcript byte for byte; ``omp`` oh-my-pi's (its ``serializeConversation``
without a provider dialect); ``native`` is ours (boundary tags escaped).
Written to stdout unchanged when it is a file or a pipe; sanitized when it is a terminal.
"""

from __future__ import annotations

import argparse
import sys

from tui_compactor.commands import engine_args as common


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the command's switches."""
    common.add_session(parser)
    common.add_leaf(parser, at=True)
    parser.add_argument("--scope", choices=("context", "branch"), default="context")
    parser.add_argument("--format", choices=("pi", "omp", "native"), default="pi")
    parser.add_argument(
        "--drop-thinking", action="store_true", help="native format: leave thinking out"
    )
    common.add_settings(parser)


def run(args: argparse.Namespace) -> int:
    """Print the transcript."""
    from tui_compactor.engine.context import build_context
    from tui_compactor.engine.messages import message_from_entry
    from tui_compactor.engine.omp_messages import convert_to_llm_omp
    from tui_compactor.engine.serialize import serialize_native, serialize_omp, serialize_pi
    from tui_compactor.textsafe import sanitize, well_formed

    try:
        settings, session, leaf = common.load_at_leaf(args, writes=False)
    except common.CommandError as error:
        return common.fail(error)
    if args.scope == "context":
        messages = build_context(session, leaf, rules=settings.rules).messages
    else:
        derived = [message_from_entry(session.entries[i]) for i in session.path_to(leaf)]
        messages = [message for message in derived if message is not None]
    if args.format == "pi":
        text = serialize_pi(messages)
    elif args.format == "omp":
        text = serialize_omp(convert_to_llm_omp(messages))
    else:
        text = serialize_native(messages, drop_thinking=args.drop_thinking)
    if sys.stdout.isatty():
        sys.stdout.write(sanitize(text) + "\n")
    else:
        data = well_formed(text).encode("utf-8")  # as Node writes a lone surrogate
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    return common.EXIT_OK
