/**
 * The macro API on `game.modules.get("fate-bridge").api` (see MACROS.md).
 * @module api
 */
import { characterActor } from "./foundry/characters.mjs";
import { startAction } from "./actions/start.mjs";
import { MODULE_ID, PROTOCOL_VERSION } from "./protocol.mjs";
import * as scene from "./scene/actions.mjs";
import { chatLogAnchors, exportHistoryAnchors, verifyHistory } from "./history/anchors.mjs";
import { historyStats, readHistory, undo } from "./history/history.mjs";
import { openHistory } from "./history/window.mjs";
import { askSceneEnd, openScenePanel } from "./scene/panel.mjs";
import { fcoProposal } from "./adapters/fco-frameworks.mjs";
import { offerRuleset, setRuleset } from "./net/ruleset.mjs";
import { catchUp, startConnection } from "./net/session.mjs";

/**
 * @param {Actor|string} actorOrId  an Actor, an actor id or an actor name
 * @returns {Actor|null}
 */
function resolveActor(actorOrId) {
  if (actorOrId && typeof actorOrId === "object") return actorOrId;
  return characterActor(actorOrId) ?? game.actors.getName?.(actorOrId) ?? null;
}

/** @param {string} actionId  an action id, or a card id ("world.action") */
function actionRef(actionId) {
  return String(actionId ?? "").split(".").pop();
}

/**
 * The newest card of an action as this client's chat holds it, or null.
 * @param {string} actionId
 */
function latestCard(actionId) {
  const id = actionRef(actionId);
  const message = game.messages.find((m) => m.flags?.[MODULE_ID]?.card?.action_id === id);
  return message?.flags?.[MODULE_ID]?.card ?? null;
}

/**
 * The API of this client, acting through its Bridge.
 * @param {import("./net/bridge.mjs").Bridge} bridge
 */
