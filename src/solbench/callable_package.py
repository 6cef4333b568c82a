"""`solbench.evaluate(...)` and `solbench.score(...)`: API functions that share their names with layer packages.

Python binds a package to its parent's attribute when it is imported, so `solbench.evaluate` is
the `evaluate` layer as soon as anything imports it. Rather than rename the layers, those two
packages are made callable: calling one runs the public API function of the same name
(`solbench.api`), while `import solbench.evaluate` and `from solbench.score import ...` keep
working as before.
"""

from __future__ import annotations

import sys
import types


def forward_calls_to_api(package_name: str) -> None:
    """Calling the package `package_name` (``solbench.<name>``) calls ``solbench.api.<name>``."""
    package = sys.modules[package_name]
    function_name = package_name.rsplit(".", 1)[-1]

    class CallablePackage(types.ModuleType):
        def __call__(self, *args, **kwargs):
            from solbench import api

            return getattr(api, function_name)(*args, **kwargs)

    CallablePackage.__call__.__doc__ = f"The public API's `solbench.api.{function_name}`."
    package.__class__ = CallablePackage
