"""Every setting of a run in one frozen record, resolved once by one rule.

    defaults < environment < gate configuration < command line (or the pytest plugin's options)

`SETTINGS` declares each setting once: its default, how a value is read, and the environment
variable, gate configuration key and command-line option that can give it.  `resolve` is the
one function that builds a `Settings` from them; the CLI, the pytest plugin and the Triton
prune hook all call it.  Probes take a `Settings` (and `replace` it per call: one command
compiles in many shapes and target groups), never CLI options.

A setting another module registers (`SETTINGS.register`) is kept in `Settings.extra`; one
that changes what a compile builds says how (`builds`: build options or compiler variables),
and so reaches every compile and its cache key with no other file changed
(tests/unit/test_settings.py adds one from the test file alone).

The compiler's environment is a setting too (`environment`): the caller's IGC, NEO and SYCL
build variables (inherited: a compile builds what the user's own ocloc would), then the gate
configuration's `environment:`, then `--env NAME=VALUE` (`--env NAME=` drops one).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from . import envvars
from .levers import DEFAULT_SHAPE, Shape
from .model import IntentRule
from .toolchain import environment as compiler_env


@dataclass(frozen=True)
class Builds:
    """What a setting adds to every compile: build options, IGC internal options, variables."""

    options: str = ""
    internal_options: str = ""
    environment: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Flag:
    """How the command line gives a setting: cli.common declares the option of every command that
    offers the setting's `groups` from this, with the setting's own help."""

    names: tuple[str, ...]
    """The option's spellings (`--jobs`, `-j`)."""
    groups: tuple[str, ...] = ("run",)
    """Which commands offer it (GROUPS)."""
    repeat: bool = False
    """Repeatable; each value may hold commas (targets, kernels) or is one NAME=VALUE (--env)."""
    switch: Any = None
    """For an option without a value: what giving it says (`--strict`: True, `--no-cache`: False)."""
    metavar: str | None = None


GROUPS = {
    "target": "what to build for: every compiling command",
    "run": "how a run compiles: every compiling command, and diff",
    "cache": "the shared build cache: every compiling command, diff and the cache commands",
    "select": "which kernels to report: kernel, inspect, explain, occupancy and diff",
    "gate": "the gate's records: audit and ratchet update",
    "verdict": "how the gate judges: audit",
    "measure": "the scratch traffic measure: kernel, inspect, explain, triton, audit and ratchet update",
    "triton": "how a Triton kernel is built: triton (zeinspect.triton.plugin registers these settings)",
    "profile": "a profile of the user's run joined with the reports: inspect, kernel, explain, triton, audit, diff",
}
"""The groups of command-line options, and which commands offer each (cli.common)."""


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    help: str
    """One sentence: the option's help, the environment variable's and the gate key's description."""
    parse: Callable[[Any], Any] = lambda value: value
    """A given value to the setting's: the text a command line, an environment variable or the
    pytest plugin's --zeinspect-set gives, or a gate configuration's YAML value; ValueError when
    it is not one."""
    env: str | None = None
    """The environment variable that gives it (registered with envvars from here)."""
    gate: str | None = None
    """Its key in the gate configuration (None: the configuration cannot set it)."""
    flag: Flag | None = None
    """Its command-line option (None: no command line gives it)."""
    builds: Callable[[Any], Builds] | None = None
    """For a setting that changes what a compile builds: how, given its value."""
    schema: Mapping[str, Any] | None = None
    """The JSON Schema of its gate configuration value (docs/schemas/gate-1.json's property)."""

    @property
    def type_name(self) -> str:
        """What kind of value it takes, for the reference tables."""
        if self.schema is None:
            return {bool: "flag", int: "integer", float: "number", tuple: "list"}.get(type(self.default), "text")
        kind = self.schema.get("type", "string")
        kinds = [k for k in ([kind] if isinstance(kind, str) else kind) if k != "null"]
        return {"integer": "integer", "number": "number", "boolean": "flag", "object": "mapping",
                "array": "list"}.get(kinds[0] if len(kinds) == 1 else "string", "text")

    def gate_schema(self) -> dict:
        """Its property in the gate configuration's JSON Schema: its schema and its help."""
        return {**(self.schema or {"type": "string"}), "description": self.help}


