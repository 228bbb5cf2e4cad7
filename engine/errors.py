"""The one error type the engine raises for bad input.

Every public function validates what it is given and raises :class:`EngineInputError` with a
message a person can act on. The CLI turns it into exit status 2 and one line; the page shows it
next to the input that caused it (``field`` names that input).
"""

from __future__ import annotations


class EngineInputError(ValueError):
    """Input the engine cannot use: an unknown name, a value out of range, a malformed config.

    ``field`` names the request field at fault (``"hardware"``, ``"prompt_tokens"``, ...) so a UI
    can put the message next to it; ``suggestions`` lists close matches for unresolved names.
    """

    def __init__(self, message: str, *, field: str | None = None, suggestions: tuple[str, ...] = ()):
        super().__init__(message)
        self.message = message
        self.field = field
        self.suggestions = tuple(suggestions)

    def as_dict(self) -> dict:
        return {"message": self.message, "field": self.field, "suggestions": list(self.suggestions)}


class CatalogError(Exception):
    """A data file in ``data/`` is invalid. This is a bug in the catalog, not in user input."""
