"""Config discovery, validation and the CLI > environment > file > default precedence."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.cli.config import (
    Config,
    find_config,
    format_for_path,
    load_config,
    merge_options,
    plan_from_cli,
)
from overlap_check.model import CoreLimit, DeviceConfig, Options, Plan
from overlap_check.model.errors import ConfigError, UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "overlap-check.toml"

FULL = """\
[thresholds]
real = 0.6
fake = 0.1

[runs]
warmup = 3
min_runs = 7
per = "step"

[gate]
fail_on = "partial"
tolerance = 0.05
strict = true

[device]
soc = "Ascend910B2"
ge_aicore_num = "24|48"
soc_ini = "platform/Ascend910B2.ini"

[run]
runs = 6
profiler = "msprof"
level = "Level2"

[lint]
select = ["OC101", "OC103"]
ignore = ["OC110"]

[[plan]]
name = "moe-shared-expert"
side = "SharedExpert|shared_expert"
dominator = "GroupedMatmul"
side_stream = 3
main_stream = 2
[plan.limit_core]
aicore = 12
vectorcore = 24
mode = "npugraph_ex"

[[plan]]
name = "indexer"
side_stream = 4
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def error_of(folder: Path, text: str, name: str = "overlap-check.toml") -> ConfigError:
    write(folder, name, text)
    with pytest.raises(ConfigError) as caught:
        load_config(None, folder)
    return caught.value


# --------------------------------------------------------------------------- discovery


def test_no_config_anywhere_gives_an_empty_config(tmp_path: Path) -> None:
    assert load_config(None, tmp_path) == Config()
    assert find_config(tmp_path) is None


def test_full_config_is_read_into_typed_values(tmp_path: Path) -> None:
    path = write(tmp_path, "overlap-check.toml", FULL)
    config = load_config(None, tmp_path)
    assert config.source == path
    assert (config.real, config.fake, config.warmup, config.min_runs) == (0.6, 0.1, 3, 7)
    assert (config.per, config.fail_on, config.tolerance, config.strict) == (
        "step",
        "partial",
        0.05,
        True,
    )
    assert config.device == DeviceConfig(soc="Ascend910B2", ge_aicore_num="24|48")
    assert config.soc_ini == str(tmp_path / "platform" / "Ascend910B2.ini")
    assert (config.runs, config.profiler, config.level) == (6, "msprof", "Level2")
    assert (config.lint_select, config.lint_ignore) == (("OC101", "OC103"), ("OC110",))
    assert config.plans == (
        Plan(
            name="moe-shared-expert",
            side="SharedExpert|shared_expert",
            dominator="GroupedMatmul",
            side_stream=3,
            main_stream=2,
            limit_core=CoreLimit(aicore=12, vectorcore=24, mode="npugraph_ex"),
        ),
        Plan(name="indexer", side_stream=4),
    )


def test_pyproject_table_is_found_from_the_working_directory(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "pyproject.toml",
        """\
        [project]
        name = "model"

        [tool.overlap-check.thresholds]
        real = 0.7

        [[tool.overlap-check.plan]]
        name = "moe"
        side = "SharedExpert"
        """,
    )
    assert find_config(tmp_path) == path
    config = load_config(None, tmp_path)
    assert (config.source, config.prefix, config.real) == (path, "tool.overlap-check.", 0.7)
    assert config.plans == (Plan(name="moe", side="SharedExpert"),)


def test_pyproject_without_the_table_is_not_a_config(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "model"\n')
    assert load_config(None, tmp_path) == Config()


def test_own_file_wins_over_pyproject(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.overlap-check.thresholds]\nreal = 0.7\n")
    own = write(tmp_path, "overlap-check.toml", "[thresholds]\nreal = 0.8\n")
    config = load_config(None, tmp_path)
    assert (config.source, config.real) == (own, 0.8)


def test_explicit_config_is_relative_to_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "ci").mkdir()
    path = write(tmp_path / "ci", "gate.toml", "[runs]\nwarmup = 1\n")
    write(tmp_path, "overlap-check.toml", "[runs]\nwarmup = 4\n")
    config = load_config("ci/gate.toml", tmp_path)
    assert (config.source, config.warmup) == (path, 1)


