"""Checks a page the way an accessibility auditor does: axe-core's rules (the script bundled
with axe-playwright-python, so no network), tap-target sizes on a phone, sideways scrolling,
and the focus ring each control shows when reached by keyboard."""

from pathlib import Path

from axe_playwright_python.sync_playwright import Axe  # type: ignore[import-untyped]

BLOCKING_IMPACTS = ("serious", "critical")
MIN_TAP = 44  # CSS px, WCAG 2.5.5 and both platforms' guidelines

_axe = Axe()

# How a finding names its element: tag, classes and the start of its text.
_DESCRIBE = """
const describe = (el) => ({
  what: el.tagName.toLowerCase()
    + (el.className ? '.' + String(el.className).trim().split(/\\s+/).join('.') : ''),
  text: (el.innerText || el.value || el.getAttribute('aria-label') || '')
    .trim().replace(/\\s+/g, ' ').slice(0, 40),
});
"""

# Everything a finger can hit. Links inside running text are exempt (WCAG 2.5.8's inline
# exception): their size follows the sentence they sit in.
_TAP_TARGETS = (
    """
(min) => {"""
    + _DESCRIBE
    + """
  const selector = 'a[href], button, input:not([type="hidden"]), select, textarea, summary, '
    + '[role="button"], [role="checkbox"], [role="link"], [tabindex]:not([tabindex="-1"])';
  const found = [];
  for (const el of document.querySelectorAll(selector)) {
    if (!el.checkVisibility({ visibilityProperty: true })) continue;
    const box = el.getBoundingClientRect();
    if (box.width <= 1 || box.height <= 1) continue;  // visually hidden text
    if (box.bottom + window.scrollY <= 0 || box.right + window.scrollX <= 0) continue;  // parked
    const style = getComputedStyle(el);
    if (el.tagName === 'A' && style.display === 'inline' && el.closest('p')) continue;
    found.push({
      ...describe(el),
      width: Math.round(box.width * 10) / 10,
      height: Math.round(box.height * 10) / 10,
    });
  }
  return found;
}
"""
)

# The focused element's ring: outline style, width and its contrast with what is behind it
# (the ring sits outside the element, so the background is the nearest painted ancestor's).
_FOCUS_RING = (
    """
() => {"""
    + _DESCRIBE
    + """
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const parse = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const lum = ({ r, g, b }) => {
    const ch = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b);
  };
  let behind = { r: 255, g: 255, b: 255, a: 1 };
  for (let node = el.parentElement; node; node = node.parentElement) {
    const bg = parse(getComputedStyle(node).backgroundColor);
    if (bg && bg.a > 0.5) { behind = bg; break; }
  }
  const style = getComputedStyle(el);
  const ring = parse(style.outlineColor) || { r: 0, g: 0, b: 0, a: 0 };
  const [hi, lo] = [lum(ring), lum(behind)].sort((x, y) => y - x);
  const box = el.getBoundingClientRect();
  return {
    ...describe(el),
    style: style.outlineStyle,
    width: parseFloat(style.outlineWidth) || 0,
    alpha: ring.a,
    contrast: Math.round(((hi + 0.05) / (lo + 0.05)) * 100) / 100,
    visible: box.width > 1 && box.height > 1,
  };
}
"""
)


def axe_violations(page, *, impacts: tuple[str, ...] = BLOCKING_IMPACTS) -> list[dict]:
    results = _axe.run(page)
    return [v for v in results.response["violations"] if v.get("impact") in impacts]


def axe_report(violations: list[dict]) -> str:
    lines = []
    for violation in violations:
        lines.append(f"[{violation['impact']}] {violation['id']}: {violation['help']}")
        for node in violation["nodes"][:5]:
            lines.append(f"    {' '.join(map(str, node['target']))}: {node['html'][:160]}")
    return "\n".join(lines)


def small_tap_targets(page, *, minimum: int = MIN_TAP) -> list[dict]:
    targets = page.evaluate(_TAP_TARGETS, minimum)
    # Half a pixel of rounding is not a miss.
    return [t for t in targets if t["width"] < minimum - 0.5 or t["height"] < minimum - 0.5]


def tap_report(targets: list[dict]) -> str:
    return "\n".join(f"    {t['width']}x{t['height']} {t['what']} {t['text']!r}" for t in targets)


def horizontal_overflow(page) -> int:
    return page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )


def focus_ring_of_active(page) -> dict | None:
    return page.evaluate(_FOCUS_RING)


def weak_focus_ring(ring: dict) -> bool:
    return (
        ring["style"] in ("none", "hidden")
        or ring["width"] < 2
        or ring["alpha"] < 1
        or ring["contrast"] < 3
    )


def sticky_cover(page, selector: str) -> float:
    """How many px of the element's top sit under a sticky or fixed header (0 if none)."""
    return page.evaluate(
        """(selector) => {
          const target = document.querySelector(selector);
          const header = document.querySelector('.site-header');
          if (!target || !header) return 0;
          const position = getComputedStyle(header).position;
          if (position !== 'sticky' && position !== 'fixed') return 0;
          const bottom = header.getBoundingClientRect().bottom;
          const top = target.getBoundingClientRect().top;
          return Math.max(0, bottom - top);
        }""",
        selector,
    )


def shoot(page, folder: Path, name: str, width: int) -> None:
    page.screenshot(path=folder / f"a11y-{name}-{width}.png", full_page=True)


def visit_shopper_pages(page, check) -> None:
    """Walk the shopper's pages (the demo catalog must be seeded) and call ``check(name)`` on
    each once it has settled: empty cart, catalog and its second page, search results,
    product, cart, cart with the Improve-cart suggestion, sign-in, not found."""
    from django.urls import reverse

    from storefront.models import Product
    from tests.e2e.helpers import add_offer_through_search, pick_improvable_offers

    page.goto(reverse("cart"))
    check("cart-empty")
    page.goto(reverse("catalog"))
    check("catalog")
    page.goto(reverse("catalog") + "?page=2")
    check("catalog-page-2")
    word = Product.objects.order_by("name")[0].name.split()[-1]
    page.goto(reverse("catalog") + f"?q={word}")
    check("search")
    for offer in pick_improvable_offers():
        add_offer_through_search(page, offer)
    check("product")
    page.goto(reverse("cart"))
    check("cart")
    page.get_by_role("button", name="Improve cart").click()
    page.locator("#improve[data-state]:not([aria-busy])").wait_for()
    check("cart-suggestion")
    page.goto(reverse("login"))
    check("login")
    page.goto("/products/no-such-product/")
    check("not-found")
