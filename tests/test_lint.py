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
from overlap_check.lint.source import collect_aliases
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

        def switch(x):
            with tng.scope.npu_stream_switch("1"):
                return x * 2
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
        "suppressed_by_rule": {},
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


# --- precision on real model code (issue 27) ---------------------------------------------


def test_oc104_branches_guarded_by_a_flag_and_its_negation_are_exclusive(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        import torch

        side = torch.npu.Stream()

        def elif_not(x, on_side, other):
            shared = x
            if on_side:
                with torch.npu.stream(side):
                    shared = x * 2
            if other:
                combine = None
            elif not on_side:
                combine = shared + 1  # the main stream made it on this path
            return combine

        def conjunction_and_short_circuit(x, cfg):
            shared = None
            compute_on_side = cfg.shared and cfg.multi
            if compute_on_side:
                with torch.npu.stream(side):
                    shared = x * 2
            if not compute_on_side and shared is not None:
                x = x + shared.view(-1)
            return x

        def ternary(x, self_flag):
            if self_flag:
                with torch.npu.stream(side):
                    y = x * 2
            z = x if self_flag else y + 1
            return z

        def same_flag_is_not_exclusive(x, on_side):
            if on_side:
                with torch.npu.stream(side):
                    y = x * 2
            if on_side:
                x = x + y  # expect: OC104
            return x

        def another_flag_is_not_exclusive(x, on_side, other):
            if on_side:
                with torch.npu.stream(side):
                    y = x * 2
            if not other:
                x = x + y  # expect: OC104
            return x

        def flag_reassigned_in_between(x, on_side):
            if on_side:
                with torch.npu.stream(side):
                    y = x * 2
            on_side = not on_side
            if not on_side:
                x = x + y  # expect: OC104
            return x
        """,
    )
    assert found(path, select="OC104") == expected(path)


def test_oc104_metadata_reads_are_not_data_uses(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    write(package, "", "__init__.py")
    write(
        package,
        """
        def num_chunks(hidden, chunk):
            tokens = hidden.shape[0]
            if hidden is None or len(hidden) == 0:
                return 1
            return max(1, (tokens + chunk - 1) // chunk) + hidden.dim() * 0

        def reads_data(hidden):
            return hidden.sum()
        """,
        "util.py",
    )
    path = write(
        tmp_path,
        """
        import torch
        from pkg.util import num_chunks, reads_data

        class Model(torch.nn.Module):
            def tokens(self, hidden, scale=1):
                return hidden.size(0) * scale

            def passes_on(self, hidden):
                return num_chunks(hidden, 64)

            def keeps(self, hidden):
                self.kept = hidden
                return 0

            def forward(self, x):
                side = torch.npu.Stream()
                with torch.npu.stream(side):
                    y = x * 2
                n = y.shape[-1] + y.numel() + len(y)
                kind = (y.dtype, y.device, y.ndim)
                chunks = self.tokens(y) + self.passes_on(hidden=y) + num_chunks(y, 8)
                z = x + 1
                k = self.keeps(y)  # expect: OC104
                return z

            def data_through_a_helper(self, x):
                side = torch.npu.Stream()
                with torch.npu.stream(side):
                    y = x * 2
                total = reads_data(y)  # expect: OC104
                return total

            def shape_then_data(self, x):
                side = torch.npu.Stream()
                with torch.npu.stream(side):
                    y = x * 2
                n = y.shape[0]
                return x[:n] + y  # expect: OC104
        """,
    )
    assert found(path, select="OC104") == expected(path)


def test_a_module_compiled_both_ways_is_judged_per_function(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        import torch
        import torchair as tng

        class Model(torch.nn.Module):
            def decode_ge(self, x):
                with torch.npu.stream(self.side):  # expect: OC108
                    y = x * 2
                return self.shared(y)

            def decode_ngx(self, x):
                with tng.scope.npu_stream_switch("2"):  # expect: OC108
                    y = x * 2
                return self.shared(y)

            def shared(self, y):
                with torch.npu.stream(self.other):  # reached by both compiles: not judged
                    return y + 1

            def prefill(self, x):
                # the eager prefill path: no compile reaches it, so not judged either way
                with torch.npu.stream(self.offload):
                    self.host.copy_(x, non_blocking=True)
                return x

            def compile(self, use_ngx):
                if use_ngx:
                    fn = self.decode_ngx
                    return torch.npu.npugraph_ex.inference.cache_compile(fn, cache_dir="c")
                backend = tng.get_npu_backend(compiler_config=tng.CompilerConfig())
                return torch.compile(self.decode_ge, backend=backend)
        """,
    )
    assert found(path) == expected(path)
    assert lint_paths([path]).paths[str(path)].path is ExecPath.ANY


def test_npugraph_ex_cache_compile_beside_a_torchair_config_makes_a_dispatcher(
    tmp_path: Path,
) -> None:
    # The KV-offload copy of an eager prefill in a module that compiles its decode with
    # npugraph_ex or GE depending on configuration: no single path, so no OC108.
    path = write(
        tmp_path,
        """
        import torch
        import torchair as tng

        class Model(torch.nn.Module):
            def attention(self, x, is_prefill):
                if is_prefill and self.offload:
                    with torch.npu.stream(self.d2h_stream):
                        self.host_cache.copy_(x, non_blocking=True)
                return x

            def decode(self, x):
                return self.attention(x, False)

            def build(self):
                target = self.decode
                if self.use_ngx:
                    return torch.npu.npugraph_ex.inference.cache_compile(target, cache_dir="a")
                config = tng.CompilerConfig()
                return tng.inference.cache_compile(target, cache_dir="b", config=config)
        """,
    )
    result = lint_paths([path])
    assert result.findings == ()
    assert result.paths[str(path)].path is ExecPath.ANY


def test_wrappers_are_judged_at_their_callers(tmp_path: Path) -> None:
    utils = tmp_path / "utils"
    utils.mkdir()
    write(utils, "from .common import limit_cores, switch_stream\n", "__init__.py")
    write(
        utils,
        """
        import torchair as tng

        class FakeContext:
            def __enter__(self):
                return self

            def __exit__(self, *args):
                return None

        def limit_cores(enabled, aic, aiv):
            \"\"\"Limit the cores when enabled.\"\"\"
            if enabled:
                return tng.scope.limit_core_num(aic, aiv)
            else:
                return FakeContext()

        def switch_stream(enabled, tag):
            if not enabled:
                return FakeContext()
            return tng.scope.npu_stream_switch(tag)

        def not_a_wrapper(x):
            y = x * 2
            with tng.scope.limit_core_num(1, 2):  # expect: OC105
                return y
        """,
        "common.py",
    )
    write(
        tmp_path,
        """
        import torch
        from utils import limit_cores, switch_stream

        class Block(torch.nn.Module):
            def forward(self, x):
                with switch_stream(self.multi, "2"):
                    with limit_cores(self.multi, 4, 8):
                        y = x * 2
                return x + y
        """,
        "with_switch.py",
    )
    write(
        tmp_path,
        """
        import torch
        from utils import limit_cores

        class Attention(torch.nn.Module):
            def forward(self, q, k):
                with limit_cores(True, 12, 24):  # expect: OC105
                    return torch.matmul(q, k)
        """,
        "without_switch.py",
    )
    runner = "import torch, torchair\nc = torch.compile(None, backend=torchair.get_npu_backend())\n"
    write(tmp_path, runner, "runner.py")
    files = sorted(tmp_path.rglob("*.py"))
    assert found(files) == expected(*files)
    result = lint_paths(files)
    (oc105,) = [f for f in result.findings if f.path.endswith("without_switch.py")]
    assert "through limit_cores" in oc105.message
    # The same wrappers in an eager project: TorchAir style is reported where it is used.
    eager = lint_paths([tmp_path / "with_switch.py", utils])
    assert sorted((Path(f.path).name, f.rule, f.line) for f in eager.findings) == [
        ("common.py", "OC105", 25),
        ("with_switch.py", "OC107", 7),
        ("with_switch.py", "OC107", 8),
    ]
    # ... and under npugraph_ex the GE wrapper is the wrong family where it is used.
    ngx = write(tmp_path, 'import torch\nc = torch.compile(None, backend="npugraph_ex")\n', "r.py")
    npugraph_ex = lint_paths([tmp_path / "with_switch.py", utils, ngx])
    assert sorted((Path(f.path).name, f.rule, f.line) for f in npugraph_ex.findings) == [
        ("common.py", "OC105", 25),
        ("with_switch.py", "OC108", 7),
        ("with_switch.py", "OC108", 8),
    ]


def test_oc104_handles_aliases_and_loops(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        import torch

        def branches_of_one_call(stream, meta, uses_paged):
            if uses_paged(meta):
                with torch.npu.stream(stream):
                    for key, params in zip(meta, meta.values()):
                        out = torch.abs(params)
            elif meta.sinks:
                keys = [key for key in meta]  # the other branch of the same `if`
            return meta

        def two_calls_are_two_tests(stream, meta, ready):
            if ready(meta):
                with torch.npu.stream(stream):
                    out = meta.x * 2
            if not ready(meta):
                meta.y = out + 1  # expect: OC104
            return meta

        def handles_and_aliases(stream, queue, done):
            with torch.npu.stream(stream):
                item = queue.head
                event = torch.npu.Event()
                event.record(stream)
            done.append((item, event))  # a handle and an alias: no side-stream data

        def a_loop_carries_across_branches(stream, xs, first):
            total = None
            for x in xs:
                if first:
                    with torch.npu.stream(stream):
                        total = x * 2
                if not first:
                    total = total + x  # expect: OC104
                first = False
            return total
        """,
    )
    assert found(path, select="OC104") == expected(path)


def test_cuda_rules_give_real_code_the_benefit_of_the_doubt(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        import torch

        class Dispatcher(torch.nn.Module):
            def dispatch(self, x, comm, flag):
                main = torch.cuda.current_stream()
                for t in (x,):
                    t.record_stream(comm)
                with torch.cuda.stream(comm):
                    comm.wait_stream(main)
                    recv = self.op(x)
                    if flag:
                        done = torch.cuda.Event()
                        done.record(comm)
                    else:
                        main.wait_stream(comm)  # the block joins the main stream itself
                for t in (recv,):
                    if t is not None:
                        t.record_stream(comm)
                return recv + 0

            def handed_back(self, x, comm):
                comm.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(comm):
                    recv = self.op(x)
                    busy = self.busy or bool(flag)
                for t in (recv,):
                    t.record_stream(comm)
                if busy:
                    comm.synchronize()
                return recv

            def inputs(self, x, side, meta):
                keys = self.project_keys(x)  # a method here: it may order streams itself
                info = Metadata(x, meta)  # a host object
                ready = torch.cuda.current_stream().record_event()
                h = self.proj(x)  # a submodule: a device tensor
                with torch.cuda.stream(side):
                    ready.wait()
                    y = self.store(keys, info) + h
                torch.cuda.current_stream().wait_stream(side)
                return y

            def unwaited(self, x, side):
                h = self.proj(x)
                with torch.cuda.stream(side):
                    w = h * 2  # expect: OC202
                torch.cuda.current_stream().wait_stream(side)
                return w

            def project_keys(self, x):
                return x

            def backup(self, rows, side):
                picked = self.buffer[rows, 0]  # a gather: a new tensor, not the buffer
                with torch.cuda.stream(side):
                    picked.record_stream(side)
                    self.cache[rows].record_stream(side)  # expect: OC204
        """,
    )
    assert found(path) == expected(path)


# --- --explain, knowing suppressions ------------------------------------------------------


@pytest.mark.parametrize("rule", list(RULES))
def test_explain_examples_are_linted_wrong_and_right(tmp_path: Path, rule: str) -> None:
    from overlap_check.lint.explain import EXPLAIN

    why, wrong, right = EXPLAIN[rule]
    assert len(why) > 80
    bad = write(tmp_path, wrong, "wrong.py")
    good = write(tmp_path, right, "right.py")
    assert rule in {f.rule for f in lint_paths([bad]).findings}
    assert lint_paths([good]).findings == ()


def test_cli_explain_prints_the_reasoning_and_both_examples() -> None:
    result = CliRunner().invoke(cli, ["lint", "--explain", "oc104"])
    assert result.exit_code == 0
    text = result.output
    assert text.startswith("OC104: side-stream result used on the main stream unsynchronised")
    assert "Wrong:\n\n    import torch" in text and "\nRight:\n\n" in text
    assert "wait_stream(side)" in text.split("Right:")[1]
    unknown = CliRunner().invoke(cli, ["lint", "--explain", "OC999"])
    assert unknown.exit_code == 2 and "unknown rule" in unknown.output


def test_config_suppress_list_and_comments_are_counted_in_every_format(tmp_path: Path) -> None:
    source = """
        import torch

        side = torch.npu.Stream()

        def f(x, w):
            with torch.npu.stream(side):
                s = x @ w
            a = x + s  # overlap-check: ignore[OC104]
            return a

        def g(x, w):
            with torch.npu.stream(side):
                s = x @ w
            b = x * s
            return b

        def h(x, w):
            with torch.npu.stream(side):
                s = x @ w
            c = x - s
            return c
        """
    write(tmp_path, source, "model.py")
    config = '[lint]\nsuppress = ["model.py:15:OC104", "other.py:OC1"]\n'
    (tmp_path / "overlap-check.toml").write_text(config)
    runner = CliRunner()
    text = runner.invoke(cli, ["lint", "model.py"])
    assert text.exit_code == 1
    assert [
        line.split(":")[1] for line in text.output.splitlines() if line.startswith("model.py:")
    ] == ["21"]
    assert "(2 suppressed (OC104 x2): '# overlap-check: ignore' or [lint] suppress)" in text.output
    report = json.loads(runner.invoke(cli, ["lint", "model.py", "--format", "json"]).output)
    assert report["summary"]["suppressed"] == 2
    assert report["summary"]["suppressed_by_rule"] == {"OC104": 2}
    assert [(f["line"], f["by"]) for f in report["suppressed"]] == [
        (9, "inSource"),
        (15, "external"),
    ]
    github = runner.invoke(cli, ["lint", "model.py", "--format", "github"]).output
    assert github.splitlines()[-1] == ("::notice title=overlap-check lint::2 suppressed (OC104 x2)")
    sarif = json.loads(runner.invoke(cli, ["lint", "model.py", "--format", "sarif"]).output)
    results = sarif["runs"][0]["results"]
    assert [r.get("suppressions") for r in results] == [
        None,
        [{"kind": "inSource"}],
        [{"kind": "external"}],
    ]
    (tmp_path / "overlap-check.toml").write_text('[lint]\nsuppress = ["model.py"]\n')
    bad = runner.invoke(cli, ["lint", "model.py"])
    assert bad.exit_code == 2 and "PATH[:LINE]:RULE" in bad.output


def test_oc104_follows_a_project_wrapper_of_the_stream_context(tmp_path: Path) -> None:
    write(
        tmp_path,
        """
        import contextlib
        import torch
        import torchair as tng

        def on_stream(enabled, stream):
            if not enabled:
                return contextlib.nullcontext()
            return torch.npu.stream(stream)

        def either(enabled, stream, mode):
            if mode == "ge_graph":
                return tng.scope.npu_stream_switch(stream)
            return torch.npu.stream(stream)

        def keep_alive(enabled, out, stream):
            if enabled:
                out.record_stream(stream)
        """,
        "streams.py",
    )
    path = write(
        tmp_path,
        """
        import torch
        from streams import either, keep_alive, on_stream

        class Block(torch.nn.Module):
            def forward(self, x):
                with on_stream(self.multi, stream=self.side):
                    y = self.shared(x)
                keep_alive(self.multi, y, self.main)  # bookkeeping, not a read
                return x + y  # expect: OC104

            def joined(self, x):
                with on_stream(self.multi, self.side):
                    y = self.shared(x)
                torch.npu.current_stream().wait_stream(self.side)
                return x + y

            def run_time_choice(self, x):
                with either(self.multi, self.side, self.mode):  # GE may order it: not judged
                    y = self.shared(x)
                return x + y
        """,
    )
    assert found(path, select="OC104") == expected(path)


def test_cuda_side_results_views_allocations_and_other_branch_stores(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        import torch

        class MoE(torch.nn.Module):
            def forward(self, x, overlap):
                x_in = x.clone()
                if self.alt is not None and overlap:
                    self.alt.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(self.alt):
                        shared = self.shared(x_in)
                    routed = self.routed(x)
                else:
                    routed = self.routed(x)
                    shared = self.shared(x_in)  # the other branch: the side result stays
                return routed + shared  # expect: OC201

            def views_and_buffers(self, x):
                with torch.cuda.stream(self.alt):
                    x = x.view(-1, 8)  # a view of the caller's tensor: no device work
                    out = torch.empty_like(x)  # memory only
                    y = self.proj(x)
                    y2 = y.transpose(0, 1)  # a view of a side result is one
                z = self.proj(x) + out.sum() * 0
                return z + y2  # expect: OC201
        """,
    )
    assert found(path) == expected(path)
