"""What a webhook receives for a card: pure functions from the stored card emit to the
exact body sent (Discord embed, or the generic JSON event)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter

from bridge.service import lang, protocol
from bridge.service.protocol.http import WebhookCardEvent
from bridge.store.base import EmitRow

# A stored card emit as its view validates it (defaults filled for emits stored before a
# key existed; a scene end's card is a model).
CARD_EMIT: TypeAdapter[protocol.CardEmit] = TypeAdapter(protocol.CardEmit)

# Discord's embed limits: each part's, and 6,000 characters over title, description, field
# names and values, footer and author name together (Discord refuses an embed past any).
TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FIELD_NAME_LIMIT = 256
FIELD_VALUE_LIMIT = 1024
FIELDS_LIMIT = 25
FOOTER_LIMIT = 2048
AUTHOR_NAME_LIMIT = 256
EMBED_TOTAL_LIMIT = 6000
SHORTENED = "Shortened for Discord: the JSON webhook carries the whole card."
BOT_NAME = "Fate Bridge"
OUTCOME_COLOURS = {"excel": 0xF1C40F, "succeed": 0x2ECC71, "tie": 0x95A5A6, "fumble": 0xE74C3C}
NEUTRAL_COLOUR = 0x7289DA
CANCELLED_COLOUR = 0x607D8B
CANCELLED = "Cancelled by the GM"
DASH = "\u2014"
FACES = {1: "+", 0: "0", -1: "\u2212"}


def mirrored_card(emit: EmitRow) -> tuple[str, protocol.CardEmit] | None:
    """The card a webhook mirrors from this emit, with the key that makes it once per
    webhook: an action card once it is closed as a roll of the table's record (resolved,
    or cancelled by the GM after its dice were rolled: the roll history's entries, see
    bridge.rules.history.entry_of), every other card when it is created."""
    if emit.event != "card":
        return None
    card_emit = CARD_EMIT.validate_python(without_words(emit.payload))
    card = card_emit["card"]
    if not isinstance(card, protocol.SceneEndCard) and card["kind"] == "action":
        return (card_emit["card_id"], card_emit) if _recorded(card) else None
    return (card_emit["card_id"], card_emit) if card_emit["op"] == "create" else None


# Protocol 6's words beside the ids, in cards stored before protocol 7.
_WORD_KEYS = frozenset({"action_label", "outcome_label"})


def without_words(value: Any) -> Any:
    """A stored card as protocol 7 has it: protocol 6's words dropped (``action_label``,
    ``outcome_label``, a ladder value's ``label``, the odds' outcome names), the ids kept."""
    if isinstance(value, dict):
        if set(value) == {"value", "label"}:
            return {"value": value["value"]}
        if set(value) == {"id", "label"}:
            return value["id"]
        return {k: without_words(v) for k, v in value.items() if k not in _WORD_KEYS}
    if isinstance(value, list):
        return [without_words(v) for v in value]
    return value


def _recorded(card: protocol.ActionCard) -> bool:
    # A card shows a side's dice once they are rolled (a reroll replaces them): a
    # cancelled card with none is an action called off before any roll, no roll at all.
    if card["state"] == "cancelled":
        return card["actor"]["dice"] is not None or card["opposition"]["dice"] is not None
    return card["state"] == "resolved"


def json_body(card_emit: protocol.CardEmit) -> str:
    """The generic webhook's body: a :class:`WebhookCardEvent`, compact JSON."""
    event = WebhookCardEvent(
        world=card_emit["world"],
        seq=card_emit["seq"],
        card_id=card_emit["card_id"],
        card=card_emit["card"],
    )
    return event.model_dump_json()


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _rated(value: protocol.Rated | None) -> str:
    if value is None:
        return "\u2014"
    return lang.ladder(value["value"])


def _dice(dice: Sequence[int] | None) -> str:
    return " ".join(f"[{FACES[d]}]" for d in dice) if dice else "not rolled"


def _side_text(side: protocol.CardSide) -> str:
    if side["passive"]:
        return f"Passive {_rated(side['total'])}"
    lines = []
    if side["skill"]:
        lines.append(f"{side['skill']} {_rated(side['skill_rating'])}")
    lines.append(
        f"Dice {_dice(side['dice'])}" + (f" ({side['dice_total']:+d})" if side["dice"] else "")
    )
    bonuses = [
        f"{label} {value:+d}"
        for label, value in (
            ("stunt", side["stunt_bonus"]),
            ("teamwork", side["teamwork_bonus"]),
            ("invokes", side["invoke_bonus"]),
        )
        if value
    ]
    if bonuses:
        lines.append(", ".join(bonuses))
    lines.append(f"Total **{_rated(side['total'])}**")
    return "\n".join(lines)


