"""Whether a websocket frame from Streamlit's server starts a script run: the browser tests' own count of runs.

The server's own word that a script run started is the ForwardMsg carrying ``new_session`` (field 4), which
Streamlit sends at the start of every run, fragments included. The page's counter (tests/browser/conftest.py's
RUN_COUNTER) reads the page, and a run that starts and ends between two of its renders (a cached result under load)
never shows as running there; the server's message does not miss it. Only the message's top-level fields are
walked: a delta can be megabytes, and it is skipped, not parsed.
"""

from __future__ import annotations

NEW_SESSION_FIELD = 4


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def starts_a_run(payload: bytes) -> bool:
    """Whether one websocket frame from the server is a ForwardMsg that starts a script run (protobuf wire format:
    each field a varint tag, then a varint, 8 bytes, a length and its bytes, or 4 bytes)."""
    at = 0
    try:
        while at < len(payload):
            tag, at = _varint(payload, at)
            field, wire = tag >> 3, tag & 7
            if field == NEW_SESSION_FIELD and wire == 2:
                return True
            if wire == 0:
                _, at = _varint(payload, at)
            elif wire == 1:
                at += 8
            elif wire == 2:
                length, at = _varint(payload, at)
                at += length
            elif wire == 5:
                at += 4
            else:
                return False
    except IndexError:
        return False
    return False
