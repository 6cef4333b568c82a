"""The suite layer's errors about problem folders and their provenance, printed by the CLI as one line."""

from __future__ import annotations

from pathlib import Path

from solbench.errors import SolbenchError


class ProvenanceError(SolbenchError):
    """A provenance.json that cannot be read or does not match its schema."""

    def __init__(self, path: Path, reason: str):
        self.path, self.reason = Path(path), reason
        super().__init__(f"{path}: {reason}")


class BuildRefused(SolbenchError):
    """The build would overwrite (or remove) folders that are not what a recipe last wrote there."""

    def __init__(self, reasons: list[str]):
        self.reasons = list(reasons)
        super().__init__(
            f"refusing to write {len(self.reasons)} problem folder(s), nothing written:\n"
            + "\n".join(f"  {r}" for r in self.reasons)
        )


class RecipesMissing(SolbenchError):
    """The build was asked for recipes where there are none: they live in a checkout, not in the installed package."""

    def __init__(self, folder: Path):
        super().__init__(
            f"{folder}: no recipes folder (suite_recipes/ of a checkout of the repository holds them); "
            "run from the checkout or pass --recipes DIR"
        )
