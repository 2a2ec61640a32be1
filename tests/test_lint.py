"""`overlap-check lint`: the static checker of multi-stream API routing.

Test data in tests/data/lint marks every expected finding with a trailing
`# expect: OCnnn` comment on its line; the tests compare the linter's
(line, rule) pairs with those marks, so the expectations sit next to the code
a reviewer reads.
"""

from __future__ import annotations

import json
import re
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.lint import RULES, ExecPath, lint_paths
from overlap_check.lint.imports import collect_aliases
from overlap_check.model.errors import InputError, UsageError
from overlap_check.report.workflow_commands import workspace_path

DATA = Path(__file__).parent / "data" / "lint"
RULE_SNIPPETS = sorted((DATA / "rules").glob("OC*.py"))
_EXPECT = re.compile(r"#\s*expect:\s*(?P<rules>OC\d+(?:\s*,\s*OC\d+)*)")


@pytest.fixture(autouse=True)
def _outside_the_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from an empty folder: a config file in the repo must not change the results."""
    monkeypatch.chdir(tmp_path)


def expected(*files: Path) -> set[tuple[str, int, str]]:
    """(path, line, rule) for every `# expect:` mark in ``files``."""
    marks = set()
    for file in files:
        for number, text in enumerate(file.read_text().splitlines(), start=1):
            found = _EXPECT.search(text)
            if found:
                for rule in found.group("rules").split(","):
                    marks.add((str(file), number, rule.strip()))
    return marks


def found(result_paths: list[Path] | Path, **options: object) -> set[tuple[str, int, str]]:
    paths = result_paths if isinstance(result_paths, list) else [result_paths]
    result = lint_paths(paths, **options)  # type: ignore[arg-type]
    return {(f.path, f.line, f.rule) for f in result.findings}


def write(tmp_path: Path, source: str, name: str = "mod.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


# --- one snippet per rule that triggers it, one that does not -----------------------------


def test_every_rule_has_a_wrong_and_a_right_snippet() -> None:
    names = {p.stem for p in RULE_SNIPPETS}
    for rule in RULES:
        assert f"{rule}_bad" in names, rule
        assert f"{rule}_good" in names, rule


@pytest.mark.parametrize("snippet", RULE_SNIPPETS, ids=lambda p: p.stem)
def test_rule_snippet_gives_exactly_its_marked_findings(snippet: Path) -> None:
    marks = expected(snippet)
    rule = snippet.stem.split("_")[0]
    if "_bad" in snippet.stem:
        assert marks, "a wrong snippet must mark at least one finding"
        assert {m[2] for m in marks} == {rule}
    else:
        assert marks == set()
    # Each snippet alone: the execution path comes from its own compile call.
    assert found(snippet) == marks


# --- the official-style examples of both paths -------------------------------------------


def test_official_ge_example_is_clean_and_judged_ge() -> None:
    result = lint_paths([DATA / "official_ge.py"])
    assert result.findings == ()
    assert result.paths[str(DATA / "official_ge.py")].path is ExecPath.GE


def test_official_npugraph_ex_example_is_clean_and_judged_npugraph_ex() -> None:
    result = lint_paths([DATA / "official_npugraph_ex.py"])
    assert result.findings == ()
    assert result.paths[str(DATA / "official_npugraph_ex.py")].path is ExecPath.NPUGRAPH_EX


# --- realistic model files ---------------------------------------------------------------


def test_realistic_moe_on_ge_gives_exactly_the_reviewers_findings() -> None:
    folder = DATA / "moe_ge"
    files = sorted(folder.glob("*.py"))
    marks = expected(*files)
    # moe.py: explicit Event in a GE module, record of a Parameter, tagged event in scope;
    # attention.py: a core limit with no side stream anywhere in it.
    assert sorted((Path(p).name, rule) for p, _, rule in marks) == [
        ("attention.py", "OC105"),
        ("moe.py", "OC101"),
        ("moe.py", "OC102"),
        ("moe.py", "OC103"),
    ]
    assert found(folder) == marks


def test_model_file_without_compile_takes_the_runners_path() -> None:
    folder = DATA / "moe_ge"
    result = lint_paths([folder])
    moe = result.paths[str(folder / "moe.py")]
    assert (moe.path, moe.source) == (ExecPath.GE, "project")
    assert moe.where == f"{folder / 'runner.py'}:11"  # config = CompilerConfig()


def test_realistic_npugraph_ex_pipeline_gives_exactly_the_reviewers_findings() -> None:
    path = DATA / "pipeline_npugraph_ex.py"
    marks = expected(path)
    assert sorted(rule for _, _, rule in marks) == ["OC103", "OC104"]
    assert found(path) == marks


# --- import aliases ----------------------------------------------------------------------

_NPUGRAPH_EX_COMPILE = 'compiled = torch.compile(f, backend="npugraph_ex")\n'


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("import torchair as tng", 'tng.scope.npu_stream_switch("1")'),
        ("import torchair", 'torchair.scope.npu_stream_switch("1")'),
        ("import torchair.scope", 'torchair.scope.npu_stream_switch("1")'),
        ("from torchair import scope", 'scope.npu_stream_switch("1")'),
        ("from torchair import scope as sc", 'sc.npu_stream_switch("1")'),
        ("from torchair.scope import npu_stream_switch", 'npu_stream_switch("1")'),
        ("from torchair.scope import npu_stream_switch as nss", 'nss("1")'),
    ],
)
def test_ge_switch_is_recognised_through_every_import_form(
    tmp_path: Path, imports: str, call: str
) -> None:
    body = f"def f(x):\n    with {call}:\n        y = x * 2\n    return y\n\n"
    source = f"import torch\n{imports}\n\n{body}"
    path = write(tmp_path, source + _NPUGRAPH_EX_COMPILE)
    result = lint_paths([path])
    assert [(f.rule, f.line) for f in result.findings] == [("OC108", 5)]
    assert "torchair.scope.npu_stream_switch" in result.findings[0].message


@pytest.mark.parametrize(
    ("imports", "expr", "qualname"),
    [
        ("import torch", "torch.npu.Stream", "torch.npu.Stream"),
        ("import torch.npu", "torch.npu.Stream", "torch.npu.Stream"),
        ("import torch_npu", "torch_npu.npu.Stream", "torch.npu.Stream"),
        ("import torch_npu as tnpu", "tnpu.npu.Event", "torch.npu.Event"),
        ("from torch_npu import npu", "npu.stream", "torch.npu.stream"),
        ("from torch.npu import Stream as S", "S", "torch.npu.Stream"),
        (
            "from torchair.configs.compiler_config import CompilerConfig",
            "CompilerConfig",
            "torchair.CompilerConfig",
        ),
        (
            "import torch\nngx = torch.npu.npugraph_ex",
            "ngx.scope.limit_core_num",
            "torch.npu.npugraph_ex.scope.limit_core_num",
        ),
        ("import numpy as torch", "torch.npu.Stream", None),
        ("from . import torchair", "torchair.scope.npu_stream_switch", None),
    ],
)
def test_alias_resolution(imports: str, expr: str, qualname: str | None) -> None:
    import ast

    tree = ast.parse(imports + "\n")
    node = ast.parse(expr, mode="eval").body
    assert collect_aliases(tree).qualify(node) == qualname


def test_import_inside_a_function_counts(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        import torch

        def f(x):
            import torchair as tng
            with tng.scope.npu_stream_switch("1"):
                y = x + 1
            return y

        compiled = torch.compile(f, backend="npugraph_ex")
        """,
    )
    assert [(f.rule, f.line) for f in lint_paths([path]).findings] == [("OC108", 6)]