def test_explicit_config_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config("missing.toml", tmp_path)
    assert caught.value.path == "missing.toml"  # as given, relative to the working directory
    assert "not found" in str(caught.value)


def test_a_config_outside_the_working_directory_is_named_in_full(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "cwd").mkdir()
    write(tmp_path / "elsewhere", "gate.toml", "[runs]\nwarmup = -1\n")
    with pytest.raises(ConfigError) as caught:
        load_config(str(tmp_path / "elsewhere" / "gate.toml"), tmp_path / "cwd")
    assert caught.value.path == str(tmp_path / "elsewhere" / "gate.toml")


def test_explicit_pyproject_without_table_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n')
    with pytest.raises(ConfigError, match=r"no \[tool.overlap-check\] table"):
        load_config("pyproject.toml", tmp_path)


def test_the_example_config_is_valid() -> None:
    config = load_config(str(EXAMPLE), EXAMPLE.parent)
    assert [plan.name for plan in config.plans] == ["moe-shared-expert"]
    assert config.device.soc == "Ascend910B2"
    limit = config.plans[0].limit_core
    assert limit is not None and (limit.aicore, limit.vectorcore, limit.mode) == (12, 24, "ge")


def test_docs_quote_the_example_config() -> None:
    """docs/config.md's "complete example" holds the same tables and values as the file."""
    doc = (EXAMPLE.parents[1] / "docs" / "config.md").read_text(encoding="utf-8")
    quoted = doc.split("A complete example is `examples/overlap-check.toml`:", 1)[1]
    block = quoted.split("```toml\n", 1)[1].split("```", 1)[0]
    assert tomllib.loads(block) == tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- errors


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    err = error_of(tmp_path, "[thresholds]\nreal = 0.5\nfake = \n")
    assert err.path == "overlap-check.toml"
    assert err.line == 3
    assert str(err).startswith("overlap-check.toml:3: TOML syntax error")


def test_unknown_key_is_named_with_a_suggestion(tmp_path: Path) -> None:
    err = error_of(tmp_path, "[thresholds]\nreal = 0.5\nfkae = 0.01\n")
    assert err.key == "thresholds.fkae"
    assert err.line == 3
    assert "did you mean 'fake'" in str(err)


def test_unknown_section(tmp_path: Path) -> None:
    err = error_of(tmp_path, "[threshold]\nreal = 0.5\n")
    assert (err.key, err.line) == ("threshold", 1)
    assert "did you mean 'thresholds'" in str(err)


@pytest.mark.parametrize(
    ("text", "key", "line"),
    [
        ("[runs]\nwarmup = 1.5\n", "runs.warmup", 2),
        ("[runs]\nmin_runs = 0\n", "runs.min_runs", 2),
        ("[runs]\nwarmup = true\n", "runs.warmup", 2),  # a bool is not an integer
        ('[thresholds]\nreal = "0.5"\n', "thresholds.real", 2),
        ("[thresholds]\nreal = 1.5\n", "thresholds.real", 2),
        ('[gate]\nfail_on = "always"\n', "gate.fail_on", 2),
        ('[device]\nge_aicore_num = "24,48"\n', "device.ge_aicore_num", 2),
        ('[lint]\nselect = ["E501"]\n', "lint.select", 2),
        ('[[plan]]\nname = "a"\nside = "x"\nside_stream = "3"\n', "plan[1].side_stream", 4),
    ],
)
def test_wrong_type_or_value_names_the_key(tmp_path: Path, text: str, key: str, line: int) -> None:
    err = error_of(tmp_path, text)
    assert (err.key, err.line) == (key, line)
    assert err.path == "overlap-check.toml"


def test_bad_regex_names_file_key_and_line(tmp_path: Path) -> None:
    err = error_of(
        tmp_path,
        """\
        [[plan]]
        name = "ok"
        side = "SharedExpert"

        [[plan]]
        name = "broken"
        side = "Shared(Expert"
        """,
    )
    assert err.key == "plan[2].side"
    assert err.line == 7
    assert "bad regular expression" in str(err)
    assert str(err).startswith("overlap-check.toml:7: ")


