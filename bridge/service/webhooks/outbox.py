"""The webhook outbox: turns committed card emits into deliveries and sends them.

Runs beside the server on every bridge process, after the state commits and apart
from it: an action never waits on a webhook, and a webhook's failure is recorded on
its delivery, never on the action. Every send goes through the one shared
``httpx.AsyncClient`` handed in (the bridge's is
:func:`bridge.service.webhooks.reach.webhook_client`, which connects only where a
stranger's request may go). The clock, the sleep and the jitter are injected so tests
drive retries without waiting.

A delivery records the HTTP status of a target that answered, or :data:`NO_ANSWER`:
never how a connection failed, which would map the host's network for whoever chose
the URL. The log names a webhook by its id and its URL's scheme and host only; a
Discord webhook's URL is its secret.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from email.utils import parsedate_to_datetime

import httpx

from bridge.service import protocol
from bridge.service.webhooks import payloads
from bridge.service.webhooks.reach import TargetRefused
from bridge.service.webhooks.signing import (
    DELIVERY_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    sign,
)
from bridge.store.base import Store
from bridge.store.webhooks import Delivery, DeliveryStatus, WebhookRecord, WebhookStore

log = logging.getLogger("bridge.service.webhooks")

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]
# Emits read per world per pass; the next pass reads on from there.
SCAN_PAGE = 200
ERROR_LIMIT = 300
# A delivery's error when no HTTP answer came: refused, timed out, unreachable, or an
# address the bridge does not send to. Retried like any of them, so that even the
# pace of retries tells nothing of which.
NO_ANSWER = "no answer"
REMOVED = "the webhook was removed"


# The shortest time between two passes; a card reaches its webhooks at most this much later.
PASS_SPACING_SECONDS = 0.2


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with equal jitter, bounded in time.

    The n-th retry waits ``min(cap, base * 2**(n-1))``, half of it fixed and half
    random; a 429's ``Retry-After`` replaces that wait. A delivery still undelivered
    ``give_up_after`` seconds after it was queued is marked failed.
    """

    base_seconds: float = 2.0
    cap_seconds: float = 300.0
    give_up_after: float = 3600.0
    request_timeout: float = 10.0
    lease_seconds: float = 60.0
    batch: int = 20

    def backoff(self, attempts: int, jitter: float) -> float:
        delay = min(self.cap_seconds, self.base_seconds * 2.0 ** (attempts - 1))
        return delay / 2 + jitter * delay / 2


def retry_after_seconds(response: httpx.Response, now: float) -> float | None:
    """``Retry-After`` as seconds from now (delta-seconds or an HTTP date)."""
    raw = response.headers.get("Retry-After")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(raw).timestamp() - now)
    except (TypeError, ValueError):
        return None


