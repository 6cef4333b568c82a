"""The sandbox's environment: scrubbed, except what decides how the solution's work is scheduled."""

from solbench.evaluation.confinement import Confinement, SandboxLimits


def test_openmp_settings_pass_into_the_sandbox_so_solution_and_reference_share_one_policy(tmp_path, monkeypatch):
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    monkeypatch.setenv("SOLBENCH_SECRET_FOR_TEST", "do-not-pass")
    environment = Confinement("cpu", SandboxLimits(memory_bytes=None), tmp_path, "token").environment()
    assert environment["OMP_WAIT_POLICY"] == "PASSIVE"
    assert environment["OMP_NUM_THREADS"] == "2"
    assert "SOLBENCH_SECRET_FOR_TEST" not in environment
