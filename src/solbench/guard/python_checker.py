"""Static rules over Python sources, by walking the AST with import aliases resolved.

`import torch as t; t.manual_seed(0)` and `from time import perf_counter as clock` are seen as
torch.manual_seed and time.perf_counter: names are qualified before rules match them.
"""

from __future__ import annotations

import ast
import re

from solbench.guard.findings import Finding, Severity
from solbench.guard.rules import RULES

PROTECTED_MODULES = {
    "torch",
    "time",
    "builtins",
    "sys",
    "solbench",
    "triton",
    "numpy",
    "os",
    "math",
    "random",
    "functools",
    "gc",
    "threading",
    "inspect",
    "secrets",  # measure.py once drew which timed output is checked through secrets._sysrand
}
IMPORT_RULES = {
    "solbench": "harness-access",
    "gc": "introspection",
    "inspect": "introspection",
    "socket": "network",
    "urllib": "network",
    "http": "network",
    "requests": "network",
    "httpx": "network",
    "ftplib": "network",
    "aiohttp": "network",
    "subprocess": "process",
    "multiprocessing": "process",
    "pty": "process",
    "ctypes": "native-loading",
    "cffi": "native-loading",
    "pip": "runtime-install",
    "ensurepip": "runtime-install",
    "marshal": "dynamic-code",
    "threading": "threads",
    "_thread": "threads",
    "concurrent": "threads",
    "asyncio": "async",
    "atexit": "trace-hooks",
    "signal": "trace-hooks",
    "importlib": "dynamic-code",
    "runpy": "dynamic-code",  # runs any file as Python, one the static rules never read (helper.txt)
    "zipimport": "dynamic-code",
}
_FRAME_ATTRIBUTES = {
    "__builtins__",
    "f_back",
    "f_globals",
    "f_locals",
    "gi_frame",
    "cr_frame",
    "ag_frame",
    "tb_frame",
    "__closure__",
    "__globals__",
    "_getframe",
    "_current_frames",
}
"""Attributes that reach frames, closures or module globals: the harness's state from the solution's code."""
_ATTRIBUTE_GETTERS = {"operator.attrgetter", "operator.methodcaller"}
"""getattr by other names: they take attribute paths as strings ("tb_frame.f_back.f_locals"). A call with plain
string constants is checked as those strings are (`attrgetter("ndim")` as a sort key is fine); one with a computed
name, or the function handed on uncalled, is not checkable."""
_ATTRIBUTE_PATH = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
"""A string that is a whole attribute path ("f_back", "tb_frame.f_back.f_locals"), not prose that mentions one."""
_REACHED_MODULES = {
    "gc",
    "ctypes",
    "os",
    "sys",
    "importlib",
    "inspect",
    "subprocess",
    "socket",
    "builtins",
    "threading",
    "_thread",
    "marshal",
    "pickle",
    "shutil",
    "tempfile",
    "atexit",
    "multiprocessing",
    "cffi",
    "codecs",
    "base64",
    "zlib",
    "asyncio",
    "concurrent",
}
"""Modules a solution can reach as an attribute of any module that imported them (`torch.os`, `np.ctypes`).
Not `types` or `signal`: torch.types and torch.signal are torch's own."""
_ATTRIBUTE_FUNCTIONS = {
    "getattr",
    "setattr",
    "delattr",
    "hasattr",
    "builtins.getattr",
    "builtins.setattr",
    "builtins.delattr",
    "builtins.hasattr",
}
CALL_RULES = [  # (qualified-name pattern, rule); the first match wins
    (r"(builtins\.)?(exec|eval|compile|__import__)$", "dynamic-code"),
    (
        r"(base64\.\w*decode|codecs\.decode|zlib\.decompress|marshal\.loads?|pickle\.loads?|dill\.loads?"
        r"|types\.(CodeType|FunctionType))$",
        "dynamic-code",
    ),
    (
        r"(builtins\.)?open$|io\.open$|os\.(open|remove|unlink|rename|listdir|scandir|makedirs|mkdir)$|shutil\.\w+$"
        r"|(torch|numpy)\.(load|save)$|tempfile\.\w+$",
        "file-access",
    ),
    (
        r"os\.(system|popen|fork|forkpty|exec\w*|spawn\w*|kill|killpg|posix_spawn\w*|sched_set\w+|setpriority|nice)$"
        r"|subprocess\.\w+$",
        "process",
    ),
    (r"gc\.\w+$|sys\._getframe$|inspect\.\w+$", "introspection"),
    (
        r"ctypes\.\w+|cffi\.\w+|torch\.ops\.load_library$|torch\.utils\.cpp_extension\.(load|load_inline)$",
        "native-loading",
    ),
    (
        r"torch\.(manual_seed|seed|initial_seed|get_rng_state|set_rng_state)$|torch\.random\.\w+$"
        r"|torch\.cuda\.(manual_seed\w*|seed\w*|get_rng_state\w*|set_rng_state\w*)$"
        r"|random\.(seed|getstate|setstate)$|numpy\.random\.(seed|get_state|set_state)$",
        "rng-state",
    ),
    (r"functools\.(lru_cache|cache)$", "result-cache"),
    (r"torch\.set_float32_matmul_precision$", "precision-switch"),
    (r"torch\.cuda\.(CUDAGraph|graph|make_graphed_callables)$|torch\.cuda\.graphs\.\w+$", "cuda-graph"),
    (r"torch\.cuda\.cudart$|cuda\.bindings\.\w+|cuda\.cudart\.\w+", "l2-persistence"),
    (r"torch\.cuda\.(Stream|Event|stream|ExternalStream)$|torch\.Stream$", "streams"),
    (r"threading\.\w+$|concurrent\.futures\.\w+$|_thread\.\w+$", "threads"),
    (r"asyncio\.\w+$", "async"),
    (r"sys\.(settrace|setprofile|addaudithook)$|atexit\.\w+$|signal\.\w+$", "trace-hooks"),
    (
        r"torch\._C\._(dispatch_\w+|EnablePythonDispatcher|DisablePythonDispatcher|set_dispatch_mode\w*)$",
        "patch-module",
    ),
    (r"torch\.jit\.(fork|_fork)$|torch\.futures\.\w+$", "threads"),
    (r"os\.getenv$|os\.environ\.\w+$", "environment"),
    (r"(builtins\.)?id$", "pointer-branch"),
]
_BASE64_BLOB = re.compile(r"^[A-Za-z0-9+/=\s]{200,}$")