def test_a_local_name_like_an_api_is_not_reported(tmp_path: Path) -> None:
    # `scope` here is the user's own module: nothing resolves to torchair.
    path = write(
        tmp_path,
        """
        import torch
        from mylib import scope

        def f(x):
            with scope.npu_stream_switch("1"):
                y = x + 1
            scope.npu_tagged_event_record(None)
            return y

        compiled = torch.compile(f, backend="npugraph_ex")
        """,
    )
    assert lint_paths([path]).findings == ()


def test_from_import_in_the_wrong_namespace_is_reported_once_at_the_import(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        import torch
        from torchair.scope import npu_tagged_event_wait as wait_ev

        def f(x, ev):
            wait_ev(ev)
            wait_ev(ev)
            return x

        compiled = torch.compile(f, backend=__import__("torchair").get_npu_backend())
        """,
    )
    result = lint_paths([path], select="OC102")
    assert [(f.line, f.col) for f in result.findings] == [(3, 1)]
    assert result.findings[0].hint == "use torchair.ops.npu_tagged_event_wait"


def test_npugraph_ex_tagged_events_accepted_in_scope_and_ops(tmp_path: Path) -> None:
    # The recipes document torch.npu.npugraph_ex.scope.*, torch_npu's tests use .ops.*
    path = write(
        tmp_path,
        """
        import torch

        ev = torch.npu.npugraph_ex.ops.npu_create_tagged_event(tag="a")
        torch.npu.npugraph_ex.scope.npu_tagged_event_record(ev)
        torch.npu.npugraph_ex.ops.npu_tagged_event_wait(ev)
        torch.npu.npugraph_ex.ops.npu_stream_switch("2")  # expect: OC102
        """,
    )
    assert found(path, select="OC102") == expected(path)


# --- execution path ----------------------------------------------------------------------


def test_path_pragma_overrides_and_unknown_pragma_is_an_input_error(tmp_path: Path) -> None:
    helper = write(
        tmp_path,
        """
        # overlap-check: path=ge
        import torchair as tng

        def switch(tag):
            return tng.scope.npu_stream_switch(tag)
        """,
    )
    assert lint_paths([helper]).findings == ()  # without the pragma: eager, OC107
    bad = write(tmp_path, "# overlap-check: path=graph\nx = 1\n", "bad.py")
    with pytest.raises(InputError) as err:
        lint_paths([bad])
    assert (err.value.path, err.value.line) == (str(bad), 1)


def test_without_any_compile_the_path_is_eager(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        import torchair as tng

        def switch(tag):
            return tng.scope.npu_stream_switch(tag)
        """,
    )
    result = lint_paths([path])
    assert [(f.rule, f.line) for f in result.findings] == [("OC107", 5)]
    assert result.paths[str(path)].path is ExecPath.EAGER


