"""What a journal says is already done: where `--resume` picks up, and what it must not evaluate again."""

from __future__ import annotations

from dataclasses import dataclass, field

from solbench.optimize.journal import (
    AgentFinished,
    AgentStarted,
    CandidateRecord,
    CardRecord,
    FinalRecord,
    RoundFinished,
    RoundStarted,
    RunRecord,
    TestRecord,
)
from solbench.optimize.loop_errors import WorkspaceError


@dataclass
class RunState:
    run: RunRecord | None = None
    card: CardRecord | None = None
    candidates: dict[str, CandidateRecord] = field(default_factory=dict)
    """Every candidate journaled (evaluated, or refused before evaluation), by ``<round>-<k>``."""
    rounds_started: set[int] = field(default_factory=set)
    rounds_finished: set[int] = field(default_factory=set)
    agents_finished: set[int] = field(default_factory=set)
    agents_started: dict[int, AgentStarted] = field(default_factory=dict)
    tests: list[TestRecord] = field(default_factory=list)
    final: FinalRecord | None = None

    @property
    def evaluated(self) -> list[CandidateRecord]:
        """Candidates with a step result, in journal order (what `env.restore` re-seats)."""
        return [record for record in self.candidates.values() if record.result is not None]

    @property
    def next_round(self) -> int:
        """The first round not finished: a round killed midway is taken up again."""
        unfinished = self.rounds_started - self.rounds_finished
        if unfinished:
            return min(unfinished)
        return max(self.rounds_finished, default=0) + 1

    @property
    def orphaned_agents(self) -> list[AgentStarted]:
        """Agents started and never seen to finish: still running if the loop was killed under them."""
        return [record for number, record in sorted(self.agents_started.items()) if number not in self.agents_finished]

    def agent_done(self, round_number: int) -> bool:
        """The round's agent ended before the kill: its candidates are on disk and it need not run again."""
        return round_number in self.agents_finished


def run_state(records: list) -> RunState:
    state = RunState()
    for record in records:
        if isinstance(record, RunRecord):
            if state.run is not None:
                raise WorkspaceError("journal: a second run record; the journal mixes two runs")
            state.run = record
        elif isinstance(record, CardRecord):
            state.card = record
        elif isinstance(record, RoundStarted):
            state.rounds_started.add(record.round)
            state.rounds_finished.discard(record.round)
        elif isinstance(record, AgentStarted):
            state.agents_started[record.round] = record
        elif isinstance(record, AgentFinished):
            state.agents_finished.add(record.round)
        elif isinstance(record, CandidateRecord):
            state.candidates[record.candidate_id] = record
        elif isinstance(record, TestRecord):
            state.tests.append(record)
        elif isinstance(record, RoundFinished):
            state.rounds_finished.add(record.round)
        elif isinstance(record, FinalRecord):
            state.final = record
    return state
