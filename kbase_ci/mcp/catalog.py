"""The MCP tools that navigate the vault like `kbase links|backlinks|graph|notes|tags|
status|prerequisites|reading-order` do, and what every tool shares: how an answer or an
error becomes a tool result.

One tool per query command (`tags suggest` is the tool `tags_suggest`), each returning
the CLI's JSON for the same question. Errors are the CLI's messages in the words of the
tool (`max_tokens`, not `--max-tokens`: `tools.in_parameters`).
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from kbase_ci.errors import KbaseError
from kbase_ci.mcp import tools
from kbase_ci.mcp.warm import Warm
from kbase_ci.query.payload import render

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                            idempotent_hint=True, open_world_hint=False)

Note = Annotated[str, Field(description="A note path (`Concepts/Linking.md`), its title or "
                                        "one of its aliases (case-insensitive).")]
Timeout = Annotated[float | None, Field(description="Stop after this many seconds and answer "
                                                    "with what was found, marked `partial`.",
                                        gt=0)]
Tags = Annotated[list[str] | None, Field(description="Only notes carrying every one of these "
                                                     "tags (or a child tag).")]
MAX_TOKENS = 8000
"""A tool's answer stays within this many tokens unless the call asks for another budget."""
Budget = Annotated[int, Field(description="The answer (its JSON) stays within this many "
                                          "tokens: lists are cut from their least relevant "
                                          "end and `truncated` says what went.", ge=1)]


def error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


async def result(run: Callable[[], dict[str, Any]], warm: Warm,
                 max_tokens: int | None = None) -> CallToolResult:
    """The answer as compact JSON within `max_tokens` (as the CLI prints it); a kbase
    error as a tool error with its message, named in the tool's parameters. A bug
    becomes a tool error too (with the traceback on stderr, as the CLI prints it): the
    server keeps serving the other tools.

    The answer is computed on a worker thread, without the server's lock (the warm state
    takes it only while it changes), so a slow call never makes the others wait; a call
    that takes longer than `warm.time_limit` gets a tool error at that moment (its thread
    finishes in the background, its answer unused)."""
    try:
        with anyio.fail_after(warm.time_limit):
            answer = await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
    except TimeoutError:
        return error(f"no answer within {warm.time_limit:g} s (the server's --timeout): "
                     "ask a narrower question (a smaller limit, depth or max_tokens, or "
                     "one note); the other tools keep answering")
    except tools.Empty as exc:  # the CLI's answer too, as it prints it (exit 1)
        try:
            return error(tools.in_parameters(str(exc)) + "\n"
                         + render(exc.answer, max_tokens=max_tokens))
        except KbaseError as budget:
            return error(tools.in_parameters(f"{exc}\n{budget}"))
    except KbaseError as exc:
        return error(tools.in_parameters(str(exc)))
    except Exception as exc:
        print("kbase mcp: internal error in a tool call (please report this with the "
              "traceback below)", file=sys.stderr)
        traceback.print_exc()
        return error(f"kbase internal error: {type(exc).__name__}: {exc}")
    try:
        text = render(answer, max_tokens=max_tokens)
    except KbaseError as exc:
        return error(tools.in_parameters(str(exc)))
    return CallToolResult(content=[TextContent(type="text", text=text)])


