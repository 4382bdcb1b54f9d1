"""The built-in source kinds. Import order is detection order: specific kinds first, folder last."""

from loaders.sources import backend  # noqa: F401, I001  (URLs are checked first; order matters)
from loaders.sources import synth  # noqa: F401  (claims only folders that directly hold synth output)
from loaders.sources import recorder  # noqa: F401
from loaders.sources import folder  # noqa: F401  (must stay last)
