"""The test double of a language model for the judge tests (docs/judges.md).

`ScriptedJudge` is NOT a model: it stands where mem0's LLM object stands (the object
`LlmFactory.create` returns: `generate_response(messages=..., response_format=...)`) and
answers with canned strings, in order — malformed ones included — or sleeps past a timeout,
or raises. Everything around it is the product's: the prompt, the strict reading of the
answer, its validation, the budget, the timeout, the apply.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class ScriptedJudge:
    """A scripted stand-in for a language model (a test double). Each reply is a string to
    return, a `Sleep` (the call takes longer than the timeout) or an exception to raise."""

    replies: list = field(default_factory=list)
    asked: list[list[dict]] = field(default_factory=list)  # the messages of each call

    def generate_response(self, messages, response_format=None, **_):
        self.asked.append(messages)
        reply = self.replies.pop(0) if self.replies else '{"decision": "leave"}'
        if isinstance(reply, Sleep):
            time.sleep(reply.seconds)
            return '{"decision": "leave"}'
        if isinstance(reply, BaseException):
            raise reply
        return reply


@dataclass(frozen=True)
class Sleep:
    seconds: float


class ChatServer:
    """A loopback HTTP server speaking the OpenAI chat-completions route, so that a real mem0
    provider (`openai`, made by `LlmFactory` from config.yaml) talks to it over real HTTP. It
    answers each request with `reply(user_message)` — scripted: a test double of the model."""

    def __init__(self, reply):
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.reply = reply
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "body": body})
                content = server.reply(body["messages"][-1]["content"])
                data = json.dumps(
                    {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model"),
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._http.server_port}/v1"
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def config_yaml(self, **judge) -> str:
        """A config.yaml whose `llm:` is mem0's `openai` provider pointed at this server."""
        lines = [
            "llm:",
            "  provider: openai",
            f"  config: {{model: scripted-judge, api_key: test-key, openai_base_url: '{self.url}'}}",
        ]
        if judge:
            lines += ["judge:"] + [f"  {key}: {value}" for key, value in judge.items()]
        return "\n".join(lines) + "\n"
