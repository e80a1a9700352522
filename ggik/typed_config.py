"""Typed configuration: dataclasses hold the defaults; YAML files and ``--set key=value`` hold overrides.

Unknown keys are errors, values are checked against the field types, nested sections map to nested
dataclasses. ``to_dict`` / ``from_dict`` round-trip exactly (checkpoints store the dict).
"""

from __future__ import annotations

import contextlib
import dataclasses
import types
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from ggik.errors import GGIKError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["ConfigError", "from_dict", "to_dict", "merge", "load_yaml", "apply_overrides"]

T = TypeVar("T", bound="DataclassInstance")


class ConfigError(GGIKError):
    """A configuration file or override that does not fit the typed configuration."""


def to_dict(cfg: Any) -> dict:
    return dataclasses.asdict(cfg)


def _coerce(value: Any, tp: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a section (mapping), got {value!r}")
        return from_dict(tp, value, where)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _coerce(value, a, where)
            except ConfigError as exc:
                errors.append((a, exc))
        sections = [exc for a, exc in errors if isinstance(a, type) and dataclasses.is_dataclass(a)]
        others = [exc for a, exc in errors if not (isinstance(a, type) and dataclasses.is_dataclass(a))]
        if isinstance(value, dict) and len(sections) == 1:  # a mapping meant as the one section type: its own error
            raise sections[0]
        if not isinstance(value, dict) and sections and len(others) == 1:  # a value meant as the one other type
            raise others[0]
        raise ConfigError(f"{where}: {value!r} does not fit {tp}")
    if origin is list:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        (item,) = typing.get_args(tp) or (Any,)
        return [_coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        kt, vt = typing.get_args(tp) or (Any, Any)
        return {_coerce(k, kt, where): _coerce(v, vt, f"{where}.{k}") for k, v in value.items()}
    if tp is Any:
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true/false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, str):  # YAML 1.1 reads "3e-4" (no dot) as a string
            with contextlib.suppress(ValueError):
                value = float(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {value!r}")
        return value
    return value


def from_dict(cls: type[T], data: dict, where: str = "config") -> T:
    """Build dataclass ``cls`` from a (partial) dict; missing keys take the defaults."""
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(names)}")
    kwargs = {k: _coerce(v, hints[k], f"{where}.{k}") for k, v in data.items()}
    return cls(**kwargs)


def merge(base: dict, override: dict) -> dict:
    """Recursive dict merge (override wins; nested mappings merge)."""
    out = dict(base)
    for k, v in override.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_yaml(path: str | Path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"config file not found: {path}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of overrides")
    return data


def apply_overrides(data: dict, overrides: list[str]) -> dict:
    """Apply ``key.sub=value`` strings (values parsed as YAML) to a nested dict."""
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r} must look like key=value (e.g. optim.lr=3e-4)")
        key, raw = item.split("=", 1)
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            value = raw
        parts = key.strip().split(".")
        node = data
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {item!r}: {p!r} is not a section")
        node[parts[-1]] = value
    return data
