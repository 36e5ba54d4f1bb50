/**
 * What the GM cards show (contest exchanges, a challenge's summary, a scene's end), computed from
 * the bridge's views so the templates stay logic-free. Written into chat by the active GM's client
 * (`writer: "gm"`), rendered the same for everyone.
 * @module scene-cards
 */
import { fatePointReason } from "../cards/view.mjs";
import { outcomeName, ratedText, signed, skillName } from "../foundry/format.mjs";
import { MODULE_ID } from "../protocol.mjs";

const CONTEST_CARD_TEMPLATE = `modules/${MODULE_ID}/templates/contest-card.hbs`;
const CHALLENGE_CARD_TEMPLATE = `modules/${MODULE_ID}/templates/challenge-card.hbs`;
const SCENE_END_CARD_TEMPLATE = `modules/${MODULE_ID}/templates/scene-end-card.hbs`;

const names = (list) => (list ?? []).map((c) => c.name).join(", ");
const rated = (r) => ratedText(r);

/**
 * Progress marks of a side: `target` boxes, the first `progress` filled.
 * @param {number} progress
 * @param {number} target
 */
export function progressMarks(progress, target) {
  return Array.from({ length: Math.max(target, progress) }, (_, i) => ({ filled: i < progress }));
}

/**
 * One exchange's rolls by side, in the contest's side order.
 * @param {object} contest  ContestView
 * @param {object[]} rolls  ExchangeRollView[]
 * @param {string|null} winner
 */
export function exchangeRows(contest, rolls, winner = null) {
  const i18n = game.i18n;
  return contest.sides.map((side) => {
    const roll = rolls.find((r) => r.side_id === side.id);
    let result;
    if (side.conceded) result = i18n.localize("FATEBRIDGE.Contest.Conceded");
    else if (!roll) result = "";
    else if (roll.forfeited) result = i18n.localize("FATEBRIDGE.Contest.Forfeited");
    else if (roll.total) result = rated(roll.total);
    else if (roll.action_id) result = i18n.localize("FATEBRIDGE.Contest.Rolling");
    else result = i18n.localize("FATEBRIDGE.Contest.NotRolled");
    return {
      sideId: side.id,
      name: side.name,
      members: names(side.members),
      result,
      shifts: roll && roll.shifts !== null && roll.shifts !== undefined ? i18n.format("FATEBRIDGE.Contest.ShiftsShort", { n: signed(roll.shifts) }) : null,
      winner: winner === side.id,
      forfeited: Boolean(roll?.forfeited),
      rolled: Boolean(roll?.total),
      rolling: Boolean(roll?.action_id && !roll?.total)
    };
  });
}

/**
 * One exchange's result in words.
 * @param {object} contest  ContestView
 * @param {object} exchange  ExchangeView
 */
export function exchangeResult(contest, exchange) {
  const i18n = game.i18n;
  if (exchange.twist) {
    // The twist's name arrives with the card's update once the GM names it (twist_aspect).
    if (exchange.twist_aspect) return { kind: "twist", text: i18n.localize("FATEBRIDGE.Contest.TwistNamedLead"), aspect: exchange.twist_aspect };
    return { kind: "twist", text: i18n.localize("FATEBRIDGE.Contest.Twist") };
  }
  const winner = contest.sides.find((s) => s.id === exchange.winner);
  if (!winner) return { kind: "none", text: i18n.localize("FATEBRIDGE.Contest.NoWinner") };
  const key = exchange.progress === 1 ? "FATEBRIDGE.Contest.WinsExchangeOne" : "FATEBRIDGE.Contest.WinsExchange";
  return { kind: "win", text: i18n.format(key, { side: winner.name, margin: exchange.margin, n: exchange.progress }), excelled: exchange.excelled };
}

/**
 * The header facts of a contest: mode, skill, and the passive opposition of an environment.
 * @param {object} contest  ContestView
 */
