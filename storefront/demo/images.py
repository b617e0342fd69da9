"""Small product pictures for the demo catalog, drawn as SVG from a few shapes.

No downloads and no randomness of their own: a picture follows from the product's kind
(its shape), its category's colour and its variant, so the seed fixes it like everything
else. The markup has no scripts or external references (it is shown as a data URI).
"""

from xml.sax.saxutils import escape

# Each shape: SVG elements on a 120 x 120 canvas, drawn in the ink colour "{ink}" with
# "{fill}" for the product's body colour.
SHAPES = {
    "kettle": (
        '<path d="M34 92h52l-6-44H40z" fill="{fill}"/>'
        '<path d="M40 48q20-16 40 0" fill="none" stroke="{ink}" stroke-width="5"/>'
        '<path d="M86 56q14 6 4 26" fill="none" stroke="{ink}" stroke-width="6"/>'
        '<path d="M34 60l-14-10" stroke="{ink}" stroke-width="6" stroke-linecap="round"/>'
        '<rect x="30" y="90" width="60" height="8" rx="3" fill="{ink}"/>'
    ),
    "headphones": (
        '<path d="M28 72v-12a32 32 0 0 1 64 0v12" fill="none" stroke="{ink}" stroke-width="7"/>'
        '<rect x="20" y="66" width="20" height="30" rx="8" fill="{fill}"/>'
        '<rect x="80" y="66" width="20" height="30" rx="8" fill="{fill}"/>'
    ),
    "cup": (
        '<path d="M30 46h52v26a22 22 0 0 1-22 22h-8a22 22 0 0 1-22-22z" fill="{fill}"/>'
        '<path d="M82 54h6a10 10 0 0 1 0 20h-8" fill="none" stroke="{ink}" stroke-width="6"/>'
        '<path d="M46 22q6 8 0 16M60 22q6 8 0 16" fill="none" stroke="{ink}" stroke-width="4"/>'
    ),
    "bag": (
        '<path d="M36 30h48l8 66H28z" fill="{fill}"/>'
        '<path d="M36 30l6-8h36l6 8" fill="none" stroke="{ink}" stroke-width="5"/>'
        '<ellipse cx="60" cy="64" rx="10" ry="14" fill="{ink}"/>'
    ),
    "book": (
        '<rect x="30" y="20" width="56" height="80" rx="4" fill="{fill}"/>'
        '<rect x="30" y="20" width="10" height="80" fill="{ink}"/>'
        '<rect x="48" y="36" width="30" height="6" rx="2" fill="{ink}"/>'
        '<rect x="48" y="48" width="22" height="4" rx="2" fill="{ink}"/>'
    ),
    "device": (
        '<rect x="18" y="30" width="84" height="56" rx="6" fill="{ink}"/>'
        '<rect x="24" y="36" width="72" height="44" rx="3" fill="{fill}"/>'
        '<rect x="48" y="88" width="24" height="8" rx="2" fill="{ink}"/>'
    ),
    "speaker": (
        '<rect x="32" y="18" width="56" height="84" rx="10" fill="{fill}"/>'
        '<circle cx="60" cy="72" r="16" fill="{ink}"/><circle cx="60" cy="38" r="8" fill="{ink}"/>'
    ),
    "pan": (
        '<ellipse cx="50" cy="66" rx="32" ry="20" fill="{fill}"/>'
        '<rect x="78" y="60" width="34" height="8" rx="4" fill="{ink}"/>'
    ),
    "lamp": (
        '<path d="M40 22h40l12 34H28z" fill="{fill}"/>'
        '<rect x="57" y="56" width="6" height="34" fill="{ink}"/>'
        '<rect x="38" y="90" width="44" height="8" rx="4" fill="{ink}"/>'
    ),
    "bottle": (
        '<rect x="46" y="16" width="28" height="12" rx="3" fill="{ink}"/>'
        '<rect x="40" y="28" width="40" height="76" rx="12" fill="{fill}"/>'
        '<rect x="40" y="54" width="40" height="16" fill="{ink}" opacity=".35"/>'
    ),
    "plant": (
        '<path d="M40 76h40l-6 26H46z" fill="{ink}"/>'
        '<path d="M60 76q-30-10-26-44q22 8 26 44q4-36 26-44q4 34-26 44" fill="{fill}"/>'
    ),
    "box": (
        '<path d="M24 44l36-18 36 18v40l-36 18-36-18z" fill="{fill}"/>'
        '<path d="M24 44l36 18 36-18M60 62v40" fill="none" stroke="{ink}" stroke-width="4"/>'
    ),
    "tool": (
        '<rect x="24" y="40" width="60" height="26" rx="6" fill="{fill}"/>'
        '<rect x="84" y="48" width="20" height="10" fill="{ink}"/>'
        '<path d="M40 66l-8 34h22l6-34" fill="{ink}"/>'
    ),
    "ball": (
        '<circle cx="60" cy="60" r="36" fill="{fill}"/>'
        '<path d="M24 60h72M60 24v72" stroke="{ink}" stroke-width="4"/>'
    ),
    "bear": (
        '<circle cx="38" cy="34" r="12" fill="{fill}"/>'
        '<circle cx="82" cy="34" r="12" fill="{fill}"/>'
        '<circle cx="60" cy="58" r="30" fill="{fill}"/>'
        '<circle cx="50" cy="52" r="4" fill="{ink}"/><circle cx="70" cy="52" r="4" fill="{ink}"/>'
        '<ellipse cx="60" cy="68" rx="8" ry="6" fill="{ink}"/>'
    ),
}

# Variant words that name a colour paint the product that colour.
COLOURS = {
    "black": "#2b2b2b", "white": "#f4f4f2", "silver": "#c9ccd1", "graphite": "#50555c",
    "red": "#d2463c", "blue": "#3b6fd8", "green": "#4c9a5b", "cream": "#efe3c8",
    "grey": "#9aa0a6", "copper": "#c27a48", "sage": "#9cb39a", "walnut": "#7a5435",
    "mint": "#9fdcc4", "navy": "#2c3e6b", "orange": "#ec8a2e", "charcoal": "#3c3f44",
}  # fmt: skip


def category_hue(category: str) -> int:
    """A stable hue per category (the same rule as the old initials tiles)."""
    return sum((index + 1) * ord(char) for index, char in enumerate(category)) * 37 % 360


def product_svg(*, shape: str, category: str, variant: str, label: str) -> str:
    """The picture of one product: its shape in its colour on its category's background."""
    hue = category_hue(category)
    fill = next(
        (colour for word, colour in COLOURS.items() if word in variant.lower()),
        f"hsl({(hue + 180) % 360} 55% 58%)",
    )
    body = SHAPES[shape].format(fill=fill, ink=f"hsl({hue} 35% 22%)")
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 120" role="img">'
        f"<title>{escape(label)}</title>"
        f'<rect width="120" height="120" rx="14" fill="hsl({hue} 70% 93%)"/>'
        f"{body}</svg>"
    )
