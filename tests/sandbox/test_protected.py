"""The integrity list fails closed: every protected entry exists, and one renamed stops the guard from starting."""

import importlib
import sys
import types

import pytest

from solbench.guard.runtime import IntegrityGuard, IntegrityList, IntegritySetupError, OptionalProtected, Protected
from solbench.sandbox.child import SandboxServer
from solbench.sandbox.protected import integrity_list

measure_module = importlib.import_module("solbench.sandbox.measure")


def test_every_protected_entry_resolves():
    protected = integrity_list(SandboxServer)
    assert len(protected.required) > 80
    missing = [entry.label for entry in protected.required if not hasattr(entry.owner, entry.name)]
    assert missing == []
    unexpected = [
        entry.label for entry in protected.optional if entry.expected and not hasattr(entry.owner, entry.name)
    ]
    assert unexpected == []
    labels = [entry.label for entry in protected.resolved()]
    assert "solbench.sandbox.measure._should_stop" in labels and "time.perf_counter_ns" in labels
    assert f"{SandboxServer.__module__}.SandboxServer._prepare" in labels


def test_every_optional_entry_says_why():
    for entry in integrity_list(SandboxServer).optional:
        assert entry.reason, entry.label


def test_a_renamed_sandbox_function_stops_the_guard(monkeypatch):
    monkeypatch.delattr(measure_module, "_should_stop")
    with pytest.raises(IntegritySetupError, match=r"solbench\.sandbox\.measure\._should_stop does not exist"):
        IntegrityGuard.snapshot(integrity_list(SandboxServer))


def test_a_renamed_server_method_stops_the_guard(monkeypatch):
    monkeypatch.delattr(SandboxServer, "_prepare")
    with pytest.raises(IntegritySetupError, match=r"SandboxServer\._prepare does not exist"):
        IntegrityGuard.snapshot(integrity_list(SandboxServer))


def test_an_optional_entry_may_be_absent_only_where_it_is_not_expected():
    here = types.SimpleNamespace(present=len, __name__="here")
    absent_ok = OptionalProtected(here, "newer", reason="a later version", expected=False)
    listed = IntegrityList(required=(Protected(here, "present"),), optional=(absent_ok,))
    assert [entry.label for entry in listed.resolved()] == ["here.present"]
    absent_wrong = OptionalProtected(here, "newer", reason="a later version", expected=True)
    with pytest.raises(IntegritySetupError, match=r"here\.newer does not exist"):
        IntegrityList(required=(), optional=(absent_wrong,)).resolved()


def test_thread_starters_of_this_python_are_protected():
    labels = {entry.label for entry in integrity_list(SandboxServer).resolved()}
    if sys.version_info >= (3, 13):
        assert {"_thread.start_joinable_thread", "threading._start_joinable_thread"} <= labels
    else:
        assert "threading._start_new_thread" in labels


def test_every_class_a_message_looks_attributes_up_in_is_protected():
    """A method added to any class of a reply's MRO would run when the reply is encoded, after the last check."""
    from solbench.sandbox import protocol

    protected = integrity_list(SandboxServer).classes
    unprotected = {
        base.__name__
        for model in protocol.MODELS
        for base in model.__mro__
        if base is not object and base not in protected
    }
    assert unprotected == set()
