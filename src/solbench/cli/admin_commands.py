"""`solbench admin`: accounts, tokens, bans, hacked flags and rescoring, straight on the service's database."""

from __future__ import annotations

import json
from pathlib import Path

import typer

app = typer.Typer(no_args_is_help=True, help="Administer a leaderboard service's database.")

DB = typer.Option(None, "--db", help="Database URL; default SQLite in --data.")
DATA = typer.Option(None, "--data", help="Data folder (default ./solbench-data).")
SETTINGS = typer.Option(None, "--settings", help="ServiceSettings as JSON (as given to solbench serve).")


def _factory(db, data, settings_file, **flags):
    from solbench.cli.service_options import open_service_database, service_settings

    return open_service_database(service_settings(settings_file, db_url=db, data_dir=data, **flags))


@app.command("add-user")
def add_user(
    name: str = typer.Argument(..., help="User name."),
    admin: bool = typer.Option(False, "--admin", help="May read and delete any submission."),
    db: str = DB,
    data: Path = DATA,
    settings_file: Path = SETTINGS,
) -> None:
    """Create a user (or give an existing one another token) and print the API token. It is shown only now."""
    from solbench.service.auth import add_user as create

    account = create(_factory(db, data, settings_file), name, admin=admin)
    print(account.token)


@app.command("revoke-token")
def revoke_token(
    name: str = typer.Argument(..., help="User name."),
    token: str = typer.Option(None, "--token", help="Revoke only this token (default: all of theirs)."),
    db: str = DB,
    data: Path = DATA,
    settings_file: Path = SETTINGS,
) -> None:
    """Revoke a user's tokens: requests with them get 401."""
    from solbench.service.auth import revoke_tokens

    count = revoke_tokens(_factory(db, data, settings_file), name, token)
    print(f"revoked {count} token(s) of {name}")


@app.command("ban")
def ban(
    name: str = typer.Argument(..., help="User name."),
    unban: bool = typer.Option(False, "--unban", help="Lift the ban."),
    db: str = DB,
    data: Path = DATA,
    settings_file: Path = SETTINGS,
) -> None:
    """Ban a user: their tokens stop working and their results leave the leaderboards."""
    from solbench.service.auth import set_banned

    set_banned(_factory(db, data, settings_file), name, not unban)
    print(f"{name} {'unbanned' if unban else 'banned'}")


@app.command("freeze")
def freeze(
    set_name: str = typer.Argument(..., metavar="SET", help="Problem set, e.g. L1."),
    title: str = typer.Option(None, "--title", help="The set's title on the web pages."),
    db: str = DB,
    data: Path = DATA,
    settings_file: Path = SETTINGS,
) -> None:
    """Freeze a problem set: from now on the web pages show the code of every submission to it."""
    from solbench.service.web.freezing import freeze_problem_set

    freeze_problem_set(_factory(db, data, settings_file), set_name, title=title)
    print(f"set {set_name} frozen: the code of its submissions is now shown on the pages")


@app.command("flag")
def flag(
    submission_id: int = typer.Argument(..., metavar="ID", help="Submission id."),
    reason: str = typer.Option(..., "--reason", help="Why it is hacked: its author is shown it."),
    by: str = typer.Option(None, "--by", help="Who flags it (default: your login name)."),
    db: str = DB,
    data: Path = DATA,
    settings_file: Path = SETTINGS,
) -> None:
    """Mark a ranked submission hacked: it leaves every board and first place, and only its author and admins
    can read it, with the reason. Flagging it again replaces the reason."""
    from solbench.service.hacked import flag as mark

    mark(_factory(db, data, settings_file), submission_id, reason, by or _login_name())
    print(f"submission {submission_id} flagged hacked: off every board")


@app.command("unflag")
def unflag(
    submission_id: int = typer.Argument(..., metavar="ID", help="Submission id."),
    db: str = DB,
    data: Path = DATA,
    settings_file: Path = SETTINGS,
) -> None:
    """Lift an admin's hacked flag. A submission a guard or the speed-of-light floor flagged stays off the boards
    (only a new evaluation changes that: `solbench admin rescore`)."""
    from solbench.service.hacked import unflag as lift

    still = lift(_factory(db, data, settings_file), submission_id)
    if still is None:
        print(f"submission {submission_id} unflagged: back on the boards")
    else:
        print(f"submission {submission_id} unflagged, still off the boards: {still.source} ({still.reason})")


def _login_name() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name in this environment (a container without a passwd entry)
        return "admin"


@app.command("rescore")
def rescore(
    problem: list[str] = typer.Option(None, "--problem", help="Only this problem (repeatable)."),
    since_version: str = typer.Option(
        None, "--since-version", help="Only results measured with this harness release or a later one."
    ),
    no_rerun: bool = typer.Option(False, "--no-rerun", help="Never queue a re-evaluation; only re-score."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
    broker: str = typer.Option(
        None,
        "--broker",
        help="The server's Celery broker: re-evaluations are sent "
        "to its workers (embedded workers find them in the database).",
    ),
    db: str = DB,
    data: Path = DATA,
    settings_file: Path = SETTINGS,
) -> None:
    """Bring results up to date: re-evaluate those measured with another harness or an older problem version
    (queued for the workers), re-score the others from their stored traces when T_SOL or T_b changed."""
    from dataclasses import asdict

    from solbench.cli.service_options import service_settings
    from solbench.service.rescore import rescore as run

    settings = service_settings(settings_file, db_url=db, data_dir=data, broker_url=broker)
    factory = _factory(db, data, settings_file, broker_url=broker)
    report = run(factory, problems=tuple(problem or ()), since_version=since_version, rerun=not no_rerun)
    if settings.broker_url and report.requeued_ids:
        from solbench.service.queues import make_queue

        queue = make_queue(settings, factory)
        try:
            for submission_id in report.requeued_ids:
                queue.submit(submission_id)
        finally:
            queue.close()
    if json_output:
        print(json.dumps(asdict(report)))
        return
    print(
        f"{report.selected} result(s): {report.rescored} re-scored without running, {report.requeued} queued "
        f"for re-evaluation, {report.unchanged} unchanged"
    )
