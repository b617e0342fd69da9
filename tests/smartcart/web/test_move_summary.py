"""The Improve panel's headline says which lines change merchant and which only change the
warehouse they ship from (pricing v2)."""

import pytest

from smartcart.web.improve import ImprovePanel, LineChange


def _line(old: str, new: str, old_wh: str = "", new_wh: str = "", changed: bool = True):
    return LineChange(
        product_id=1,
        product_name="Kettle",
        quantity=1,
        old_merchant=old,
        old_unit_price=100,
        new_merchant=new,
        new_unit_price=100,
        changed=changed,
        old_warehouse=old_wh,
        new_warehouse=new_wh,
    )


def _panel(*lines: LineChange) -> ImprovePanel:
    return ImprovePanel(run=None, state="saving", lines=lines, merchants=(), dropped=())


@pytest.mark.parametrize(
    ("lines", "summary"),
    [
        (
            (_line("A", "B"), _line("A", "B"), _line("C", "C", changed=False)),
            "2 of 3 lines move to another merchant",
        ),
        (
            (_line("A", "A", "Hamburg", "Munich"), _line("B", "B", changed=False)),
            "1 of 2 lines ships from another warehouse of the same merchant",
        ),
        (
            (_line("A", "B"), _line("A", "A", "Hamburg", "Munich")),
            "2 of 2 lines change: 1 moves to another merchant, "
            "1 ships from another warehouse of the same merchant",
        ),
    ],
)
def test_the_headline_tells_merchant_moves_from_warehouse_moves(lines, summary):
    assert _panel(*lines).move_summary == summary