def test_two_compile_paths_in_the_linted_files_leave_others_unjudged(tmp_path: Path) -> None:
    write(tmp_path, "import torchair\nb = torchair.get_npu_backend()\n", "ge_runner.py")
    write(tmp_path, 'import torch\nm = torch.compile(None, backend="npugraph_ex")\n', "ngx.py")
    helper = write(
        tmp_path,
        "import torchair as tng\n\ndef s(tag):\n    return tng.scope.npu_stream_switch(tag)\n",
        "helper.py",
    )
    result = lint_paths([tmp_path])
    assert result.paths[str(helper)].path is ExecPath.ANY
    assert result.findings == ()


def test_backend_name_held_in_a_variable(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        import torch
        import torchair as tng

        BACKEND = "npugraph_ex"

        def f(x):
            with tng.scope.npu_stream_switch("1"):
                return x + 1

        compiled = torch.compile(f, backend=BACKEND)
        """,
    )
    assert [(f.rule, f.line) for f in lint_paths([path]).findings] == [("OC108", 8)]


def test_torchair_reduce_overhead_accepts_explicit_streams(tmp_path: Path) -> None:
    # TorchAir's aclgraph mode captures torch.npu streams: no OC108 there.
    path = write(
        tmp_path,
        """
        import torch
        import torchair

        side = torch.npu.Stream()

        def f(x):
            with torch.npu.stream(side):
                y = x + 1
            torch.npu.current_stream().wait_stream(side)
            return y * 2

        config = torchair.CompilerConfig()
        config.mode = "reduce-overhead"
        compiled = torch.compile(f, backend=torchair.get_npu_backend(compiler_config=config))
        """,
    )
    result = lint_paths([path])
    assert result.findings == ()
    assert result.paths[str(path)].path is ExecPath.ACLGRAPH


# --- rule details ------------------------------------------------------------------------


def test_oc103_long_lived_bindings_and_activations(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        import torch

        class M(torch.nn.Module):
            def forward(self, x, s):
                w = self.w13
                w.record_stream(s)  # expect: OC103
                for p in self.parameters():
                    p.record_stream(s)  # expect: OC103
                for name, buf in self.named_buffers():
                    buf.record_stream(s)  # expect: OC103
                weights = self.weights_proj(x)
                weights.record_stream(s)
                cached_x = x * 2
                cached_x.record_stream(s)
                self.layer.weight.data.record_stream(s)  # expect: OC103
                return weights + cached_x

        m = torch.compile(M(), backend="npugraph_ex")
        """,
    )
    assert found(path, select="OC103") == expected(path)


