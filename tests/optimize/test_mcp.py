"""`solbench mcp` as a real subprocess, driven over stdio by the official MCP SDK's client."""

from __future__ import annotations

import asyncio
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
    assert tools == {"list_problems", "get_problem_card", "test", "evaluate", "history", "best"}
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