def test_bad_threshold_order(tmp_path: Path) -> None:
    err = error_of(tmp_path, "[thresholds]\nreal = 0.3\nfake = 0.4\n")
    assert (err.key, err.line) == ("thresholds.fake", 3)
    # one threshold alone meets the other where the layers merge: the default real 0.5,
    # or a command line's 0.9 (before: an error, whatever the command line said)
    write(tmp_path, "overlap-check.toml", "[thresholds]\nfake = 0.5\n")
    config = load_config(None, tmp_path)
    with pytest.raises(ConfigError, match=r"got real 0\.5 \(default\) and fake 0\.5 \(.*toml key"):
        merge_options(config, {}, {})
    assert merge_options(config, {"real": 0.9}, {}).thresholds.fake == 0.5


def test_duplicate_plan_name(tmp_path: Path) -> None:
    err = error_of(
        tmp_path, '[[plan]]\nname = "a"\nside = "x"\n\n[[plan]]\nname = "a"\nside = "y"\n'
    )
    assert (err.key, err.line) == ("plan[2].name", 6)
    assert "duplicate plan name 'a'" in str(err)


def test_bad_limit_mode(tmp_path: Path) -> None:
    err = error_of(
        tmp_path,
        '[[plan]]\nname = "a"\nside = "x"\n[plan.limit_core]\naicore = 12\nmode = "eager"\n',
    )
    assert (err.key, err.line) == ("plan[1].limit_core.mode", 6)


def test_limit_without_a_count(tmp_path: Path) -> None:
    err = error_of(tmp_path, '[[plan]]\nname = "a"\nside = "x"\n[plan.limit_core]\nmode = "ge"\n')
    assert (err.key, err.line) == ("plan[1].limit_core", 4)


def test_plan_needs_a_name_and_a_side(tmp_path: Path) -> None:
    assert error_of(tmp_path, '[[plan]]\nside = "x"\n').key == "plan[1].name"
    err = error_of(tmp_path, '[[plan]]\nname = "a"\ndominator = "GroupedMatmul"\n')
    assert err.key == "plan[1].side"


def test_plan_as_a_single_table_is_an_error(tmp_path: Path) -> None:
    err = error_of(tmp_path, '[plan]\nname = "a"\nside = "x"\n')
    assert err.key == "plan"


def test_pyproject_errors_carry_the_full_key(tmp_path: Path) -> None:
    err = error_of(
        tmp_path,
        '[tool.overlap-check]\n[[tool.overlap-check.plan]]\nname = "a"\nside = "(("\n',
        name="pyproject.toml",
    )
    assert (err.key, err.line) == ("tool.overlap-check.plan[1].side", 4)
    assert err.path == "pyproject.toml"


# --------------------------------------------------------------------------- merging


def test_defaults_without_anything() -> None:
    assert merge_options(Config(), {}, {}) == Options()


def test_precedence_cli_over_environment_over_file_over_default(tmp_path: Path) -> None:
    write(tmp_path, "overlap-check.toml", FULL)
    config = load_config(None, tmp_path)
    environ = {"OVERLAP_CHECK_REAL": "0.8", "OVERLAP_CHECK_WARMUP": "1"}
    options = merge_options(config, {"real": 0.9, "warmup": None}, environ)
    assert options.thresholds.real == 0.9  # CLI
    assert options.warmup == 1  # environment (CLI value None: not given)
    assert options.thresholds.fake == 0.1  # file
    assert options.min_runs == 7  # file
    assert options.order == "time"  # default
    assert options.device.soc == "Ascend910B2"
    assert [plan.name for plan in options.plans] == ["moe-shared-expert", "indexer"]


def test_empty_environment_variable_counts_as_unset() -> None:
    assert merge_options(Config(real=0.7), {}, {"OVERLAP_CHECK_REAL": ""}).thresholds.real == 0.7