def test_oc104_flow_details(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        import torch

        side = torch.npu.Stream()
        other = torch.npu.Stream()

        def reassigned(x):
            with torch.npu.stream(side):
                y = x * 2
            y = x + 1  # re-made on the main stream: no longer the side result
            return y * 3

        def on_another_side_stream(x):
            with torch.npu.stream(side):
                y = x * 2
            with torch.npu.stream(other):
                z = y + 1  # not judged: another side stream
            torch.npu.current_stream().wait_stream(other)
            return z

        def side_waits_main_is_no_join(x):
            with torch.npu.stream(side):
                y = x * 2
            side.wait_stream(torch.npu.current_stream())
            return x + y  # a return is never judged

        def in_a_condition(x):
            with torch.npu.stream(side):
                y = x.sum()
            if y > 0:  # expect: OC104
                x = x + 1
            return x

        def in_a_loop(xs):
            out = []
            for x in xs:
                with torch.npu.stream(side):
                    y = x * 2
                out.append(y)  # expect: OC104
            torch.npu.current_stream().wait_stream(side)
            return out

        def helper_that_waits(x, join_after_wait):
            with torch.npu.stream(side):
                y = x * 2
            join_after_wait(side)
            return x + y

        compiled = torch.compile(reassigned, backend="npugraph_ex")
        """,
    )
    assert found(path, select="OC104") == expected(path)


def test_oc104_return_expressions_are_reads_in_eager_modules(tmp_path: Path) -> None:
    # Eager: `return a + b` runs the sum on the main stream before anything joins the side
    # stream; a result handed back as it is (`return b`, `return a, b`) is the caller's.
    source = """
        import torch

        side = torch.npu.Stream()

        def summed(a, x):
            with torch.npu.stream(side):
                b = x * 2
            return a + b  # expect: OC104

        def handed_back(x):
            with torch.npu.stream(side):
                b = x * 2
            return b

        def handed_back_in_a_tuple(a, x):
            with torch.npu.stream(side):
                b = x * 2
            return a, b

        def one_element_computed(a, x):
            with torch.npu.stream(side):
                b = x * 2
            return a, b.sum()  # expect: OC104

        def joined_first(a, x):
            with torch.npu.stream(side):
                b = x * 2
            torch.npu.current_stream().wait_stream(side)
            return a + b
        """
    eager = write(tmp_path, source, "eager.py")
    assert found(eager, select="OC104") == expected(eager)
    assert len(expected(eager)) == 2
    # The same code compiled with npugraph_ex: the graph end joins the streams.
    compiled = 'compiled = torch.compile(summed, backend="npugraph_ex")\n'
    ngx = write(tmp_path, textwrap.dedent(source) + compiled, "ngx.py")
    assert found(ngx, select="OC104") == set()


def test_oc104_does_not_apply_under_ge(tmp_path: Path) -> None:
    source = """
        import torch
        import torchair

        def f(x):
            with torch.npu.stream(torch.npu.Stream()):
                y = x * 2
            z = y + 1
            return z
        """
    eager = write(tmp_path, source, "eager.py")
    assert [(f.rule, f.line) for f in lint_paths([eager]).findings] == [("OC104", 8)]
    compile_ge = "compiled = torch.compile(f, backend=torchair.get_npu_backend())\n"
    ge = write(tmp_path, textwrap.dedent(source) + compile_ge)
    # Under GE the explicit stream itself is the mistake: torch.npu.stream and torch.npu.Stream.
    assert [(f.rule, f.line) for f in lint_paths([ge]).findings] == [("OC108", 6), ("OC108", 6)]


def test_oc105_counts_a_wrapper_named_like_a_stream_switch(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        import torch
        import torchair as tng
        from .streams import maybe_stream_switch

        def f(x, multi):
            with maybe_stream_switch(multi, "2"):
                with tng.scope.limit_core_num(4, 8):
                    y = x * 2
            return y

        compiled = torch.compile(f, backend=tng.get_npu_backend())
        """,
    )
    assert lint_paths([path]).findings == ()


