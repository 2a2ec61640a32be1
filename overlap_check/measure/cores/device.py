"""How many cores the device has: AI Core (cube, "aic") and AI Vector core ("aiv").

Sources, most trusted first (docs/method.md, "Core limits and block counts"): the capture's
info.json, the config's ``[device]`` counts (above the ini: a vNPU slice has fewer cores
than its chip), a CANN ``<SoC>.ini`` (``--soc-ini``), a SoC name in :data:`SOC_CORES`,
else a guess from Block Num, labelled so. Block Num 0 (Level0) is unknown, never a count."""

from __future__ import annotations

import configparser
from collections.abc import Callable, Sequence
from pathlib import Path

from overlap_check.model import DeviceCores, Options
from overlap_check.model.errors import ConfigError

# SoC name -> (AI Core = cube cores, AI Vector cores). Only values with a public source.
# "mirror" = CANN 8.1.RC1 platform_config mirrored on GitHub, github.com/leideng/CANN-8.1.RC1
#   file Ascend/ascend-toolkit/8.1.RC1/aarch64-linux/data/platform_config/<SoC>.ini
SOC_CORES: dict[str, tuple[int, int]] = {
    # mirror Ascend910B1.ini [SoCInfo] ai_core_cnt=24 cube_core_cnt=24 vector_core_cnt=48
    "Ascend910B1": (24, 48),
    # a third-party tutorial quoting Ascend910B2.ini [SoCInfo] 24 / 24 / 48 (docs/formats.md)
    "Ascend910B2": (24, 48),
    # mirror Ascend910B3.ini [SoCInfo] ai_core_cnt=20 cube_core_cnt=20 vector_core_cnt=40
    "Ascend910B3": (20, 40),
    # a third-party tutorial quoting Ascend910B4.ini [SoCInfo] 20 / 20 / 40 (docs/formats.md)
    "Ascend910B4": (20, 40),
    # mirror Ascend910_9391.ini [SoCInfo] ai_core_cnt=24 cube_core_cnt=24 vector_core_cnt=48
    "Ascend910_9391": (24, 48),
    # a public tool printing its Ascend910_9392.ini: 24 AI Core / 24 cube / 48 vector
    "Ascend910_9392": (24, 48),
    # mirror Ascend910_9362.ini [SoCInfo] ai_core_cnt=20 cube_core_cnt=20 vector_core_cnt=40
    "Ascend910_9362": (20, 40),
}


def known_socs() -> str:
    return ", ".join(sorted(SOC_CORES))


def _find_soc(name: str) -> tuple[str, tuple[int, int]] | None:
    wanted = name.strip().lower().removeprefix("ascend")
    for soc, cores in SOC_CORES.items():
        if soc.lower().removeprefix("ascend") == wanted:
            return soc, cores
    return None


def lookup_soc(name: str, *, key: str = "device.soc", path: str | None = None) -> DeviceCores:
    """Cores of a SoC by name; case does not matter and the "Ascend" prefix may be left out."""
    found = _find_soc(name)
    if found is not None:
        soc, (aicore, vectorcore) = found
        return DeviceCores(aicore, vectorcore, "soc", detail=soc)
    raise ConfigError(
        f"unknown SoC {name!r}",
        path=path,
        key=key,
        hint=f"known SoCs: {known_socs()}; or give [device] aicore and vectorcore, "
        "or --soc-ini PATH to the CANN platform_config/<SoC>.ini",
    )


def read_soc_ini(path: str | Path, soc: str | None = None) -> DeviceCores:
    """Cores from a CANN ``<SoC>.ini`` (``path``, or the ``platform_config`` folder with
    ``soc`` naming the file): ``cube_core_cnt`` (split chips), else ``ai_core_cnt``, and
    ``vector_core_cnt`` (absent: 0, no separate vector cores, vector checks skipped)."""
    file = Path(path)
    if file.is_dir():
        if soc is None:
            raise ConfigError(
                "--soc-ini names a folder but no SoC is given",
                path=file,
                hint="name the <SoC>.ini file, or give --soc / [device] soc",
            )
        file = file / f"{soc}.ini"
    parser = configparser.ConfigParser(
        interpolation=None, strict=False, inline_comment_prefixes=("#", ";")
    )
    try:
        with file.open(encoding="utf-8", errors="replace") as handle:
            parser.read_file(handle)
    except OSError as err:
        raise ConfigError(f"cannot read the SoC ini file: {err.strerror}", path=file) from err
    except configparser.Error as err:
        raise ConfigError(f"not an ini file: {err.message}", path=file) from err
    if not parser.has_section("SoCInfo"):
        raise ConfigError("no [SoCInfo] section", path=file, key="SoCInfo")
    info = parser["SoCInfo"]

    def count(name: str) -> int | None:
        raw = info.get(name)
        if raw is None or raw.strip() == "":
            return None
        try:
            value = int(raw.strip())
        except ValueError as err:
            raise ConfigError(
                f"not a whole number: {raw.strip()!r}", path=file, key=f"SoCInfo.{name}"
            ) from err
        if value < 0:
            raise ConfigError(f"negative core count {value}", path=file, key=f"SoCInfo.{name}")
        return value

    cube = count("cube_core_cnt")
    aicore = cube if cube else count("ai_core_cnt")
    if not aicore:
        raise ConfigError(
            "no AI Core count (cube_core_cnt / ai_core_cnt)", path=file, key="SoCInfo.ai_core_cnt"
        )
    vectorcore = count("vector_core_cnt") or 0
    return DeviceCores(aicore, vectorcore, "soc-ini", detail=str(file))