export function createApi(bridge) {
  /** `fn` with this client's Bridge as its first argument. */
  const bound = (fn) => (...args) => fn(bridge, ...args);
  const send = (event, payload) => bridge.send(event, payload);
  const withActor = (actorOrId, run) => {
    const actor = resolveActor(actorOrId);
    if (!actor) {
      ui.notifications.warn(game.i18n.format("FATEBRIDGE.Notify.ActorNotFound", { actor: String(actorOrId) }));
      return Promise.resolve(null);
    }
    return run(actor);
  };
  return Object.freeze({
    PROTOCOL_VERSION,
    /**
     * Start any action. Without `opposition`, `opposerId` or `recovery`, the action dialog asks.
     * @param {Actor|string} actorOrId
     * @param {string} skill
     * @param {import("./actions/start.mjs").ActionRequest} [request]
     */
    start(actorOrId, skill, request = {}) {
      return withActor(actorOrId, (actor) => startAction(bridge, actor, skill, request));
    },
    /** An overcome (the 0.1 name): `roll(actor, skill, {opposition, description})`. */
    roll(actorOrId, skill, options = {}) {
      return withActor(actorOrId, (actor) => startAction(bridge, actor, skill, { type: "overcome", ...options }));
    },
    /**
     * Invoke an aspect on an action in its invoke phase.
     * @param {string} actionId
     * @param {{invoker: string, aspect_id: string, payment?: "fate_point"|"free"|"boost", effect?: "bonus"|"reroll"|"hostile", side?: "actor"|"opposition"}} invoke
     */
    invoke(actionId, { invoker, aspect_id, payment = "fate_point", effect = "bonus", side } = {}) {
      const payload = { action_id: actionRef(actionId), invoker, aspect_id, payment, effect };
      if (side) payload.side = side;
      return send("action.invoke", payload);
    },
    /** GM, R13.11 (Fate Core): `defenderId`, in the same conflict, defends in the attack's target's place and takes the hit. */
    interpose(actionId, defenderId) {
      return send("action.interpose", { action_id: actionRef(actionId), defender_id: defenderId });
    },
    /** Pass for one side ("actor" or "opposition"); when both have passed the action resolves. */
    pass(actionId, side = "actor") {
      return send("action.pass", { action_id: actionRef(actionId), side });
    },
    /** Answer a choice (fail, succeed_at_cost, unintended_aspect, aspect, mark, full_hit, boost). */
    choose(actionId, choice, names = {}) {
      return send("action.choose", { action_id: actionRef(actionId), choice, ...names });
    },
    /** GM: the cost of a success at a cost; `kind` from hello.costs. */
    cost(actionId, { kind, text = "", target_id, aspect_name } = {}) {
      const payload = { action_id: actionRef(actionId), kind, text };
      if (target_id) payload.target_id = target_id;
      if (aspect_name) payload.aspect_name = aspect_name;
      return send("action.cost", payload);
    },
    /** GM, after a fumbled advantage: a free invoke on an aspect for someone else (R5.2, R5.3). */
    gift(actionId, { aspect_id, holder }) {
      return send("action.gift", { action_id: actionRef(actionId), aspect_id, holder });
    },
    /** GM: call an open action off; what its invokes cost goes back to whoever paid. */
    cancel(actionId, reason = "") {
      return send("action.cancel", { action_id: actionRef(actionId), reason });
    },
    /** Roll a declared (dangerous) action, or concede it for a character. */
    rollDeclared(actionId) {
      return send("action.roll", { action_id: actionRef(actionId) });
    },
    concede(actionId, characterId) {
      return send("action.concede", { action_id: actionRef(actionId), character_id: characterId });
    },
    /** GM: confirm a player's proposal (R2.1, R9.1), or change the rating and danger. */
    confirm(actionId, { passive_rating, dangerous } = {}) {
      const payload = { action_id: actionRef(actionId) };
      if (passive_rating !== undefined) payload.passive_rating = passive_rating;
      if (dangerous) payload.dangerous = { actor: Boolean(dangerous.actor), opposition: Boolean(dangerous.opposition) };
      return send("action.confirm", payload);
    },
    /** A named helper's owner (or the GM) joins or declines (R10.1). */
    help(actionId, characterId, accept = true) {
      return send("action.help", { action_id: actionRef(actionId), character_id: characterId, accept: Boolean(accept) });
    },
    /**
     * Consent to harm (DESIGN Reach and trust): the owner (or the GM) of a character a
     * player's action would target, have oppose it or use an aspect of, accepts it or, with
     * `accept` false, calls the action off. The same intent as `help`.
     */
    consent(actionId, characterId, accept = true) {
      return send("action.help", { action_id: actionRef(actionId), character_id: characterId, accept: Boolean(accept) });
    },
    /** The actor takes an excelled discover's hint; the GM answers it with `text` (R5.5). */
    takeHint(actionId) {
      return send("action.hint", { action_id: actionRef(actionId) });
    },
    giveHint(actionId, text) {
      return send("action.hint_give", { action_id: actionRef(actionId), text: String(text ?? "") });
    },
    /**
     * The roll history, paged from the bridge. Each call resolves to the bridge's answer and
     * rejects with a BridgeError ({code, message, field}) when the bridge refuses.
     */
    history: Object.freeze({
      /** One page, newest first: `read({before, limit, scene, character, kind, cancelled})`. */
      read: bound(readHistory),
      /** 4dF sums per character and for the world, against the expected share: `stats({scene})`. */
      stats: bound(historyStats),
      /** Open the roll history window. */
      open: bound(openHistory)
    }),
    /**
     * GM: undo the last resolution (no argument), a chosen one and all after it
     * (`{resolution: seq}`), or every change after an event (`{backTo: seq}`), inside the scene.
     * Resolves to {back_to, seq, hash, resolutions, action_ids, card_ids}; rejects with a
     * BridgeError (e.g. code "scene_ended", "nothing_to_undo", "forbidden").
     */
    undo: bound(undo),
    /** Open the scene panel (aspects, compels, contests, challenges, conflicts, scene end). */
    openScene: bound(openScenePanel),
    /** The scene as this client last heard it (SceneState), or null. */
    get scene() {
      return bridge.scene.current ? structuredClone(bridge.scene.current) : null;
    },
    /** Ask the bridge for the scene now. */
    readScene: () => bridge.readScene(),
    /** Situation aspects: add(name, {characterId: freeInvokes}), edit(id, {name, freeInvokes}), remove(id). */
    aspects: Object.freeze({ add: bound(scene.addAspect), edit: bound(scene.editAspect), remove: bound(scene.removeAspect), give: bound(scene.giveInvokes) }),
    /** GM: the scene's fate point budget. */
    setGmBudget: bound(scene.setGmBudget),
    /** GM: offer a compel; the character's owner answers with answerCompel(id, accept). */
    compel: bound(scene.offerCompel),
    answerCompel: bound(scene.answerCompel),
    /**
     * GM: end the scene, session or scenario. Without `keep` the GM is asked which situation
     * aspects stay (and to confirm).
     */
    async endScene(scope = "scene", keep) {
      if (keep === undefined) {
        const answer = await askSceneEnd(scope, bridge.scene.current);
        if (!answer) return null;
        keep = answer.keep;
      }
      return scene.endScene(bridge, scope, keep);
    },
    /** Contests (R11.2). */
    contest: Object.freeze({
      start: bound(scene.startContest), roll: bound(scene.contestRoll), advantage: bound(scene.contestAdvantage),
      twist: bound(scene.nameTwist), concede: bound(scene.concedeContest)
    }),
    /** Challenges (R11.1). */
    challenge: Object.freeze({
      start: bound(scene.startChallenge), roll: bound(scene.challengeRoll), advantage: bound(scene.challengeAdvantage), carry: bound(scene.carryBoosts)
    }),
    /** Conflicts (R11.3, R13); turn order shows in the Combat tracker. next(id, nextId) under elective order. */
    conflict: Object.freeze({
      start: bound(scene.startConflict), order: bound(scene.conflictOrder), next: bound(scene.conflictNext), move: bound(scene.conflictMove),
      zones: bound(scene.conflictZones), end: bound(scene.conflictEnd), fullDefense: bound(scene.conflictFullDefense), concede: bound(scene.conflictConcede)
    }),
    /** R13.9: the world's rules. propose() what FCO's game plays; set(id) switches the bridge (GM). */
    ruleset: Object.freeze({ propose: fcoProposal, set: bound(setRuleset), offer: bound(offerRuleset) }),
    /** The newest card of an action in this client's chat. */
    card: latestCard,
    /**
     * The log's anchors in this chat log (DESIGN Trust). GM: `verify()` asks the bridge and
     * shows the result; `export()` saves the file `world verify ID --chat-log FILE` reads.
     */
    anchors: Object.freeze({ list: chatLogAnchors, verify: bound(verifyHistory), export: exportHistoryAnchors }),
    /** What the bridge holds: characters, aspects with free invokes, GM budget, open actions. */
    state: () => bridge.worldState(),
    /** @returns {object|null} the bridge's hello (actions, costs, ruleset, ...) */
    get hello() {
      return bridge.hello ? structuredClone(bridge.hello) : null;
    },
    /** @returns {import("./net/connection.mjs").ConnectionStatus} */
    get status() {
      return { ...bridge.status };
    },
    /** @returns {import("./net/connection.mjs").ConnectionManager|null} */
    get connection() {
      return bridge.connection;
    },
    /** Open the connection again with the current settings. */
    reconnect() {
      startConnection(bridge);
    },
    /**
     * Ask the bridge for every emit after `since` and write what this client writes (cards,
     * patches, statuses, the scene), as after a reconnect. Resolves to the `world.sync` answer
     * (null before the module has a connection).
     */
    sync(since = 0) {
      return bridge.connection ? catchUp(bridge, bridge.connection, since) : Promise.resolve(null);
    },
    /** Relay mode: the GM user whose client relays (null: none), and whether this client does. */
    relay: Object.freeze({
      get host() {
        return bridge.roster?.electedHost() ?? null;
      },
      get hosting() {
        return Boolean(bridge.relayHost?.running);
      }
    })
  });
}
