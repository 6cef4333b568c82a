"""What `solbench serve` and `solbench admin` share: building ServiceSettings from a settings file and flags."""

from __future__ import annotations

import json
from pathlib import Path

from solbench.cli.common import UsageError


def service_settings(settings_file: Path | None = None, **flags):
    """ServiceSettings: $SOLBENCH_SERVICE_SETTINGS (JSON), then the file's values, then every flag given."""
    import os

    from pydantic import ValidationError

    from solbench.service.settings import SETTINGS_VARIABLE, ServiceSettings

    try:
        base: dict = json.loads(os.environ.get(SETTINGS_VARIABLE) or "{}")
    except ValueError as error:
        raise UsageError(f"${SETTINGS_VARIABLE}: {error}") from None
    if settings_file is not None:
        try:
            base.update(json.loads(settings_file.read_text()))
        except (OSError, ValueError) as error:
            raise UsageError(f"--settings {settings_file}: {error}") from None
    base.update({name: value for name, value in flags.items() if value not in (None, (), [])})
    try:
        return ServiceSettings.model_validate(base)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UsageError(f"--settings / --{where.replace('_', '-')}: {first['msg']}") from None


def open_service_database(settings):
    """The session factory of the settings' database, migrated to the newest schema."""
    from solbench.service.db import open_database

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return open_database(settings.database_url)[1]