class SettingRegistry:
    def __init__(self) -> None:
        self._by_name: dict[str, Setting] = {}

    def register(self, setting: Setting) -> None:
        self._by_name[setting.name] = setting
        if setting.env:
            envvars.register(envvars.EnvVar(setting.env, setting.parse, setting.default, setting.help,
                                            setting=setting.name, type_name=setting.type_name))

    def unregister(self, name: str) -> None:
        setting = self._by_name.pop(name, None)
        if setting is not None and setting.env:
            envvars.unregister(setting.env)

    def __iter__(self) -> Any:
        return iter(list(self._by_name.values()))

    def __getitem__(self, name: str) -> Setting:
        return self._by_name[name]

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def gate_keys(self) -> dict[str, Setting]:
        return {s.gate: s for s in self if s.gate}

    def extra(self) -> list[Setting]:
        """Settings registered from outside: those `Settings` keeps in `extra`."""
        return [s for s in self if s.name not in _FIELDS]

    def flagged(self, group: str) -> list[Setting]:
        """The settings whose command-line option the commands of `group` offer."""
        return [s for s in self if s.flag is not None and group in s.flag.groups]


def _strings(value: Any) -> tuple[str, ...]:
    """Targets and the like: `a,b`, a list, or repeated options (each may hold commas)."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(v, str) for v in items):
        raise ValueError("must be a string or a list of strings")
    return tuple(p.strip() for v in items for p in v.split(",") if p.strip())


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a string")
    return value


def _optional_text(value: Any) -> str | None:
    return _text(value) or None if value is not None else None


TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")


def _boolean(value: Any) -> bool:
    """True or false, or the text a command line or a variable gives (`true`, `1`, `no`, ...)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in TRUE_WORDS + FALSE_WORDS:
        return value.strip().lower() in TRUE_WORDS
    raise ValueError("must be true or false")


def _whole(value: Any) -> int:
    """A whole number, or its text; never a boolean or a fraction."""
    if isinstance(value, bool):
        raise ValueError("must be a whole number")
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise ValueError("must be a whole number") from None
    if isinstance(value, float) and not value.is_integer():
        raise ValueError("must be a whole number")
    return int(value)


