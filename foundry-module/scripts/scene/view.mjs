/**
 * What the scene panel shows, computed from the bridge's SceneState for one user: the GM gets
 * the controls and set-up forms, a player a read-only scene plus what it may answer or roll
 * (its compels, its contest sides, challenge tasks). Pure: no I/O, so tests read it directly.
 * @module scene-view
 */
import { adapterFor } from "../adapters/index.mjs";
import { characterActor, characterName } from "../foundry/characters.mjs";
import { aspectName, entryFreeInvokes, ladderEntry, signed, skillName } from "../foundry/format.mjs";
import { givers } from "../cards/pickers.mjs";
import { DEFAULT_OPPOSITION, LADDER_MAX, LADDER_MIN } from "../protocol.mjs";
import { contestFacts, exchangeResult, exchangeRows, progressMarks, taskView } from "./cards.mjs";

/** Side slots the set-up forms offer. */
export const SIDE_SLOTS = 3;

/** The ladder as options, best first. */
export function ladder(selected = DEFAULT_OPPOSITION) {
  const out = [];
  for (let v = LADDER_MAX; v >= LADDER_MIN; v--) out.push({ value: v, label: ladderEntry(v), selected: v === selected });
  return out;
}

/**
 * Whether the user acts for a contest or conflict side: the GM always, a player for a side with
 * a member it owns.
 */
export function controls(side, user = game.user) {
  return Boolean(user.isGM || side.controllers?.includes(user.id));
}

/** Actors this user may act for: the GM all, a player its own. */
function ownActors(user = game.user) {
  return game.actors.contents.filter((a) => user.isGM || a.isOwner).map((a) => ({ id: a.id, name: a.name }));
}

/** Skill names across all actors, sorted (for a contest's or task's skill). */
function allSkills() {
  const names = new Set();
  for (const actor of game.actors.contents) for (const name of Object.keys(adapterFor().skills(actor))) names.add(name);
  return [...names].sort((a, b) => a.localeCompare(b));
}

/** "Zird the Arcane ×2, GM ×1" */
function freeList(aspect, nameOf) {
  return entryFreeInvokes(aspect).map(([holder, n]) => `${nameOf(holder)} \u00d7${n}`).join(", ");
}

function nameResolver(state) {
  const names = new Map();
  for (const a of game.actors.contents) names.set(a.id, a.name);
  for (const c of state.contests ?? []) for (const s of c.sides) for (const m of s.members) names.set(m.id, m.name);
  for (const c of state.conflicts ?? []) for (const t of c.order ?? []) names.set(t.character.id, t.character.name);
  for (const a of state.aspects ?? []) if (a.attached_to) names.set(a.attached_to.id, a.attached_to.name);
  names.set("gm", game.i18n.localize("FATEBRIDGE.Invoke.Gm"));
  // An unlinked token's character (its id a token's UUID) by its token's name; an id only
  // when nothing at all names it.
  return (id) => names.get(id) ?? characterName(characterActor(id)) ?? id;
}

/** @param {object} contest ContestView */
function contestView(contest, user = game.user) {
  const i18n = game.i18n;
  const open = contest.state === "open";
  const winner = contest.sides.find((s) => s.id === contest.winner);
  const current = exchangeRows(contest, contest.current ?? []);
  return {
    id: contest.id,
    name: contest.name,
    facts: contestFacts(contest),
    open,
    exchangeTitle: i18n.format("FATEBRIDGE.Contest.Exchange", { n: contest.exchange }),
    ending: contest.state === "won" && winner ? i18n.format("FATEBRIDGE.Contest.WinsContest", { side: winner.name }) : contest.state === "ended" ? i18n.localize("FATEBRIDGE.Contest.Ended") : null,
    twistPending: contest.twist_pending,
    canNameTwist: Boolean(user.isGM && contest.twist_pending),
    sides: contest.sides.map((side) => {
      const row = current.find((r) => r.sideId === side.id) ?? {};
      const mine = controls(side, user);
      const free = open && !side.conceded && !row.rolled && !row.rolling && !row.forfeited;
      return {
        id: side.id,
        name: side.name,
        members: side.members.map((m) => m.name).join(", "),
        marks: progressMarks(side.progress, contest.target),
        count: `${side.progress}/${contest.target}`,
        winner: side.id === contest.winner,
        conceded: side.conceded,
        current: row.result,
        rolled: row.rolled,
        forfeited: row.forfeited,
        canRoll: mine && free,
        canAdvantage: mine && free,
        canConcede: mine && open && !side.conceded
      };
    }),
    history: [...(contest.history ?? [])].reverse().map((x) => ({
      title: i18n.format("FATEBRIDGE.Contest.Exchange", { n: x.number }),
      rows: exchangeRows(contest, x.rolls, x.winner),
      result: exchangeResult(contest, x)
    }))
  };
}

