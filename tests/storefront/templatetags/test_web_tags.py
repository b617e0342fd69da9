from urllib.parse import quote

from hypothesis import given
from hypothesis import strategies as st

from storefront.templatetags.web_tags import svg_data_uri


@given(st.text() | st.text(alphabet=st.characters(max_codepoint=127)))
def test_svg_data_uri_quotes_as_urllib_does(svg):
    expected = "data:image/svg+xml;charset=utf-8," + quote(svg) if svg else ""
    assert svg_data_uri(svg) == expected
