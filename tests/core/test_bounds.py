"""A number out of its bounds is refused with the rule a schema check gives it:
``minimum`` or ``maximum`` for the bound it broke, ``type`` for no whole number."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from core.claims.gate import parse_recheck
from core.claims.model import ClaimKind
from core.continuity.episodes import find_exchanges_page
from core.layers.links import dig
from core.layers.recall import recall
from core.model.entries import utc_now
from core.model.errors import InvalidParams
from core.service import MemoryService


@pytest.mark.parametrize(
    ("call", "field", "rule"),
    [
        (lambda s: find_exchanges_page(s.store_for("main"), "tea", limit=0), "limit", "minimum"),
        (
            lambda s: find_exchanges_page(s.store_for("main"), "tea", limit=10**6),
            "limit",
            "maximum",
        ),
        (lambda s: find_exchanges_page(s.store_for("main"), "tea", offset=-1), "offset", "minimum"),
        (lambda s: recall(s.store_for("main"), "tea", utc_now(), budget=10), "budget", "minimum"),
        (
            lambda s: recall(s.store_for("main"), "tea", utc_now(), budget=10**9),
            "budget",
            "maximum",
        ),
        (lambda s: dig(s, "main", "mem-x", depth=-1), "depth", "minimum"),
        (lambda s: dig(s, "main", "mem-x", depth=99), "depth", "maximum"),
        (lambda s: dig(s, "main", "mem-x", depth="2"), "depth", "type"),  # type: ignore[arg-type]
        (lambda s: parse_recheck(0, ClaimKind.FACT), "recheck_days", "minimum"),
        (lambda s: parse_recheck(10**6, ClaimKind.FACT), "recheck_days", "maximum"),
        (lambda s: parse_recheck(1.5, ClaimKind.FACT), "recheck_days", "type"),
    ],
)
def test_a_number_out_of_bounds_names_the_bound_it_broke(
    service: MemoryService, call: Callable[[MemoryService], object], field: str, rule: str
) -> None:
    with pytest.raises(InvalidParams) as refused:
        call(service)
    # Before, these said rule "range", where the schema and the CLI say minimum or maximum.
    assert (refused.value.field, refused.value.rule) == (field, rule)
    assert field in refused.value.message
