"""Triton as a project setting: stored with the project, set by `studio render --triton`
and the desktop's Servers tab, planned the same way by both (no server needed here;
tests/engine/test_triton.py talks to a real one)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from support.render import REPO

from studio.core.errors import StudioError
from studio.engine.triton.client import TritonEngine
from studio.core.triton_target import TritonTarget, parse_url
from studio.engine.voice.catalog import get_voice
from studio.stack.build import build_engine
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.project.store import Project

TARGET = TritonTarget(("grpc://gpu1:8001", "https://gpu2:8443"), model="m", ca_file="/etc/ca.pem", outage_s=30)


def test_addresses_are_parsed_with_protocol_and_tls() -> None:
    assert parse_url("grpc://gpu1:8001") == ("grpc", False, "gpu1:8001")
    assert parse_url("grpcs://gpu1") == ("grpc", True, "gpu1:8001")
    assert parse_url("https://gpu2:8443") == ("http", True, "gpu2:8443")
    assert parse_url("gpu3:9001") == ("grpc", False, "gpu3:9001")
    for bad in ("ftp://x:1", "grpc://:1", "grpc://h:notaport"):
        with pytest.raises(StudioError):
            parse_url(bad)
    with pytest.raises(StudioError, match="cert_file and key_file"):
        TritonTarget(("h:1",), cert_file="c.pem")


def test_the_setting_is_stored_with_the_project(tmp_path: Path) -> None:
    settings = new_project_settings(get_voice(None)).with_changes(triton=TARGET)
    open_for_manuscript(REPO / "resources" / "sample.md", tmp_path / "p.studio", settings).project.close()
    project = Project.open(tmp_path / "p.studio")
    try:
        assert project.settings().triton == TARGET
        project.update_settings(project.settings().with_changes(triton=None))
        assert project.settings().triton is None
    finally:
        project.close()


def test_render_options_set_and_clear_the_servers() -> None:
    from studio.cli import build_parser
    from studio.cli.triton import triton_changes

    parse = build_parser().parse_args
    changed, target = triton_changes(parse(["render", "b.md", "-o", "o", "--triton", "grpc://a:1, http://b:2",
                                            "--triton-outage", "30", "--triton-model", "x"]), None)
    assert changed and target.servers == ("grpc://a:1", "http://b:2") and target.outage_s == 30
    assert target.model == "x"
    assert triton_changes(parse(["render", "b.md", "-o", "o"]), target) == (False, target)
    assert triton_changes(parse(["render", "b.md", "-o", "o", "--no-triton"]), target) == (True, None)
    with pytest.raises(StudioError, match="need --triton"):
        triton_changes(parse(["render", "b.md", "-o", "o", "--triton-ca", "ca.pem"]), None)


def test_desktop_and_cli_plan_the_same_triton_stack(qtbot, tmp_path: Path) -> None:
    from studio.cli import build_parser
    from studio.cli.render import render_plan
    from studio.stack.build import Isolation
    from studio.desktop.jobqueue import JobQueue
    from studio.desktop.monitor import RenderStats
    from studio.desktop.render_worker import RenderWorker

    settings = new_project_settings(get_voice(None)).with_changes(preset="int8-cpu", triton=TARGET)
    cli = render_plan(build_parser().parse_args(["render", "book.md", "-o", str(tmp_path)]), settings)
    project = open_for_manuscript(REPO / "resources" / "sample.md", tmp_path / "p.studio", settings).project
    try:
        desktop = RenderWorker(project, JobQueue(), RenderStats(), isolation=Isolation()).plan_for(project.settings())
    finally:
        project.close()
    assert desktop == cli
    assert cli.triton == TARGET and cli.isolation is None and cli.streams == 1
    assert cli.batch_size == TARGET.batch * TARGET.in_flight
    assert "on Triton" in cli.describe()
    engine = build_engine(cli)
    try:
        assert isinstance(engine, TritonEngine) and engine.model == "m"
    finally:
        engine.close()
    named = build_engine(replace(cli, triton=TritonTarget(("h:1",))))
    assert named.model == "en_US-joe-medium.int8-cpu"  # the name `studio triton export` gives


def test_the_servers_tab_edits_the_setting(qtbot) -> None:
    from studio.ui.voices_dialog import VoicesDialog

    settings = new_project_settings(get_voice(None)).with_changes(triton=TARGET)
    dlg = VoicesDialog(settings, ["en"])
    qtbot.addWidget(dlg)
    assert dlg.triton.servers.text() == "grpc://gpu1:8001, https://gpu2:8443"
    dlg.triton.servers.setText("grpc://gpu9:8001")
    chosen = dlg.chosen_settings().triton
    assert chosen.servers == ("grpc://gpu9:8001",) and chosen.ca_file == "/etc/ca.pem" and chosen.outage_s == 30
    dlg.triton.servers.setText("")
    assert dlg.chosen_settings().triton is None
    dlg.triton.servers.setText("ftp://nope")
    with qtbot.assertNotEmitted(dlg.applied):
        dlg._save()
    assert "not a Triton server address" in dlg.triton.result.text()
    with qtbot.waitSignal(dlg.triton.testRequested) as sig:
        dlg.triton.test.click()
    assert sig.args[0]["servers"] == "ftp://nope"
    dlg.triton.show_result([("grpc://gpu9:8001", False, "not reachable: refused")])
    assert "not reachable" in dlg.triton.result.text()