def _seconds(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError("must be a number of seconds")
    try:
        number = float(value)
    except ValueError:
        raise ValueError("must be a number of seconds") from None
    if not number >= 1:
        raise ValueError("must be at least 1 second")
    return number


def _count(value: Any) -> int:
    number = _whole(value)
    if not 0 <= number <= 256:
        raise ValueError("must be a whole number from 0 to 256")
    return number


def _workers(value: Any) -> int | None:
    return None if value is None else _count(value)


def _bytes_bound(value: Any) -> int | None:
    if value is None:
        return None
    number = _whole(value)
    if number < 0:
        raise ValueError("must be a whole number of bytes, 0 or more")
    return number


def _percent(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError("must be a percentage")
    try:
        number = float(str(value).strip().removesuffix("%"))
    except ValueError:
        raise ValueError("must be a percentage") from None
    if not 0 <= number <= 100:
        raise ValueError("must be a percentage from 0 to 100")
    return number


INTENT_KEYS = {"grf": (128, 256), "sub_group": (8, 16, 32), "native_on": None}


def _intent(value: Any) -> tuple[IntentRule, ...]:
    """Kernel glob -> what its build must do (`grf: 256`, `sub_group: 16`, `native_on: [bmg-g21]`):
    the gate configuration's mapping, checked key by key."""
    if isinstance(value, tuple) and all(isinstance(r, IntentRule) for r in value):
        return value  # parsed already (a gate configuration's value, resolved)
    if isinstance(value, str):  # a command line's or the plugin's text: the mapping as JSON
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("must be a JSON mapping of kernel globs to rules") from None
    if not isinstance(value, Mapping):
        raise ValueError("must map kernel globs to rules (grf, sub_group, native_on)")
    rules = []
    for glob, rule in value.items():
        if not isinstance(rule, Mapping) or not rule or set(map(str, rule)) - set(INTENT_KEYS):
            raise ValueError(f"{glob!r}: a rule is a mapping of {', '.join(INTENT_KEYS)}")
        for key in ("grf", "sub_group"):
            if key in rule and rule[key] not in INTENT_KEYS[key]:  # type: ignore[operator]
                raise ValueError(f"{glob!r}: {key} must be one of {', '.join(map(str, INTENT_KEYS[key]))}")  # type: ignore[arg-type]
        native = rule.get("native_on", [])
        if isinstance(native, str):
            native = [native]
        if not isinstance(native, list) or not all(isinstance(t, str) and t for t in native):
            raise ValueError(f"{glob!r}: native_on must be a list of target names")
        rules.append(IntentRule(str(glob), rule.get("grf"), rule.get("sub_group"), tuple(native)))
    return tuple(rules)


def _modules(value: Any) -> dict[str, str]:
    """Input path -> its extra options: a mapping (the gate configuration's, read by judge.gate),
    or `PATH=OPTIONS` text (one module each, repeatable)."""
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    items = [value] if isinstance(value, str) else list(value)
    out = {}
    for item in items:
        path, eq, options = str(item).partition("=")
        if not eq or not path:
            raise ValueError(f"{item!r} is not PATH=OPTIONS")
        out[path] = options
    return out


def _shape(value: Any) -> Shape:
    """A module shape: a Shape, a mapping of lever names to values, or `lever=value,...` text."""
    if isinstance(value, Shape):
        return value
    if isinstance(value, str):
        pairs = [p.partition("=") for p in value.split(",") if p.strip()]
        if any(not eq for _, eq, _ in pairs):
            raise ValueError(f"{value!r} is not LEVER=VALUE,...")
        value = {k.strip().replace("-", "_"): v.strip() for k, _, v in pairs}
    if not isinstance(value, Mapping):
        raise ValueError("must be LEVER=VALUE pairs")
    return Shape(**{str(k): v for k, v in value.items()})


def parse_environment(value: Any) -> dict[str, str | None]:
    """`NAME=VALUE` pairs (repeated options, a list) or a mapping, to name -> value; an empty value
    (`NAME=`) is None: drop that variable from the compiler's environment."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        pairs = [(str(k), "" if v is None else str(v)) for k, v in value.items()]
    else:
        items = [value] if isinstance(value, str) else list(value)
        pairs = []
        for item in items:
            name, eq, text = str(item).partition("=")
            if not eq:
                raise ValueError(f"{item!r} is not NAME=VALUE")
            pairs.append((name, text))
    out: dict[str, str | None] = {}
    for name, text in pairs:
        if not name or not name.replace("_", "a").isalnum():
            raise ValueError(f"{name!r} is not a variable name")
        out[name] = text or None
    return out


_STRINGS = {"type": ["string", "array"], "items": {"type": "string"}}
_TEXT = {"type": "string"}
_SWITCH = {"type": "boolean"}

SETTINGS = SettingRegistry()
for _setting in (
    Setting("targets", ("default",), "Targets: ocloc names, IP versions (12.70.4), `default` (19 AOT targets) or a "
            "family (xe-lp, xe-hpg, xe-lpg, xe2); comma-separated or repeated.", _strings, gate="targets",
            flag=Flag(("-t", "--targets"), ("target",), repeat=True), schema=_STRINGS),
    Setting("compiler", None, "Use only this compiler (id, path or version prefix).", _optional_text, gate="compiler",
            flag=Flag(("--compiler",), ("target",)), schema=_TEXT),
    Setting("options", "", "Extra ocloc -options for every compile (the front end's too).", _text, gate="options",
            flag=Flag(("--options",), ("target",)), schema=_TEXT),
    Setting("modules", {}, "Per-module options: input path -> its extra ocloc -options.", _modules, gate="modules",
            schema={"type": "object", "additionalProperties": {"type": "object", "properties": {
                "options": {"type": "string"}}, "additionalProperties": False}}),
    Setting("shape", DEFAULT_SHAPE, "The shape every module is built in: LEVER=VALUE pairs (each lever's own "
            "option on the command line).", _shape),
    Setting("kernels", (), "Only these kernels (name or glob).", _strings,
            flag=Flag(("-k", "--kernel"), ("select",), repeat=True)),
    Setting("jobs", 0, "Parallel compiles (0: the number of cores).", _count, gate="jobs",
            flag=Flag(("--jobs", "-j"), metavar="N"), schema={"type": "integer", "minimum": 0, "maximum": 256}),
    Setting("timeout", None, "Seconds before a compile counts as hung (default 600); questions to the compiler get "
            "at most a minute of it.", _seconds, env="ZEINSPECT_TIMEOUT", gate="timeout",
            flag=Flag(("--timeout",), metavar="SECONDS"), schema={"type": "number", "minimum": 1}),
    Setting("use_cache", True, "Read and write the build cache (--no-cache: compile everything again).", _boolean,
            flag=Flag(("--no-cache",), switch=False)),
    Setting("scheduler", None, "A Dask scheduler (tcp://HOST:PORT) to compile on (needs zeinspect[dask]).",
            _optional_text, env="ZEINSPECT_SCHEDULER", gate="scheduler",
            flag=Flag(("--scheduler",), metavar="tcp://HOST:PORT"), schema=_TEXT),
    Setting("cache_url", None, "A build cache many machines share: a folder or s3://bucket/prefix (S3 needs "
            "zeinspect[remote]).", _optional_text, env="ZEINSPECT_CACHE_URL", gate="cache_url",
            flag=Flag(("--cache-url",), ("cache", "run"), metavar="URL"), schema=_TEXT),
    Setting("cache_readonly", False, "Read the shared cache, never write to it (untrusted pull-request runs).",
            _boolean, env="ZEINSPECT_CACHE_URL_READONLY", gate="cache_url_readonly",
            flag=Flag(("--cache-url-readonly",), ("cache", "run"), switch=True), schema=_SWITCH),
    Setting("environment", (), "A variable of the compiler's environment (IGC_*, NEO's debug keys, "
            "SYCL_PROGRAM_*), over the caller's; NAME= drops one.", parse_environment, gate="environment",
            flag=Flag(("--env",), repeat=True, metavar="NAME=VALUE"),
            schema={"type": ["object", "array"], "additionalProperties": {"type": ["string", "null"]},
                    "items": {"type": "string", "pattern": "^[A-Za-z0-9_]+="}}),
    Setting("jit_paths", True, "With targets named, the IR a native image carries (a fat binary's generic_ir member, a "
            "zebin's own SPIR-V: what the driver builds where the image has no code) is built too, to name and compare "
            "every path; off (--no-jit-paths): the native code alone.",
            _boolean, gate="jit_paths", flag=Flag(("--no-jit-paths",), ("target",), switch=False), schema=_SWITCH),
    Setting("intent", (), "What the build must do, per kernel glob: `grf: 256`, `sub_group: 16`, `native_on: "
            "[targets]`; the gate fails when a path of a target misses it (judge.paths).", _intent, gate="intent",
            schema={"type": "object", "additionalProperties": {
                "type": "object", "additionalProperties": False, "minProperties": 1, "properties": {
                    "grf": {"enum": [128, 256]}, "sub_group": {"enum": [8, 16, 32]},
                    "native_on": {"type": ["string", "array"], "items": {"type": "string"}}}}}),
    Setting("ratchet", None, "The ratchet file (default: scratch_ratchet.txt, or the gate configuration's).",
            _optional_text, gate="ratchet", flag=Flag(("--ratchet",), ("gate",)), schema=_TEXT),
    Setting("shapes_file", None, "Judge each kernel in the shape recorded here (zeinspect fix --write).",
            _optional_text, gate="shapes", flag=Flag(("--shapes",), ("gate",)), schema=_TEXT),
    Setting("strict", False, "IMPROVED and STALE fail the gate too.", _boolean, gate="strict",
            flag=Flag(("--strict",), ("verdict",), switch=True), schema=_SWITCH),
    Setting("cost", False, "Also measure each scratch user's scratch traffic in loops (bytes per iteration of its "
            "innermost loop with any), from IGC's own ISA (a native image's: its code, disassembled).", _boolean,
            gate="cost", flag=Flag(("--cost",), ("measure",), switch=True), schema=_SWITCH),
    Setting("loop_bound", None, "The loop rule: a scratch user passes when it moves at most this many bytes of "
            "scratch per iteration of its loops (its cost is measured); unset: any scratch is a finding.",
            _bytes_bound, gate="loop_bound", flag=Flag(("--loop-bound",), ("verdict",), metavar="BYTES"),
            schema={"type": ["integer", "null"], "minimum": 0}),
    Setting("profile", None, "A profile of your own run: a PyTorch profiler or unitrace Chrome trace, unitrace's "
            "-d, -s or -t output, or a CSV of kernel,time; each kernel's share of the kernel time beside its scratch.",
            _optional_text,
            gate="profile", flag=Flag(("--profile",), ("profile",), metavar="TRACE"), schema=_TEXT),
    Setting("time_share_bound", None, "With a profile, the gate's time rule: kernels that newly use scratch (or use "
            "more) fail only when they cover more than this percentage of the profiled kernel time.", _percent,
            gate="time_share_bound", flag=Flag(("--time-share-bound",), ("verdict",), metavar="PERCENT"),
            schema={"type": ["number", "null"], "minimum": 0, "maximum": 100}),
    Setting("batch", True, "Batch one module's targets into one ocloc call per worker (0: one call per target).",
            _boolean, env="ZEINSPECT_BATCH"),
    Setting("multi", True, "Send several small modules to one `ocloc multi` process (0: one process per module).",
            _boolean, env="ZEINSPECT_MULTI"),
    Setting("share_front_end", True, "Run OpenCL C's front end once per group of targets (0: once per target).",
            _boolean, env="ZEINSPECT_SHARE_FRONT_END"),
    Setting("triton_workers", None, "Worker processes for Triton's front end on a cache's TTIR (0: in the screening "
            "process; unset: one per compile slot, once there are enough kernels).", _workers,
            env="ZEINSPECT_TRITON_WORKERS"),
    Setting("triton_artifacts", False, "Keep every Triton build's TTGIR and SPIR-V as files when many are screened "
            "(a cache, a run, a test suite); 0: none but those --cost reads.", _boolean,
            env="ZEINSPECT_TRITON_ARTIFACTS"),
):
    SETTINGS.register(_setting)


@dataclass(frozen=True)
class Settings:
    """Every setting of one run (the module docstring says where each comes from)."""

    targets: tuple[str, ...] = ("default",)
    targets_given: bool = False
    """Whether the targets were named (gate or command line) rather than defaulted: existing
    binaries are then kept to those targets and missing ones noted."""
    compiler: str | None = None
    options: str = ""
    modules: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)
    """input path -> extra options (from a gate configuration)."""
    shape: Shape = DEFAULT_SHAPE
    kernels: tuple[str, ...] = ()
    """Only report kernels whose name matches one of these (exact or glob)."""
    jobs: int = 0
    """Parallel compiles; 0 = the number of cores."""
    timeout: float | None = None
    use_cache: bool = True
    scheduler: str | None = None
    """A Dask scheduler address: compile on its cluster instead of this machine."""
    cache_url: str | None = None
    """A build cache many machines share, behind the local one (zeinspect.shared_cache)."""
    cache_readonly: bool = False
    """Read the shared cache, never write it (untrusted pull-request runs)."""
    environment: compiler_env.Environment = ()
    """The compiler's variables every compile runs with (toolchain.environment), sorted."""
    environment_given: tuple[str, ...] = ()
    """The names of `environment` the gate configuration or the command line gave (the rest
    were inherited from the caller)."""
    jit_paths: bool = True
    """With targets named, build fat binaries' generic_ir members too (probes.paths)."""
    intent: tuple[IntentRule, ...] = ()
    """The gate's intent rules (judge.paths)."""
    ratchet: str | None = None
    shapes_file: str | None = None
    strict: bool = False
    cost: bool = False
    """Measure what each scratch user's scratch traffic costs (bytes per loop iteration, from
    IGC's ISA: probes.explain); the dumps are cached like any compile."""
    loop_bound: int | None = None
    """The gate's loop rule (judge.audit): None, any scratch is a finding (the default); N, a
    scratch user whose traffic per loop iteration is at most N bytes passes."""
    profile: str | None = None
    """A profile of the user's run (inputs.profile), joined with the reports (judge.profile)."""
    time_share_bound: float | None = None
    """The gate's time rule (judge.profile): None, today's rule; P, kernels that newly use
    scratch or use more fail only when they cover more than P % of the profiled time."""
    batch: bool = True
    multi: bool = True
    share_front_end: bool = True
    triton_workers: int | None = None
    """Worker processes for Triton's front end on IR kernels (triton.build.front_ends); None: automatic."""
    triton_artifacts: bool = False
    """Keep every Triton build's TTGIR and SPIR-V as files in a screen of many; False: only those
    `--cost` reads (the others' SPIR-V is kept nowhere: triton.build.warm, triton.probes.audit)."""
    rewrites: tuple[tuple[str, str, Any], ...] | None = None
    """(kernel, lever, value) SPIR-V rewrites to apply; None: the shape's rewrite levers for
    every kernel that `kernels` selects.  Set by the shape search, never by a user."""
    extra: tuple[tuple[str, Any], ...] = ()
    """Registered settings (SETTINGS.extra()): name -> value, sorted."""

    def get(self, name: str) -> Any:
        """A setting by name, core or registered."""
        if name in _FIELDS:
            return getattr(self, name)
        return dict(self.extra).get(name, SETTINGS[name].default)

    def replace(self, **changes: Any) -> Settings:
        return replace(self, **changes)

    def with_targets(self, targets: Iterable[str]) -> Settings:
        return replace(self, targets=tuple(targets), targets_given=True)

    def builds(self) -> Builds:
        """What the registered settings add to every compile."""
        parts = [s.builds(self.get(s.name)) for s in SETTINGS.extra() if s.builds is not None]
        return Builds(merge_options(*(p.options for p in parts)), merge_options(*(p.internal_options for p in parts)),
                      tuple(kv for p in parts for kv in p.environment))

    def options_for(self, path: str) -> str:
        """The user's options for one input: --options, the gate configuration's for it, and
        what registered settings add.  The front end gets them too (-D macros decide what an
        OpenCL C source is)."""
        return merge_options(self.options, self.modules.get(path, ""), self.builds().options)

    @property
    def measures_cost(self) -> bool:
        """Whether the run measures its scratch users' loop traffic: asked for (`cost`), or
        needed by the loop rule (`loop_bound`); a ratchet's `loop=` entries ask too (app.audit)."""
        return self.cost or self.loop_bound is not None

    @property
    def internal_options(self) -> str:
        return self.builds().internal_options

    @property
    def compile_environment(self) -> compiler_env.Environment:
        """The run's compiler variables, then what registered settings add: what reports record."""
        added = self.builds().environment
        return compiler_env.normal({**dict(self.environment), **dict(added)}) if added else self.environment

    @property
    def compiler_environment(self) -> compiler_env.Environment:
        """What reaches an ocloc process, and its cache key (the SYCL runtime's are not ocloc's)."""
        return compiler_env.for_compiler(self.compile_environment)

    @property
    def sycl_environment(self) -> compiler_env.Environment:
        """The SYCL runtime's build-option variables: how it builds a SPIR-V image at run time."""
        return tuple((k, v) for k, v in self.compile_environment if k in compiler_env.SYCL_OPTIONS)


_FIELDS = {f.name for f in fields(Settings)}


def merge_options(*parts: str) -> str:
    return " ".join(p for p in parts if p and p.strip())


class SettingError(ValueError):
    """A value that is not one for its setting: `where` (the option, variable or key) says which."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where = where


def resolve(cli: Mapping[str, Any] | None = None, gate: Mapping[str, Any] | None = None,
            environ: Mapping[str, str] | None = None, *, defaults: Mapping[str, Any] | None = None) -> Settings:
    """The run's settings: `defaults` (a command's own, e.g. Triton's targets) < the environment
    < `gate` (a gate configuration's settings, by setting name) < `cli` (what the command line
    or the plugin's options gave, by setting name; None, (), "" and {} say nothing).

    Raises SettingError for a value that is not one (the gate configuration checks its own
    first, so that its errors name the file)."""
    import os

    environ = os.environ if environ is None else environ
    layers: list[tuple[str, Mapping[str, Any]]] = [("environment", _from_environment(environ)),
                                                   ("the gate configuration", gate or {}),
                                                   ("the command line", cli or {})]
    chosen: dict[str, Any] = {}
    given_by: dict[str, str] = {}
    for setting in SETTINGS:
        if setting.name == "environment":
            continue
        value = (defaults or {}).get(setting.name, setting.default)
        for where, layer in layers:
            if _says(layer.get(setting.name)):
                value = _parse(setting, layer[setting.name], where)
                given_by[setting.name] = where
        chosen[setting.name] = value
    environment, named = _environment(environ, gate or {}, cli or {})
    core = {k: v for k, v in chosen.items() if k in _FIELDS}
    if "targets" in core:
        core["targets"] = tuple(core["targets"]) or ("default",)
    extra = tuple(sorted((k, v) for k, v in chosen.items() if k not in _FIELDS))
    return Settings(**core, targets_given=given_by.get("targets", "environment") != "environment",
                    environment=environment, environment_given=named, extra=extra)


def _says(value: Any) -> bool:
    return value is not None and value != () and value != "" and value != {} and value != []


def _parse(setting: Setting, value: Any, where: str) -> Any:
    try:
        return setting.parse(value)
    except (ValueError, TypeError) as exc:
        raise SettingError(f"{setting.name} ({where})", str(exc)) from None


def _from_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    out = {}
    for setting in SETTINGS:
        if setting.env and envvars.given(setting.env, environ):
            out[setting.name] = envvars.value(setting.env, environ)
    return out


def _environment(environ: Mapping[str, str], gate: Mapping[str, Any], cli: Mapping[str, Any]
                 ) -> tuple[compiler_env.Environment, tuple[str, ...]]:
    """The compiler's variables: the caller's, then the gate configuration's, then --env's."""
    merged: dict[str, str | None] = dict(compiler_env.of(environ))
    named: set[str] = set()
    for where, given in (("the gate configuration", gate.get("environment")), ("the command line",
                                                                                 cli.get("environment"))):
        if _says(given):
            pairs = _parse(SETTINGS["environment"], given, where)
            merged.update(pairs)
            named.update(pairs)
    return compiler_env.normal({k: v for k, v in merged.items() if v is not None}), tuple(sorted(named))