def register_navigation(server: MCPServer[Any], warm: Warm) -> None:
    """links, backlinks, graph, notes, tags, tags_suggest, status, prerequisites and
    reading_order."""

    @server.tool(annotations=READ_ONLY, description=(
        "The links one note makes, each with its line and the sentence around it: `path` "
        "is the target note or attachment, or null for a note that is referenced but not "
        "written yet (`status` says which); links to URLs are listed apart in `external`. "
        "Use it to follow a note's references exactly; `explore` gives the same plus "
        "backlinks and similar notes at a glance."))
    async def links(note: Note, max_tokens: Budget = MAX_TOKENS) -> CallToolResult:
        return await result(lambda: tools.links(warm, note), warm, max_tokens)

    @server.tool(annotations=READ_ONLY, description=(
        "Who links to a note, with the sentence each link sits in: 'where is X used or "
        "explained?'. Use it before changing or renaming a note, or to find the notes "
        "that give context to one."))
    async def backlinks(
        note: Note,
        concise: Annotated[bool, Field(description="Where only: path and line, no "
                                                   "sentence.")] = False,
        max_tokens: Budget = MAX_TOKENS,
    ) -> CallToolResult:
        return await result(lambda: tools.backlinks(warm, note, concise=concise), warm,
                            max_tokens)

    @server.tool(annotations=READ_ONLY, description=(
        "Questions about the whole link graph. action `explore` (with `note`): a map of "
        "the notes around it, their clusters, hubs and an order to read them (`summary`: "
        "about 500 tokens, the cheapest overview of a neighbourhood); `path` (`source`, "
        "`target`): how two notes connect; `neighborhood` (`note`, `depth`): notes within "
        "N links; `hubs`: the best-linked notes; `clusters`: groups of linked notes; "
        "`orphans`: notes nobody links to. Use it to orient in an unknown vault; use "
        "`context` when you need the notes' text."))
    async def graph(
        action: Annotated[Literal["explore", "path", "neighborhood", "hubs", "clusters",
                                  "orphans"], Field(description="Which question.")],
        note: Annotated[str | None, Field(description="explore, neighborhood: the note.")]
        = None,
        source: Annotated[str | None, Field(description="path: the first note.")] = None,
        target: Annotated[str | None, Field(description="path: the second note.")] = None,
        depth: Annotated[int | None, Field(description="explore (2), neighborhood (1): "
                                                       "hops.", ge=0)] = None,
        limit: Annotated[int | None, Field(description="Most results (CLI defaults per "
                                                       "action).", ge=0)] = None,
        directed: Annotated[bool, Field(description="path, neighborhood: follow links "
                                                    "only from the note holding them.")]
        = False,
        all_paths: Annotated[bool, Field(description="path: every shortest path.")] = False,
        min_links: Annotated[int | None, Field(description="hubs: least links (3).", ge=0)]
        = None,
        min_size: Annotated[int | None, Field(description="clusters: least notes (3).",
                                              ge=1)] = None,
        no_backlinks: Annotated[bool, Field(description="orphans: every note nobody "
                                                        "links to.")] = False,
        summary: Annotated[bool, Field(description="explore: the ~500-token map.")] = False,
        concise: Annotated[bool, Field(description="Paths and numbers only: no titles, no "
                                                   "edges.")] = False,
        timeout: Timeout = None,
        max_tokens: Budget = MAX_TOKENS,
    ) -> CallToolResult:
        return await result(lambda: tools.graph(
            warm, action, note=note, source=source, target=target, depth=depth, limit=limit,
            directed=directed, all_paths=all_paths, min_links=min_links, min_size=min_size,
            no_backlinks=no_backlinks, summary=summary, timeout=timeout, concise=concise),
            warm, max_tokens)

    @server.tool(annotations=READ_ONLY, description=(
        "List notes by tag and domain (a tag includes the tags below it): 'which notes "
        "are about rust?' when tags say it better than words. Use `search` for a topic "
        "in the text."))
    async def notes(
        tags: Tags = None,
        any_tag: Annotated[bool, Field(description="Notes with any of the tags instead "
                                                   "of all.")] = False,
        domain: Annotated[str | None, Field(description="Only this domain.")] = None,
        max_tokens: Budget = MAX_TOKENS,
    ) -> CallToolResult:
        return await result(lambda: tools.notes(warm, tags=tags, any_tag=any_tag,
                                                domain=domain), warm, max_tokens)

    @server.tool(annotations=READ_ONLY, description=(
        "The vault's tags with how many notes use each; `tree` adds the hierarchy, "
        "`stats` the tags used together. Use it to learn the vocabulary before filtering "
        "`search` or `notes` by tag."))
    async def tags(
        tree: Annotated[bool, Field(description="The tag hierarchy.")] = False,
        stats: Annotated[bool, Field(description="Pairs of tags used together.")] = False,
        limit: Annotated[int, Field(description="Pairs with stats, 0 = all.", ge=0)] = 50,
        max_tokens: Budget = MAX_TOKENS,
    ) -> CallToolResult:
        return await result(lambda: tools.tags(warm, tree=tree, stats=stats, limit=limit),
                            warm, max_tokens)

    @server.tool(annotations=READ_ONLY, description=(
        "Tags a note probably lacks, voted by the notes most like it (similar and "
        "linked notes) and weighed by how rare each tag is. Use it when writing or "
        "tidying a note."))
    async def tags_suggest(
        note: Note,
        limit: Annotated[int, Field(description="Most tags.", ge=1, le=100)] = 5,
        max_tokens: Budget = MAX_TOKENS,
    ) -> CallToolResult:
        return await result(lambda: tools.tags_suggest(warm, note, limit=limit), warm,
                            max_tokens)

    @server.tool(annotations=READ_ONLY, description=(
        "Where the index comes from (branch, folder), which commit it was built from, "
        "which notes changed since, its sizes and embedding model. Call it when answers "
        "look stale or semantic search is unavailable."))
    async def status(max_tokens: Budget = MAX_TOKENS) -> CallToolResult:
        return await result(lambda: tools.status(warm), warm, max_tokens)

    @server.tool(annotations=READ_ONLY, description=(
        "What to read before a note, foundations first: the notes it links to that more "
        "notes rely on, its folder's overview note, and theirs in turn (no model, from "
        "links and folders). Use it before reading a note on an unfamiliar subject."))
    async def prerequisites(
        note: Note,
        depth: Annotated[int, Field(description="Steps back through prerequisites.",
                                    ge=1)] = 2,
        limit: Annotated[int, Field(description="Most notes.", ge=1)] = 20,
        timeout: Timeout = None,
        max_tokens: Budget = MAX_TOKENS,
    ) -> CallToolResult:
        return await result(lambda: tools.prerequisites(warm, note, depth=depth, limit=limit,
                                                        timeout=timeout), warm, max_tokens)

    @server.tool(annotations=READ_ONLY, description=(
        "An order to read a set of notes in, each after the notes it builds on: the notes "
        "near `start`, or those with `tags` and `domain` (both: those near `start` with "
        "them), or all. Use it to plan reading "
        "a topic or onboarding onto a part of the vault."))
    async def reading_order(
        start: Annotated[str | None, Field(description="The notes within `depth` links of "
                                                       "this note.")] = None,
        tags: Tags = None,
        domain: Annotated[str | None, Field(description="Only this domain.")] = None,
        depth: Annotated[int, Field(description="Links from start.", ge=0)] = 2,
        limit: Annotated[int, Field(description="Most notes listed.", ge=1)] = 50,
        timeout: Timeout = None,
        max_tokens: Budget = MAX_TOKENS,
    ) -> CallToolResult:
        return await result(lambda: tools.reading_order(warm, start=start, tags=tags,
                                                        domain=domain, depth=depth,
                                                        limit=limit, timeout=timeout),
                            warm, max_tokens)