def test_a_lone_core_limit_is_only_oc105_on_any_path(tmp_path: Path) -> None:
    # Under npugraph_ex a torchair limit is also the wrong family, in eager code also
    # TorchAir style; "remove it" (OC105) is the one fix, so it is the one finding.
    source = """
        import torch
        import torchair as tng

        def f(x):
            with tng.scope.limit_core_num(4, 8):
                return x * 2
        """
    eager = write(tmp_path, source, "eager.py")
    ngx = write(tmp_path, textwrap.dedent(source) + 'c = torch.compile(f, backend="npugraph_ex")\n')
    for path in (eager, ngx):
        assert [(f.rule, f.line) for f in lint_paths([path]).findings] == [("OC105", 6)]


def test_oc110_needs_both_fullgraph_and_dynamic(tmp_path: Path) -> None:
    source = """
        import torch

        side = torch.npu.Stream()
        timer = torch.npu.Event(enable_timing=True)
        compiled = torch.compile(None, backend="npugraph_ex", {flags})
        """
    static = write(tmp_path, source.format(flags="fullgraph=True, dynamic=False"), "a.py")
    dynamic = write(tmp_path, source.format(flags="fullgraph=True, dynamic=True"), "b.py")
    assert lint_paths([static]).findings == ()
    # The timing event is not a stream-ordering object: only the Stream is reported.
    assert [(f.rule, f.line) for f in lint_paths([dynamic]).findings] == [("OC110", 4)]


# --- suppression, select, ignore ---------------------------------------------------------

_SUPPRESS = """
    import torch
    import torchair as tng

    def f(x):
        with tng.scope.npu_stream_switch("1"):{comment}
            return x + 1

    compiled = torch.compile(f, backend="npugraph_ex")
    """


@pytest.mark.parametrize(
    ("comment", "reported"),
    [
        ("", True),
        ("  # overlap-check: ignore[OC108]", False),
        ("  # overlap-check: ignore[OC103, OC108]", False),
        ("  # overlap-check: ignore[oc108]", False),
        ("  # overlap-check: ignore", False),
        ("  # overlap-check: ignore[OC101]", True),
        ("  # noqa", True),
    ],
)
def test_suppression_comment(tmp_path: Path, comment: str, reported: bool) -> None:
    path = write(tmp_path, _SUPPRESS.format(comment=comment))
    result = lint_paths([path])
    assert [f.rule for f in result.findings] == (["OC108"] if reported else [])
    assert result.suppressed == (0 if reported else 1)


