"""The static rules: id, severity, and the exploit each one closes. The checkers refer to these ids."""

from __future__ import annotations

from dataclasses import dataclass

from solbench.guard.findings import Severity

BLOCK, WARN = Severity.BLOCK, Severity.WARN


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    explanation: str


RULES = {
    rule.id: rule
    for rule in (
        Rule(
            "patch-module",
            BLOCK,
            "Assigning attributes of torch, time, builtins, sys or the harness can replace "
            "timers, checkers or library functions the measurement relies on.",
        ),
        Rule(
            "harness-access",
            BLOCK,
            "Importing solbench or reaching into sys.modules lets a solution read or "
            "rewrite the harness that judges it.",
        ),
        Rule("introspection", BLOCK, "gc, frame objects and inspect can find reference outputs or seeds in memory."),
        Rule("proc-access", BLOCK, "/proc exposes other processes' memory, command lines and environments."),
        Rule("file-access", BLOCK, "Reading or writing files can fetch cached results or persist state across runs."),
        Rule("network", BLOCK, "Network access can fetch precomputed answers."),
        Rule("process", BLOCK, "Starting processes or shell commands escapes the measured process."),
        Rule(
            "dynamic-code",
            BLOCK,
            "exec/eval/compile, code objects and embedded payloads hide code from review and from these rules.",
        ),
        Rule(
            "native-loading", BLOCK, "ctypes/cffi and loading shared objects run unreviewed native code in the sandbox."
        ),
        Rule("runtime-install", BLOCK, "Installing packages at run time changes the environment being measured."),
        Rule(
            "tensor-subclass",
            BLOCK,
            "Tensor subclasses and __torch_function__/__torch_dispatch__ hooks make lazy "
            "outputs that compute only when inspected.",
        ),
        Rule("rng-state", BLOCK, "Reseeding or reading the global RNG can predict or replay the evaluator's inputs."),
        Rule("result-cache", BLOCK, "Memoisation decorators replay earlier results instead of computing."),
        Rule(
            "precision-switch",
            BLOCK,
            "Global switches such as allow_tf32 or set_float32_matmul_precision downgrade "
            "precision for every later computation, the reference's included.",
        ),
        Rule(
            "l2-persistence",
            BLOCK,
            "Persisting-L2 access policies keep data resident across the cache flush between timed calls.",
        ),
        Rule(
            "cuda-graph", BLOCK, "CUDA graph capture and replay can replay work recorded once, outside the timed call."
        ),
        Rule(
            "trace-hooks",
            BLOCK,
            "sys.settrace/setprofile, atexit and signal handlers run code outside the measured call.",
        ),
        Rule(
            "unreadable",
            BLOCK,
            "A source nested too deeply for the static rules to parse would hide everything in it "
            "from them, and how deep the parser reaches depends on the stack it starts from: a sandbox's fresh "
            "interpreter may still compile what the checker could not read.",
        ),
        Rule(
            "threads",
            WARN,
            "Threads and executors can leave work running after the call returns; runtime thread "
            "accounting refuses that. A thread the call starts must be joined before it returns (a `with "
            "ThreadPoolExecutor()` block joins its workers); a pool kept for later calls may wait for work.",
        ),
        Rule("async", WARN, "Asynchronous work may outlive the call."),
        Rule(
            "streams",
            WARN,
            "Side streams and events can hide work from a timer that waits on one stream; the CUDA "
            "timers synchronise the whole device.",
        ),
        Rule(
            "pointer-branch", WARN, "Branching on data_ptr() or id() can recognise repeated inputs and replay results."
        ),
        Rule("call-counter", WARN, "A global counter inside the entry point can change behaviour after N calls."),
        Rule("environment", WARN, "Reading the environment can detect the harness."),
    )
}
