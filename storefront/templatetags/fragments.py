"""``{% load fragments %}``: ``{% shared_fragment spec %}...{% endshared_fragment %}`` and
``{% shopper_slot "name" arg %}`` (see ``storefront.caching.fragments``)."""

from django import template
from django.utils.safestring import mark_safe

from storefront.caching.fragments import CSRF_MARKER, fragment_render, slot_marker

register = template.Library()


class SharedFragmentNode(template.Node):
    def __init__(self, spec: template.base.FilterExpression, nodelist: template.NodeList):
        self.spec = spec
        self.nodelist = nodelist

    def render(self, context) -> str:
        def render_shared() -> str:
            # Rendered for everyone: the CSRF token becomes a placeholder filled per request.
            with context.push(csrf_token=CSRF_MARKER):
                return self.nodelist.render(context)

        return mark_safe(fragment_render(self.spec.resolve(context), render_shared, context))


@register.tag
def shared_fragment(parser, token) -> SharedFragmentNode:
    bits = token.split_contents()
    if len(bits) != 2:
        raise template.TemplateSyntaxError("{% shared_fragment spec %} takes one argument.")
    nodelist = parser.parse(("endshared_fragment",))
    parser.delete_first_token()
    return SharedFragmentNode(parser.compile_filter(bits[1]), nodelist)


@register.simple_tag
def shopper_slot(name: str, arg: object = "") -> str:
    """A marker that ``storefront.caching.fragments.SLOT_FILLERS[name]`` fills per request."""
    return mark_safe(slot_marker(name, arg))
