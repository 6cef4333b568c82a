"""Static rules over C++/CUDA sources: line-wise patterns (no C++ parser; comments are stripped first)."""

from __future__ import annotations

import re

from solbench.guard.findings import Finding
from solbench.guard.rules import RULES

NATIVE_PATTERNS = [
    (r"\b(fopen|freopen|std::[io]?fstream|open|openat|creat|unlink|remove|rename|mkdir)\s*\(", "file-access"),
    (r"/proc/", "proc-access"),
    (r"\b(socket|connect|getaddrinfo|curl_easy_\w+)\s*\(", "network"),
    (r"\b(system|popen|fork|vfork|execl\w*|execv\w*|posix_spawn\w*|kill)\s*\(", "process"),
    (r"\b(dlopen|dlsym)\s*\(", "native-loading"),
    (r"__attribute__\s*\(\(\s*constructor", "trace-hooks"),
    # code that runs wherever the process is (between timed calls too): signal handlers, timers, interpreter hooks
    (
        r"\b(sigaction|signal|timer_create|setitimer|alarm|syscall|PyEval_Set(Profile|Trace)(AllThreads)?"
        r"|Py_AddPendingCall|PyThreadState_SetAsyncExc)\s*\(",
        "trace-hooks",
    ),
    (r"\b(cudaGraph\w*|cudaStreamBeginCapture|cudaStreamEndCapture)\b", "cuda-graph"),
    (
        r"\b(cudaStreamAttributeAccessPolicyWindow|cudaLimitPersistingL2CacheSize|accessPolicyWindow|"
        r"cudaAccessPropertyPersisting)\b",
        "l2-persistence",
    ),
    (
        r"\b(?:std::)?j?thread\b|\bpthread_create\b|\b(?:std::)?async\s*\(",
        "threads",
    ),  # also after `using namespace std`
    (r"\b(cudaStreamCreate\w*|cudaEventCreate\w*|cudaEventRecord)\b", "streams"),
    (r"\b(getenv|setenv|putenv)\s*\(", "environment"),
    (r"\b(srand|rand)\s*\(", "rng-state"),
]
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def check_native(path: str, source: str) -> list[Finding]:
    stripped = _COMMENTS.sub(lambda match: "\n" * match.group(0).count("\n"), source)
    findings = []
    for number, line in enumerate(stripped.splitlines(), start=1):
        for pattern, rule_id in NATIVE_PATTERNS:
            match = re.search(pattern, line)
            if match:
                rule = RULES[rule_id]
                findings.append(
                    Finding(
                        rule=rule.id,
                        severity=rule.severity,
                        file=path,
                        line=number,
                        message=f"uses {match.group(0).strip().rstrip('(').strip()}",
                        explanation=rule.explanation,
                    )
                )
    return findings
