"""Times in the service: stored as naive UTC (models.utcnow), written in JSON with a `Z` so clients read UTC."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import PlainSerializer


def utc_text(moment: datetime) -> str:
    return moment.isoformat() + "Z" if moment.tzinfo is None else moment.isoformat()


UtcDateTime = Annotated[datetime, PlainSerializer(utc_text, return_type=str, when_used="json")]
"""A naive UTC time from the database, written in JSON with its `Z`."""
