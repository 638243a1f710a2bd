"""Annotation conventions as model input (opt-in; measured in docs/conventions.md).

CleanEval's annotators kept everything a reader takes for the page's text; Dragnet's gold
keeps the article and its comments. A model trained on both follows a compromise. A
convention-aware model (`cleaner train --conventions`) is given each training page's
convention as input: one `conv=<name>` attribute per block and convention-conjoined copies
of the attributes whose names start with one of `convention_attributes` (id/class tokens and
tags: what a convention decides differently). When cleaning, the user picks the convention
(`[model] convention`, `cleaner clean --convention`); the model's default is the first name.

Measured on validation fold 1 with each set tagged with its own convention: CleanEval-dev
+0.017, final +0.005, CleanPortalEval +0.019, Dragnet +0.005 against the compromise model —
and -0.05 on the other convention's pages, which is why the shipped default is not
convention-aware.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import Config


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

    def apply(self, rows: list[list[str]], name: str | None) -> list[list[str]]:
        """The block attribute rows as the model sees them under convention `name`."""
        conv = self.resolve(name)
        prefixes = self.attributes
        bias = "conv=" + conv
        tag = conv + "|"
        return [r + [bias] + [tag + a for a in r if a.startswith(prefixes)] for r in rows]