export function contestFacts(contest) {
  const i18n = game.i18n;
  const facts = [i18n.localize(`FATEBRIDGE.Contest.Mode.${contest.mode}`), skillName(contest.skill)];
  if (contest.passive) facts.push(i18n.format("FATEBRIDGE.Contest.Against", { rating: rated(contest.passive) }));
  facts.push(i18n.format("FATEBRIDGE.Contest.Target", { n: contest.target }));
  return facts.join(" \u00b7 ");
}

/**
 * The contest card: the exchange's rolls, its result, every side's progress, the winner.
 * @param {{contest: object, exchange: object|null}} card
 */
function contestCardContext(card) {
  const i18n = game.i18n;
  const { contest, exchange } = card;
  const winner = contest.sides.find((s) => s.id === contest.winner);
  let ending = null;
  if (contest.state === "won" && winner) ending = i18n.format("FATEBRIDGE.Contest.WinsContest", { side: winner.name });
  else if (contest.state === "ended") ending = i18n.localize("FATEBRIDGE.Contest.Ended");
  return {
    kind: "contest",
    name: contest.name,
    facts: contestFacts(contest),
    exchangeTitle: exchange ? i18n.format("FATEBRIDGE.Contest.Exchange", { n: exchange.number }) : null,
    rows: exchange ? exchangeRows(contest, exchange.rolls, exchange.winner) : [],
    result: exchange ? exchangeResult(contest, exchange) : null,
    progress: contest.sides.map((s) => ({
      name: s.name,
      marks: progressMarks(s.progress, contest.target),
      count: `${s.progress}/${contest.target}`,
      winner: s.id === contest.winner,
      conceded: s.conceded
    })),
    ending,
    tone: ending ? "win" : exchange?.twist ? "twist" : "exchange",
    undone: Boolean(card.undone)
  };
}

/**
 * The challenge summary (R11.1): every task, who rolled it, its outcome and its costs.
 * @param {{challenge: object}} card
 * @param {string|null} ruleset  the world's (hello's): how outcomes are named
 */
function challengeCardContext(card, ruleset) {
  const i18n = game.i18n;
  const { challenge } = card;
  const tasks = challenge.tasks.map((t) => taskView(t, ruleset));
  const succeeded = tasks.filter((t) => t.succeeded === true).length;
  return {
    kind: "challenge",
    name: challenge.name,
    tally: i18n.format("FATEBRIDGE.Challenge.Tally", { n: succeeded, total: tasks.length }),
    tasks,
    advantages: challenge.advantages.length ? i18n.format("FATEBRIDGE.Challenge.Advantages", { n: challenge.advantages.length }) : null,
    carry: challenge.carry_boosts ? i18n.localize("FATEBRIDGE.Challenge.Carried") : null,
    interpret: i18n.localize("FATEBRIDGE.Challenge.Interpret"),
    undone: Boolean(card.undone)
  };
}

/**
 * One task as the board and the summary card show it.
 * @param {object} task  TaskView
 * @param {string|null} ruleset  how outcomes are named
 */
export function taskView(task, ruleset) {
  const i18n = game.i18n;
  let status;
  if (!task.action_id) status = i18n.localize("FATEBRIDGE.Challenge.Open");
  else if (task.state !== "resolved") status = i18n.localize(`FATEBRIDGE.Card.State.${task.state}`);
  else status = i18n.localize(task.succeeded ? "FATEBRIDGE.Card.Succeeded" : "FATEBRIDGE.Card.Failed");
  return {
    id: task.id,
    name: task.name,
    skill: skillName(task.skill),
    opposition: rated(task.opposition),
    actor: task.actor?.name ?? null,
    total: rated(task.total),
    outcome: task.outcome ?? "pending",
    outcomeLabel: task.outcome ? outcomeName(task.outcome, ruleset) : null,
    shifts: task.shifts === null || task.shifts === undefined ? null : signed(task.shifts),
    status,
    resolved: task.state === "resolved",
    succeeded: task.succeeded,
    open: !task.action_id,
    costs: (task.costs ?? []).map(costText)
  };
}

