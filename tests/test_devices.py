"""Device cores: the order of trust, the SoC table, the CANN ini reader, info.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from overlap_check.judge.decide import decide
from overlap_check.judge.pipeline import analyze_captures
from overlap_check.measure.cores.device import SOC_CORES, lookup_soc, read_soc_ini, sweep_cores
from overlap_check.measure.figures import capture_figures
from overlap_check.model import Capture, CoresResult, DeviceConfig, DeviceCores, Options
from overlap_check.model.errors import ConfigError
from overlap_check.model.table import conform

INI_910B1 = """\
# [Platform Info configuration begin]
[version]
SoC_version=Ascend910B1
Short_SoC_version=Ascend910B

[SoCInfo]
ai_core_cnt=24
cube_core_cnt=24
vector_core_cnt=48
ai_cpu_cnt=4
memory_size=68719476736
core_type_list=CubeCore,VectorCore
vir_type_list=2,3,6,12,24

[AICoreSpec]
cube_freq=1850
"""


def cores_of(captures: list[Capture], options: Options) -> CoresResult:
    """The core findings of analysing these runs (the public path)."""
    found = analyze_captures(captures, options).cores
    assert found is not None
    return found


def resolve_device_cores(captures: list[Capture], options: Options) -> DeviceCores:
    """The device cores the engine decides for these captures (their evidence, decided)."""
    return decide([capture_figures(c, options, None) for c in captures], options).device


def capture(rows: list[dict[str, Any]] | None = None, cores: DeviceCores | None = None) -> Capture:
    frame = conform(pl.DataFrame(rows or [{"name": "A", "stream_id": 2, "start_ns": 0}]))
    return Capture("p", "kernel_details.csv", 0, 0, "Level1", None, frame, device_cores=cores)


def ini(tmp_path: Path, text: str = INI_910B1, name: str = "Ascend910B1.ini") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- order of trust


def test_info_json_beats_every_other_source(tmp_path: Path) -> None:
    options = Options(
        device=DeviceConfig(soc="Ascend910B3", aicore=8, vectorcore=16),
        soc_ini=str(ini(tmp_path)),
    )
    got = resolve_device_cores([capture(cores=DeviceCores(20, 40, "info.json", "x"))], options)
    assert (got.aicore, got.vectorcore, got.source) == (20, 40, "info.json")


def test_config_numbers_beat_the_ini_which_beats_the_soc_name(tmp_path: Path) -> None:
    path = str(ini(tmp_path))
    numbers = Options(device=DeviceConfig(aicore=8, vectorcore=16), soc_ini=path)
    assert resolve_device_cores([capture()], numbers) == DeviceCores(8, 16, "config", "[device]")
    with_ini = Options(device=DeviceConfig(soc="Ascend910B3"), soc_ini=path)
    got = resolve_device_cores([capture()], with_ini)
    assert (got.aicore, got.vectorcore, got.source) == (24, 48, "soc-ini")
    by_name = resolve_device_cores([capture()], Options(device=DeviceConfig(soc="Ascend910B3")))
    assert (by_name.aicore, by_name.vectorcore, by_name.source) == (20, 40, "soc")


def test_observed_maxima_are_the_last_resort() -> None:
    rows = [
        {"name": "mm", "stream_id": 2, "accelerator_core": "AI_CORE", "block_num": 20},
        {"name": "mix", "stream_id": 2, "accelerator_core": "MIX_AIC", "block_num": 22,
         "mix_block_num": 44},
        {"name": "vec", "stream_id": 3, "accelerator_core": "AI_VECTOR_CORE", "block_num": 40},
        {"name": "cpu", "stream_id": 3, "accelerator_core": "AI_CPU", "block_num": 99},
    ]  # fmt: skip
    got = resolve_device_cores([capture(rows)], Options())
    # no count repeats: the largest, AI Core 22 (MIX_AIC), vector 44 (its Mix Block Num;
    # AI_CPU is no core kind)
    assert (got.aicore, got.vectorcore, got.source) == (22, 44, "observed")


def test_one_oversubscribed_launch_is_not_the_device() -> None:
    """Issue 23 point 13: the real 910B Level1 capture has AI_VECTOR_CORE kernels of 48
    blocks (54 of them) and one of 256 (logical blocks run in waves): 48 is the guess, not
    256; a single kernel of a kind is its own guess."""
    rows = [
        *[{"name": f"v{i}", "stream_id": 2, "accelerator_core": "AI_VECTOR_CORE",
           "block_num": 48} for i in range(3)],
        {"name": "big", "stream_id": 2, "accelerator_core": "AI_VECTOR_CORE", "block_num": 256},
        {"name": "mm", "stream_id": 2, "accelerator_core": "AI_CORE", "block_num": 24},
    ]  # fmt: skip
    got = resolve_device_cores([capture(rows)], Options())
    assert (got.aicore, got.vectorcore, got.source) == (24, 48, "observed")


def test_observed_source_is_noted_in_the_result() -> None:
    result = cores_of([capture()], Options())
    assert result.device is not None and result.device.source == "observed"
    assert any("device cores unknown" in n for n in result.notes)


def test_captures_that_disagree_use_the_smallest() -> None:
    caps = [
        capture(cores=DeviceCores(24, 48, "info.json")),
        capture(cores=DeviceCores(20, 40, "info.json")),
    ]
    got = resolve_device_cores(caps, Options())
    assert (got.aicore, got.vectorcore, got.source) == (20, 40, "info.json")
    assert got.detail is not None and "disagree" in got.detail


def test_one_config_number_without_the_other_is_an_error() -> None:
    with pytest.raises(ConfigError) as err:
        resolve_device_cores([capture()], Options(device=DeviceConfig(aicore=24)))
    assert err.value.key == "device.vectorcore"
    assert err.value.exit_code == 2


# --------------------------------------------------------------------------- SoC table


def test_soc_names_ignore_case_and_prefix() -> None:
    assert lookup_soc("Ascend910B4") == DeviceCores(20, 40, "soc", "Ascend910B4")
    assert lookup_soc("ascend910b1").aicore == 24
    assert lookup_soc("910_9391").vectorcore == 48
    assert all(v[1] == 2 * v[0] for v in SOC_CORES.values())  # split chips: 2 aiv per aic


def test_unknown_soc_lists_the_known_ones_even_when_info_json_wins() -> None:
    options = Options(device=DeviceConfig(soc="Ascend910X"))
    with pytest.raises(ConfigError) as err:
        resolve_device_cores([capture(cores=DeviceCores(20, 40, "info.json"))], options)
    assert err.value.key == "device.soc"
    assert err.value.exit_code == 2
    assert "Ascend910X" in str(err.value) and "Ascend910B2" in str(err.value)


# --------------------------------------------------------------------------- CANN ini


def test_ini_reader_takes_cube_and_vector_counts(tmp_path: Path) -> None:
    path = ini(tmp_path)
    assert read_soc_ini(path) == DeviceCores(24, 48, "soc-ini", str(path))


def test_ini_folder_with_soc_name(tmp_path: Path) -> None:
    ini(tmp_path)
    got = read_soc_ini(tmp_path, "Ascend910B1")
    assert (got.aicore, got.vectorcore) == (24, 48)
    with pytest.raises(ConfigError):
        read_soc_ini(tmp_path)


def test_ini_of_a_chip_without_cube_count(tmp_path: Path) -> None:
    # ATC docs' example for training/inference series: AI Core count only, plus vector cores.
    path = ini(tmp_path, "[SoCInfo]\n# default is the maximum\nai_core_cnt=10\nvector_core_cnt=8\n")
    assert (read_soc_ini(path).aicore, read_soc_ini(path).vectorcore) == (10, 8)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[version]\nSoC_version=X\n", "SoCInfo"),
        ("[SoCInfo]\nai_core_cnt=24\nvector_core_cnt=forty\n", "SoCInfo.vector_core_cnt"),
        ("[SoCInfo]\nvector_core_cnt=48\n", "SoCInfo.ai_core_cnt"),
    ],
)
def test_bad_ini_names_file_and_key(tmp_path: Path, text: str, key: str) -> None:
    path = ini(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        read_soc_ini(path)
    assert err.value.key == key
    assert err.value.path == str(path)


def test_missing_ini_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        read_soc_ini(tmp_path / "nope.ini")
    assert err.value.path == str(tmp_path / "nope.ini")


# --------------------------------------------------------------------------- real capture


@pytest.mark.real
def test_real_msprof_capture_device_cores_from_info_json(real_profiles: Path) -> None:
    from overlap_check.readers import load

    captures = load(real_profiles / "msprof-cli")
    device = resolve_device_cores(captures, Options(device=DeviceConfig(soc="Ascend910B2")))
    # PROF_*/device_0/info.json.0: "ai_core_num": 20, "aiv_num": 40 (beats the SoC name)
    assert (device.aicore, device.vectorcore, device.source) == (20, 40, "info.json")
    assert device.detail is not None and device.detail.endswith("device_0/info.json.0")
    result = cores_of(captures, Options())
    assert result.device == device


def test_a_soc_name_that_disagrees_with_info_json_is_noted() -> None:
    options = Options(device=DeviceConfig(soc="Ascend910B2"))
    result = cores_of([capture(cores=DeviceCores(20, 40, "info.json"))], options)
    assert result.device is not None and result.device.aicore == 20
    assert (
        "SoC Ascend910B2 has 24/48 cores but info.json says 20/40; info.json used" in result.notes
    )


def test_contention_is_swept_with_the_decision_or_the_fewest_cores_it_can_take() -> None:
    own_24 = DeviceCores(24, 48, "info.json")
    own_20 = DeviceCores(20, 0, "info.json")
    config = DeviceCores(16, 32, "config")
    # an info.json anywhere: the decision is the smallest of them, whatever this capture
    # alone would say (a capture without one, config), known when no capture's files differ
    assert sweep_cores(config, [(own_24,), (own_20,), ()]) == ((min(24, 20), min(48, 0)), True)
    assert sweep_cores(None, [(own_24,)]) == ((24, 48), True)
    # a capture whose files differ (the reader picks one by its device): at least the
    # fewest of each kind (0 cores leave a kind unjudged, so they bound nothing)
    assert sweep_cores(own_24, [(own_24, own_20), (own_24,)]) == ((20, 48), False)
    # without: the same configured figures for every capture
    assert sweep_cores(config, [(), ()]) == ((16, 32), True)
    # or the largest Block Num over all captures: this one's own alone, else at least 1
    observed = DeviceCores(30, 0, "observed")
    assert sweep_cores(observed, [()]) == ((30, 0), True)
    assert sweep_cores(observed, [(), ()]) == ((30, 1), False)
    assert sweep_cores(None, [(), ()]) is None


def test_cores_no_source_gives_are_unknown_never_0() -> None:
    """Issue 23 point 13: Level0 writes Block Num 0 and no info.json was found: no output
    says "0 AI Core", the contention line says it was not judged, the JSON has null."""
    import json as json_module

    from overlap_check.judge.pipeline import analyze_captures
    from overlap_check.report import json as json_report
    from overlap_check.report import markdown, text

    rows = [{"name": "A", "stream_id": 2, "start_ns": 0, "end_ns": 10, "block_num": 0}]
    report = analyze_captures([capture(rows)], Options())
    shown = text.render(report)
    assert "0 AI Core" not in shown and "0 AI Vector" not in shown
    assert "device: cores unknown" in shown
    assert "not judged (device cores unknown)" in shown
    assert "never exceeds" not in shown
    assert "0 AI cores" not in markdown.render(report)
    device = json_module.loads(json_report.render(report))["cores"]["device"]
    assert (device["aicore"], device["vectorcore"], device["guessed"]) == (None, None, True)


def test_real_910b_level1_guess_is_24_48_and_says_so(real_profiles: Path) -> None:
    """Its kernel_details.csv: AI_CORE up to 24 blocks (11 kernels at 24), AI_VECTOR_CORE
    48 (54 kernels) and one at 256: the guess is 24/48, labelled a guess."""
    from overlap_check.judge.pipeline import check
    from overlap_check.report import text

    report = check([real_profiles / "torch_npu-level1-text"], Options(), workers=1)
    assert report.cores is not None and report.cores.device is not None
    device = report.cores.device
    assert (device.aicore, device.vectorcore, device.source) == (24, 48, "observed")
    assert "24 AI Core (aic) / 48 AI Vector (aiv) (a guess from Block Num)" in text.render(report)