/**
 * @param {object} challenge ChallengeView
 * @param {User} user
 * @param {string|null} ruleset  the scene's: how outcomes are named
 */
function challengeView(challenge, user, ruleset) {
  const i18n = game.i18n;
  const open = challenge.state === "open";
  const rollers = ownActors(user);
  const tasks = challenge.tasks.map((t) => ({ ...taskView(t, ruleset), canRoll: open && !t.action_id && rollers.length > 0 }));
  return {
    id: challenge.id,
    name: challenge.name,
    open,
    complete: challenge.state === "complete",
    tally: i18n.format("FATEBRIDGE.Challenge.Tally", { n: tasks.filter((t) => t.succeeded === true).length, total: tasks.length }),
    progress: i18n.format("FATEBRIDGE.Challenge.Rolled", { n: tasks.filter((t) => !t.open).length, total: tasks.length }),
    tasks,
    rollers,
    canAdvantage: open && rollers.length > 0,
    advantages: challenge.advantages.length ? i18n.format("FATEBRIDGE.Challenge.Advantages", { n: challenge.advantages.length }) : null,
    carry: challenge.carry_boosts,
    canCarry: Boolean(user.isGM)
  };
}

/** The id of the character whose turn it is (R13.5), from `current` or the turn index. */
function currentTurn(conflict) {
  if (conflict.current !== undefined) return conflict.current;
  return conflict.order[conflict.turn]?.character.id ?? null;
}

/** Whether a character is still in the conflict: neither taken out nor conceded (R13.6). */
function stillIn(conflict, turn) {
  return !turn.out && !(conflict.conceded ?? []).includes(turn.character.id);
}

/**
 * R13.5 elective order: who may go next once the current character has acted: those still in
 * who have not acted this exchange; when everyone has, anyone still in opens the next exchange.
 * @param {object} conflict  ConflictView
 * @returns {{id: string, name: string, newExchange: boolean}[]}
 */
export function electiveChoices(conflict) {
  const current = currentTurn(conflict);
  const acted = new Set(conflict.acted ?? []);
  if (current) acted.add(current);
  const inIt = conflict.order.filter((t) => stillIn(conflict, t));
  const waiting = inIt.filter((t) => !acted.has(t.character.id));
  const newExchange = waiting.length === 0;
  return (newExchange ? inIt : waiting).map((t) => ({ id: t.character.id, name: t.character.name, newExchange }));
}

/** The side a character is on. */
function sideOf(conflict, characterId) {
  return conflict.sides.find((s) => s.members.some((m) => (m.id ?? m) === characterId)) ?? null;
}

/** Whether the user acts for this character in the conflict: the GM, or its side's controller. */
function actsFor(conflict, characterId, user) {
  const side = sideOf(conflict, characterId);
  return Boolean(user.isGM || (side && controls(side, user)));
}

/**
 * R13.7: "Full defense" shows on the character whose turn it is, for its controller or the GM,
 * when the ruleset (or the world's option) has it and the character has not taken it yet.
 */
export function canFullDefend(conflict, characterId, rules, user = game.user) {
  const turn = conflict.order.find((t) => t.character.id === characterId);
  return Boolean(conflict.state === "open" && rules?.full_defense && turn && stillIn(conflict, turn)
    && currentTurn(conflict) === characterId && !(conflict.full_defense ?? []).includes(characterId)
    && actsFor(conflict, characterId, user));
}

/** R13.6: "Concede" shows on every character still in, for its controller or the GM. */
export function canConcede(conflict, characterId, user = game.user) {
  const turn = conflict.order.find((t) => t.character.id === characterId);
  return Boolean(conflict.state === "open" && turn && stillIn(conflict, turn) && actsFor(conflict, characterId, user));
}

/**
 * Zones from a zone map's text: one per line, "Name: adjacent, adjacent" (or just "Name").
 * @param {string} text
 * @returns {{name: string, adjacent: string[]}[]}
 */
export function readZones(text) {
  return String(text ?? "").split("\n").map((l) => l.trim()).filter(Boolean).map((line) => {
    const [name, rest = ""] = line.split(":");
    return { name: name.trim(), adjacent: rest.split(",").map((z) => z.trim()).filter(Boolean) };
  }).filter((z) => z.name);
}