/**
 * A task's cost (CostView): its severity and kind localized, the GM's words as written.
 * @param {{severity: "minor"|"serious", kind: string, text: string}} cost
 */
function costText(cost) {
  const i18n = game.i18n;
  const severityKey = `FATEBRIDGE.Controls.CostTitle.${cost?.severity}`;
  const kindKey = `FATEBRIDGE.Cost.${cost?.kind}`;
  const severity = i18n.localize(severityKey) === severityKey ? String(cost?.severity ?? "") : i18n.localize(severityKey);
  const kind = i18n.localize(kindKey) === kindKey ? String(cost?.kind ?? "") : i18n.localize(kindKey);
  return { severity: cost?.severity ?? "", label: severity, kind, text: String(cost?.text ?? "") };
}

/** Consequence severities by their shifts (R7). */
const SEVERITY_NAMES = Object.freeze({ 2: "mild", 4: "moderate", 6: "severe" });

/**
 * A consequence's severity in words: mild, moderate, severe, else "n shifts".
 * @param {number} severity
 */
function severityLabel(severity) {
  const name = SEVERITY_NAMES[severity];
  return name ? game.i18n.localize(`FATEBRIDGE.Severity.${name}`) : game.i18n.format("FATEBRIDGE.SceneEnd.Shifts", { n: severity });
}

/**
 * The scene-end card: what recovered, who gained fate points and why, what expired or cleared.
 * @param {{scope: "scene"|"session"|"scenario", summary: object}} card
 */
function sceneEndCardContext(card) {
  const i18n = game.i18n;
  const s = card.summary;
  const note = (n) => ({ who: n.character.name, text: n.name, detail: severityLabel(n.severity) });
  const sections = [
    { id: "fate", title: i18n.localize("FATEBRIDGE.SceneEnd.FatePoints"), items: s.fate_points.map((g) => ({ who: g.character.name, text: `+${g.gained}`, detail: g.reasons.map(fatePointReason).join(", ") })) },
    { id: "removed", title: i18n.localize("FATEBRIDGE.SceneEnd.Removed"), items: s.removed_consequences.map(note) },
    { id: "recovering", title: i18n.localize("FATEBRIDGE.SceneEnd.Recovering"), items: s.recovering_consequences.map(note) },
    { id: "back", title: i18n.localize("FATEBRIDGE.SceneEnd.BackInAction"), items: s.no_longer_overwhelmed.map((c) => ({ who: c.name, text: "" })) },
    { id: "closed", title: i18n.localize("FATEBRIDGE.SceneEnd.ClosedUnfinished"), items: (s.closed_unfinished ?? []).map((name) => ({ who: name, text: "", detail: i18n.localize("FATEBRIDGE.SceneEnd.NoResult") })) },
    { id: "boosts", title: i18n.localize("FATEBRIDGE.SceneEnd.ExpiredBoosts"), items: s.expired_boosts.map((name) => ({ who: name, text: "" })) },
    { id: "aspects", title: i18n.localize("FATEBRIDGE.SceneEnd.ClearedAspects"), items: s.cleared_aspects.map((name) => ({ who: name, text: "" })) }
  ].filter((section) => section.items.length);
  return {
    kind: "scene-end",
    scope: card.scope,
    title: i18n.format(`FATEBRIDGE.SceneEnd.Title.${card.scope}`, { n: s.ended_scene }),
    sections,
    nothing: sections.length ? null : i18n.localize("FATEBRIDGE.SceneEnd.Nothing")
  };
}

/** Template and context of each GM card kind. */
export const GM_CARDS = Object.freeze({
  contest: { template: CONTEST_CARD_TEMPLATE, context: contestCardContext },
  challenge: { template: CHALLENGE_CARD_TEMPLATE, context: challengeCardContext },
  scene_end: { template: SCENE_END_CARD_TEMPLATE, context: sceneEndCardContext }
});