def _field(name: str, value: str, inline: bool = True) -> dict[str, Any]:
    return {
        "name": _cut(name, FIELD_NAME_LIMIT),
        "value": _cut(value or "\u2014", FIELD_VALUE_LIMIT),
        "inline": inline,
    }


def _action_embed(card: protocol.ActionCard) -> dict[str, Any]:
    actor = card["actor"]["leader"]["name"] if card["actor"]["leader"] else "Someone"
    title = f"{actor}: {lang.action_name(card['action_type'])}"
    cancelled = card["state"] == "cancelled"
    if cancelled:
        # No outcome stands, whatever the dice showed so far; the roll is still posted.
        title += f" \u2014 {CANCELLED}"
    elif card["outcome"]:
        title += f" \u2014 {lang.outcome_name(card['ruleset'], card['outcome'])}"
    opposition = (
        card["opposition"]["leader"]["name"] if card["opposition"]["leader"] else "Opposition"
    )
    fields = [
        _field(actor, _side_text(card["actor"])),
        _field(opposition, _side_text(card["opposition"])),
    ]
    if card["shifts"] is not None:
        fields.append(_field("Shifts", f"{card['shifts']:+d}"))
    if card["invokes"]:
        payments = {"fate_point": "fate point", "free": "free invoke", "boost": "boost"}
        lines = [
            f"{i['invoker_name']}: *{i['aspect_name']}* ({payments[i['payment']]}, {i['effect']})"
            for i in card["invokes"]
        ]
        fields.append(_field("Invokes", "\n".join(lines), inline=False))
    effects = [_effect_text(e) for e in card["effects"]]
    if card["effects"]:
        fields.append(_field("Effects", "\n".join(effects), inline=False))
    # R13.11: a defender who stepped in says for whom.
    interposed = card.get("interposed_for")
    stood_in = (
        lang.say("Card.DefendsFor", {"name": opposition, "other": interposed["name"]})
        if interposed
        else None
    )
    description = " \u00b7 ".join(
        text
        for text in (stood_in, card["situation"], card["aspect_name"], card["description"])
        if text
    )
    return {
        "title": _cut(title, TITLE_LIMIT),
        "description": _cut(description, DESCRIPTION_LIMIT),
        "color": CANCELLED_COLOUR
        if cancelled
        else OUTCOME_COLOURS.get(card["outcome"] or "", NEUTRAL_COLOUR),
        "fields": fields,
        "footer": {"text": f"event {card['event_seq']} \u00b7 {card['event_hash'][:12]}"},
    }


def _effect_text(effect: protocol.CardEffect) -> str:
    """An effect's line; a cancellation's and a refund's texts alone (the GM's reason,
    an aspect's name) would not say what happened."""
    if effect["kind"] == "cancelled":
        return f"{CANCELLED}: {effect['text']}" if effect["text"] else CANCELLED
    if effect["kind"] == "refund":
        who = effect["character"]["name"] if effect["character"] else "The GM"
        return f"{who} gets back what the invoke on *{effect['text']}* cost"
    return effect["text"]


def _contest_embed(card: protocol.ContestCard) -> dict[str, Any]:
    contest = card["contest"]
    fields = [
        _field(side["name"], f"{side['progress']} of {contest['target']} victories")
        for side in contest["sides"]
    ]
    title = f"Contest: {contest['name']}"
    description = ""
    if card["exchange"] is not None:
        title += f" \u2014 exchange {card['exchange']['number']}"
        winner = next(
            (s["name"] for s in contest["sides"] if s["id"] == card["exchange"]["winner"]), None
        )
        description = f"{winner} wins the exchange" if winner else "A tie: a twist"
    if contest["winner"]:
        name = next(
            (s["name"] for s in contest["sides"] if s["id"] == contest["winner"]), contest["winner"]
        )
        description = f"**{name} wins the contest**"
    return {
        "title": _cut(title, TITLE_LIMIT),
        "description": _cut(description, DESCRIPTION_LIMIT),
        "color": NEUTRAL_COLOUR,
        "fields": fields,
    }


def _task_field(task: protocol.TaskView) -> dict[str, Any]:
    actor = task["actor"]["name"] if task["actor"] else DASH
    versus = f"{_rated(task['total'])} vs {_rated(task['opposition'])}"
    # A challenge is Fate's (R11.1): its outcomes carry Fate's names.
    outcome = lang.outcome_name("fate-core", task["outcome"]) if task["outcome"] else ""
    # The outcome first: a summarised embed cuts the end of a long line (see fitted).
    return _field(task["name"], f"{outcome} {DASH} {actor}: {task['skill']} {versus}", False)


