"""``/metrics``: what a host's Prometheus scrapes, in its text format (prometheus-client).

Off unless ``serve --metrics`` (or ``FATE_BRIDGE_METRICS=1``); with a token
(``--metrics-token`` / ``FATE_BRIDGE_METRICS_TOKEN``) a scrape must send
``Authorization: Bearer TOKEN``, else it gets 401. The figures (all of this process's):

- ``fate_bridge_connections{role}``: connections joined to ``/fate`` now
- ``fate_bridge_intents_total{event,outcome}``: intents answered, ``ok`` or the error code
- ``fate_bridge_handshake_refusals_total{reason}``: handshakes refused, by reason
- ``fate_bridge_wire_refusals_total{reason}``: what the wire itself refused, cut or read
  late, by reason (:class:`bridge.transport.connections.RefusalCounts`: the handshake rate, an
  address's pool of strangers, CONNECT floods, join and bind timers, the outgoing backlog,
  the inbound budget, ``maxPayload``, pongs)
- ``fate_bridge_commit_seconds``: how long each store commit took (histogram)
- ``fate_bridge_gc_pause_seconds{generation}``: every garbage-collection pause (histogram)
- ``fate_bridge_webhook_outbox_depth``: webhook deliveries waiting to be sent
- and prometheus-client's own ``process_*`` (memory, CPU, open files) and ``python_*``.

A scrape reads the service's counters (:class:`bridge.service.stats.ServiceStats`) as
they are: nothing is counted twice, and nothing costs anything between scrapes but the
counting itself.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator

from aiohttp import web
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from bridge.service.stats import ServiceStats
from bridge.store.webhooks import WebhookStore
from bridge.transport.connections import RefusalCounts
from bridge.transport.gc_pauses import PauseTimer

PATH = "/metrics"
# Commits run in place in well under a millisecond to tens of milliseconds with a snapshot.
COMMIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
# The collector's pauses: young ones a few milliseconds, the full one a few hundred.
GC_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)


class _ServiceCollector(Collector):
    """The service's and the wire's counters and the outbox depth, read at each scrape."""

    def __init__(self, stats: ServiceStats, wire: RefusalCounts) -> None:
        self.stats = stats
        self.wire = wire
        self.outbox_depth = 0

    def collect(self) -> Iterator[Metric]:
        connections = GaugeMetricFamily(
            "fate_bridge_connections", "Connections joined to /fate now", labels=["role"]
        )
        counted = self.stats.connections()
        for role in ("gm", "player"):
            connections.add_metric([role], counted.get(role, 0))
        yield connections
        intents = CounterMetricFamily(
            "fate_bridge_intents",
            "Intents answered, by event and outcome (ok, or the error code)",
            labels=["event", "outcome"],
        )
        for (event, outcome), count in sorted(self.stats.intents.items()):
            intents.add_metric([event, outcome], count)
        yield intents
        refusals = CounterMetricFamily(
            "fate_bridge_handshake_refusals",
            "Handshakes refused, by reason",
            labels=["reason"],
        )
        for reason, count in sorted(self.stats.refusals.items()):
            refusals.add_metric([reason], count)
        yield refusals
        wire = CounterMetricFamily(
            "fate_bridge_wire_refusals",
            "Connections and frames the wire itself refused, cut or read late, by reason",
            labels=["reason"],
        )
        for reason, count in sorted(self.wire.by_reason.items()):
            wire.add_metric([reason], count)
        yield wire
        yield GaugeMetricFamily(
            "fate_bridge_webhook_outbox_depth",
            "Webhook deliveries waiting to be sent",
            value=self.outbox_depth,
        )


class Metrics:
    """The registry behind ``/metrics`` for one service: :meth:`register` adds the route
    and starts timing collections; the app's clean-up stops it."""

    def __init__(
        self,
        stats: ServiceStats,
        webhooks: WebhookStore | None,
        token: str | None = None,
        wire: RefusalCounts | None = None,
    ) -> None:
        self.registry = CollectorRegistry()
        self.webhooks = webhooks
        self.token = token
        self.service = _ServiceCollector(stats, wire or RefusalCounts())
        self.registry.register(self.service)
        commits = Histogram(
            "fate_bridge_commit_seconds",
            "Seconds each store commit took",
            buckets=COMMIT_BUCKETS,
            registry=self.registry,
        )
        stats.observe_commit = commits.observe
        pauses = Histogram(
            "fate_bridge_gc_pause_seconds",
            "Garbage-collection pauses (wall time), by generation",
            labelnames=["generation"],
            buckets=GC_BUCKETS,
            registry=self.registry,
        )
        by_generation = [pauses.labels(str(generation)) for generation in range(3)]
        self.pause_timer = PauseTimer(
            lambda generation, seconds: by_generation[generation].observe(seconds)
        )
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)

    def register(self, app: web.Application) -> None:
        app.router.add_get(PATH, self.scrape)
        self.pause_timer.install()

        async def stop_timing(_app: web.Application) -> None:
            self.pause_timer.remove()

        app.on_cleanup.append(stop_timing)

    async def scrape(self, request: web.Request) -> web.Response:
        if self.token is not None:
            given = request.headers.get("Authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
                raise web.HTTPUnauthorized(
                    text="/metrics needs the header Authorization: Bearer <metrics token>",
                    headers={"WWW-Authenticate": "Bearer"},
                )
        if self.webhooks is not None:
            self.service.outbox_depth = await self.webhooks.pending()
        return web.Response(
            body=generate_latest(self.registry),
            headers={"Content-Type": CONTENT_TYPE_LATEST},
        )