class WebhookOutbox:
    """Fills and drains the outbox; exactly one node sends each delivery (leases)."""

    def __init__(
        self,
        store: Store,
        hooks: WebhookStore,
        client: httpx.AsyncClient,
        *,
        clock: Clock = time.time,
        sleep: Sleep = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
        policy: RetryPolicy | None = None,
        poll_seconds: float = 1.0,
        node_id: str | None = None,
    ) -> None:
        self.store = store
        self.hooks = hooks
        self.client = client
        self.clock = clock
        self.sleep = sleep
        self.jitter = jitter
        self.policy = policy or RetryPolicy()
        self.poll_seconds = poll_seconds
        self.node_id = node_id or secrets.token_hex(8)
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def nudge(self) -> None:
        """Something committed: look for new cards now rather than at the next poll."""
        self._wake.set()

    async def fill(self) -> int:
        """Queue a delivery per webhook for every mirrored card since each world's
        cursor; returns how many were queued. Safe to race: the cursor moves by
        check-and-set, so two nodes never queue the same emits."""
        queued = 0
        for world_id in await self.hooks.webhook_worlds():
            hooks = await self.hooks.webhooks(world_id)
            while hooks:
                cursor = await self.hooks.cursor(world_id)
                rows = await self.store.emits_since(world_id, cursor, SCAN_PAGE)
                if not rows:
                    break
                now = self.clock()
                items = [
                    item
                    for row in rows
                    if (card := payloads.mirrored_card(row)) is not None
                    for item in self._deliveries(world_id, hooks, *card, now)
                ]
                if not await self.hooks.enqueue(world_id, cursor, rows[-1].seq, items):
                    break  # another node filled this page
                queued += len(items)
        return queued

    @staticmethod
    def _deliveries(
        world_id: str,
        hooks: list[WebhookRecord],
        key: str,
        card_emit: protocol.CardEmit,
        now: float,
    ) -> list[Delivery]:
        bodies = {
            "discord": payloads.discord_body(card_emit),
            "json": payloads.json_body(card_emit),
        }
        return [
            Delivery(
                id="d_" + secrets.token_hex(8),
                world_id=world_id,
                webhook_id=hook.id,
                key=key,
                body=bodies[hook.kind],
                created_at=now,
                next_at=now,
            )
            for hook in hooks
        ]

    async def drain(self) -> int:
        """Send every delivery due now, once each; returns how many were attempted."""
        now = self.clock()
        claimed = await self.hooks.claim(
            now, self.policy.lease_seconds, self.node_id, self.policy.batch
        )
        if not claimed:
            return 0
        hooks: dict[tuple[str, str], WebhookRecord] = {}
        for world_id in {d.world_id for d in claimed}:
            for hook in await self.hooks.webhooks(world_id):
                hooks[(world_id, hook.id)] = hook
        await asyncio.gather(
            *(self._attempt(d, hooks.get((d.world_id, d.webhook_id))) for d in claimed)
        )
        return len(claimed)

    async def run_once(self) -> int:
        """One pass: fill, then drain what is due."""
        await self.fill()
        return await self.drain()

    async def _attempt(self, delivery: Delivery, hook: WebhookRecord | None) -> None:
        attempts = delivery.attempts + 1
        if hook is None:
            await self._settle(delivery, "failed", attempts, REMOVED)
            return
        body = delivery.body.encode("utf-8")
        headers = {"Content-Type": "application/json", DELIVERY_HEADER: delivery.id}
        if hook.kind == "json":
            stamp = int(self.clock())
            headers[TIMESTAMP_HEADER] = str(stamp)
            headers[SIGNATURE_HEADER] = sign(hook.secret, stamp, body)
        retry_in: float | None = None
        url = httpx.URL(hook.url)
        try:
            response = await self.client.post(
                url,
                content=body,
                headers=headers,
                timeout=self.policy.request_timeout,
                follow_redirects=False,
            )
        except TargetRefused as refused:
            log.warning(
                "webhook %s in %s: not sent to %s://%s: %s (a self-hosted bridge can allow "
                "it with --webhook-allow)",
                hook.id,
                delivery.world_id,
                url.scheme,
                url.host,
                refused.reason,
            )
            error = NO_ANSWER
        except httpx.HTTPError as exc:
            log.info(
                "webhook %s in %s: no answer from %s://%s (%s)",
                hook.id,
                delivery.world_id,
                url.scheme,
                url.host,
                type(exc).__name__,
            )
            error = NO_ANSWER
        else:
            if response.is_success:
                await self._settle(delivery, "delivered", attempts, "")
                return
            error = f"HTTP {response.status_code}"
            if response.status_code == 429:
                retry_in = retry_after_seconds(response, self.clock())
            elif response.status_code < 500 and response.status_code != 408:
                # The target refused the request itself (gone, unauthorised, malformed):
                # sending the same bytes again can't help.
                await self._settle(delivery, "failed", attempts, error)
                return
        now = self.clock()
        if retry_in is None:
            retry_in = self.policy.backoff(attempts, self.jitter())
        if now + retry_in > delivery.created_at + self.policy.give_up_after:
            await self._settle(
                delivery, "failed", attempts, f"gave up after {attempts} attempts: {error}"
            )
            return
        await self._settle(delivery, "pending", attempts, error, next_at=now + retry_in)

    async def _settle(
        self,
        delivery: Delivery,
        status: DeliveryStatus,
        attempts: int,
        error: str,
        next_at: float | None = None,
    ) -> None:
        done = status != "pending"
        outcome = replace(
            delivery,
            status=status,
            attempts=attempts,
            last_error=error[:ERROR_LIMIT],
            next_at=next_at if next_at is not None else delivery.next_at,
            finished_at=self.clock() if done else None,
        )
        if status == "failed":
            log.warning(
                "webhook %s in %s: delivery %s failed: %s",
                delivery.webhook_id,
                delivery.world_id,
                delivery.id,
                error,
            )
        if not await self.hooks.settle(outcome, self.node_id):
            log.warning("delivery %s: lease lost before it settled", delivery.id)

    async def run(self) -> None:
        """Pass after pass until cancelled; a failing pass is logged, never fatal."""
        while True:
            self._wake.clear()
            try:
                await self.run_once()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("webhook outbox pass failed; retrying")
            # Commits nudge it, but passes are at least this far apart: a busy table's
            # commits share one pass instead of each paying for its own store reads.
            await self.sleep(PASS_SPACING_SECONDS)
            waker = asyncio.ensure_future(self._wake.wait())
            sleeper = asyncio.ensure_future(self.sleep(self.poll_seconds))
            try:
                await asyncio.wait({waker, sleeper}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waker.cancel()
                sleeper.cancel()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self.run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
