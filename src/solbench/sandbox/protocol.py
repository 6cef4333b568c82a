"""The messages between the trusted parent and the sandbox: one pydantic model per request and reply.

Both sides import this module. A message travels as wire.py's frame: the header JSON holds the
model's fields, with tensors as placeholders for raw blobs that follow it; the receiver decodes
the frame to plain values and tensors, then validates them here. Every model forbids unknown
fields and carries a `kind` that names it, so each direction is one discriminated union.

A reply that does not validate is the sandbox's failure (the solution may write anything to
the channel); a request that does not validate is a bug in the harness, since the parent built
it from these same models.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StrictBool,
    StrictFloat,
    StrictInt,
    TypeAdapter,
    ValidationError,
)

from solbench.sandbox.measure import TimingPlan
from solbench.sandbox.rotation import Perturbation
from solbench.sandbox.wire import WireError


class ProtocolError(WireError):
    """A well-framed message that is not one of this module's models, or a reply that does not answer its request.

    Not a SolbenchError (as WireError): a bad reply is the sandbox's failure (a trace status), a bad request a bug."""


def _tensor(value: Any) -> Any:
    import torch

    if type(value) is not torch.Tensor:
        raise ValueError(f"expected a plain torch.Tensor, got {type(value).__name__}")
    return value


def _input_value(value: Any) -> Any:
    """An input is a tensor, a scalar from a `scalar` workload input, or what a problem's custom input generator
    made of those (a list); the frame carries a tensor subclass as a plain tensor."""
    import torch

    if value is None or isinstance(value, (bool, int, float, str, torch.Tensor)):
        return value
    if isinstance(value, (list, tuple)):
        return [_input_value(item) for item in cast("list[Any] | tuple[Any, ...]", value)]
    raise ValueError(f"an input cannot be a {type(value).__name__}")


Tensor = Annotated[Any, PlainValidator(_tensor)]
"""A decoded tensor: wire.py turns the header's placeholder and its blob into a CPU tensor."""
InputValue = Annotated[Any, PlainValidator(_input_value)]
Seconds = Annotated[StrictFloat, Field(ge=0, allow_inf_nan=False)]
Count = Annotated[StrictInt, Field(ge=0)]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class _Reply(_Message):
    """Replies come from untrusted code: no coercion (a string is not a number)."""

    model_config = ConfigDict(strict=True)


# --- requests: parent to sandbox ---------------------------------------------------------------
class BuildRequest(_Message):
    """Build the solution in the sandbox's working directory; answered by `Built` or `CompileFailed`."""

    kind: Literal["build"] = "build"
    solution: dict[str, Any]
    """The solution as its JSON file holds it; the sandbox validates it with spec.Solution."""
    reply: ClassVar[str] = "built"


class OutputDescription(_Message):
    name: str
    shape: list[Count] | None
    """None where the definition gives no shape (a scalar)."""
    dtype: str


class LoadRequest(_Message):
    """Keep these input sets for the calls that follow; answered by `Loaded`."""

    kind: Literal["load"] = "load"
    sets: list[list[InputValue]]
    """Input sets, each one value per definition input, in order."""
    perturbations: list[Perturbation]
    """Per input, how the timed loop makes every iteration's content unique (see rotation.py)."""
    outputs: list[OutputDescription]
    reply: ClassVar[str] = "loaded"


class FreshInput(_Message):
    """A value that replaces one input of the loaded set for one call: the random numbers of one statistical draw
    (evaluation/draws.py), so that a draw sends a few bytes a row, never the set again."""

    index: Count
    """The input's position in the definition."""
    value: Tensor
    """Of that input's shape and dtype in the loaded set."""


class CallRequest(_Message):
    """Call the solution once on input set `input_set`, with `fresh_inputs` in place; answered by `Called`."""

    kind: Literal["call"] = "call"
    input_set: Count
    fresh_inputs: list[FreshInput] = []
    reply: ClassVar[str] = "called"


