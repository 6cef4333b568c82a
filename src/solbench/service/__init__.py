"""The leaderboard service: accounts, submissions, evaluation jobs, rankings, rescoring and bundles.

Nothing here is imported by `import solbench`; FastAPI, SQLAlchemy and Alembic are needed only by the
modules that use them (`pip install 'solbench[service]'`). See docs/service.md.
"""
