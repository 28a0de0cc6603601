"""Which candidate terms are concepts: the filtering step of concept extraction.

`kbase_ci.parse.conceptmentions` finds candidates with regular expressions (backticked
identifiers, runs of capitalised words); the rules here decide which of them name a
thing a note could document. Measured on the shared vaults (bench/concept_precision.py,
judged samples in bench/data/), the candidates the scan alone kept were mostly:

- literals and one-word values in backticks (`true`, `null`, `today`, `space`): a value
  or keyword of some syntax, not a concept; a code term needs identifier structure (a
  `.`, `_`, `::`, `->`, `-`, a digit or an inner capital: `json.loads`, `dependsOn`),
  and is not a stand-in for the reader's own name (`foo.txt`, `my_date`);
- a capitalised sentence opener glued to a name ("Since Tasks", "Now Tasks", "At the
  GM's"): at the start of a sentence (a line, a list item, a quote, a table cell, after
  `.`) leading function words, common verbs and adverbs are dropped;
- two one-word names joined by "and" ("Strength and Dexterity"): two things, not one;
- runs joined by "de", "von" ... ("Gestor de Paquetes APT"): in the vaults these were
  sentences of other languages, far more often than "Charles de Gaulle";
- in a note that capitalises common nouns (German) a capitalised run proves nothing:
  its names count as sentence starts do, only where other notes give evidence;
- stock phrases of documentation ("See Also", "For Example", "Table of Contents");
- a name cut out of a dotted token ("Tasks X" of "Tasks X.Y.Z");
- CamelCase that is code: a property or call (`borderStyle: "none"`), a quoted value.

A run of words wrapped in emphasis or quotes (`***Keen Smell.***`, 'In Progress') is a
label someone chose as a name, so its first word is kept even when it is an opener.
"""

from __future__ import annotations

import re

_LITERAL_WORDS = """true false null none nil undefined nan inf infinity yes no on off ok
n/a tbd todo"""
LITERALS = frozenset(_LITERAL_WORDS.split())
"""Values, never concepts, however they are spelled or quoted."""

_CODE_STRUCTURE = re.compile(r"[._:>\-0-9]|[a-z][A-Z]")
_PLACEHOLDER = re.compile(r"(?i)(?:^|[._:>\-])(?:foo|bar|baz|qux|quux|my|your|some|example)"
                          r"(?:$|[._:>\-])|^(?:file|path|dir)\.|_$|^[a-z]{4,}[0-2]$|\d{5}")
"""`foo.txt`, `my_date`, `file.bak`, `TQ_`, `user1`: stand-ins for the reader's own names
(a numbered one: `user1`, `datei2`; not `ext4`, `sha1` or `ipv6`), and ids (`hftw84745`)."""

_OPENER_WORDS = """a an the this that these those it its we you they i he she our
your their my his her in on at for to with by from as if when while whenever use using
used see also and but or so then thus hence each every all some many most any no how
what why where which who whose both after before during here there note unlike like
because since although though once unless until upon via per into onto over under
about against between without within across along around behind beyond instead
consider read try set add run make keep avoid prefer choose let get given is are was
were be do does can could should would will may might must now next first finally
however therefore otherwise currently today later again still only just even always
never often sometimes usually generally typically perhaps maybe already soon yet
configure install click select open enable disable create update remove delete type
press go find check call return show hide write edit follow look take give put copy
paste save load start stop define specify provide ensure apply allow enter go visit
learn understand imagine suppose assume remember notice note"""
OPENERS = frozenset(_OPENER_WORDS.split())
"""Words that start a sentence without being part of the name that follows them."""

_DETERMINER_WORDS = "the a an this that these those our your their its my"
DETERMINERS = frozenset(_DETERMINER_WORDS.split())

_STOP_PHRASE_TEXT = """see also|for example|for instance|note that|table of contents|read more|
click here|learn more|related notes|next steps|last updated|getting started|thank you|
more information|further reading|in addition|on the other hand|as well|such as|so that|
in this case|by default|at least|of course"""
STOP_PHRASES = frozenset(p.strip() for p in _STOP_PHRASE_TEXT.replace("\n", "").split("|"))
"""Keys of stock documentation phrases that recur everywhere and name nothing."""

_CONNECTORS = frozenset(("and", "&"))
_FOREIGN_JOINS = frozenset(("de", "du", "van", "von"))
# A word after a lower-case word: which of these are capitalised tells whether a
# language capitalises its nouns ("eine Datei") or not ("a file").
_INNER_WORD = re.compile(r"\b[a-z\u00df-\u00ff]+[ \t]+"
                         r"(?=([A-Za-z\u00c0-\u00ff])[a-z\u00df-\u00ff]+\b)")