def test_all_environment_overrides() -> None:
    environ = {
        "OVERLAP_CHECK_REAL": "0.6",
        "OVERLAP_CHECK_FAKE": "0.02",
        "OVERLAP_CHECK_WARMUP": "3",
        "OVERLAP_CHECK_MIN_RUNS": "9",
        "OVERLAP_CHECK_TOLERANCE": "0.2",
        "OVERLAP_CHECK_FAIL_ON": "partial",
        "OVERLAP_CHECK_STRICT": "true",
    }
    options = merge_options(Config(), {}, environ)
    assert (options.thresholds.real, options.thresholds.fake) == (0.6, 0.02)
    assert (options.warmup, options.min_runs, options.tolerance) == (3, 9, 0.2)
    assert (options.fail_on, options.strict) == ("partial", True)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("OVERLAP_CHECK_REAL", "high"),
        ("OVERLAP_CHECK_REAL", "1.5"),
        ("OVERLAP_CHECK_WARMUP", "2.5"),
        ("OVERLAP_CHECK_MIN_RUNS", "0"),
        ("OVERLAP_CHECK_STRICT", "maybe"),
        ("OVERLAP_CHECK_FAIL_ON", "always"),
    ],
)
def test_malformed_environment_value_names_the_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigError, match=variable):
        merge_options(Config(), {}, {variable: value})


def test_threshold_order_is_checked_after_merging() -> None:
    # file real 0.6 is fine alone; the environment's fake 0.7 is not below it
    with pytest.raises(
        ConfigError,
        match=r"real 0\.6 \(config key thresholds\.real\) "
        r"and fake 0\.7 \(environment variable OVERLAP_CHECK_FAKE\)",
    ):
        merge_options(Config(real=0.6), {}, {"OVERLAP_CHECK_FAKE": "0.7"})
    with pytest.raises(UsageError, match="--warmup"):
        merge_options(Config(), {"warmup": -1}, {})


def test_plan_selection_and_one_off_plans() -> None:
    config = Config(
        source=Path("overlap-check.toml"),
        plans=(Plan(name="a", side="x"), Plan(name="b", side="y")),
    )
    one_off = Plan(name="cli", side="z")
    assert merge_options(config, {"plan_names": ("b",)}, {}).plans == (config.plans[1],)
    assert merge_options(config, {"plans": (one_off,)}, {}).plans == (one_off,)
    both = merge_options(config, {"plans": (one_off,), "plan_names": ("a",)}, {})
    assert both.plans == (config.plans[0], one_off)
    with pytest.raises(UsageError, match=r"'c': no such plan in overlap-check\.toml"):
        merge_options(config, {"plan_names": ("c",)}, {})


def test_unknown_override_key_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown override keys"):
        merge_options(Config(), {"thresholds": 0.5}, {})


def test_plan_from_cli() -> None:
    assert plan_from_cli(side=None, dominator=None) is None
    assert plan_from_cli(side="SharedExpert", dominator="GroupedMatmul") == Plan(
        name="SharedExpert", side="SharedExpert", dominator="GroupedMatmul"
    )
    assert plan_from_cli(side=None, dominator=None, side_stream=3, main_stream=2) == Plan(
        name="stream 3", side_stream=3, main_stream=2
    )
    with pytest.raises(UsageError):
        plan_from_cli(side=None, dominator="GroupedMatmul")
    with pytest.raises(ConfigError, match="'--side'"):
        plan_from_cli(side="(", dominator=None)
    assert plan_from_cli(side=None, dominator="GroupedMatmul", op_type="SwiGlu") == Plan(
        name="SwiGlu", dominator="GroupedMatmul", op_type="SwiGlu"
    )
    with pytest.raises(ConfigError, match="'--op-type'"):
        plan_from_cli(side="x", dominator=None, op_type="((")


def test_plan_op_type_is_a_checked_regex_and_enough_to_select(tmp_path: Path) -> None:
    write(tmp_path, "overlap-check.toml", '[[plan]]\nname = "a"\nop_type = "^SwiGlu$"\n')
    (plan,) = load_config(None, tmp_path).plans
    assert plan == Plan(name="a", op_type="^SwiGlu$")
    err = error_of(tmp_path, '[[plan]]\nname = "a"\nside = "x"\nop_type = "(("\n')
    assert (err.key, err.line) == ("plan[1].op_type", 4)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("r.json", "json"),
        ("r.md", "markdown"),
        ("R.XML", "junit"),
        ("r.txt", "text"),
    ],
)
def test_format_for_path(name: str, fmt: str) -> None:
    assert format_for_path(name) == fmt


def test_format_for_unknown_suffix() -> None:
    with pytest.raises(UsageError, match=r"\.html"):
        format_for_path("report.html")


# --------------------------------------------------------------------------- CLI