def observed_cores(maxima: Sequence[tuple[int, int]]) -> DeviceCores:
    """Largest Block Num per core kind over all captures (a guess: blocks are logical);
    ``maxima``: each capture's contention.observed_maxima."""
    return DeviceCores(
        max([0, *(m[0] for m in maxima)]),
        max([0, *(m[1] for m in maxima)]),
        "observed",
        detail="the largest Block Num two kernels or more ask for; blocks are logical",
    )


def agreed_cores(found: Sequence[DeviceCores]) -> DeviceCores | None:
    """The captures' own (info.json) cores; when captures of different devices disagree,
    the smallest, and say so."""
    if not found:
        return None
    pairs = sorted({(d.aicore, d.vectorcore) for d in found})
    if len(pairs) == 1:
        return found[0]
    seen = ", ".join(f"{a}/{v}" for a, v in pairs)
    return DeviceCores(
        min(p[0] for p in pairs),
        min(p[1] for p in pairs),
        found[0].source,
        detail=f"captures disagree ({seen}); smallest used",
    )


def configured_cores(options: Options) -> DeviceCores | None:
    """The cores ``[device] aicore`` / ``vectorcore`` state (None: neither is given)."""
    device = options.device
    if device.aicore is None and device.vectorcore is None:
        return None
    if device.aicore is None or device.vectorcore is None:
        missing = "aicore" if device.aicore is None else "vectorcore"
        raise ConfigError(
            f"[device] gives one core count but not {missing}",
            key=f"device.{missing}",
            hint="give both aicore and vectorcore, or soc",
        )
    for name, value in (("aicore", device.aicore), ("vectorcore", device.vectorcore)):
        if value < 0 or (name == "aicore" and value == 0):
            raise ConfigError(f"core count must be positive, not {value}", key=f"device.{name}")
    return DeviceCores(device.aicore, device.vectorcore, "config", detail="[device]")


def resolve_device(
    found: Sequence[DeviceCores | None],
    observed: Callable[[], Sequence[tuple[int, int]]],
    options: Options,
) -> DeviceCores:
    """The device's cores from the most trusted source (the module doc), from each capture's
    info.json cores (None: none) and observed_maxima (asked for only when nothing better
    exists). A SoC name is checked even when a better source wins: a typo never passes."""
    soc_from_table = None
    if options.device.soc is not None and options.soc_ini is None:
        soc_from_table = lookup_soc(options.device.soc)
    from_capture = agreed_cores([d for d in found if d is not None])
    if from_capture is not None:
        return from_capture
    from_config = configured_cores(options)
    if from_config is not None:
        return from_config
    if options.soc_ini is not None:
        return read_soc_ini(options.soc_ini, options.device.soc)
    if soc_from_table is not None:
        return soc_from_table
    return observed_cores(observed())


def sweep_cores(
    own: DeviceCores | None, info: Sequence[Sequence[DeviceCores]]
) -> tuple[tuple[int, int], bool] | None:
    """The cores to sweep one capture's contention with, and whether they are the decision
    over all captures itself (else the fewest of each kind it can take; None: no decision).
    ``own``: the decision on this capture alone; ``info``: per capture, its info.json cores.
    The decision: the smallest info.json (unknown when one capture's files disagree), else
    the configured figures, else the largest Block Num over all captures."""
    found = [cores for capture in info for cores in capture]
    if found:
        known = all(len({(d.aicore, d.vectorcore) for d in capture}) <= 1 for capture in info)
        if known:  # each capture's own
            return (min(d.aicore for d in found), min(d.vectorcore for d in found)), True
        aicore = min((d.aicore for d in found if d.aicore > 0), default=0)
        return (aicore, min((d.vectorcore for d in found if d.vectorcore > 0), default=0)), False
    if own is None:
        return None
    if own.source == "observed" and len(info) > 1:
        return (max(own.aicore, 1), max(own.vectorcore, 1)), False
    return (own.aicore, own.vectorcore), True


def device_notes(device: DeviceCores, options: Options) -> list[str]:
    """Warnings a reader must see about where the device figures came from."""
    notes = []
    if device.source == "observed":
        guessed = f"guessed from Block Num ({device.aicore or '?'}/{device.vectorcore or '?'})"
        if device.aicore <= 0 and device.vectorcore <= 0:
            guessed = "no Block Num to guess them from either"
        notes.append(
            f"device cores unknown (no info.json, [device], --soc or --soc-ini): {guessed}; "
            "give --soc or [device] aicore / vectorcore for figures the core checks can trust"
        )
    cfg = options.device
    if (
        device.source == "info.json"
        and cfg.aicore is not None
        and (cfg.aicore, cfg.vectorcore) != (device.aicore, device.vectorcore)
    ):
        notes.append(
            f"[device] says {cfg.aicore}/{cfg.vectorcore} but the capture's info.json says "
            f"{device.aicore}/{device.vectorcore}; info.json used"
        )
    found = _find_soc(cfg.soc) if cfg.soc is not None and options.soc_ini is None else None
    named = found[1] if found is not None else (device.aicore, device.vectorcore)
    if device.source in ("info.json", "config") and named != (device.aicore, device.vectorcore):
        notes.append(
            f"SoC {cfg.soc} has {named[0]}/{named[1]} cores but {device.source} says "
            f"{device.aicore}/{device.vectorcore}; {device.source} used"
        )
    for kind, value in (("aicore", device.aicore), ("vectorcore", device.vectorcore)):
        if value <= 0:
            notes.append(f"device {kind} count unknown: {kind} contention not judged")
    return notes
