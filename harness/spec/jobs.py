"""The internal jobs a service may run, as typed parameter models with μBench's defaults.

μBench merges each function's parameters over its defaults (``jsonmerge``), so a key left out
means μBench's default, not "off": a ``loader`` without ``sleep_stress`` sleeps 10 ms, a
``compute_pi`` without ``mean_response_size`` answers 10 kB on average. These models hold the
same defaults, so ``harness`` and μBench run one workmodel the same way. Defaults and meanings
are from μBench's ``InternalServiceExecutor.compute_pi``, ``CustomFunctions/Loader.py`` and
``CustomFunctions/Colosseum.py``.

A range is two non-negative integers, low ≤ high; counts and sizes are integers and numbers are
numbers (the string ``"50"`` is an error here, as it would fail every request in μBench). Keys a
job does not know are kept and reported by :func:`unknown_keys` (μBench ignores them too).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, model_validator

Count = Annotated[int, Field(strict=True, ge=0)]
Positive = Annotated[int, Field(strict=True, ge=1)]
Amount = Annotated[float, Field(strict=True, ge=0)]  # strict float still takes an int


class _Params(BaseModel):
    model_config = ConfigDict(extra="allow")


def _range(v: Any) -> list[int]:
    if (not isinstance(v, (list, tuple)) or len(v) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v)):
        raise ValueError(f"expected [low, high], two integers ≥ 0, got {v!r}")
    if v[0] > v[1]:
        raise ValueError(f"low {v[0]} > high {v[1]}; expected [low, high]")
    return list(v)


Range = Annotated[list[int], BeforeValidator(_range)]


class _WithResponse(_Params):
    mean_response_size: Amount  # kB, the mean of an exponential draw

    @model_validator(mode="before")
    @classmethod
    def _mean_bandwidth(cls, data: Any) -> Any:
        # μBench's backward compatibility: mean_bandwidth is the old name of mean_response_size
        if isinstance(data, dict) and "mean_bandwidth" in data:
            data = {k: v for k, v in data.items() if k != "mean_bandwidth"} | {"mean_response_size": data["mean_bandwidth"]}
        return data


class ComputePi(_WithResponse):
    """Compute N digits of π, N uniform in ``range_complexity``; answer ~``mean_response_size`` kB."""
    range_complexity: Range = [50, 100]
    mean_response_size: Amount = 10


class CpuStress(_Params):
    """``thread_pool_size`` threads, each drawing one N from ``range_complexity`` and computing N
    digits of π ``trials`` times: thread_pool_size × trials computations, as μBench's loader."""
    run: StrictBool = False
    range_complexity: Range = [100, 100]
    thread_pool_size: Positive = 1
    trials: Positive = 1


class MemoryStress(_Params):
    """Allocate ``memory_size`` blocks of 1 kB, then ``memory_io`` reads and writes over them."""
    run: StrictBool = False
    memory_size: Positive = 10000
    memory_io: Count = 1000


class DiskStress(_Params):
    """Write ``disk_write_block_count`` random blocks of ``disk_write_block_size`` bytes, fsync,
    read them back in random order, delete the file."""
    run: StrictBool = False
    tmp_file_name: str = "mubtestfile.txt"
    disk_write_block_count: Count = 1000
    disk_write_block_size: Positive = 1024


class SleepStress(_Params):
    run: StrictBool = True  # μBench's default: a loader sleeps unless told not to
    sleep_time: Amount = 0.01  # seconds


class Loader(_WithResponse):
    cpu_stress: CpuStress = CpuStress()
    memory_stress: MemoryStress = MemoryStress()
    disk_stress: DiskStress = DiskStress()
    sleep_stress: SleepStress = SleepStress()
    mean_response_size: Amount = 11


class Colosseum(_Params):
    """μBench's demo function: no work, a fixed text answer (an ASCII-art picture of 3070 bytes)."""


JOB_MODELS: dict[str, type[_Params]] = {"compute_pi": ComputePi, "loader": Loader, "colosseum": Colosseum}
COLOSSEUM_BYTES = 3070

# keys μBench's workmodel generator writes inside a function's parameters for its own bookkeeping
_BOOKKEEPING = {"function_id"}


def unknown_keys(params: BaseModel, prefix: str = "") -> list[str]:
    """Dotted paths of the keys no job reads (μBench ignores them as well), nested models included."""
    out = [f"{prefix}{k}" for k in (params.model_extra or {}) if k not in _BOOKKEEPING]
    for name in type(params).model_fields:
        value = getattr(params, name)
        if isinstance(value, BaseModel):
            out += unknown_keys(value, f"{prefix}{name}.")
    return out
