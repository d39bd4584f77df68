"""Progress bars (mem0_plugin.progress): only on a terminal, only for work that takes a while."""

from __future__ import annotations

import io

from mem0_plugin import progress


class _TerminalText(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_bar_when_stderr_is_not_a_terminal():
    assert progress.counting("Reading memories", io.StringIO()) is None


def test_quick_work_draws_nothing():
    shown = _TerminalText()
    update = progress.counting("Reading memories", shown)
    for done in range(0, 1001, 100):
        update(done, 1000)
    assert shown.getvalue() == ""


def test_slow_work_draws_a_bar_until_it_is_done(monkeypatch):
    monkeypatch.setattr(progress, "SHOW_AFTER_SECONDS", 0.0)
    shown = _TerminalText()
    update = progress.counting("Embedding", shown)
    update(10, 40)
    update(20, 40)
    drawn = shown.getvalue()
    assert "Embedding" in drawn
    update(40, 40)
    assert not update.shown[0].live.is_started  # stopped (and, transient, erased) once done


def test_a_download_advances_silently_when_not_on_a_terminal(capsys):
    with progress.downloading("mem0: downloading model.onnx", 3) as advance:
        advance(1)
        advance(2)
    assert capsys.readouterr().err == ""