/**
 * A zone map as the text `readZones` reads back: one line per zone.
 * @param {{name: string, adjacent: string[]}[]} zones
 * @returns {string}
 */
export function writeZones(zones) {
  return zones.map((z) => (z.adjacent.length ? `${z.name}: ${z.adjacent.join(", ")}` : z.name)).join("\n");
}

/**
 * @param {object} conflict ConflictView
 * @param {User} [user]
 * @param {object|null} [rules]  RulesetInfo
 */
export function conflictView(conflict, user = game.user, rules = null) {
  const i18n = game.i18n;
  const open = conflict.state === "open";
  const elective = conflict.order_method === "elective";
  const tieOf = new Map();
  conflict.ties.forEach((group, i) => group.forEach((id) => tieOf.set(id, i)));
  const sideName = new Map(conflict.sides.map((s) => [s.id, s.name]));
  const current = currentTurn(conflict);
  const acted = new Set(conflict.acted ?? []);
  const defending = new Set(conflict.full_defense ?? []);
  const conceded = new Set(conflict.conceded ?? []);
  const where = new Map();
  for (const z of conflict.zones) for (const o of z.occupants) where.set(o.id, z.name);
  const turns = conflict.order.map((t, index) => {
    const tie = tieOf.get(t.character.id);
    const prev = conflict.order[index - 1];
    const next = conflict.order[index + 1];
    const id = t.character.id;
    return {
      id,
      name: t.character.name,
      side: sideName.get(t.side_id) ?? "",
      rating: elective ? null : signed(t.rating),
      current: id === current,
      out: t.out || conceded.has(id),
      npc: t.npc,
      acted: acted.has(id),
      fullDefense: defending.has(id),
      conceded: conceded.has(id),
      tie: tie === undefined ? null : tie + 1,
      canUp: Boolean(user.isGM && open && tie !== undefined && prev && tieOf.get(prev.character.id) === tie),
      canDown: Boolean(user.isGM && open && tie !== undefined && next && tieOf.get(next.character.id) === tie),
      canFullDefense: canFullDefend(conflict, id, rules, user),
      canConcede: canConcede(conflict, id, user)
    };
  });
  const currentTurnRow = turns.find((t) => t.current);
  const zoneNames = conflict.zones.map((z) => z.name);
  const canNext = open && Boolean(current) && actsFor(conflict, current, user);
  const choices = canNext && elective ? electiveChoices(conflict) : [];
  return {
    id: conflict.id,
    name: conflict.name,
    facts: [
      i18n.localize(`FATEBRIDGE.Conflict.Kind.${conflict.kind}`),
      elective ? i18n.localize("FATEBRIDGE.Conflict.Elective") : i18n.format("FATEBRIDGE.Conflict.OrderBy", { skill: skillName(conflict.order_skill) }),
      i18n.format("FATEBRIDGE.Contest.Exchange", { n: conflict.exchange })
    ].join(" \u00b7 "),
    open,
    elective,
    whoseTurn: open && currentTurnRow ? i18n.format("FATEBRIDGE.Conflict.Turn", { name: currentTurnRow.name }) : null,
    winner: conflict.winner ? i18n.format("FATEBRIDGE.Conflict.Winner", { side: sideName.get(conflict.winner) ?? conflict.winner }) : null,
    turns,
    hasTies: conflict.ties.length > 0,
    zones: conflict.zones.map((z) => ({ name: z.name, adjacent: z.adjacent.join(", "), occupants: z.occupants.map((o) => o.name).join(", ") })),
    movers: open && zoneNames.length ? conflict.sides.filter((s) => controls(s, user)).flatMap((s) => s.members).map((m) => ({
      id: m.id,
      name: m.name,
      zones: zoneNames.map((z) => ({ name: z, selected: z === where.get(m.id) }))
    })) : [],
    canNext,
    // R13.5: under elective order, "next" names who goes next.
    nextChoices: choices,
    nextOpensExchange: choices.some((c) => c.newExchange),
    canEnd: Boolean(user.isGM && open),
    // R11.3: the GM may redraw an open conflict's zones; the editor starts from the current map.
    canRedraw: Boolean(user.isGM && open),
    mapText: user.isGM && open ? writeZones(conflict.zones) : ""
  };
}

/**
 * The whole panel for one user.
 * @param {object|null} state  SceneState
 * @param {{connected: boolean}} [status]
 * @param {User} [user]
 */
/**
 * The GM's last "Verify history" result, for the panel's head (null before the first).
 * @param {object|null|undefined} report  the combined `world.verify` report
 */
