"""The request inspector screen: the exact requests the shown plan's compaction, or the branch
summary of a navigation, would send.

Built by ``summarize.requests.compaction_requests`` / ``branch_requests`` (the real pipeline
with a recording stand-in: nothing is sent, no model is called, no key is shown) in a thread
worker, on one consistent snapshot of the session; if the session grew since the plan was
made, the screen says so instead (the requests of a stale plan are not what a run would
send). Each
request shows its part, endpoint, ``max_tokens`` and options, the system prompt and the user
prompt with the serialized transcript; very long prompts are cut on screen (the
``compact --dry-run --show-requests`` command prints them whole). ``escape`` closes.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from tui_compactor.textsafe import sanitize
from tui_compactor.ui.bindings import key_of
from tui_compactor.ui.workers import work
from tui_compactor.wording import count_of

if TYPE_CHECKING:
    from tui_compactor.engine.branch import NavigationPlan
    from tui_compactor.engine.plan import CompactionPlan
    from tui_compactor.workbench.handle import SessionHandle
    from tui_compactor.workbench.settings import Settings

__all__ = ["RequestsScreen"]

SHOWN_CHARS = 12_000
"""Characters of one prompt drawn on screen (the rest is counted, not drawn)."""


def _clip(text: str) -> Text:
    shown = sanitize(text[:SHOWN_CHARS])
    out = Text(shown)
    if len(text) > SHOWN_CHARS:
        out.append(
            f"\n… {len(text) - SHOWN_CHARS:,} more characters "
            "(compact --dry-run --show-requests prints everything)",
            style="dim",
        )
    return out


def request_renderables(requests: list[Any]) -> list[Text]:
    """One block of text per request."""
    blocks = []
    for item in requests:
        head = Text()
        head.append(f"{item.part} · request {item.window} · {item.kind}", style="bold reverse")
        head.append(f"  {sanitize(item.summarizer, single_line=True, max_len=60)}\n", style="bold")
        head.append(
            f"endpoint {sanitize(item.url or 'offline (no network)', single_line=True)}"
            f" · max_tokens {item.max_tokens}",
            style="cyan",
        )
        options = {k: v for k, v in item.body.items() if k not in ("messages", "system", "prompt")}
        head.append(
            f"\noptions {sanitize(str(options), single_line=True, max_len=300)}\n", style="dim"
        )
        head.append("── system prompt\n", style="bold yellow")
        head.append_text(_clip(item.system))
        head.append("\n── user prompt\n", style="bold yellow")
        head.append_text(_clip(item.prompt))
        head.append("\n")
        blocks.append(head)
    return blocks


class StalePlan(Exception):
    """The session grew since the plan was made."""


class RequestsScreen(Screen[None]):
    """The requests a compaction of ``plan`` (or, ``branch=True``, the branch summary of the
    navigation ``plan``) with ``summarizer`` would send."""

    DEFAULT_CSS = """
    RequestsScreen > #requests-head { height: auto; padding: 0 1; }
    RequestsScreen > VerticalScroll { height: 1fr; padding: 0 1; }
    RequestsScreen Static.request { margin-bottom: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="requests.close"),
    ]

    class Built(Message):
        """The requests are recorded (posted by the worker)."""

        def __init__(self, requests: list[Any], error: str | None = None) -> None:
            super().__init__()
            self.requests = requests
            self.error = error

    def __init__(
        self,
        plan: CompactionPlan | NavigationPlan,
        generation: int,
        handle: SessionHandle,
        summarizer: Any,
        settings: Settings,
        options: dict[str, Any] | None = None,
        *,
        branch: bool = False,
    ) -> None:
        """``generation``: the session generation ``plan`` was made at; ``options`` are the
        job's (method, instructions...), as the app would run it."""
        super().__init__()
        self.branch = branch
        self.what = "branch summary" if branch else "compaction"
        self.options = dict(options or {})
        self.plan = plan
        self.generation = generation
        self.handle = handle
        self.summarizer = summarizer
        self.settings = settings
        self.requests: list[Any] = []

    def compose(self) -> ComposeResult:
        """Headline, the requests, footer."""
        yield Static(
            Text("building the requests (nothing is sent)…", style="dim"), id="requests-head"
        )
        yield VerticalScroll(id="requests-body")
        yield Footer()

    def on_mount(self) -> None:
        """Start building."""
        self.query_one("#requests-body").focus()
        self.build_requests()

    @work(thread=True, exclusive=True, exit_on_error=False, group="requests")
    def build_requests(self) -> None:
        """Run the pipeline with the recording summarizer in a thread (its own event loop)."""
        from tui_compactor.summarize.requests import branch_requests, compaction_requests

        try:
            with self.handle.read() as snapshot:
                if snapshot.generation != self.generation:
                    raise StalePlan
                if self.branch:
                    job = branch_requests(self.plan, self.summarizer, **self.options)
                else:
                    job = compaction_requests(
                        self.plan, snapshot.session, self.summarizer, self.settings.compaction(),
                        files_format=self.settings.files_format, **self.options,
                    )  # fmt: skip
                requests = asyncio.run(job)
        except StalePlan:
            again = (
                "navigate again (enter)" if self.branch else f"plan again ({key_of(self, 'plan')})"
            )
            self.post_message(
                self.Built(
                    [],
                    "the session grew since this plan was made: "
                    f"{again} to see what a run would send",
                )
            )
            return
        except Exception as error:  # shown on the screen; the app keeps running
            self.post_message(self.Built([], f"{type(error).__name__}: {error}"))
            return
        self.post_message(self.Built(requests))

    async def on_requests_screen_built(self, message: Built) -> None:
        """Show the requests."""
        head = self.query_one("#requests-head", Static)
        if message.error:
            head.update(Text(sanitize(message.error, max_len=300), style="bold red"))
            return
        self.requests = message.requests
        label = sanitize(getattr(self.summarizer, "label", "?"), single_line=True, max_len=60)
        head.update(Text.assemble(
            (f"{count_of(len(self.requests), 'request')} this {self.what} would send to {label}",
             "bold"),
            ("  · nothing was sent; the API key is never shown · esc closes", "dim"),
        ))  # fmt: skip
        body = self.query_one("#requests-body", VerticalScroll)
        await body.remove_children()
        await body.mount_all(
            Static(block, classes="request") for block in request_renderables(self.requests)
        )

    def action_close(self) -> None:
        """Back to the main screen."""
        self.dismiss(None)
