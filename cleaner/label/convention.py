"""Annotation conventions as model input (docs/conventions.md: what each keeps and drops).

CleanEval's annotators kept everything a reader takes for the page's text; Dragnet's gold keeps the
article and its comments; the modern sets (chaos, big5-*, fundus) the article only, and wcxb the main
content of each page type. A model trained on all of them without knowing which is which follows a
compromise. A convention-aware model (`cleaner train --conventions`, the packaged default) is given each
training page's convention as input: one `conv=<name>` attribute per block and convention-conjoined copies
of the attributes whose names start with one of `convention_attributes` (id/class tokens and tags: what a
convention decides differently). When cleaning, the user picks the convention (`--convention`,
`clean_html(convention=...)`, `[model] convention`: `main` by default); the model's own default is its
first name.

Measured on validation fold 1 (docs/modern.md, section 2): trained on every set, each set scored under its
own convention, the old sets stay within 0.005 of the model trained on them alone and every modern set
rises by 0.01-0.08; under `main` the old sets fall where their gold keeps more than the article (Dragnet's
comments -0.105).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Config


class ConventionError(ValueError):
    """A convention the model does not know, or a convention asked of a model without any."""


@dataclass(frozen=True)
class Conventions:
    names: tuple[str, ...]  # the first is the default
    by_dataset: dict[str, str]  # data set -> convention of its gold; others: the default
    attributes: tuple[str, ...]  # prefixes of the attributes conjoined with the convention

    @classmethod
    def from_config(cls, config: Config) -> Conventions:
        tc = config["train"]  # conf/default.toml sets all three; an overlay may change them
        names, by_dataset = tuple(tc["conventions"]), dict(tc["convention_of"])
        unknown = sorted(set(by_dataset.values()) - set(names))
        if not names or unknown:
            raise ConventionError(f"[train] convention_of names conventions not in [train] conventions: {unknown}")
        return cls(names, by_dataset, tuple(tc["convention_attributes"]))

    @classmethod
    def from_meta(cls, meta: dict | None) -> Conventions | None:
        if not meta:
            return None
        return cls(tuple(meta["names"]), dict(meta.get("by_dataset", {})), tuple(meta["attributes"]))

    def to_meta(self) -> dict:
        return {"names": list(self.names), "by_dataset": self.by_dataset, "attributes": list(self.attributes)}

    @property
    def default(self) -> str:
        return self.names[0]

    def of(self, dataset: str) -> str:
        """The convention of a data set's gold."""
        return self.by_dataset.get(dataset, self.default)

    def resolve(self, name: str | None) -> str:
        if not name:
            return self.default
        if name not in self.names:
            raise ConventionError(f"unknown convention {name!r}; this model knows {', '.join(self.names)}")
        return name

    @staticmethod
    def bias(name: str) -> str:
        """The attribute every block carries under convention `name`."""
        return "conv=" + name

    @staticmethod
    def copy_prefix(name: str) -> str:
        """What convention `name`'s copy of a conjoined attribute puts before its name."""
        return name + "|"

    @property
    def conjoins_own_only(self) -> bool:
        """Whether only a block's own attributes can be conjoined: a neighbour's are named `-1:...`,
        `+1:...` (cleaner.page.features), which no prefix that starts otherwise matches. What lets the
        copies be laid out from a block's own attribute ids (cleaner.label.crf.ConjoinedIds)."""
        return all(p and p[0] not in "+-" for p in self.attributes)

    def apply(self, rows: list[list[str]], name: str | None) -> list[list[str]]:
        """The block attribute rows as the model sees them under convention `name`."""
        conv = self.resolve(name)
        prefixes = self.attributes
        bias = self.bias(conv)
        tag = self.copy_prefix(conv)
        return [r + [bias] + [tag + a for a in r if a.startswith(prefixes)] for r in rows]
