"""A stand-in for a live agent: appends a valid child of the file's leaf, as pi would."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from tui_compactor.session.reader import load_session


def user_message(ident: str, parent: str, text: str) -> dict[str, object]:
    """The user message entry an agent appends (pi's shape), as a record."""
    return {
        "type": "message", "id": ident, "parentId": parent,
        "timestamp": "2026-01-12T10:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}],
                    "timestamp": 1768212000000},
    }  # fmt: skip


def append_child_of_leaf(path: Path, text: str = "one more thing from the agent") -> str:
    """Append a user message whose parent is the file's current leaf; returns its id."""
    with load_session(path) as session:
        assert session.leaf is not None
        parent = session.entries[session.leaf].id
    ident = secrets.token_hex(4)
    record = user_message(ident, parent, text)
    with path.open("ab") as handle:
        handle.write(json.dumps(record).encode() + b"\n")
    return ident


if __name__ == "__main__":  # used by the tmux test as a second process
    import sys

    print(append_child_of_leaf(Path(sys.argv[1])))