class TimeRequest(_Message):
    """Time the solution under `plan`, rotating through the loaded sets; answered by `Timed`."""

    kind: Literal["time"] = "time"
    plan: TimingPlan
    timer: str | None
    """A timer backend's name (sandbox/timers/), or None for the device's default."""
    flush: StrictBool
    """Flush the caches before every call."""
    cpu_flush: Literal["operands", "stream"] = "operands"
    """On a CPU, how (flush.py): the operands' cache lines, or a 64 MiB stream through the caches."""
    reply: ClassVar[str] = "timed"


class ProfileRequest(_Message):
    """Call the solution `calls` times under torch.profiler, untimed, on the loaded sets, and summarise the `top`
    ops (profiling.py); answered by `Profiled`. Sent after the timed loop, never inside it."""

    kind: Literal["profile"] = "profile"
    calls: Annotated[StrictInt, Field(ge=1, le=100)]
    top: Annotated[StrictInt, Field(ge=1, le=50)]
    reply: ClassVar[str] = "profiled"


class ExitRequest(_Message):
    """Exit now; not answered."""

    kind: Literal["exit"] = "exit"
    reply: ClassVar[str] = ""


RequestMessage = BuildRequest | LoadRequest | CallRequest | TimeRequest | ProfileRequest | ExitRequest
Request = Annotated[RequestMessage, Field(discriminator="kind")]


# --- replies: sandbox to parent ----------------------------------------------------------------
class SandboxState(_Reply):
    """What the sandbox sees of its own confinement, reported after the build."""

    network_namespace: str | None
    uid: StrictInt
    filesystem_confined: StrictBool
    capabilities: str | None
    """CapEff of /proc/self/status, a hex mask."""


class Built(_Reply):
    kind: Literal["built"] = "built"
    seconds: Seconds
    state: SandboxState


class Loaded(_Reply):
    kind: Literal["loaded"] = "loaded"


class Called(_Reply):
    kind: Literal["called"] = "called"
    outputs: list[Tensor]
    devices: list[str]
    """The device each output was on before it was copied to the channel."""
    mutated_inputs: list[StrictInt]
    """Indexes of the inputs the call changed."""
    seconds: Seconds
    """Wall-clock time of the call, untimed: the parent sizes the timing deadline from it."""


class CapturedOutputs(_Reply):
    """The outputs of one timed iteration, kept for the parent to check."""

    iteration: Count
    outputs: list[Tensor]
    devices: list[str]


class Timed(_Reply):
    kind: Literal["timed"] = "timed"
    backend: str
    samples_s: Annotated[list[Seconds], Field(min_length=1)]
    warmup: Count
    flush_bytes: Count
    flush_mode: Literal["operands", "stream", "l2", "none"]
    """Which flush ran before every call."""
    flush_note: str | None
    """Why that flush ran instead of the one asked for, or None."""
    resolution_s: Seconds | None
    captured: list[CapturedOutputs]
    warnings: list[str]
    seeds: list[Count] | None = None
    """Per timed iteration, its inputs' perturbation seed (sandbox/measure.py), where the plan perturbs."""


class SampleTaken(_Reply):
    """One timed call's time, sent the moment it is taken, before the harness's work after the call. The timing loop
    shares the solution's interpreter, where its records can be reached and rewritten after the fact (frames, gc);
    the parent takes these as the samples and refuses a `Timed` reply whose samples differ from them."""

    kind: Literal["sample"] = "sample"
    index: Count
    seconds: Seconds


class SeedDrawn(_Reply):
    """A timed iteration's perturbation seed, sent as it is drawn, before that iteration's inputs are prepared (before
    anything of that iteration could run the solution's code): the parent rebuilds checked outputs' inputs from
    these and refuses a `Timed` reply whose seeds differ."""

    kind: Literal["seed"] = "seed"
    index: Count
    seed: Count


class SandboxOpTime(_Reply):
    name: Annotated[str, Field(max_length=200)]
    self_s: Seconds
    """The op's own time over every profiled call."""
    calls: Count


class Profiled(_Reply):
    kind: Literal["profiled"] = "profiled"
    activity: Literal["cpu", "cuda"]
    total_s: Seconds
    """Every op's own time summed, over every profiled call."""
    ops: Annotated[list[SandboxOpTime], Field(max_length=50)]
    note: Annotated[str, Field(max_length=500)] | None = None
    """Why `ops` is empty: the profiler could not run here."""


