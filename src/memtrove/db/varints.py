"""SQLite varints (big-endian 7-bit groups, a ninth byte whole), the encoding of FTS5's
BM25 totals record, which exports carry as it is (:meth:`TextIndex.totals_record
<memtrove.db.text_index.TextIndex.totals_record>`) whatever the engine."""

from __future__ import annotations

__all__ = ["read_varints", "write_varint"]


def read_varints(data: bytes) -> list[int]:
    """Every varint of ``data`` in order."""
    values: list[int] = []
    index = 0
    while index < len(data):
        value = 0
        for position in range(9):
            byte = data[index]
            index += 1
            if position == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values


def write_varint(value: int) -> bytes:
    """``value`` (0 to 2**56 - 1) as one varint."""
    if value <= 0x7F:
        return bytes([value])
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(reversed(groups))
