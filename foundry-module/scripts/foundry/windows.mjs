/**
 * What the module's windows (ApplicationV2: the scene panel, the roll history, the connection
 * check) share: their class made once Foundry's classes exist, and buttons that cannot be
 * pressed twice while their intent is on its way.
 * @module windows
 */

/**
 * A window class made on first use (Foundry's classes exist by then), the same one after.
 * @template T
 * @param {(ApplicationV2: typeof Application) => T} build
 * @returns {() => T}
 */
export function madeOnce(build) {
  let made = null;
  return () => (made ??= build(foundry.applications.api.ApplicationV2));
}

/**
 * An ApplicationV2's `actions` from handlers called with the window as `this`: a pressed button
 * stays disabled until its handler is done.
 * @param {Record<string, (event: Event, target: HTMLElement) => unknown>} handlers
 */
export function buttonActions(handlers) {
  return Object.fromEntries(Object.keys(handlers).map((name) => [name, function (event, target) {
    const button = target.tagName === "BUTTON" ? target : null;
    if (button) button.disabled = true;
    return Promise.resolve(handlers[name].call(this, event, target)).finally(() => { if (button?.isConnected) button.disabled = false; });
  }]));
}