def test_select_and_ignore_by_code_and_prefix() -> None:
    folder = DATA / "moe_ge"
    everything = {rule for _, _, rule in found(folder)}
    assert everything == {"OC101", "OC102", "OC103", "OC105"}
    assert {rule for _, _, rule in found(folder, select="OC103")} == {"OC103"}
    assert {rule for _, _, rule in found(folder, select=["OC101", "OC105"])} == {"OC101", "OC105"}
    assert {rule for _, _, rule in found(folder, ignore="OC101,OC102")} == {"OC103", "OC105"}
    assert {rule for _, _, rule in found(folder, select="OC10", ignore="OC105")} == {
        "OC101",
        "OC102",
        "OC103",
    }
    with pytest.raises(UsageError):
        lint_paths([folder], select="OC999")


def test_config_lint_table_and_command_line_precedence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = str(DATA / "moe_ge")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "overlap-check.toml").write_text('[lint]\nignore = ["OC105", "OC101"]\n')
    json_out = ["lint", folder, "--format", "json"]

    def rules(args: list[str]) -> list[str]:
        result = CliRunner().invoke(cli, args)
        return sorted({f["rule"] for f in json.loads(result.stdout)["findings"]})

    assert rules(json_out) == ["OC102", "OC103"]  # the config's ignore
    assert rules([*json_out, "--ignore", "OC103"]) == ["OC101", "OC102", "OC105"]  # CLI wins
    (tmp_path / "other.toml").write_text('[lint]\nselect = ["OC103"]\n')
    assert rules([*json_out, "--config", "other.toml"]) == ["OC103"]
    (tmp_path / "bad.toml").write_text('[lint]\nselect = ["OC999"]\n')
    bad = CliRunner().invoke(cli, [*json_out, "--config", "bad.toml"])
    assert bad.exit_code == 2
    assert "unknown rule OC999" in bad.stderr and "lint.select" in bad.stderr


# --- bad input ---------------------------------------------------------------------------


def test_syntax_error_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "import torch\n\ndef f(:\n    pass\n", "broken.py")
    result = CliRunner().invoke(cli, ["lint", str(path)])
    assert result.exit_code == 2
    assert f"overlap-check: error: {path}:3: syntax error" in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_path_and_undecodable_file_exit_2(tmp_path: Path) -> None:
    missing = CliRunner().invoke(cli, ["lint", str(tmp_path / "nope.py")])
    assert missing.exit_code == 2
    assert "no such file or directory" in missing.stderr
    binary = tmp_path / "blob.py"
    binary.write_bytes(b"x = '\xff\xfe'\n")
    undecodable = CliRunner().invoke(cli, ["lint", str(binary)])
    assert undecodable.exit_code == 2
    assert str(binary) in undecodable.stderr


def test_generated_code_too_deep_to_parse_exits_2(tmp_path: Path) -> None:
    deep = write(tmp_path, "y = " + " + ".join(["a"] * 20_000) + "\n", "generated.py")
    result = CliRunner().invoke(cli, ["lint", str(deep)])
    assert result.exit_code == 2
    assert f"{deep}: source nested too deeply to parse" in result.stderr


def test_unknown_rule_on_the_command_line_exits_2() -> None:
    result = CliRunner().invoke(cli, ["lint", str(DATA / "official_ge.py"), "--select", "OC9"])
    assert result.exit_code == 2
    assert "unknown rule OC9" in result.stderr