def test_bad_regex_in_config_exits_2_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `compare` loads the config for [gate] tolerance, so a broken config stops it too.
    write(tmp_path, "overlap-check.toml", '[[plan]]\nname = "a"\nside = "Shared(Expert"\n')
    report = json.dumps({"schema_version": 1, "plans": [], "stream_pairs": []})
    (tmp_path / "a.json").write_text(report)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["compare", "a.json", "a.json"])
    assert result.exit_code == 2
    assert "overlap-check.toml:3:" in result.output
    assert "plan[1].side" in result.output


# --------------------------------------------------------------------------- one definition

DOCS = Path(__file__).resolve().parents[1] / "docs" / "config.md"


def _docs_tables() -> dict[str, list[list[str]]]:
    """docs/config.md's key tables: section -> rows (the cells of each, stripped)."""
    tables: dict[str, list[list[str]]] = {}
    section = None
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        if line.startswith("### `["):  # [gate] -> gate, [[plan]] -> [plan]
            section = line.split("`", 2)[1][1:-1]
        elif section and line.startswith("| `"):
            cells = [cell.strip() for cell in line.replace("\\|", "/").strip("|").split("|")]
            tables.setdefault(section, []).append(cells)
    return tables


def _shown(value: object) -> str:
    """A default as docs/config.md writes it: TOML in backticks."""
    return f"`{json.dumps(value)}`"


def test_the_docs_tables_are_the_settings() -> None:
    """Each section's keys in order, the default, the option and the environment variable."""
    from overlap_check.cli.config.settings import SECTIONS

    tables = _docs_tables()
    for section, settings in SECTIONS.items():
        rows = tables[section]
        assert [row[0] for row in rows] == [f"`{key}`" for key in settings], section
        for row, setting in zip(rows, settings.values(), strict=True):
            default = setting.value_default
            if default not in (None, ()):
                assert row[1] == _shown(default), (section, row)
            if len(row) == 4:  # key | default | option / variable | meaning
                names = [setting.flag] if setting.option else []
                names += [setting.variable] if setting.variable else []
                assert row[2] == ", ".join(f"`{name}`" for name in names), (section, row)
            else:
                assert not setting.option and not setting.env, (section, row)


def test_the_docs_tables_of_a_plan_are_its_keys() -> None:
    from overlap_check.cli.config.parse import LIMIT_KEYS, PLAN_KEYS

    tables = _docs_tables()
    tables_of_their_own = ("limit_core", "main_limit_core")
    keys = [key for key in PLAN_KEYS if key not in tables_of_their_own]
    assert [row[0] for row in tables["[plan]"]] == [f"`{key}`" for key in keys]
    assert [row[0] for row in tables["plan.limit_core"]] == [f"`{key}`" for key in LIMIT_KEYS]
    assert all(f"### `[plan.{key}]`" in DOCS.read_text() for key in tables_of_their_own)


def test_every_setting_is_an_option_of_its_command() -> None:
    import click

    from overlap_check.cli.config.settings import SETTINGS

    def flags(name: str) -> set[str]:
        command = cli.get_command(click.Context(cli), name)
        assert command is not None
        return {flag for param in command.params for flag in getattr(param, "opts", [])}

    commands = {"analysis": flags("analyze") & flags("run"), "run": flags("run")}
    commands["lint"] = flags("lint")
    for setting in SETTINGS:
        assert (setting.flag in commands[setting.scope]) == setting.option, setting.name
        if setting.scope == "analysis":  # merged into Options: a field gives type and default
            assert setting.value_type is not None, setting.name


def test_a_setting_reads_from_the_environment_by_its_type() -> None:
    from overlap_check.cli.config.settings import BY_NAME

    assert BY_NAME["warmup"].parse_env("3") == 3
    assert BY_NAME["real"].parse_env("0.75") == 0.75
    assert BY_NAME["strict"].parse_env("yes") is True
    assert BY_NAME["fail_on"].parse_env("fake") == "fake"
    with pytest.raises(ValueError):
        BY_NAME["strict"].parse_env("maybe")
    env = {"OVERLAP_CHECK_FAKE_SHARE": "0.4", "OVERLAP_CHECK_MIN_RUNS": "2"}
    merged = merge_options(Config(), {}, env)
    assert (merged.fake_share, merged.min_runs) == (0.4, 2)