NOUN_CAPITALS = 0.3
"""Share of capitalised words after a lower-case word above which a note capitalises
nouns: 0.47 over tldr-pages' German pages (874 of 926 pages pass), 0.00-0.06 over every
English folder of the shared vaults (78 of 7,425 English tldr pages pass, short ones)."""
_MIN_INNER_WORDS = 5
_WRAP = {"*": "*", "_": "_", '"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019"}
# What may stand between a line's start and a sentence's first word (once symbols and
# spaces are stripped from its end): list and quote markers, table pipes, a task box,
# an Obsidian callout.
_LINE_OPENING = re.compile(r"[ \t]*(?:(?:[-*+>|]|\d+[.)])[ \t]*)*(?:\[[ xX]\][ \t]*)?"
                           r"(?:\[![^\]\n]*\][-+]?[ \t]*)?\Z")
_STOPS = ".!?:;|"
MAX_OPENING = 200
"""Characters of list, quote, table and callout markers a line may open with."""


def code_term(body: str) -> bool:
    """Whether a backticked identifier names something: not a literal, and with the
    structure of an identifier rather than one plain word (`explain`, `Overdue`)."""
    return (body.casefold() not in LITERALS and bool(_CODE_STRUCTURE.search(body))
            and not _PLACEHOLDER.search(body))


def sentence_start(text: str, line_start: int, start: int) -> bool:
    """Whether `start` (an offset in `text`) begins a sentence: after the line's opening
    (list markers, quotes, pipes, a callout), or after `.`, `!`, `?`, `:`, `;` or a table
    pipe, with only spaces, emphasis, quotes, brackets or symbols (an emoji) between."""
    i = start
    while i > line_start and not text[i - 1].isalnum() and text[i - 1] not in _STOPS \
            and text[i - 1] not in ",\n":
        i -= 1
    if i == start and i > line_start:
        return False  # glued to the word before
    # A line's opening is a few markers: matching it from the line's start only when the
    # name is near it keeps a 1 MB line of names linear.
    if i - line_start <= MAX_OPENING and _LINE_OPENING.match(text, line_start, i):
        return True
    j = start  # a callout's `]` is a symbol too: try the opening with it kept
    while j > line_start and text[j - 1] in " \t*_\"'(\u201c\u2018":
        j -= 1
    if j - line_start <= MAX_OPENING and _LINE_OPENING.match(text, line_start, j):
        return True
    return i > line_start and text[i - 1] in _STOPS and i < start


def capitalises_nouns(text: str) -> bool:
    """Whether `text` (code and links blanked) capitalises common nouns, as German does:
    there a run of capitals ("HTTP GET Anfragen") is no evidence of a name."""
    initials: list[str] = _INNER_WORD.findall(text)  # each word's first letter
    if len(initials) < _MIN_INNER_WORDS:
        return False
    return sum(c.isupper() for c in initials) > NOUN_CAPITALS * len(initials)


def _label(text: str, start: int, end: int) -> bool:
    """A run wrapped in emphasis or quotes (`**Keen Smell.**`, 'In Progress')."""
    opener = text[start - 1] if start > 0 else ""
    closer = _WRAP.get(opener)
    if closer is None:
        return False
    rest = text[end:end + 2]
    return rest[:1] == closer or (rest[:1] in ".:" and rest[1:2] == closer)


def name_spans(text: str, line_start: int, start: int, end: int,
               words: list[str]) -> list[tuple[int, list[str], bool]]:
    """The parts of the capitalised run `text[start:end]` (its `words`) that are names,
    as (offset, words, initial): none, the run trimmed, or two names joined by "and".
    `initial`: the name starts a sentence, so its first capital may be grammar alone; a
    query keeps such a name only if some note also capitalises it elsewhere
    (`query.undocumented`)."""
    if end < len(text) - 1 and text[end] == "." and text[end + 1].isalnum():
        words = words[:-1]  # "Tasks X" of "Tasks X.Y.Z": part of a dotted token
    if words and words[-1][-2:] in ("'s", "\u2019s"):
        words = [*words[:-1], words[-1][:-2]]  # "the Contributing Guide's": grammar
    initial = not _label(text, start, end) and sentence_start(text, line_start, start)
    trimmed = False
    # Openers and determiners go, and then what joined them to the name ("Use of Links").
    while len(words) > 1 and (words[0].casefold() in DETERMINERS or not words[0][0].isupper()
                              or (initial and words[0].casefold() in OPENERS)):
        start = text.index(words[1], start + len(words[0]))
        words = words[1:]
        trimmed = True
    initial = initial and not trimmed
    quoted = next((i for i, w in enumerate(words[:-1]) if w[-1] in "'\u2019"), None)
    if quoted is not None:  # "'Create or edit Task' Modal": a quote ends the name
        words = words[:quoted + 1]
        words[-1] = words[-1][:-1]
    joins = [i for i, w in enumerate(words) if w in _CONNECTORS]
    if len(joins) == 1 and len(words) - joins[0] > 2:
        # "Data Vault and Activity Schema": two names; "Keen Hearing and Smell": one;
        # "Source and Live Preview": the one-word side is not a name on its own
        i = joins[0]
        second = text.index(words[i + 1], start + len(" ".join(words[:i + 1])))
        first = _checked(start, words[:i], initial) if i >= 2 else []
        return [*first, *name_spans(text, line_start, second, end, words[i + 1:])]
    if len(words) == 3 and joins == [1]:
        return []  # "Strength and Dexterity": two one-word names, not one
    return _checked(start, words, initial)


def _checked(start: int, words: list[str], initial: bool) -> list[tuple[int, list[str], bool]]:
    if len(words) < 2 or " ".join(words).casefold() in STOP_PHRASES:
        return []
    if any(len(w) == 1 and w != "&" for w in words):
        return []  # "Task A", "Y W H": a variable of an example, not a name
    if _FOREIGN_JOINS.intersection(words):
        return []  # "Gestor de Paquetes", "Alias von GNU": a sentence, not a name
    return [(start, words, initial)]


def camel_term(text: str, start: int, end: int) -> bool:
    """Whether the CamelCase word `text[start:end]` is a name: not two letters ("aN" of
    "[n]aN"), not a property, keyword argument or call of code (`borderStyle: "none"`,
    `maxRetries=3`, `getValue(`), not a quoted example value (`"PaymentSucceeded"`)."""
    if end - start < 3:
        return False
    after = text[end:end + 2]
    if after[:1] in ("=", "(") or (after in (": ", ":\t") and text[end + 2:end + 3] in "\"'{["):
        return False
    return not (start > 0 and text[start - 1] in "\"'" and after[:1] == text[start - 1])
