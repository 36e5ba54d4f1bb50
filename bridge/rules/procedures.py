"""Procedures observe the actions they contain (R11.1, R11.2).

An action knows nothing of the contest or challenge it belongs to: it only
says, in its events, that it was rolled and resolved. :func:`settle` is the
pure post-step that reads those events and lets each procedure react with
events of its own. Every decision goes through it (the service, the tests'
table), so one stream of events is the whole story and replay needs nothing
else.
"""

from __future__ import annotations

from collections.abc import Sequence

from bridge.rules import challenge, contest
from bridge.rules.draft import Draft, DraftEvents
from bridge.rules.engine import apply_all
from bridge.rules.events import ActionPut, Event, HistoryUndone
from bridge.rules.state import Action, WorldState


def _moved(
    before: WorldState, events: Sequence[Event]
) -> list[tuple[Action | None, Action]] | None:
    """Each action in a contest or challenge the events changed, as it was before them and
    as it is after them; None for an undo (nothing reacts to it). One pass over the
    events: every intent goes through here."""
    latest: dict[str, Action] = {}
    for event in events:
        if isinstance(event, ActionPut):
            latest[event.action.id] = event.action
        elif isinstance(event, HistoryUndone):
            return None
    # A loop, not a comprehension: this runs on every intent, mostly over one action.
    moved: list[tuple[Action | None, Action]] = []
    for action_id, action in latest.items():
        if action.contest_id is not None or action.challenge_id is not None:
            moved.append((before.actions.get(action_id), action))
    return moved


def settle(before: WorldState, events: list[Event]) -> list[Event]:
    """``events`` followed by what contests and challenges make of them.

    Guarantees: the returned list starts with ``events`` unchanged; a contest
    records a side's total when its contest roll resolves and forfeits the side's
    roll when its advantage fumbles (R11.2); a challenge completes when its last
    task resolves (R11.1); a cancelled contest roll or task roll frees its slot, so it
    may be rolled again. Nothing is added when no contained action moved, nor to
    an undo: it puts procedures back as they were, and nothing reacts to that.
    """
    # A draft's own events from ``before`` that put no action of a contest or challenge:
    # nothing moved, without a look at each event.
    if type(events) is DraftEvents and not events.contained:  # noqa: SIM102 (narrows)
        if events.result_from(before) is not None:
            return events
    moved = _moved(before, events)
    if not moved:
        return events
    after = apply_all(before, events)
    draft = Draft(after, events[-1].reason)
    for old, new in moved:
        resolved_now = new.state == "resolved" and (old is None or old.state != "resolved")
        outcome_now = new.outcome is not None and (old is None or old.outcome is None)
        if new.purpose == "contest_advantage" and outcome_now and new.outcome == "fumble":
            contest.forfeit(draft, new)
        if new.purpose == "contest_roll" and resolved_now:
            contest.record_roll(draft, draft.action(new.id))
        if new.challenge_id is not None and resolved_now:
            challenge.check_complete(draft, new.challenge_id)
        cancelled_now = new.state == "cancelled" and (old is None or old.state != "cancelled")
        if new.purpose == "contest_roll" and cancelled_now:
            contest.release_roll(draft, draft.action(new.id))
        if new.purpose == "challenge_task" and cancelled_now:
            challenge.release_task(draft, draft.action(new.id))
    return [*events, *draft.events()]
