"""The browser tests hear the server start a script run (tests/run_frames.py): checked on Streamlit's own messages."""

from __future__ import annotations

from run_frames import starts_a_run
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg


def _frame(**fields: object) -> bytes:
    msg = ForwardMsg()
    msg.hash = "0" * 32
    msg.metadata.delta_path[:] = [0, 1]
    for name, value in fields.items():
        if name == "new_session":
            msg.new_session.page_script_hash = str(value)
        elif name == "delta":
            msg.delta.new_element.markdown.body = str(value)
        elif name == "script_finished":
            msg.script_finished = ForwardMsg.FINISHED_SUCCESSFULLY
    return msg.SerializeToString()


def test_a_new_session_message_starts_a_run_and_nothing_else_does() -> None:
    assert starts_a_run(_frame(new_session="a page"))
    assert not starts_a_run(_frame(delta="x" * 3_000_000))   # a big delta is skipped over, not parsed
    assert not starts_a_run(_frame(script_finished=True))
    assert not starts_a_run(_frame())
    assert not starts_a_run(b"\xff\xff")   # a cut or foreign frame is none
    assert not starts_a_run(b"")
