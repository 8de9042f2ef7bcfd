"""A student's notebook session on a hub, driven the way JupyterLab drives it: REST for the session,
the kernel's websocket for the code (Jupyter's messaging protocol, plain-JSON frames).

    kernel = await Kernel.open(hub.url, token, "s1", "transpose-course/notebooks/05_bank_conflicts.ipynb")
    reply = await kernel.execute("import course_lib")   # .status 'ok'/'error', .outputs, .seconds
    await kernel.close()                                # shuts the kernel down

``outputs`` are what a notebook would store for the cell, as nbformat output dicts. Output that an
ipywidgets Output widget captured (the explorers') goes to that widget, not to the cell, as in
JupyterLab and nbclient. :func:`cell_outputs_match` compares them with a stored cell the way nbval
does (streams joined, PNGs and widget model ids left out, NBVAL_* markers honoured).

Uses tornado (JupyterLab's own dependency); nothing here starts a hub (deploy/local_hub.py does).
"""
from __future__ import annotations

import asyncio
import json
import struct
import time
import uuid
from dataclasses import dataclass, field

from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import WebSocketClosedError, websocket_connect

OUTPUT_TYPES = ("stream", "display_data", "execute_result", "error")
NOT_COMPARED = ("image/png", "image/jpeg", "application/vnd.jupyter.widget-view+json")


@dataclass
class Reply:
    status: str                          # 'ok' or 'error' (the execute_reply's)
    outputs: list = field(default_factory=list)
    seconds: float = 0.0                 # from sending the request to the kernel going idle
    error: str = ""                      # 'ename: evalue' when status is 'error'


def _decode(frame) -> dict:
    """A websocket frame: JSON text, or jupyter_server's binary form (offsets, JSON, buffers)."""
    if isinstance(frame, str):
        return json.loads(frame)
    n = struct.unpack("!I", frame[:4])[0]
    offsets = struct.unpack(f"!{n}I", frame[4:4 + 4 * n])
    return json.loads(frame[offsets[0]:offsets[1] if n > 1 else None].decode())


class Kernel:
    """One kernel of one student's server, opened through a notebook session."""

    def __init__(self, ws, headers: dict, base: str, session_id: str):
        self.ws, self.headers, self.base, self.session_id = ws, headers, base, session_id
        self.client_session = uuid.uuid4().hex

    @classmethod
    async def open(cls, hub_url: str, token: str, user: str, path: str, timeout: float = 120) -> "Kernel":
        headers = {"Authorization": f"token {token}"}
        base = f"{hub_url}/user/{user}"
        body = json.dumps({"path": path, "type": "notebook", "name": path.rsplit("/", 1)[-1],
                           "kernel": {"name": "python3"}})
        r = await AsyncHTTPClient().fetch(HTTPRequest(f"{base}/api/sessions", "POST", headers=headers, body=body,
                                                      request_timeout=timeout))
        session = json.loads(r.body)
        ws_url = base.replace("http", "ws", 1) + f"/api/kernels/{session['kernel']['id']}/channels"
        ws = await websocket_connect(HTTPRequest(ws_url, headers=headers, request_timeout=timeout),
                                     max_message_size=256 * 2**20)
        return cls(ws, headers, base, session["id"])

    async def execute(self, code: str, timeout: float = 600) -> Reply:
        msg_id = uuid.uuid4().hex
        await self._write(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "student",
                       "session": self.client_session, "version": "5.3", "date": ""},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        start, reply, idle, captured = time.perf_counter(), None, False, set()
        outputs: list = []
        while reply is None or not idle:
            frame = await self._read(start + timeout - time.perf_counter())
            msg = _decode(frame)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "execute_reply":
                reply = content
            elif kind == "status":
                idle = content["execution_state"] == "idle"
            elif kind == "comm_msg" and "msg_id" in content.get("data", {}).get("state", {}):
                # an Output widget starts (its msg_id is this request's) or stops capturing
                comm = content["comm_id"]
                (captured.add if content["data"]["state"]["msg_id"] == msg_id else captured.discard)(comm)
            elif kind == "clear_output" and not captured:
                outputs.clear()
            elif kind in OUTPUT_TYPES and not captured:
                outputs.append(_output(kind, content))
        error = f"{reply.get('ename', '')}: {reply.get('evalue', '')}" if reply["status"] == "error" else ""
        return Reply(reply["status"], outputs, time.perf_counter() - start, error)

    async def _write(self, text: str):
        try:
            await self.ws.write_message(text)
        except WebSocketClosedError:
            raise ConnectionError(f"the kernel's websocket ({self.base}) closed: {self.ws.close_code} "
                                  f"{self.ws.close_reason}") from None

    async def _read(self, left: float):
        frame = await asyncio.wait_for(self.ws.read_message(), max(left, 0.001))
        if frame is None:
            raise ConnectionError(f"the kernel's websocket ({self.base}) closed: {self.ws.close_code} "
                                  f"{self.ws.close_reason}")
        return frame

    async def close(self) -> None:
        self.ws.close()
        await AsyncHTTPClient().fetch(HTTPRequest(f"{self.base}/api/sessions/{self.session_id}", "DELETE",
                                                  headers=self.headers), raise_error=False)


def _output(kind: str, content: dict) -> dict:
    if kind == "stream":
        return {"output_type": "stream", "name": content["name"], "text": content["text"]}
    if kind == "error":
        return {"output_type": "error", "ename": content["ename"], "evalue": content["evalue"]}
    return {"output_type": kind, "data": content.get("data", {})}


# ------------------------------------------------------------------------------------ comparing

def markers(cell) -> set:
    """nbval's markers of a stored cell: its tags and its NBVAL_* comment lines, lower case."""
    source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    found = {t.lower().replace("_", "-") for t in cell.get("metadata", {}).get("tags", [])}
    found |= {ln.strip("# ").lower().replace("_", "-") for ln in source.splitlines() if ln.strip().startswith("# NBVAL_")}
    return found


def comparable(outputs) -> list:
    """Outputs as nbval compares them: consecutive streams of one name joined; PNGs, widget model ids,
    tracebacks and metadata left out."""
    out = []
    for o in outputs:
        text = o.get("text", "")
        text = "".join(text) if isinstance(text, list) else text
        if o["output_type"] == "stream" and out and out[-1][:2] == ("stream", o["name"]):
            out[-1] = ("stream", o["name"], out[-1][2] + text)
        elif o["output_type"] == "stream":
            out.append(("stream", o["name"], text))
        elif o["output_type"] == "error":
            out.append(("error", o["ename"], o["evalue"]))
        else:
            data = {k: ("".join(v) if isinstance(v, list) else v) for k, v in o.get("data", {}).items()
                    if k not in NOT_COMPARED}
            out.append(("data", data))          # compared as Python values: JSON's 0 and 0.0 are equal
    return out


def cell_outputs_match(stored_cell, reply: Reply) -> bool:
    """Whether a reply's outputs are the stored cell's, as nbval would judge (True for cells it skips)."""
    tags = markers(stored_cell)
    if tags & {"nbval-ignore-output", "nbval-skip"}:
        return True
    return comparable(stored_cell.get("outputs", [])) == comparable(reply.outputs)