class CompileFailed(_Reply):
    """The solution did not build."""

    kind: Literal["compile_failed"] = "compile_failed"
    error: str


class GuardTripped(_Reply):
    """A runtime guard refused what the solution did; `rule` names it: ``integrity``, ``threads``, ``channel``, or
    ``streamed-samples`` (the parent's own: the final samples differ from those streamed as they were taken)."""

    kind: Literal["guard_violation"] = "guard_violation"
    rule: str
    error: str


class OutputRejected(_Reply):
    """The solution returned something other than one plain tensor per output (calling.OutputError)."""

    kind: Literal["output_rejected"] = "output_rejected"
    rule: str
    error: str


class SolutionFailed(_Reply):
    """The solution raised (or called sys.exit); `error` is its traceback."""

    kind: Literal["solution_failed"] = "solution_failed"
    error: str


class RequestRejected(_Reply):
    """The sandbox could not read a request: a harness bug, or a solution that wrote to the channel."""

    kind: Literal["request_rejected"] = "request_rejected"
    error: str


Failure = CompileFailed | GuardTripped | OutputRejected | SolutionFailed | RequestRejected
FAILURES = (CompileFailed, GuardTripped, OutputRejected, SolutionFailed, RequestRejected)
Reply = Annotated[
    Built
    | Loaded
    | Called
    | Timed
    | SampleTaken
    | SeedDrawn
    | Profiled
    | CompileFailed
    | GuardTripped
    | OutputRejected
    | SolutionFailed
    | RequestRejected,
    Field(discriminator="kind"),
]

MODELS = (
    BuildRequest,
    OutputDescription,
    LoadRequest,
    FreshInput,
    CallRequest,
    TimeRequest,
    ProfileRequest,
    ExitRequest,
    SandboxState,
    Built,
    Loaded,
    Called,
    CapturedOutputs,
    Timed,
    SampleTaken,
    SeedDrawn,
    SandboxOpTime,
    Profiled,
    CompileFailed,
    GuardTripped,
    OutputRejected,
    SolutionFailed,
    RequestRejected,
)
"""Every model of the protocol."""
CLASSES = (BaseModel, _Message, _Reply, *MODELS)
"""The classes a message's attributes and methods are looked up in; the sandbox's integrity guard protects each
attribute of each (a method added to a base would reach every model)."""

_REQUEST = TypeAdapter(Request)
_REPLY = TypeAdapter(Reply)


def _described(error: ValidationError, limit: int = 3) -> str:
    """The first few problems, by location; never the offending values (a reply may hold megabytes)."""
    problems = [
        f"{'.'.join(str(part) for part in item['loc']) or 'message'}: {item['msg']}"
        for item in error.errors(include_url=False, include_input=False)[:limit]
    ]
    more = error.error_count() - len(problems)
    return "; ".join(problems) + (f" (+{more} more)" if more > 0 else "")


def parse_request(body: Any) -> Any:
    """The request a decoded frame holds; raises ProtocolError."""
    try:
        return _REQUEST.validate_python(body)
    except ValidationError as error:
        raise ProtocolError(f"malformed request: {_described(error)}") from None


def parse_reply(body: Any, request: RequestMessage) -> Any:
    """The reply a decoded frame holds, which must answer `request` (its own reply or a failure); raises
    ProtocolError."""
    try:
        reply = _REPLY.validate_python(body)
    except ValidationError as error:
        raise ProtocolError(f"malformed reply: {_described(error)}") from None
    if isinstance(reply, (SampleTaken, SeedDrawn)) and request.reply == "timed":
        return reply  # streamed ahead of the `Timed` reply
    if not isinstance(reply, FAILURES) and reply.kind != request.reply:
        raise ProtocolError(f"a {reply.kind!r} reply to a {request.kind!r} request")
    return reply


def encode(message: BaseModel) -> dict[str, Any]:
    """The message as plain values and tensors, for wire.send_message."""
    return message.model_dump(mode="python")
