/**
 * Reading the module's dialog forms and writing text into the HTML they are made of.
 * @module forms
 */

/**
 * A field's value, trimmed; a select with nothing marked selected reads as its first option, as
 * browsers do ("" when there is no such field).
 * @param {ParentNode|null|undefined} root
 * @param {string} name
 */
export function fieldValue(root, name) {
  const el = root?.querySelector(`[name="${name}"]`);
  if (!el) return "";
  let v = el.value;
  if (el.tagName === "SELECT" && !v) {
    const options = [...el.querySelectorAll("option")];
    v = (options.find((o) => o.selected || o.hasAttribute("selected")) ?? options[0])?.value ?? "";
  }
  return String(v ?? "").trim();
}

/** Text made safe to put inside HTML (an element's content or a quoted attribute). */
export function escapeHtml(s) {
  return String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}
