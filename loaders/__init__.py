"""evaldash loaders: every eval-result format read into one schema. Never imports streamlit."""

from loaders.registry import kinds, resolve

__all__ = ["kinds", "resolve"]
