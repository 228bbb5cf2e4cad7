"""Name resolution: what a person types ("RTX 4090", "llama 3.1 8b") -> a catalog id.

Exact matches of a normalised id, name or alias win. Failing that, words that never tell two
entries apart ("nvidia", "geforce", "instruct", "gguf" ...) are dropped and the query matches an
entry if every remaining word appears in one of its names and no other entry matches as well.
Anything else is an :class:`EngineInputError` listing the closest names.
"""

from __future__ import annotations

from .catalog import AliasIndex, normalise_name
from .errors import EngineInputError

#: Words that decorate names without identifying anything.
NOISE_WORDS = frozenset(
    "nvidia geforce amd radeon intel apple meta the instruct it chat gguf hf model base".split()
)


def _words(text: str) -> frozenset[str]:
    return frozenset(normalise_name(text).split()) - NOISE_WORDS


def resolve(index: AliasIndex, query: str, *, field: str, display: dict[str, str]) -> str:
    """The id ``query`` names in ``index``; ``display`` maps ids to display names for messages."""
    if not isinstance(query, str) or not query.strip():
        raise EngineInputError(f"{field}: give a name", field=field)
    if len(query) > 200:
        raise EngineInputError(f"{field}: name is too long ({len(query)} characters)", field=field)
    key = normalise_name(query)
    if key in index.names:
        return index.names[key]
    wanted = _words(query)
    if wanted:
        matches = {entry_id for name, entry_id in index.names.items() if wanted <= _words(name)}
        if len(matches) == 1:
            return matches.pop()
    raise EngineInputError(
        f"unknown {field} {query!r}" + _closest_text(index, key, display),
        field=field,
        suggestions=closest(index, key, display),
    )


def closest(index: AliasIndex, key: str, display: dict[str, str], limit: int = 5) -> tuple[str, ...]:
    """Display names of the entries whose names are closest to ``key``."""
    import difflib  # here: only an unknown name needs it, and compiling it is part of the page engine's boot otherwise

    names = difflib.get_close_matches(key, list(index.names), n=limit * 4, cutoff=0.4)
    out: list[str] = []
    for name in names:
        label = display[index.names[name]]
        if label not in out:
            out.append(label)
    return tuple(out[:limit])


def _closest_text(index: AliasIndex, key: str, display: dict[str, str]) -> str:
    names = closest(index, key, display)
    return f"; closest: {', '.join(names)}" if names else ""