class PythonChecker(ast.NodeVisitor):
    def __init__(self, path: str):
        self.path = path
        self.aliases: dict[str, str] = {}
        self.strings: dict[str, str] = {}
        """Names bound to a string constant, for getattr(owner, NAME)."""
        self.findings: list[Finding] = []
        self._function_globals: list[set[str]] = []
        self._checked_calls: set[int] = set()
        """ids of the callee nodes of attrgetter/methodcaller calls already checked (visited before the callee)."""

    def report(self, rule_id: str, node: ast.AST, message: str) -> None:
        rule = RULES[rule_id]
        self.findings.append(
            Finding(
                rule=rule.id,
                severity=rule.severity,
                file=self.path,
                line=getattr(node, "lineno", 0),
                message=message,
                explanation=rule.explanation,
            )
        )

    def qualified(self, node: ast.AST) -> str | None:
        """`t.cuda.Stream` -> "torch.cuda.Stream" when `import torch as t`; None for non-name expressions."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualified(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    # --- imports ------------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.aliases[alias.asname or alias.name.split(".")[0]] = (
                alias.name if alias.asname else alias.name.split(".")[0]
            )
            self._check_import(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}" if module else alias.name
            self._check_import(node, f"{module}.{alias.name}" if module else alias.name)

    def _check_import(self, node: ast.AST, name: str) -> None:
        root = next((part for part in name.split(".") if part in IMPORT_RULES), None)  # from torch.x import gc
        if root is not None:
            self.report(IMPORT_RULES[root], node, f"imports {name}")
        elif name.startswith("torch.utils.cpp_extension"):
            self.report("native-loading", node, f"imports {name}")

    # --- calls, attributes, assignments ---------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        name = self.qualified(node.func)
        if name is not None:
            self._check_call_name(node, name)
        if name in _ATTRIBUTE_GETTERS:
            self._checked_calls.add(id(node.func))  # the callee itself is not a use to refuse; its names are checked
            if not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
                self.report("introspection", node, f"{name}() of a computed name: getattr by another name")
        if isinstance(node.func, ast.Attribute):
            method = node.func.attr
            if method == "data_ptr":
                self.report("pointer-branch", node, "calls .data_ptr()")
            elif method == "py_impl":
                self.report("patch-module", node, "calls .py_impl(): a Python kernel over a torch operator")
            elif (
                method in ("__setattr__", "__delattr__")
                and node.args
                and ((target := self.qualified(node.args[0])) and target.split(".")[0] in PROTECTED_MODULES)
            ):
                # type(torch).__setattr__(torch, "rsqrt", f), object.__setattr__(...): setattr by another route
                self.report("patch-module", node, f"calls .{method}() on {target}")
            elif method in ("as_subclass", "_make_subclass"):
                self.report("tensor-subclass", node, f"calls .{method}()")
            elif method in ("read_text", "write_text", "read_bytes", "write_bytes", "open") and not (
                name or ""
            ).startswith(("torch.", "triton.")):
                self.report("file-access", node, f"calls .{method}()")
        if name in ("vars", "builtins.vars") and node.args:
            target = self.qualified(node.args[0])
            if target and target.split(".")[0] in PROTECTED_MODULES | _REACHED_MODULES:
                self.report(
                    "introspection", node, f"vars() of {target}: a module's namespace, where rules see no names"
                )
        if name in ("setattr", "builtins.setattr", "delattr") and node.args:
            target = self.qualified(node.args[0])
            if target and target.split(".")[0] in PROTECTED_MODULES:
                self.report("patch-module", node, f"{name}() on {target}")
        if name in _ATTRIBUTE_FUNCTIONS and len(node.args) >= 2:
            self._check_dynamic_attribute(node, name)
        for value in [*node.args, *(k.value for k in node.keywords)]:
            passed = self.qualified(value) if isinstance(value, ast.Name) else None
            if passed in _ATTRIBUTE_FUNCTIONS:  # functools.reduce(getattr, ["tb_frame", "f_back"], error)
                self.report("introspection", node, f"passes {passed} as a value: attribute names the rules never see")
        self.generic_visit(node)

    def _check_dynamic_attribute(self, node: ast.Call, function: str) -> None:
        """getattr(obj, "name") is obj.name: check it as such; a name built from pieces or computed for a
        protected module is how the attribute rules are dodged (getattr(sys, "_get" + "frame"))."""
        owner, attribute = self.qualified(node.args[0]), node.args[1]
        if isinstance(attribute, ast.Name) and attribute.id in self.strings:
            attribute = ast.Constant(self.strings[attribute.id])
        if isinstance(attribute, ast.Constant) and isinstance(attribute.value, str):
            if attribute.value in _FRAME_ATTRIBUTES:
                self.report("introspection", node, f"{function}() of {attribute.value}")
            elif owner and attribute.value in _REACHED_MODULES and owner.split(".")[0] not in _REACHED_MODULES:
                self._check_reached_module(node, f"{owner}.{attribute.value}", attribute.value)
            elif owner:
                self._check_call_name(node, f"{owner}.{attribute.value}")
            return
        if owner and owner.split(".")[0] in PROTECTED_MODULES - {"torch", "numpy", "math", "triton"}:
            self.report("introspection", node, f"{function}() of a computed name on {owner}")
        elif isinstance(attribute, (ast.BinOp, ast.JoinedStr)) or (
            isinstance(attribute, ast.Call)
            and isinstance(attribute.func, ast.Attribute)
            and attribute.func.attr in ("join", "format", "replace", "decode")
        ):
            self.report("introspection", node, f"{function}() of an attribute name built from pieces")

    def _check_call_name(self, node: ast.Call, name: str) -> None:
        for reached in _reached_names(name):
            for pattern, rule_id in CALL_RULES:
                if re.match(pattern, reached):
                    self.report(rule_id, node, f"calls {name}")
                    return
        if re.match(r"torch\.library\.\w+|torch\._C\._dispatch_\w+", name) and any(
            isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("aten")
            for a in [*node.args, *(k.value for k in node.keywords)]
        ):
            self.report("patch-module", node, f"calls {name} on aten: replaces a kernel torch and the harness use")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = self.qualified(node)
        if node.attr in _REACHED_MODULES and name is not None and name.split(".")[0] not in _REACHED_MODULES:
            self._check_reached_module(node, name, node.attr)
        if node.attr == "__dict__" and name is not None and name.split(".")[0] in PROTECTED_MODULES | _REACHED_MODULES:
            self.report("introspection", node, f"uses {name}: a module's namespace, where rules see no names")
        if name in ("sys.modules", "builtins.__dict__") or node.attr in _FRAME_ATTRIBUTES:
            rule_id = "harness-access" if name == "sys.modules" else "introspection"
            self.report(rule_id, node, f"uses {name or node.attr}")
        elif name == "os.environ":
            self.report("environment", node, "reads os.environ")
        elif name in _ATTRIBUTE_GETTERS and id(node) not in self._checked_calls:
            self.report("introspection", node, f"uses {name} other than calling it: getattr by another name")
        self.generic_visit(node)

    def _check_reached_module(self, node: ast.AST, name: str, module: str) -> None:
        """`torch.os`, `torch.accelerator.graphs.gc`: a module reached through another is the module itself."""
        rule_id = IMPORT_RULES.get(module, "introspection")
        self.report(rule_id, node, f"reaches module {module} through {name}")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "__builtins__":
            self.report("patch-module", node, "uses __builtins__")
        elif self.aliases.get(node.id) in _ATTRIBUTE_GETTERS and id(node) not in self._checked_calls:
            self.report("introspection", node, f"uses {self.aliases[node.id]} other than calling it")

    def _check_assignment_target(self, target: ast.AST, node: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._check_assignment_target(element, node)
            return
        if not isinstance(target, ast.Attribute):
            return
        name = self.qualified(target)
        if name is None:
            return
        if re.match(
            r"torch\.backends\.\w+(\.\w+)*\.allow_(tf32|fp16_reduced_precision_reduction|"
            r"bf16_reduced_precision_reduction)$",
            name,
        ):
            self.report("precision-switch", node, f"sets {name}")
        elif name.split(".")[0] in PROTECTED_MODULES:
            self.report("patch-module", node, f"assigns {name}")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_assignment_target(target, node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
            source = self.qualified(value)
            if source is not None and source.split(".")[0] in PROTECTED_MODULES | _REACHED_MODULES:
                self.aliases[name] = source  # T = torch.Tensor; T.add_ = f is torch.Tensor.add_ = f
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                self.strings[name] = value.value  # getattr(torch.x, NAME) is checked with NAME's value
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_assignment_target(node.target, node)
        if (
            isinstance(node.target, ast.Name)
            and self._function_globals
            and node.target.id in self._function_globals[-1]
        ):
            self.report("call-counter", node, f"updates global {node.target.id!r} inside a function")
        self.generic_visit(node)

    # --- definitions ----------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        declared = {
            name for statement in ast.walk(node) if isinstance(statement, ast.Global) for name in statement.names
        }
        self._function_globals.append(declared)
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            name = self.qualified(target)
            if name and re.match(r"functools\.(lru_cache|cache)$", name):
                self.report("result-cache", decorator, f"decorated with {name}")
        self.generic_visit(node)
        self._function_globals.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        bases = {self.qualified(base) for base in node.bases}
        methods = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if bases & {"torch.Tensor", "torch._tensor.Tensor"} or methods & {"__torch_function__", "__torch_dispatch__"}:
            self.report("tensor-subclass", node, f"class {node.name} subclasses or hooks torch.Tensor")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            if "/proc/" in node.value:
                self.report("proc-access", node, "string mentions /proc/")
            elif _ATTRIBUTE_PATH.fullmatch(node.value) and _FRAME_ATTRIBUTES.intersection(node.value.split(".")):
                # an attribute path handed to whatever takes names as strings (attrgetter, reduce over getattr)
                self.report("introspection", node, f"string names {node.value!r}: frames, closures or globals")
            elif _BASE64_BLOB.match(node.value):
                self.report("dynamic-code", node, f"embedded payload of {len(node.value)} characters")


def _reached_names(name: str) -> list[str]:
    """`name`, then the rest of it from each module it reaches through another: torch.os.fork -> os.fork."""
    parts = name.split(".")
    return [name] + [".".join(parts[i:]) for i in range(1, len(parts)) if parts[i] in _REACHED_MODULES]


def check_python(path: str, source: str) -> list[Finding]:
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return [
            Finding(
                rule="syntax",
                severity=Severity.WARN,
                file=path,
                line=error.lineno or 0,
                message=f"not valid Python: {error.msg}",
                explanation="The build will report it.",
            )
        ]
    except (RecursionError, MemoryError) as error:  # a 60,000-term expression: the parser's own recursion limit
        return [
            Finding(
                rule="unreadable",
                severity=Severity.BLOCK,
                file=path,
                line=0,
                message=f"nested too deeply for the static rules to parse ({type(error).__name__})",
                explanation=RULES["unreadable"].explanation,
            )
        ]
    checker = PythonChecker(path)
    checker.visit(tree)
    return checker.findings
