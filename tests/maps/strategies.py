"""Hypothesis strategies: argument maps whose every text is arbitrary, often hostile, unicode."""

from __future__ import annotations

from hypothesis import strategies as st

from argnb.maps import ArgumentMap
from argnb.maps.clean import FORBIDDEN

# Pieces of syntax of every format we write: Argdown (comments, escapes, shortcodes, front
# matter, tags, YAML data, references), XML (controls, entities), HTML (markup), JSON, matplotlib
# (mathtext), plus whitespace of every kind.
TRICKY = [
    "//",
    "/*",
    "*/",
    "<!--",
    "-->",
    "\\",
    "\\\\",
    "[",
    "]",
    "<",
    ">",
    "@",
    "#",
    "#(",
    ")",
    "(",
    "*",
    "**",
    "_",
    "__",
    "{",
    "}",
    "{a: 1}",
    "===",
    "=",
    "`",
    "~",
    "+",
    "-",
    "--",
    "----",
    "<-",
    "<+",
    "<_",
    "+>",
    "->",
    ".",
    "..",
    "...",
    ":",
    "::",
    ".A.",
    ":A:",
    ":smile:",
    ".->.",
    "e.g.",
    "http://x.org/a_b",
    "C:\\Users\\new",
    "(1)",
    ",",
    ";",
    "\x00",
    "\x0b",
    "\x1b",
    "\x7f",
    "\x85",
    "\ufffe",
    "\uffff",
    "\ud800",
    "\udfff",
    "\ufeff",
    "\u200b",
    "\u2028",
    "\u00a0",
    "\r",
    "\r\n",
    "\n",
    "\t",
    "  ",
    "&amp;",
    "&#0;",
    "<img src=x onerror=alert(1)>",
    "</script>",
    "$x^2$",
    "$",
    "%",
    "'",
    '"',
    "🙂",
    "日本語",
    "עברית",
    "\u202e",
]

any_char = st.characters(exclude_categories=())  # every code point, surrogates included
texts = st.lists(st.one_of(st.sampled_from(TRICKY), st.text(any_char, max_size=6)), max_size=8).map(
    "".join
)
ids = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12).filter(
    lambda s: not FORBIDDEN.search(s)
)
statuses = st.sampled_from([None, "IN", "OUT", "UNDEC"])


@st.composite
def maps(draw, max_statements: int = 6) -> ArgumentMap:
    """A map with random statements, arguments, attacks, supports and moves."""
    m = ArgumentMap(draw(texts))
    n = draw(st.integers(1, max_statements))
    names = draw(st.lists(ids, min_size=n + 3, max_size=n + 3, unique=True))
    stmt, arg_ids = names[:n], names[n:]
    moves = [m.add_move(f"m{i}", draw(texts), draw(texts)) for i in range(draw(st.integers(0, 2)))]
    kinds = st.sampled_from(["claim", "premise", "assumption"])
    for s in stmt:
        m.add_statement(
            s,
            draw(texts),
            kind=draw(kinds),
            agent=draw(st.none() | texts),
            status=draw(statuses),
            move=draw(st.sampled_from([None, *moves])),
        )
    arguments = []
    for a in arg_ids[: draw(st.integers(0, 3))]:
        conclusion = draw(st.sampled_from(stmt))
        others = [s for s in stmt if s != conclusion]
        premises = draw(st.lists(st.sampled_from(others), unique=True)) if others else []
        m.add_argument(
            a,
            premises=premises,
            conclusion=conclusion,
            agent=draw(st.none() | texts),
            status=draw(statuses),
            move=draw(st.sampled_from([None, *moves])),
            text=draw(texts),
        )
        arguments.append(a)
    for _ in range(draw(st.integers(0, 3))):
        src, dst = draw(st.sampled_from(stmt)), draw(st.sampled_from(stmt))
        kind = draw(st.sampled_from(["rebut", "support", "undercut"]))
        if kind == "undercut" and arguments:
            m.add_undercut(src, draw(st.sampled_from(arguments)))
        elif kind == "support":
            m.add_support(src, dst)
        else:
            m.add_rebut(src, dst)
    return m


def text_fields(m: ArgumentMap) -> int:
    """How many random strings a map holds (title, texts, agents, labels, moves)."""
    count = 1
    for _, d in m.graph.nodes(data=True):
        count += sum(isinstance(d.get(k), str) for k in ("text", "agent"))
    return count + 2 * len(m.moves)