function anchorCheckLine(report, i18n = game.i18n) {
  if (!report) return null;
  if (report.ok) return { ok: true, text: i18n.format("FATEBRIDGE.Anchors.Verified", { events: report.events, anchors: report.anchors_checked }) };
  const first = report.anchors_mismatched?.[0]?.seq;
  const text = report.anchors_mismatched_count
    ? i18n.format("FATEBRIDGE.Anchors.Rewritten", { count: report.anchors_mismatched_count, seq: first ?? "?" })
    : i18n.format("FATEBRIDGE.Anchors.Broken", { problem: (report.problems ?? []).join("; ") });
  return { ok: false, text };
}

/**
 * Everything the scene panel shows this user.
 * @param {object|null} state  SceneState
 * @param {{connected?: boolean, helloRules?: object|null, lastVerify?: object|null}} [client]
 *   whether the bridge is reachable, hello's rules (when the scene says none), the last history check
 * @param {User} [user]
 */
export function scenePanelContext(state, { connected = true, helloRules = null, lastVerify = null } = {}, user = game.user) {
  const i18n = game.i18n;
  const isGM = Boolean(user.isGM);
  if (!state) return { isGM, empty: true, connected, message: i18n.localize(connected ? "FATEBRIDGE.Scene.Loading" : "FATEBRIDGE.Scene.Offline") };
  const nameOf = nameResolver(state);
  const aspects = state.aspects.map((a) => ({
    id: a.id,
    name: aspectName(a),
    kind: a.kind,
    kindLabel: i18n.localize(`FATEBRIDGE.Invoke.Kind.${a.kind}`),
    where: a.attached_to?.name ?? null,
    free: freeList(a, nameOf),
    // R10.2: the holder's owner (or the GM) may stack these free invokes on someone else.
    givers: givers(a, user).map((g) => ({ id: g.id, count: g.count, label: i18n.format("FATEBRIDGE.Give.ButtonFor", { name: nameOf(g.id) }) }))
  }));
  const actors = game.actors.contents.map((a) => ({ id: a.id, name: a.name }));
  const skills = allSkills().map((name) => ({ name, label: skillName(name) }));
  // What the world's ruleset allows (R13): the scene's rules, else hello's (a bridge before R13
  // sends neither: no conflicts).
  const rules = state.rules ?? helloRules;
  const conflictsAllowed = Boolean(rules?.conflicts);
  const sideSlots = Array.from({ length: SIDE_SLOTS }, (_, i) => ({ n: i + 1, name: i18n.format("FATEBRIDGE.Setup.SideName", { n: i + 1 }) }));
  return {
    isGM,
    connected,
    anchorCheck: anchorCheckLine(lastVerify, i18n),
    sceneLabel: i18n.format("FATEBRIDGE.Scene.Label", { scene: state.scene.number, session: state.scene.session, scenario: state.scene.scenario }),
    gmBudget: state.gm_fate_points,
    trustRatings: Boolean(state.settings?.trust_player_ratings),
    // R13.7: a ruleset whose full defense is the GM's option (Fate Condensed) offers the switch.
    fullDefenseOptional: Boolean(rules?.full_defense_optional),
    fullDefenseOn: Boolean(state.settings?.full_defense),
    situation: aspects.filter((a) => a.kind === "situation"),
    boosts: aspects.filter((a) => a.kind === "boost"),
    compels: state.compels.map((c) => ({
      id: c.id,
      character: c.character.name,
      text: c.text,
      aspect: state.aspects.find((a) => a.id === c.aspect_id)?.name ?? null,
      canAnswer: c.controllers.includes(user.id),
      waiting: !c.controllers.includes(user.id)
    })),
    contests: state.contests.map((c) => contestView(c, user)).sort((a, b) => Number(b.open) - Number(a.open)),
    challenges: state.challenges.map((c) => challengeView(c, user, state.ruleset ?? helloRules?.id ?? null)).sort((a, b) => Number(b.open) - Number(a.open)),
    conflictsAllowed,
    conflicts: conflictsAllowed ? state.conflicts.map((c) => conflictView(c, user, rules)).sort((a, b) => Number(b.open) - Number(a.open)) : [],
    setup: isGM ? {
      actors: actors.map((a) => ({ ...a, slots: sideSlots })),
      holders: actors,
      skills,
      ladder: ladder(),
      sideSlots,
      // R13.5: under elective order the GM picks who opens the conflict.
      electiveStart: rules?.turn_order === "elective",
      taskRows: [1, 2, 3].map((n) => ({ n, ladder: ladder(), skills }))
    } : null
  };
}