def test_directories_skip_hidden_and_virtualenv_folders(tmp_path: Path) -> None:
    bad = 'import torchair as tng\ntng.scope.npu_stream_switch("1")\n'
    for folder in (".venv", "__pycache__", "venv"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.py").write_text(bad)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "y.py").write_text(bad)
    result = lint_paths([tmp_path])
    assert result.files == (str(tmp_path / "pkg" / "y.py"),)


# --- the command line and its formats ----------------------------------------------------


def test_cli_exit_codes_and_text_report() -> None:
    clean = CliRunner().invoke(cli, ["lint", str(DATA / "official_ge.py")])
    assert (clean.exit_code, clean.stdout) == (0, "No findings in 1 file.\n")
    dirty = CliRunner().invoke(cli, ["lint", str(DATA / "pipeline_npugraph_ex.py")])
    assert dirty.exit_code == 1
    lines = dirty.stdout.splitlines()
    assert lines[0].startswith(f"{DATA / 'pipeline_npugraph_ex.py'}:30:13: OC103 record_stream")
    assert lines[1].startswith("    hint: drop the call")
    assert lines[-1] == "Found 2 finding(s) in 1 file (OC103 x1, OC104 x1)."


def test_cli_json_report() -> None:
    path = DATA / "pipeline_npugraph_ex.py"
    result = CliRunner().invoke(cli, ["lint", str(path), "--format", "json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert [(f["rule"], f["line"], f["col"]) for f in report["findings"]] == [
        ("OC103", 30, 13),
        ("OC104", 43, 22),
    ]
    assert set(report["findings"][0]) == {"rule", "path", "line", "col", "message", "hint"}
    assert report["findings"][1]["path"] == str(path)
    assert report["summary"] == {
        "files": 1,
        "findings": 2,
        "suppressed": 0,
        "by_rule": {"OC103": 1, "OC104": 1},
    }


def test_cli_github_annotations() -> None:
    path = DATA / "pipeline_npugraph_ex.py"
    result = CliRunner().invoke(cli, ["lint", str(path), "--format", "github"])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    prefix = (
        f"::error file={workspace_path(str(path))},line=43,col=22,title=OC104::`out0` is computed"
    )
    assert lines[1].startswith(prefix)
    # The message's own newline and commas are escaped, so one finding stays one line.
    assert "%0Ahint: before this use" in lines[1]


def test_cli_junit_one_testcase_per_file_one_failure_per_finding(tmp_path: Path) -> None:
    folder = DATA / "moe_ge"
    result = CliRunner().invoke(cli, ["lint", str(folder), "--format", "junit"])
    assert result.exit_code == 1
    root = ET.fromstring(result.stdout)
    suite = root.find("testsuite")
    assert suite is not None
    cases = {case.get("name"): case.findall("failure") for case in suite.findall("testcase")}
    names = {Path(str(name)).name for name in cases}
    assert names == {"__init__.py", "attention.py", "moe.py", "runner.py", "stream_utils.py"}
    failures = {Path(str(name)).name: [f.get("type") for f in fs] for name, fs in cases.items()}
    assert failures["moe.py"] == ["OC101", "OC103", "OC102"]  # in line order: 52, 90, 91
    assert failures["attention.py"] == ["OC105"]
    assert failures["runner.py"] == []
    assert suite.get("tests") == "5"
    assert suite.get("failures") == "2"  # files with findings


def test_cli_output_file_format_follows_its_suffix(tmp_path: Path) -> None:
    out_xml = tmp_path / "lint.xml"
    out_txt = tmp_path / "lint.txt"
    path = str(DATA / "pipeline_npugraph_ex.py")
    result = CliRunner().invoke(cli, ["lint", path, "--output", str(out_xml)])
    assert result.exit_code == 1
    assert result.stdout.startswith(path)  # stdout keeps --format text
    assert ET.fromstring(out_xml.read_text()).tag == "testsuites"
    CliRunner().invoke(cli, ["lint", path, "--format", "json", "--output", str(out_txt)])
    assert out_txt.read_text().startswith(path)
    # a suffix naming a format lint lacks (.md: analyze's markdown): the --format given
    out_md = tmp_path / "lint.md"
    CliRunner().invoke(cli, ["lint", path, "--format", "json", "--output", str(out_md)])
    assert json.loads(out_md.read_text())["findings"]


def test_cli_help_has_examples_and_list_rules() -> None:
    help_text = CliRunner().invoke(cli, ["lint", "--help"]).stdout
    assert "Examples:" in help_text
    assert "overlap-check lint models/" in help_text
    listed = CliRunner().invoke(cli, ["lint", "--list-rules"]).stdout.splitlines()
    assert [line.split()[0] for line in listed] == list(RULES)
    no_path = CliRunner().invoke(cli, ["lint"])
    assert no_path.exit_code == 2
    assert "missing argument PATH" in no_path.stderr
