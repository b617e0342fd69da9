"""What a shopper typed, as the parts both search engines need."""

import re
from dataclasses import dataclass

from storefront.validators import GTIN_LENGTHS, gtin_normalize

# PostgreSQL's english configuration drops these; the fallback drops them too, so that
# "kettle for tea" means the same on both.
STOP_WORDS = frozenset(
    "a an and are as at be by for from in into is it of on or the this to with".split()  # noqa: SIM905
)
MAX_QUERY_LENGTH = 200
_WORD_RE = re.compile(r"[0-9a-zà-ÿ]+")
_CODE_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._/-]*$")


@dataclass(frozen=True)
class SearchTerms:
    text: str  # the query as typed, trimmed
    words: tuple[str, ...]  # lower-case words without stop words
    gtin: str | None  # the digits when the query looks like a whole GTIN
    code: str | None  # one token that could be a merchant SKU

    @property
    def empty(self) -> bool:
        return not (self.words or self.gtin or self.code)


def search_terms(text: str) -> SearchTerms:
    text = (text or "").strip()[:MAX_QUERY_LENGTH]
    words = tuple(word for word in _WORD_RE.findall(text.lower()) if word not in STOP_WORDS)
    digits = gtin_normalize(text)
    gtin = digits if digits.isdigit() and len(digits) in GTIN_LENGTHS else None
    code = text if " " not in text and _CODE_RE.match(text) else None
    return SearchTerms(text=text, words=words, gtin=gtin, code=code)


def word_pattern(word: str) -> str:
    """A regular expression for ``word`` as a whole word, singular or plural, which is what
    PostgreSQL's english stemmer makes of the shop's nouns ("kettles" finds "kettle")."""
    if len(word) > 4 and word.endswith("ies"):
        root, endings = word[:-3], "(y|ies)"
    elif len(word) > 3 and word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        root, endings = word[:-2], "(es)?"
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        root, endings = word[:-1], "(s|es)?"
    else:
        root, endings = word, "(s|es)?"
    return rf"(^|[^0-9a-z]){re.escape(root)}{endings}([^0-9a-z]|$)"
