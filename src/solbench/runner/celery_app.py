"""The Celery application that spreads jobs over worker machines, with Redis as the broker.

One app serves two kinds of job, each on queues of its own per hardware id, so a job runs only
on workers of the hardware it is measured for:

- ``solbench.run.<hardware>``: a problem of a `solbench run --broker` suite run (`remote_jobs`);
- ``solbench.submissions.<hardware>``: a leaderboard submission (the service layer registers it).

The settings make a job survive its worker: a message is acknowledged only after its job finished
(acks late), so a worker that dies mid-job leaves it unacknowledged; a worker child killed under a
job (the OOM killer) has it requeued at once (reject on worker lost); a whole machine that dies has
it redelivered by Redis once the visibility timeout passes. Each worker takes one message at a time
(prefetch multiplier 1): a device evaluates one job at a time, and nothing waits behind a busy one.
Workers send heartbeats, so `celery inspect` and the runner see which are alive. Messages are JSON
only: a message can name work, never carry code to execute outside the sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from celery import Celery

RUN_QUEUE_PREFIX = "solbench.run"
SUBMISSION_QUEUE_PREFIX = "solbench.submissions"
DEFAULT_VISIBILITY_TIMEOUT_S = 3600.0
"""Longer than any one job should take: a message unacknowledged for longer is redelivered to another worker."""
MAX_DELIVERIES = 3
"""A job is handed to a worker at most this many times: one whose workers keep dying is then reported, not retried."""
HEARTBEAT_S = 10.0


@dataclass(frozen=True)
class BrokerSettings:
    url: str
    """``redis://host:port/db``: the broker, and the store of suite-run results."""
    visibility_timeout_s: float = DEFAULT_VISIBILITY_TIMEOUT_S

    @property
    def restore_interval_s(self) -> float:
        """How often a worker looks for messages whose visibility timeout passed (their worker died)."""
        return min(10.0, max(1.0, self.visibility_timeout_s / 4))


def queue_name(prefix: str, hardware: str) -> str:
    """The queue of one kind of job for one hardware id (ids compare case-insensitively)."""
    return f"{prefix}.{hardware.lower()}"


def canonical_hardware(hardware: str) -> str:
    """The database id of `hardware` (an alias such as ``h100`` names the same queue as ``H100_SXM``); `local`
    stays `local` without a probe: a worker measures, it derives no T_SOL."""
    from solbench.hardware import LOCAL_ID, lookup

    return LOCAL_ID if hardware.lower() == LOCAL_ID else lookup(hardware).id


def make_celery_app(broker: BrokerSettings) -> Celery:
    """A Celery app with the reliability settings above and no tasks yet (`remote_jobs.register_run_task`)."""
    from celery import Celery

    transport = {
        "visibility_timeout": broker.visibility_timeout_s,
        "unacked_restore_interval": broker.restore_interval_s,
        "unacked_restore_throttle": 1,
        "socket_keepalive": True,
        "health_check_interval": 30,
    }
    app = Celery("solbench", broker=broker.url, backend=broker.url, set_as_current=False)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        worker_prefetch_multiplier=1,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_accept_content=["json"],
        broker_transport_options=transport,
        result_backend_transport_options={"visibility_timeout": broker.visibility_timeout_s},
        result_expires=7 * 24 * 3600,
        broker_connection_retry_on_startup=True,
        worker_send_task_events=True,
        event_queue_expires=60,
        worker_hijack_root_logger=False,
        worker_cancel_long_running_tasks_on_connection_loss=False,
        task_default_queue=queue_name(RUN_QUEUE_PREFIX, "default"),
    )
    return app


def count_delivery(broker_url: str, task_id: str) -> int:
    """How many times this task's message has now reached a worker (this one included); kept a day in Redis.

    Redis does not count redeliveries itself, and a job that kills every worker it lands on (one
    that exhausts memory) must not go round forever.
    """
    import redis

    client = redis.Redis.from_url(broker_url)
    key = f"solbench:deliveries:{task_id}"
    try:
        with client.pipeline() as pipe:
            pipe.incr(key)
            pipe.expire(key, 24 * 3600)
            count, _ = pipe.execute()
    finally:
        client.close()
    return int(count)


WORKER_ALIVE_KEY = "solbench:worker-alive:{node}"
JOB_HOLDER_KEY = "solbench:job-holder:{task_id}"
MISSED_BEATS = 3
"""A worker whose alive key outlived this many heartbeats is gone: the key expires then."""


class WorkerLiveness:
    """The Redis keys that tell a suite runner which worker holds each job, and whether that worker is alive.

    In the worker's main process: on each message it receives, it records itself as the job's
    holder; a thread refreshes its alive key every heartbeat (the main process stays responsive
    while its pool child runs the job). A worker that dies (a kill -9, a machine gone) stops
    refreshing, the key expires after `MISSED_BEATS` beats, and the runner sends its jobs again
    at once instead of after the broker's visibility timeout.
    """

    def __init__(self, broker_url: str, node: str, interval_s: float = HEARTBEAT_S):
        import threading

        import redis

        self.node, self.interval_s = node, interval_s
        self._client = redis.Redis.from_url(broker_url, socket_timeout=5, socket_connect_timeout=5)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True, name="solbench-worker-alive")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self._client.delete(WORKER_ALIVE_KEY.format(node=self.node))

    def holds(self, task_id: str) -> None:
        """This worker received the job (its message is reserved here until the job ends)."""
        import redis

        try:
            self._client.set(JOB_HOLDER_KEY.format(task_id=task_id), self.node, ex=7 * 24 * 3600)
        except (redis.RedisError, OSError):
            pass  # without the record the job falls back to the visibility timeout

    def _beat(self) -> None:
        import redis

        key, ttl_ms = WORKER_ALIVE_KEY.format(node=self.node), int(MISSED_BEATS * self.interval_s * 1000)
        while True:
            try:
                self._client.set(key, "1", px=ttl_ms)
            except (redis.RedisError, OSError):
                pass  # the next beat tries again
            if self._stop.wait(self.interval_s):
                return


def lost_jobs(broker_url: str, task_ids: list[str]) -> dict[str, str]:
    """The jobs among `task_ids` held by a worker whose alive key expired: task id -> that worker's name."""
    import redis

    if not task_ids:
        return {}
    client = redis.Redis.from_url(broker_url, socket_timeout=5, socket_connect_timeout=5)
    try:
        holders = dict(zip(task_ids, client.mget([JOB_HOLDER_KEY.format(task_id=t) for t in task_ids])))
        # Bytes (the client does not decode responses), though the stubs say str.
        held = {t: h.decode() if isinstance(h, bytes) else h for t, h in holders.items() if h is not None}
        nodes = sorted(set(held.values()))
        alive = dict(zip(nodes, client.mget([WORKER_ALIVE_KEY.format(node=n) for n in nodes]))) if nodes else {}
    finally:
        client.close()
    return {t: node for t, node in held.items() if alive.get(node) is None}
