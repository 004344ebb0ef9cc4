"""Which layer a piece of history is in, by its age, and how much of it each layer shows.

=========  ==============  =========================================================
layer      age             what is shown
=========  ==============  =========================================================
flash      0-48 h          the turns, verbatim
warm       2-7 days        each session's summary (hook, points) and key quotes
recent-1   7-14 days       hook and 3 key points
recent-2   14-21 days      hook and 2 key points
recent-3   21-28 days      hook and 1 key point
recent-4   28-35 days      hook only
archive    older           hook and a pointer to the verbatim turns
=========  ==============  =========================================================

A summary's age counts from its last turn (``end_at``). Nothing is deleted as it
fades: the stored summary keeps every point, the layer decides what is shown, and
the turns stay until the TTL policy expires them.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Final


class Layer(StrEnum):
    FLASH = "flash"
    WARM = "warm"
    RECENT_1 = "recent-1"
    RECENT_2 = "recent-2"
    RECENT_3 = "recent-3"
    RECENT_4 = "recent-4"
    ARCHIVE = "archive"

    @property
    def group(self) -> str:
        """flash, warm, recent or archive: the order ``recall`` walks them in."""
        return "recent" if self.value.startswith("recent") else self.value


FLASH_AGE: Final = timedelta(hours=48)
WARM_AGE: Final = timedelta(days=7)
_RECENT: Final = (
    (timedelta(days=14), Layer.RECENT_1),
    (timedelta(days=21), Layer.RECENT_2),
    (timedelta(days=28), Layer.RECENT_3),
    (timedelta(days=35), Layer.RECENT_4),
)
#: Key points shown per layer (warm shows all it has; archive none).
POINTS: Final[dict[Layer, int]] = {
    Layer.FLASH: 5,
    Layer.WARM: 5,
    Layer.RECENT_1: 3,
    Layer.RECENT_2: 2,
    Layer.RECENT_3: 1,
    Layer.RECENT_4: 0,
    Layer.ARCHIVE: 0,
}
#: Key quotes shown per layer.
QUOTES: Final[dict[Layer, int]] = {
    Layer.FLASH: 3,
    Layer.WARM: 3,
    Layer.RECENT_1: 1,
    Layer.RECENT_2: 0,
    Layer.RECENT_3: 0,
    Layer.RECENT_4: 0,
    Layer.ARCHIVE: 0,
}
ORDER: Final = ("flash", "warm", "recent", "archive")


def layer_of(end: datetime, now: datetime) -> Layer:
    age = now - end
    if age < FLASH_AGE:
        return Layer.FLASH
    if age < WARM_AGE:
        return Layer.WARM
    for limit, layer in _RECENT:
        if age < limit:
            return layer
    return Layer.ARCHIVE


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
