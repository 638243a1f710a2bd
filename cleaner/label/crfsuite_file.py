"""CRFsuite's model file, read as arrays (`read_crfsuite`): the state weights that cleaner.label.crf scores blocks
with and the transitions its chain runs on.

The format read is CRFsuite's first-order model ("lCRF", type "FOMC", version
100): a header of chunk offsets, the feature records (type, source, destination, weight),
and the label and attribute names in two CQDB string databases. Only the records and the
names' id -> string tables are read; anything unexpected is refused (ValueError).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

_HEADER = struct.Struct("<4sI4sIIIIIIIII")  # magic, size, type, version, 3 counts, 5 chunk offsets
_CQDB = struct.Struct("<4sIIIII")  # chunk, size, flag, byte order, number of ids, offset of the id table
_FEATURE = np.dtype([("type", "<u4"), ("src", "<u4"), ("dst", "<u4"), ("weight", "<f8")])
STATE, TRANSITION = 0, 1  # feature record types: (attribute, label) and (label, label)


@dataclass
class CrfsuiteModel:
    """What a CRFsuite model file holds, as arrays."""

    labels: list[str]  # by label id
    attributes: list[bytes]  # attribute names as stored, by attribute id
    features: np.ndarray  # the feature records (_FEATURE), in file order
    features_offset: int  # where the records start in the file

    @property
    def transitions(self) -> np.ndarray:
        """Label x label transition weights."""
        n = len(self.labels)
        t = self.features[self.features["type"] == TRANSITION]
        out = np.zeros((n, n))
        out[t["src"], t["dst"]] = t["weight"]
        return out

    def state_weights(self) -> dict[tuple[str, str], float]:
        """{(attribute as stored, label): weight} of every state feature (exact, unlike CRFsuite's dump)."""
        s = self.features[self.features["type"] == STATE]
        names = [a.decode("utf-8", "surrogateescape") for a in self.attributes]
        return {(names[a], self.labels[y]): float(w) for a, y, w in zip(s["src"], s["dst"], s["weight"])}


def _cqdb_names(data: bytes, base: int) -> list[bytes]:
    """The id -> string table of the CQDB database at `base` (strings without their NUL)."""
    chunk, _, _, _, n, table = _CQDB.unpack_from(data, base)
    if chunk != b"CQDB":
        raise ValueError(f"no string database at offset {base}")
    names = []
    for i, offset in enumerate(struct.unpack_from(f"<{n}I", data, base + table)):
        rid, size = struct.unpack_from("<II", data, base + offset)
        if rid != i or size < 1:
            raise ValueError(f"string database entry {i} is damaged")
        names.append(data[base + offset + 8 : base + offset + 7 + size])
    return names


def read_crfsuite(data: bytes) -> CrfsuiteModel:
    """Parse a CRFsuite first-order CRF model file (ValueError when it is not one)."""
    if len(data) < _HEADER.size:
        raise ValueError("too short for a CRFsuite model")
    magic, size, kind, version, _, n_labels, n_attrs, off_feat, off_labels, off_attrs, _, _ = _HEADER.unpack_from(data)
    if magic != b"lCRF" or kind != b"FOMC" or version != 100 or size != len(data):
        raise ValueError(f"not a CRFsuite first-order model file (magic {magic!r}, type {kind!r}, version {version})")
    chunk, _, n_features = struct.unpack_from("<4sII", data, off_feat)
    if chunk != b"FEAT":
        raise ValueError("the feature chunk is missing")
    features = np.frombuffer(data, dtype=_FEATURE, count=n_features, offset=off_feat + 12)
    labels = [x.decode("utf-8") for x in _cqdb_names(data, off_labels)]
    attributes = _cqdb_names(data, off_attrs)
    if len(labels) != n_labels or len(attributes) != n_attrs:
        raise ValueError("label or attribute count disagrees with the header")
    state = features["type"] == STATE
    if (features["dst"][state] >= n_labels).any() or (features["src"][state] >= n_attrs).any():
        raise ValueError("a state feature refers to an unknown label or attribute")
    return CrfsuiteModel(labels, attributes, features, off_feat + 12)