def _challenge_embed(card: protocol.ChallengeCard) -> dict[str, Any]:
    challenge = card["challenge"]
    fields = [_task_field(task) for task in challenge["tasks"]]
    return {
        "title": _cut(f"Challenge: {challenge['name']}", TITLE_LIMIT),
        "description": "Every task is in.",
        "color": NEUTRAL_COLOUR,
        "fields": fields,
    }


def _scene_end_embed(card: protocol.SceneEndCard) -> dict[str, Any]:
    summary = card.summary
    gains = [f"{g.character['name']} +{g.gained}" for g in summary.fate_points]
    fields = [_field("Fate points", ", ".join(gains))] if gains else []
    return {
        "title": f"The {card.scope} ends (scene {summary.ended_scene})",
        "description": "",
        "color": NEUTRAL_COLOUR,
        "fields": fields,
    }


def embed_length(embed: dict[str, Any]) -> int:
    """The characters Discord counts against an embed's 6,000."""
    fields = embed.get("fields", [])
    return (
        len(embed.get("title", ""))
        + len(embed.get("description", ""))
        + sum(len(f["name"]) + len(f["value"]) for f in fields)
        + len(embed.get("footer", {}).get("text", ""))
        + len(embed.get("author", {}).get("name", ""))
    )


def fitted(embed: dict[str, Any], what: str = "entries") -> dict[str, Any]:
    """The embed within every Discord limit. What does not fit is summarised: long field
    values share what is left of the 6,000 characters (each cut to its share), and fields
    past the 25th, or past the total even then, are counted in a last field ("… and N more
    ``what``"); the footer says the JSON webhook carries the whole card."""
    embed = dict(embed)
    embed["title"] = _cut(embed.get("title", ""), TITLE_LIMIT)
    embed["description"] = _cut(embed.get("description", ""), DESCRIPTION_LIMIT)
    if "footer" in embed:
        embed["footer"] = {"text": _cut(embed["footer"]["text"], FOOTER_LIMIT)}
    if "author" in embed:
        embed["author"] = {
            **embed["author"],
            "name": _cut(embed["author"]["name"], AUTHOR_NAME_LIMIT),
        }
    fields: list[dict[str, Any]] = list(embed.get("fields", []))
    if len(fields) <= FIELDS_LIMIT and embed_length(embed) <= EMBED_TOTAL_LIMIT:
        return embed
    footer = embed.get("footer", {}).get("text", "")
    embed["footer"] = {
        "text": _cut(f"{footer} \u00b7 {SHORTENED}" if footer else SHORTENED, FOOTER_LIMIT)
    }
    # Room for the last field that counts what was left out.
    reserve = len(f"\u2026 and {len(fields)} more {what}") + len(SHORTENED)
    room = EMBED_TOTAL_LIMIT - embed_length({**embed, "fields": []}) - reserve
    needed = 200 * min(len(fields), 3)
    if room < needed:
        # The description gives way first: the fields are the card's substance.
        keep = len(embed["description"]) - (needed - room)
        embed["description"] = _cut(embed["description"], keep) if keep > 0 else ""
        room = EMBED_TOTAL_LIMIT - embed_length({**embed, "fields": []}) - reserve
    shown = fields[: FIELDS_LIMIT - 1]
    # Each field's value gets an even share of the room (names are short; kept whole).
    share = max(40, room // max(len(shown), 1) - max((len(f["name"]) for f in shown), default=0))
    shown = [{**f, "value": _cut(f["value"], share)} for f in shown]
    kept: list[dict[str, Any]] = []
    used = 0
    for field in shown:
        size = len(field["name"]) + len(field["value"])
        if used + size > room:
            break
        kept.append(field)
        used += size
    left = len(fields) - len(kept)
    if left:
        kept.append(_field(f"\u2026 and {left} more {what}", SHORTENED, inline=False))
    embed["fields"] = kept
    return embed


def discord_body(card_emit: protocol.CardEmit) -> str:
    """A Discord execute-webhook body with one embed; ``allowed_mentions`` never lets a
    name written at the table ping anyone."""
    card = card_emit["card"]
    if isinstance(card, protocol.SceneEndCard):
        embed = fitted(_scene_end_embed(card), "characters")
    elif card["kind"] == "action":
        embed = fitted(_action_embed(card), "lines")
    elif card["kind"] == "contest":
        embed = fitted(_contest_embed(card), "sides")
    else:
        embed = fitted(_challenge_embed(card), "tasks")
    body = {"username": BOT_NAME, "embeds": [embed], "allowed_mentions": {"parse": []}}
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)
