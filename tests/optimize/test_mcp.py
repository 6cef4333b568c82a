"""`solbench mcp` as a real subprocess, driven over stdio by the official MCP SDK's client."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from conftest import solution_dict
from optimize.candidates import FAST, baselines_file, vector_add

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.mark.slow
def test_an_mcp_client_lists_the_tools_and_evaluates_a_candidate_over_stdio(tmp_path, isolated_cache):
    from mcp import Client, StdioServerParameters

    problems = tmp_path / "problems"
    vector_add(problems / "L1" / "vector_add", 1000, 4099)
    baselines = baselines_file(tmp_path / "baselines.json", "H100_SXM", "n1000", "n4099")
    server = StdioServerParameters(
        command=sys.executable,
        cwd=str(tmp_path),
        args=[
            "-m",
            "solbench",
            "mcp",
            "--problems",
            str(problems),
            "--hardware",
            "H100_SXM",
            "--budget-evals",
            "1",
            "--cache",
            str(tmp_path / "cache"),
            "--baselines",
            str(baselines),
            "--device",
            "cpu",
            "--rounds",
            "1",
            "--timing-budget",
            "0.05",
        ],
        env={
            "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
            "SOLBENCH_CACHE_DIR": str(isolated_cache),
        },
    )

    async def session():
        async with Client(server, read_timeout_seconds=300) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            listed = (await client.call_tool("list_problems", {})).structured_content
            card = (await client.call_tool("get_problem_card", {"problem": "L1/vector_add"})).structured_content
            step = await client.call_tool("evaluate", {"problem": "L1/vector_add", "solution": solution_dict(FAST)})
            over = await client.call_tool("evaluate", {"problem": "L1/vector_add", "solution": solution_dict(FAST)})
            best = (await client.call_tool("best", {"problem": "L1/vector_add"})).structured_content
            history = (await client.call_tool("history", {"problem": "L1/vector_add"})).structured_content
            return tools, listed, card, step, over, best, history

    tools, listed, card, step, over, best, history = asyncio.run(asyncio.wait_for(session(), 300))
    assert tools == {
        "list_problems",
        "get_problem_card",
        "get_solution_template",
        "test",
        "evaluate",
        "history",
        "best",
    }
    assert listed == {"result": ["L1/vector_add"]} and card["problem"] == "vector_add"
    assert not step.is_error, step.content
    result = step.structured_content
    assert result["reward"] > 0 and [f["status"] for f in result["feedback"]] == ["PASSED", "PASSED"]
    assert result["done"] and result["info"]["budget_left"]["evals"] == 0
    assert over.is_error and "budget exhausted: 1 of 1 evaluations used" in over.content[0].text
    assert best["result"]["candidate_id"] == 1 and best["result"]["solution"]["definition"] == "vector_add"
    assert history == {
        "result": [
            {
                "candidate_id": 1,
                "name": "candidate",
                "reward": result["reward"],
                "correct": True,
                "flagged_cheat": False,
                "cache_hit": False,
            }
        ]
    }


def test_the_solution_parameter_is_typed_by_the_solution_schema_and_its_json_text_still_works(tmp_path):
    """In process, through the SDK's client: the schemas the tools publish, and the template tool."""
    from mcp import Client

    from solbench.evaluation import EvaluationConfig
    from solbench.optimize.mcp_server import ProblemsSession, ServerSettings, build_server
    from solbench.spec import Solution

    problems = tmp_path / "problems"
    vector_add(problems / "vector_add", 1000)
    session = ProblemsSession(
        ServerSettings(problems=problems, hardware="H100_SXM", config=EvaluationConfig(device="cpu"))
    )
    other = solution_dict(FAST, definition="another_problem")

    async def calls():
        async with Client(build_server(session)) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            arguments = {"problem": "vector_add", "language": "pytorch", "style": "dps"}
            template = await client.call_tool("get_solution_template", arguments)
            unknown = await client.call_tool("get_solution_template", {**arguments, "language": "cutlass"})
            as_object = await client.call_tool("test", {"problem": "vector_add", "solution": other})
            as_text = await client.call_tool("test", {"problem": "vector_add", "solution": json.dumps(other)})
            incomplete = await client.call_tool("test", {"problem": "vector_add", "solution": {"name": "x"}})
            return tools, template, unknown, as_object, as_text, incomplete

    tools, template, unknown, as_object, as_text, incomplete = asyncio.run(asyncio.wait_for(calls(), 60))
    for name in ("test", "evaluate"):
        schema = tools[name].input_schema
        assert {"$ref": "#/$defs/Solution"} in schema["properties"]["solution"]["anyOf"]
        assert schema["$defs"]["Solution"]["properties"] == Solution.model_json_schema()["properties"]
    assert set(tools) == {
        "list_problems",
        "get_problem_card",
        "get_solution_template",
        "test",
        "evaluate",
        "history",
        "best",
    }
    solution = Solution.model_validate(template.structured_content)
    assert solution.definition == "vector_add" and solution.spec.destination_passing_style is True
    assert unknown.is_error and "no template for language 'cutlass'" in unknown.content[0].text
    # nothing runs for another problem's solution, whichever form it came in
    assert as_object.is_error and as_text.is_error
    assert as_object.content[0].text == as_text.content[0].text and "another_problem" in as_text.content[0].text
    assert incomplete.is_error and "spec" in incomplete.content[0].text, incomplete.content[0].text


def test_the_test_tool_passes_seed_and_workload_to_env_test(tmp_path):
    """`seed` and `workload` reach `Env.test` (the arguments `solbench test --seed --workload` has in a round): each
    refused by the library, before anything runs, in its own words."""
    from mcp import Client

    from solbench.evaluation import EvaluationConfig
    from solbench.optimize.mcp_server import ProblemsSession, ServerSettings, build_server

    problems = tmp_path / "problems"
    vector_add(problems / "vector_add", 64, 96)
    session = ProblemsSession(
        ServerSettings(problems=problems, hardware="H100_SXM", config=EvaluationConfig(device="cpu"))
    )
    test = {"problem": "vector_add", "solution": solution_dict(FAST)}

    async def calls():
        async with Client(build_server(session)) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            seeded = await client.call_tool("test", {**test, "seed": -1, "workload": "n96"})
            unknown = await client.call_tool("test", {**test, "seed": 7, "workload": "n5"})
            return tools["test"].input_schema["properties"], seeded, unknown

    properties, seeded, unknown = asyncio.run(asyncio.wait_for(calls(), 60))
    assert {"seed", "workload"} <= set(properties)
    assert seeded.is_error and "input_seed" in seeded.content[0].text, seeded.content[0].text
    assert unknown.is_error and "'n5' is not a public workload (public: n64, n96)" in unknown.content[0].text
