"""What a user types into a search box (the per-seed filter, transcript search), run with a time budget.

On a shared URL anyone can type a regular expression, and Python's `re` has no timeout: `(a|aa)+$` against a
long line of `a`s holds a server thread for hours. The `regex` engine (same syntax) takes a timeout per call;
a UserPattern spends one budget over all the calls of one search, counting only time inside the engine, and
raises PatternTimeout when it is spent. Plain-text searches are escaped, so they cannot be slow.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any, Protocol

import regex

BUDGET_ENV = "EVALDASH_REGEX_SECONDS"
DEFAULT_BUDGET_S = 3.0


class SearchPattern(Protocol):
    """What a search reads of its pattern: a UserPattern, or a compiled `re.Pattern` in code that chose its own."""

    @property
    def pattern(self) -> str: ...

    def search(self, text: str) -> Any: ...

    def finditer(self, text: str) -> Iterator[Any]: ...


class PatternError(ValueError):
    """The search cannot run: an invalid regular expression, or one that ran out of time."""


class PatternTimeout(PatternError):
    pass


def budget_seconds() -> float:
    try:
        return max(float(os.environ.get(BUDGET_ENV, DEFAULT_BUDGET_S)), 0.01)
    except ValueError:
        return DEFAULT_BUDGET_S


class UserPattern:
    """A case-insensitive search pattern with `search` / `finditer` like `re.Pattern`, under one time budget.

    Make one per search: the budget is spent across every call on this object.
    """

    def __init__(self, text: str, *, is_regex: bool, budget_s: float | None = None) -> None:
        self.text = text
        self.is_regex = is_regex
        self.pattern = text if is_regex else regex.escape(text)
        self.budget_s = budget_seconds() if budget_s is None else budget_s
        self._spent = 0.0
        try:
            self._compiled = regex.compile(self.pattern, regex.IGNORECASE | regex.VERSION0)
        except (regex.error, OverflowError, RecursionError) as exc:
            raise PatternError(f"invalid regular expression {text!r}: {exc}") from exc

    def _remaining(self) -> float:
        remaining = self.budget_s - self._spent
        if remaining <= 0:
            raise self._timeout()
        return remaining

    def _timeout(self) -> PatternTimeout:
        self._spent = max(self._spent, self.budget_s)  # spent: every later call stops at once
        return PatternTimeout(f"the regular expression {self.text!r} needed more than {self.budget_s:g} s of matching "
                              "and was stopped; simplify it (nested repeats such as (a|aa)+ are the usual cause)")

    def search(self, text: str) -> Any:
        remaining = self._remaining()
        started = time.perf_counter()
        try:
            # Every call takes the engine's timeout (~2 µs each): a short text is no protection against a pattern
            # whose own size makes it slow, and the filter result is kept per filter by the data layer anyway.
            return self._compiled.search(text, timeout=remaining)
        except TimeoutError as exc:
            raise self._timeout() from exc
        finally:
            self._spent += time.perf_counter() - started

    def finditer(self, text: str) -> Iterator[Any]:
        matches = self._compiled.finditer(text, timeout=self._remaining())
        while True:
            started = time.perf_counter()
            try:
                match = next(matches, None)
            except TimeoutError as exc:
                raise self._timeout() from exc
            finally:
                self._spent += time.perf_counter() - started
            if match is None:
                return
            yield match
