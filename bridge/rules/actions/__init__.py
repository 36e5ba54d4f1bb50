"""Actions from declaration to resolution (R2-R10, R12.6).

Every public function takes the state, a command, the principal asking, the
dice and the ruleset, and returns the events that follow. The state machine:

    confirming -> declared -> awaiting_opposition -> invoking -> choosing -> costing -> resolved
                                                             \\-> absorbing (Fate Condensed hits)

``confirming`` holds a player's action while the GM confirms its opposition rating and
danger (R2.1, R9.1), named helpers accept (R10.1), and the owners (or the GM) of the
characters of others it would target, have oppose it or use an aspect of say yes (consent
to harm, DESIGN Reach and trust); a no calls it off (-> cancelled).

Only the states an action needs are visited: a passive, safe overcome goes
straight from the roll to the invoke phase.
"""

from __future__ import annotations

from bridge.rules.actions.answers import answer_help, confirm, roll_now
from bridge.rules.actions.cancel import cancel
from bridge.rules.actions.choices import (
    ChoiceValue,
    absorb,
    apply_cost,
    choose,
    gift_free_invoke,
    give_free_invokes,
    give_hint,
    set_gm_budget,
    take_hint,
)
from bridge.rules.actions.commands import (
    AbsorbCommand,
    CostCommand,
    Helper,
    InvokeCommand,
    Principal,
    StartAction,
    StressMark,
)
from bridge.rules.actions.common import may_control, pending_fate_point, stunt_bonus
from bridge.rules.actions.declare import declare, odds_before_roll, start_action
from bridge.rules.actions.invokes import invoke, pass_invokes
from bridge.rules.actions.opposition import concede, interpose, oppose
from bridge.rules.state import InvokeEffect, Payment, SideName

__all__ = [
    "AbsorbCommand",
    "ChoiceValue",
    "CostCommand",
    "Helper",
    "InvokeCommand",
    "InvokeEffect",
    "Payment",
    "Principal",
    "SideName",
    "StartAction",
    "StressMark",
    "absorb",
    "answer_help",
    "apply_cost",
    "cancel",
    "choose",
    "concede",
    "confirm",
    "declare",
    "gift_free_invoke",
    "give_free_invokes",
    "give_hint",
    "interpose",
    "invoke",
    "may_control",
    "odds_before_roll",
    "oppose",
    "pass_invokes",
    "pending_fate_point",
    "roll_now",
    "set_gm_budget",
    "start_action",
    "stunt_bonus",
    "take_hint",
]
