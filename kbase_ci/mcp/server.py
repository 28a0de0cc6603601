"""`kbase mcp`: the query tools over the Model Context Protocol (stdio), with the official
SDK's `MCPServer`. A thin layer: every tool calls the function in `tools`, which calls the
CLI's answer function, and returns that JSON as the tool's text.

Descriptions are written for an agent deciding *when* to call a tool; each error names
what to change.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from kbase_ci import __version__
from kbase_ci.mcp import prompts, tools
from kbase_ci.mcp.catalog import (
    MAX_TOKENS,
    READ_ONLY,
    Budget,
    Note,
    register_navigation,
    result,
)
from kbase_ci.mcp.framing import serve_stdio
from kbase_ci.mcp.warm import Warm

INSTRUCTIONS = """\
Tools over a Git repository of Markdown notes (Obsidian-style [[wikilinks]], #tags,
YAML frontmatter), answered from its committed index with the work tree's current edits
overlaid; every tool returns the JSON `kbase` prints for the same question. Paths are
relative to the repository root. Which tool when: `search` when you do not know note
names; `read` a hit (or one section of it); `explore` to see what links to and from a
note you found; `context` for the text of several related notes within a token budget;
`graph` (action explore, summary) for a cheap map of a neighbourhood; `prerequisites`
and `reading_order` for what to read first; `links`, `backlinks`, `notes`, `tags` for
exact lists; `gaps` for what is missing; `handover_latest` to resume someone's work;
`status` when answers look stale. Every answer carries an `index` object saying which
commit the index is from and which notes changed since (those are read from the work
tree)."""


def build_server(warm: Warm) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(
        "kbase", title="kbase: notes, links and handovers of this repository",
        instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    @server.tool(annotations=READ_ONLY, description=(
        "Find notes about a topic when you do not know their names: 'I need information "
        "about X'. Ranks whole notes by words and meaning and returns each hit's path, "
        "title, score and best-matching section with its line. Follow up with `read` (one "
        "section is enough) or `context`. Narrow with `domain` or `tags` (a tag also "
        "matches its child tags). Not for a note you already know: use `explore` or "
        "`read` then. Errors when nothing matches, saying what to loosen."))
    async def search(
        query: Annotated[str, Field(description="What you are looking for, in a few words "
                                                "or a question.")],
        domain: Annotated[str | None, Field(description="Only notes of this domain (the "
                                                        "top folder, unless configured).")]
        = None,
        tags: Annotated[list[str] | None, Field(description="Only notes carrying every one "
                                                            "of these tags (or a child tag).")]
        = None,
        limit: Annotated[int, Field(description="How many notes to return.", ge=1, le=100)]
        = 5,
        concise: Annotated[bool, Field(description="Only path, title and score per hit "
                                                   "(fewer tokens).")] = False,
        snippets: Annotated[bool, Field(description="Add a short text snippet around the "
                                                    "match to each hit.")] = False,
        explain: Annotated[bool, Field(description="Add each ranker's rank and score to "
                                                   "each hit (why it ranks there).")]
        = False,
        mode: Annotated[Literal["hybrid", "bm25", "semantic"],
                        Field(description="hybrid = words + meaning (default); bm25 = exact "
                                          "words only; semantic = meaning only.")]
        = "hybrid",
        max_tokens: Budget = MAX_TOKENS,
    ) -> CallToolResult:
        return await result(lambda: tools.search(warm, query, mode=mode, domain=domain,
                                                 tags=tags, limit=limit, concise=concise,
                                                 snippets=snippets, explain=explain),
                            warm, max_tokens)

    @server.tool(annotations=READ_ONLY, description=(
        "See what is around a note you already found: 'I found note Y, what is near it?'. "
        "Returns its outgoing links (a link with `path: null` names a note that is referenced "
        "but not yet written; links to URLs are listed apart in `external`), its backlinks "
        "with the sentence each sits in, and similar notes that are not linked with it yet. "
        "Paths and sentences only, no note text: use it to navigate, to find related "
        "material, or to spot missing links; use `context` when you need the text."))
    async def explore(
        note: Note,
        concise: Annotated[bool, Field(description="Paths only: outlinks, unresolved link "
                                                   "texts, backlinks.")] = False,
        max_tokens: Budget = MAX_TOKENS,
    ) -> CallToolResult:
        return await result(lambda: tools.explore(warm, note, concise=concise), warm,
                            max_tokens)

    @server.tool(annotations=READ_ONLY, description=(
        "Read a note you know the name of: the whole Markdown text, or only one section "
        "(cheaper). Returns the text with its line range and token estimate. Errors name "
        "the note's headings when the section does not exist."))
    async def read(
        note: Note,
        section: Annotated[str | None, Field(description="A heading of the note (`Install`, "
                                                         "or `Install > Linux` for a nested "
                                                         "one), or `^id` for a block.")]
        = None,
        expand_links: Annotated[bool, Field(description="Add the text of the notes it "
                                                        "links to (`linked`).")] = False,
        depth: Annotated[int, Field(description="With expand_links: links followed from "
                                                "note to note.", ge=0)] = 1,
        max_tokens: Budget = MAX_TOKENS,
    ) -> CallToolResult:
        return await result(lambda: tools.read(warm, note, section=section,
                                               expand_links=expand_links, depth=depth),
                            warm, max_tokens)

    @server.tool(annotations=READ_ONLY, description=(
        "Gather background for a task in one call: starting from a note, or from the "
        "best search hits for a query, follow links outwards and return the most "
        "relevant notes' text within a token budget, with how each note was reached "
        "(link traversal metadata). Prefer it over many `read` calls when you need "
        "several related notes before writing or deciding; use `search` first when you "
        "know no note to start from, and `explore` when paths are enough."))
    async def context(
        note: Annotated[str | None, Field(description="Start from this note (path, "
                                                      "title or alias).")] = None,
        query: Annotated[str | None, Field(description="Or start from the notes that "
                                                       "best match this query.")] = None,
        max_tokens: Annotated[int, Field(description="Budget for the whole answer, its "
                                                     "JSON included.", ge=1)] = MAX_TOKENS,
        depth: Annotated[str, Field(description="How far to follow links: quick, "
                                                "standard, deep, or a number of hops.")]
        = "standard",
        strategy: Annotated[str, Field(description="breadth (nearest first), importance "
                                                   "(most linked first) or tags (also "
                                                   "notes sharing follow_tags).")]
        = "breadth",
        follow_tags: Annotated[list[str] | None, Field(description="With strategy tags: "
                                                                   "tags whose notes join "
                                                                   "the bundle.")] = None,
        concise: Annotated[bool, Field(description="Which notes and sections to read, "
                                                   "without their text.")] = False,
    ) -> CallToolResult:
        return await result(lambda: tools.context(
            warm, note=note, query=query, strategy=strategy, depth=depth.strip(),
            max_tokens=max_tokens, follow_tags=follow_tags, concise=concise), warm,
            max_tokens)

    @server.tool(annotations=READ_ONLY, description=(
        "Find what the notes are missing, ranked: notes many notes link to that are not "
        "written yet (`unwritten`, listed first), concepts mentioned across several notes "
        "that have no note of their own (`concepts`), and attachments links name that are "
        "missing (`attachments`), each with where it is mentioned. Use it when deciding "
        "what to write next or checking how well a domain is covered."))
    async def gaps(
        kinds: Annotated[list[Literal["note", "concept", "attachment"]] | None,
                         Field(description="Only these kinds of gap (default: all three: "
                                           "note, concept, attachment).")] = None,
        domain: Annotated[str | None, Field(description="Only this domain.")] = None,
        limit: Annotated[int, Field(description="How many of each kind to return.",
                                    ge=1, le=100)] = 20,
        min_notes: Annotated[int, Field(description="A concept counts when at least "
                                                    "this many notes mention it.",
                                        ge=1)] = 3,
        concise: Annotated[bool, Field(description="Targets and concepts with their "
                                                   "counts, not where they are.")] = False,
        max_tokens: Budget = MAX_TOKENS,
    ) -> CallToolResult:
        return await result(lambda: tools.gaps(warm, kinds=list(kinds or []) or None,
                                               domain=domain, limit=limit,
                                               min_notes=min_notes, concise=concise),
                            warm, max_tokens)

    @server.tool(annotations=READ_ONLY, description=(
        "Resume work someone handed over: the newest handover note (of a track), with its "
        "open next steps, blockers and the questions still waiting for an answer. Call it "
        "first when you pick up a task in this repository."))
    async def handover_latest(
        track: Annotated[str | None, Field(description="Only handovers of this track "
                                                       "(frontmatter `track:`).")] = None,
        max_tokens: Budget = MAX_TOKENS,
    ) -> CallToolResult:
        return await result(lambda: tools.handover_latest(warm, track=track), warm,
                            max_tokens)

    register_navigation(server, warm)

    @server.prompt(name="write_handover", title="Write a handover that passes the checks",
                   description=(
                       "Walks you through writing a handover note for this repository: the "
                       "skeleton from its note type schema, what each part needs, and how "
                       "to verify it with `kbase handover check`."))
    def write_handover(
        track: Annotated[str | None, Field(description="The work track (frontmatter "
                                                       "`track:`).")] = None,
        title: Annotated[str | None, Field(description="The note's title.")] = None,
    ) -> str:
        return prompts.write_handover(warm, track=track, title=title)

    return server


def serve(warm: Warm) -> None:
    """Open the index now (so a broken `--index` fails before the client connects), then
    answer over stdin/stdout until the client closes them."""
    warm.view()  # takes the warm state's lock itself
    server = build_server(warm)
    print(f"kbase mcp: serving {warm.root} over stdio", file=sys.stderr)
    anyio.run(serve_stdio, server)

