"""Tests of cleaner.page.decode: encoding decision order, label mapping, meta prescan, detector path,
UTF-8 handling, replacement counting, the CleanEval wrapper and robustness."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cleaner.page import decode as dec
from cleaner.page.charsets import western_guard
from cleaner.page.decode import SOURCES, DecodedPage, decode_html, lookup_label

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

RUSSIAN = (
    "Правительство вчера одобрило проект закона о бюджете, который, по словам министра финансов, "
    "значительно сократит дефицит. Оппозиция утверждает, что изменения ударят прежде всего по "
    "семьям с детьми и пенсионерам, которым уже сейчас трудно оплачивать счета за электроэнергию."
)
FRENCH = (
    "Le gouvernement a adopté hier le projet de loi de finances, qui selon le ministre réduira "
    "nettement le déficit. L’opposition affirme cependant que ces changements frapperont d’abord "
    "les familles avec enfants et les retraités, qui ont déjà du mal à payer leurs factures "
    "d’énergie. Le président a déclaré qu’il signerait la loi si le Sénat ne la modifie pas « en "
    "profondeur ». Les syndicats appellent à une grève générale la semaine prochaine."
)
POLISH = (
    "Rząd przyjął wczoraj projekt ustawy budżetowej, który według ministra finansów znacząco "
    "zmniejszy deficyt. Opozycja twierdzi jednak, że zmiany uderzą przede wszystkim w rodziny z "
    "dziećmi oraz emerytów, którzy już teraz mają kłopoty z opłaceniem rachunków za energię."
)
JAPANESE = (
    "政府は昨日、予算法案を承認した。財務大臣によると、この法案は赤字を大幅に削減するという。"
    "しかし野党は、変更が主に子育て世帯や年金生活者に打撃を与えると主張している。"
    "首相は記者会見で、国民の理解を得るために丁寧に説明していく考えを示した。"
)
KOREAN = (
    "정부는 어제 예산안을 승인했다. 재무장관에 따르면 이 법안은 적자를 크게 줄일 것이라고 한다. "
    "그러나 야당은 변화가 주로 자녀가 있는 가정과 연금 생활자에게 타격을 줄 것이라고 주장한다. "
    "총리는 기자회견에서 국민의 이해를 얻기 위해 성실하게 설명하겠다고 밝혔다."
)


def page(body: str, head: str = "") -> str:
    return f"<html><head>{head}<title>t</title></head><body><p>{body}</p></body></html>"


# ------------------------------------------------------------------------------ BOM
@pytest.mark.parametrize(
    "bom,codec,expected_name",
    [
        (codecs.BOM_UTF8, "utf-8", "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le", "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be", "utf-16-be"),
    ],
)
def test_bom_wins_over_http_and_meta(bom, codec, expected_name):
    html = page("Grüße, “quoted” – Привет", head='<meta charset="iso-8859-1">')
    data = bom + html.encode(codec)
    result = decode_html(data, http_charset="windows-1251")
    assert result.source == "bom"
    assert result.encoding == expected_name
    assert result.text == html  # BOM stripped, text exact
    assert result.replacements == 0


def test_utf16_bom_page_with_odd_length_counts_replacement():
    data = codecs.BOM_UTF16_LE + "<p>hi</p>".encode("utf-16-le") + b"\x00\x41"[:1]
    result = decode_html(data)
    assert result.source == "bom"
    assert result.text.startswith("<p>hi</p>")
    assert result.replacements == 1


# ------------------------------------------------------------------------------ HTTP
def test_http_charset_beats_meta():
    data = page(RUSSIAN, head='<meta charset="iso-8859-2">').encode("cp1251")
    result = decode_html(data, http_charset="windows-1251")
    assert result.source == "http"
    assert result.encoding == "cp1251"
    assert RUSSIAN in result.text


def test_http_charset_accepts_whole_content_type_value():
    data = page(RUSSIAN).encode("koi8-r")
    result = decode_html(data, http_charset='text/html; charset="KOI8-R"')
    assert (result.source, result.encoding) == ("http", "koi8-r")
    assert RUSSIAN in result.text


def test_unknown_http_label_is_ignored_and_meta_decides():
    data = page(RUSSIAN, head='<meta charset="windows-1251">').encode("cp1251")
    result = decode_html(data, http_charset="x-no-such-charset")
    assert (result.source, result.encoding) == ("meta", "cp1251")
    assert RUSSIAN in result.text


def test_http_utf16_label_on_ascii_bytes_is_ignored():
    result = decode_html(b"<html><p>plain text</p></html>", http_charset="utf-16")
    assert result.text == "<html><p>plain text</p></html>"
    assert result.encoding == "utf-8"


# ------------------------------------------------------------------------------ meta prescan
META_FORMS = [
    '<meta charset="windows-1251">',
    "<meta charset='windows-1251'>",
    "<meta charset=windows-1251>",
    '<META CHARSET = " Windows-1251 " >',
    "<meta charset=windows-1251/>",
    '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">',
    '<meta content="text/html;charset=windows-1251" http-equiv="content-type" />',
    "<meta http-equiv=Content-Type content='text/html; charset = \"windows-1251\"'>",
    '<meta\n  http-equiv="Content-Type"\n  content="text/html;\n   charset=WINDOWS-1251">',
    '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251; foo=bar">',
    '<!-- <meta charset="koi8-r"> --><meta charset="windows-1251">',
    '<meta charset="x-bogus-label"><meta charset="windows-1251">',
]


@pytest.mark.parametrize("meta", META_FORMS)
def test_meta_charset_forms(meta):
    data = page(RUSSIAN, head=meta).encode("cp1251")
    result = decode_html(data)
    assert result.source == "meta", meta
    assert result.encoding == "cp1251", meta
    assert RUSSIAN in result.text


def test_meta_after_prescan_window_is_not_seen():
    head = "<!-- " + "x" * 5000 + " -->" + '<meta charset="koi8-r">'
    data = page(RUSSIAN, head=head).encode("koi8-r")
    near = decode_html(data, config={"prescan_bytes": 8192})
    assert (near.source, near.encoding) == ("meta", "koi8-r")
    far = decode_html(data, config={"prescan_bytes": 1024})
    assert far.source != "meta"


def test_meta_utf16_label_means_utf8():
    data = page("naïve café", head='<meta charset="utf-16">').encode("utf-8")
    result = decode_html(data)
    assert (result.source, result.encoding) == ("meta", "utf-8")
    assert "naïve café" in result.text


# ------------------------------------------------------------------------------ label table
@pytest.mark.parametrize("label", ["iso-8859-1", "ISO8859-1", "latin1", "us-ascii", "ascii", "l1",
                                   "windows-1252", " Latin1 "])
def test_latin1_and_ascii_labels_decode_as_windows_1252(label):
    data = page("\x93quoted\x94 and \x85", head=f'<meta charset="{label}">').encode("latin-1")
    result = decode_html(data)
    assert result.encoding == "cp1252"
    assert result.source == "meta"
    assert "“quoted” and …" in result.text


@pytest.mark.parametrize(
    "label,codec",
    [
        ("gb2312", "gb18030"), ("GBK", "gb18030"), ("x-sjis", "cp932"), ("shift_jis", "cp932"),
        ("euc-kr", "cp949"), ("ks_c_5601-1987", "cp949"), ("big5", "big5hkscs"),
        ("utf8", "utf-8"), ("unicode-1-1-utf-8", "utf-8"), ("iso-8859-9", "cp1254"),
        ("tis-620", "cp874"), ("koi8-u", "koi8-u"), ("macintosh", "mac-roman"),
        ("utf-16", "utf-16-le"), ("utf-16be", "utf-16-be"),
    ],
)
def test_whatwg_label_table(label, codec):
    assert lookup_label(label) == codec


@pytest.mark.parametrize("label", ["euc_kr", "iso-1252", "0", "", "utf-7", "iso-2022-kr",
                                   "hz-gb-2312", "x-mac-unknown"])
def test_unknown_and_replacement_labels_are_unknown(label):
    assert lookup_label(label) is None


def test_unknown_meta_label_falls_through_to_detector():
    data = page(FRENCH * 3, head='<meta charset="x-unknown-charset">').encode("cp1252")
    result = decode_html(data)
    assert result.source == "detector"
    assert result.encoding == "cp1252"
    assert FRENCH in result.text


# ------------------------------------------------------------------------------ detector
@pytest.mark.parametrize(
    "text,codec,expected",
    [
        (FRENCH, "cp1252", {"cp1252"}),
        (RUSSIAN, "cp1251", {"cp1251"}),
        (RUSSIAN, "koi8-r", {"koi8-r"}),
        (POLISH, "cp1250", {"cp1250"}),
        (JAPANESE, "shift_jis", {"cp932"}),
        (JAPANESE, "euc_jp", {"euc_jp"}),
        (KOREAN, "euc-kr", {"cp949"}),
    ],
)
def test_detector_on_undeclared_text(text, codec, expected):
    data = page(text * 3).encode(codec)
    result = decode_html(data)
    assert result.source == "detector"
    assert result.encoding in expected
    assert text in result.text
    assert result.replacements == 0


def test_iso2022jp_is_not_taken_for_ascii():
    data = page(JAPANESE).encode("iso2022_jp")
    assert data.isascii()
    result = decode_html(data)
    assert result.encoding == "iso2022_jp"
    assert JAPANESE in result.text


def test_detector_input_is_bounded(monkeypatch):
    seen = []

    def recording(sample):
        seen.append(len(sample))
        return "windows-1252", 0.99

    monkeypatch.setattr(dec, "detect_charset", recording)
    data = page(FRENCH * 200).encode("cp1252")
    assert len(data) > 50_000
    result = decode_html(data, config={"detector_bytes": 1000})
    assert seen == [1000]
    assert result.encoding == "cp1252"
    assert FRENCH in result.text


def test_low_confidence_detector_answer_is_ignored(monkeypatch):
    monkeypatch.setattr(dec, "detect_charset", lambda sample: ("windows-1251", 0.1))
    data = page("caf\xe9 cr\xe8me").encode("cp1252")
    result = decode_html(data, config={"min_detector_confidence": 0.2})
    assert result.source == "default"
    assert "café crème" in result.text


def test_non_whatwg_detector_answer_is_ignored(monkeypatch):
    monkeypatch.setattr(dec, "detect_charset", lambda sample: ("IBM865", 0.9))
    data = page("it\x92s \x93fine\x94").encode("latin-1")
    result = decode_html(data)
    assert "it’s “fine”" in result.text
    assert result.encoding == "cp1252"
    allowed = decode_html(data, config={"detector_whatwg_only": False, "western_guard": False})
    assert allowed.encoding == "cp865"
    assert "itÆs" in allowed.text


def test_western_guard():
    cfg = dec._decode_config({})  # the [decode] section, defaults from conf/default.toml
    english = page("It\x92s the \x93best\x94 place in town \x96 really, and the coffee there is "
                   "very good. " * 20 + "Caf\xe9 du Monde.").encode("latin-1")
    assert western_guard("cp1250", english, cfg) == "cp1252"
    assert western_guard("mac-roman", english, cfg) == "cp1252"
    assert western_guard("cp1250", english, dec._decode_config({"western_guard": False})) == "cp1250"
    polish = page(POLISH * 2).encode("cp1250")
    assert western_guard("cp1250", polish, cfg) == "cp1250"
    russian = page(RUSSIAN).encode("cp1251")
    assert western_guard("cp1251", russian, cfg) == "cp1251"
    # A sparse Cyrillic word does not look Western either.
    sparse = page("Hello world. " * 200 + "Рейтинг").encode("cp1251")
    assert western_guard("cp1251", sparse, cfg) == "cp1251"
    # ISO-8859-x never uses 0x80-0x9F: with such bytes, the windows- sibling is meant.
    hungarian = page("Árvíztűrő tükörfúrógép „idézet” " * 30)
    assert western_guard("iso8859-2", hungarian.encode("cp1250"), cfg) == "cp1250"


@pytest.mark.skipif(not (DATA / "cleaneval-final").is_dir(), reason="shared data not present")
def test_real_korean_page_with_unknown_meta_label():
    # Its meta says charset=euc_kr, which is not a WHATWG label: the detector decides.
    data = (DATA / "cleaneval-final" / "html" / "621.html").read_bytes()
    result = decode_html(data)
    assert (result.source, result.encoding) == ("detector", "cp949")
    assert "<title>국무총리실 (Prime Minister of Korea)</title>" in result.text
    assert result.wrapper["title"] == "국무총리실 (Prime Minister of Korea)"


@pytest.mark.skipif(not (DATA / "cleaneval-dev").is_dir(), reason="shared data not present")
def test_real_english_page_misdetected_by_uchardet():
    # uchardet calls this windows-1252 page IBM865, which would turn ’ into Æ.
    data = (DATA / "cleaneval-dev" / "html" / "2.html").read_bytes()
    result = decode_html(data)
    assert result.encoding == "cp1252"
    assert "contaminated’" in result.text or "contaminated”" in result.text
    assert "Æ" not in result.text


# ------------------------------------------------------------------------------ UTF-8 handling
def test_ascii_fast_path():
    data = b"<html><body>plain ASCII</body></html>"
    assert decode_html(data) == DecodedPage(data.decode(), "utf-8", "default", 0, None, data)
    declared = decode_html(b'<meta charset="latin1">plain')
    assert (declared.encoding, declared.source) == ("cp1252", "meta")


def test_the_bytes_are_kept_for_the_parser_only_when_they_are_the_texts_utf8():
    # DecodedPage.utf8 goes to Lexbor instead of the text encoded again: it must be exactly text.encode("utf-8")
    utf8 = '<meta charset="utf-8"><p>Größe – 東京</p>'.encode()
    for data, charset in ((utf8, None), (utf8, "iso-8859-1"), (b'<meta charset="utf-8"><p>ascii</p>', None)):
        page = decode_html(data, http_charset=charset)
        assert page.utf8 is data and page.text.encode("utf-8") == data
    for data, charset in ((b"\xef\xbb\xbf<p>BOM</p>", None),  # the BOM is not in the text
                          ("<p>Größe</p>".encode("cp1252"), None),  # another encoding
                          (b"<p>broken \xff UTF-8</p>", "utf-8"),  # replacements
                          ("<p>Größe</p>".encode("utf-16"), None),
                          (b'<text id="1">\n<p>CleanEval wrapper</p>\n</text>', None),  # a wrapper taken off
                          (b"<p>ascii</p>", "windows-1252")):  # (read as ASCII is the same, but not checked)
        page = decode_html(data, http_charset=charset)
        assert page.utf8 is None, data


def test_valid_utf8_under_legacy_label():
    data = page("It’s “quoted” – naïve", head='<meta charset="iso-8859-1">').encode("utf-8")
    result = decode_html(data)
    assert (result.encoding, result.source) == ("utf-8", "detector")
    assert "It’s “quoted” – naïve" in result.text
    browser = decode_html(data, config={"valid_utf8_wins": False})
    assert (browser.encoding, browser.source) == ("cp1252", "meta")
    assert "Itâ€™s" in browser.text


def test_invalid_bytes_under_utf8_label_are_repaired_by_default():
    data = page("caf\xe9 \x93ok\x94", head='<meta charset="utf-8">').encode("latin-1")
    data += "€ and ’".encode("utf-8")  # a mixed page: UTF-8 template, windows-1252 content
    result = decode_html(data)
    assert result.source == "meta"
    assert result.encoding == "utf-8"
    assert "café “ok”" in result.text and result.text.endswith("€ and ’")
    assert result.replacements == 0


def test_repair_of_a_page_with_no_utf8_reports_windows_1252():
    data = page("caf\xe9 \x93ok\x94", head='<meta charset="utf-8">').encode("latin-1")
    result = decode_html(data)
    assert (result.encoding, result.source, result.replacements) == ("cp1252", "meta", 0)
    assert "café “ok”" in result.text


def test_replacement_counting_on_invalid_utf8():
    data = b'<meta charset="utf-8"><p>ab\xffcd\xfe\xc3</p>'
    result = decode_html(data, config={"invalid_declared_utf8": "trust"})
    assert result.text == '<meta charset="utf-8"><p>ab\ufffdcd\ufffd\ufffd</p>'
    assert result.replacements == 3


def test_replacement_counting_ignores_fffd_encoded_in_the_bytes():
    data = b'<meta charset="utf-8"><p>\xef\xbf\xbd x \xff</p>'
    result = decode_html(data, config={"invalid_declared_utf8": "trust"})
    assert result.text.count("\ufffd") == 2
    assert result.replacements == 1
    valid = decode_html(b"<p>\xef\xbf\xbd only</p>")
    assert (valid.replacements, valid.text) == (0, "<p>\ufffd only</p>")


def test_invalid_utf8_detect_policy_asks_the_detector():
    data = page(FRENCH * 3, head='<meta charset="utf-8">').encode("cp1252")
    result = decode_html(data, config={"invalid_declared_utf8": "detect"})
    assert (result.encoding, result.source) == ("cp1252", "detector")
    assert FRENCH in result.text


# ------------------------------------------------------------------------------ wrapper
@pytest.mark.skipif(not (DATA / "cleaneval-dev").is_dir(), reason="shared data not present")
def test_cleaneval_wrapper_is_stripped_and_returned():
    data = (DATA / "cleaneval-dev" / "html" / "1.html").read_bytes()
    assert data.startswith(b'<text id="http://1-las-vegas-real-estate.com/')
    result = decode_html(data)
    assert result.wrapper == {
        "id": "http://1-las-vegas-real-estate.com/homes/sellers/list_today/",
        "title": "Las Vegas Realtor - House Sell - Sales - Real Estate Agent",
        "encoding": "unset",
    }
    assert not result.text.lstrip().startswith("<text")
    assert result.text.lstrip().startswith("<html>")
    assert not result.text.rstrip().endswith("</text>")
    assert result.text.endswith("</body>")  # this page has no </html>


def test_wrapper_encoding_attribute_is_not_trusted():
    data = (b'<text id="http://example.com/a?b=1&amp;c=2" title="Caf\xe9 &amp; Bar" '
            b'encoding="utf8">\n<html><body>caf\xe9 \x93ok\x94</body></html>\n</text>\n')
    result = decode_html(data)
    assert result.text == "<html><body>café “ok”</body></html>"
    assert result.wrapper == {"id": "http://example.com/a?b=1&c=2", "title": "Café & Bar",
                              "encoding": "utf8"}
    assert result.replacements == 0


def test_wrapper_after_blank_line_and_without_title():
    data = b'\n<text id="http://bbc.co.uk/news/x">\n\n<html><p>x</p></html>\n</text>'
    result = decode_html(data)
    assert result.wrapper == {"id": "http://bbc.co.uk/news/x"}
    assert result.text == "\n<html><p>x</p></html>"


def test_no_wrapper_on_ordinary_page():
    result = decode_html(b"<html><body><text>svg-ish</text></body></html>")
    assert result.wrapper is None
    assert result.text == "<html><body><text>svg-ish</text></body></html>"


# ------------------------------------------------------------------------------ robustness
def test_empty_bytes():
    assert decode_html(b"") == DecodedPage("", "utf-8", "default", 0, None, b"")


def test_bytes_like_input():
    assert decode_html(bytearray(b"abc")).text == "abc"
    assert decode_html(memoryview(b"abc")).text == "abc"


def test_config_forms():
    from cleaner.config import load_config

    data = b"<p>caf\xe9</p>"
    assert decode_html(data, config=load_config()) == decode_html(data)
    assert decode_html(data).source == "detector"
    # a dict's [decode] section is laid over the defaults: here no detector answer is sure enough
    assert decode_html(data, config={"decode": {"min_detector_confidence": 1.0}}).source == "default"


PREFIXES = [b"", b'<meta charset="utf-8">', b'<meta charset="shift_jis">', b'<meta charset=utf-16>',
            b'<meta charset="iso-2022-jp">', b'<text id="x" title="y">\n', codecs.BOM_UTF16_BE,
            codecs.BOM_UTF8, b"<!--", b'<meta http-equiv="content-type" content="charset=big5']


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    prefix=st.sampled_from(PREFIXES),
    body=st.binary(max_size=3000),
    http=st.one_of(st.none(), st.sampled_from(["utf-8", "utf-16", "utf-16be", "euc-jp", "bogus",
                                               "text/html; charset=", "gb18030", "x-user-defined"])),
    policy=st.sampled_from(["trust", "detect", "repair"]),
)
def test_random_bytes_never_raise(prefix, body, http, policy):
    data = prefix + body
    result = decode_html(data, http_charset=http, config={"invalid_declared_utf8": policy})
    assert isinstance(result, DecodedPage)
    assert isinstance(result.text, str)
    assert result.source in SOURCES
    codecs.lookup(result.encoding)
    assert 0 <= result.replacements <= len(data)
    if result.replacements == 0 and result.wrapper is None:
        # No replacement was produced: every U+FFFD in the text was encoded in the bytes.
        assert result.text.count("\ufffd") <= data.count(b"\xef\xbf\xbd") + data.count(
            b"\xff\xfd") + data.count(b"\xfd\xff") + data.count(b"\x84\x31\xa4\x37")


def test_a_utf8_page_keeps_its_bytes_and_builds_its_text_only_when_asked():
    import pickle

    data = page("<p>Grüße aus Köln, 中文 and \U0001f600</p>", '<meta charset="utf-8">').encode("utf-8")
    decoded = decode_html(data)
    assert decoded.utf8 is data and decoded.encoding == "utf-8"
    if decoded.text_if_built is None:  # (the compiled check leaves it undecoded; the reference decodes to check)
        again = pickle.loads(pickle.dumps(decoded))
        assert again.text_if_built is None and again == decoded  # (comparing builds the texts)
    assert decoded.text == data.decode("utf-8") and decoded.text_if_built == decoded.text
    assert decoded == DecodedPage(data.decode("utf-8"), "utf-8", "meta", 0, None, data)
    with pytest.raises(AttributeError):
        decoded.encoding = "cp1252"  # type: ignore[misc]
    # a wrapper line is still read off the text
    wrapped = b'<text id="http://x.org/" title="t">\n' + data + b"\n</text>"
    decoded = decode_html(wrapped)
    assert decoded.wrapper == {"id": "http://x.org/", "title": "t"} and decoded.utf8 is None
    assert decoded.text.startswith("<html>") or decoded.text.startswith("<!")


@settings(max_examples=1000, deadline=None)
@given(data=st.one_of(st.binary(max_size=40), st.text(max_size=20).map(lambda t: t.encode("utf-8", "surrogatepass")),
                      st.lists(st.sampled_from([b"\xc2\x80", b"\xe0\xa0\x80", b"\xed\x9f\xbf", b"\xed\xa0\x80",
                                                b"\xf0\x90\x80\x80", b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80",
                                                b"\xc0\xaf", b"\xe0\x9f\xbf", b"\xf5\x80\x80\x80", b"abcdefgh",
                                                b"\x80", b"\xff", b"\xe2\x82"]), max_size=8).map(b"".join)))
def test_the_compiled_utf8_check_takes_what_pythons_strict_decoder_takes(data):
    compiled = pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")
    from cleaner.page.decode import _strict_utf8

    assert compiled.is_utf8(data) == (_strict_utf8(data) is not None)


def test_the_compiled_utf8_check_agrees_on_every_first_and_second_byte():
    # every row of the Unicode standard's table 3-7 (the lead byte and the range of the byte after it), cut short or
    # completed, alone and after eight ASCII bytes (the check's fast path)
    compiled = pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")
    from cleaner.page.decode import _strict_utf8

    for first in range(256):
        for second in range(256):
            for tail in (b"", b"\x80", b"\x80\x80", b"\xbf\xbfa"):
                for head in (b"", b"abcdefgh"):
                    data = head + bytes((first, second)) + tail
                    assert compiled.is_utf8(data) == (_strict_utf8(data) is not None), data
