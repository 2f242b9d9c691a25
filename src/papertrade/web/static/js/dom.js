// A tiny DOM builder: text is always set as text, never parsed as HTML.

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/**
 * Make `old` look like `next`, changing only what differs (text, attributes, children by
 * position), and return the node that stays in the page. An element with a `data-sig` (one that
 * holds controls with their own listeners) is kept as it is while its sig is unchanged and
 * replaced whole when it changes.
 */
export function morph(old, next) {
  if (old.nodeType !== next.nodeType || old.nodeName !== next.nodeName) {
    old.replaceWith(next);
    return next;
  }
  if (old.nodeType !== Node.ELEMENT_NODE) {
    if (old.nodeValue !== next.nodeValue) old.nodeValue = next.nodeValue;
    return old;
  }
  if (old.dataset.sig !== undefined || next.dataset.sig !== undefined) {
    if (old.dataset.sig === next.dataset.sig) return old;
    old.replaceWith(next);
    return next;
  }
  for (const { name } of [...old.attributes]) {
    if (!next.hasAttribute(name)) old.removeAttribute(name);
  }
  for (const { name, value } of [...next.attributes]) {
    if (old.getAttribute(name) !== value) old.setAttribute(name, value);
  }
  const before = [...old.childNodes];
  const after = [...next.childNodes];
  after.forEach((child, i) => {
    if (i < before.length) morph(before[i], child);
    else old.append(child);
  });
  for (const extra of before.slice(after.length)) extra.remove();
  return old;
}

/**
 * Put `next` (elements with a `data-key`) into `container` in order, keeping the nodes that
 * were already there, so a refresh every few seconds leaves the keyboard focus, text selection
 * and hover where they were.
 */
export function reconcile(container, next) {
  const previous = new Map();
  for (const child of container.children) {
    if (child.dataset.key) previous.set(child.dataset.key, child);
  }
  const kept = next.map((item) => {
    const old = item.dataset.key ? previous.get(item.dataset.key) : undefined;
    if (!old) return item;
    previous.delete(item.dataset.key);
    return morph(old, item);
  });
  kept.forEach((node, i) => {
    if (container.children[i] !== node) container.insertBefore(node, container.children[i] || null);
  });
  while (container.children.length > kept.length) container.lastElementChild.remove();
}

/** Refresh a table body's rows, and show the table's "empty" note when there is none. */
export function fillTable(table, rows) {
  reconcile(table.tBodies[0], rows);
  const empty = document.querySelector(`[data-empty-for="${table.id}"]`);
  if (empty) empty.hidden = rows.length > 0;
  table.hidden = rows.length === 0 && Boolean(empty);
}

/**
 * A cell; numbers get the `num` class so they align right and never wrap. `sig` stands for the
 * cell's content when it holds controls (a button is replaced only when its sig changes).
 */
export function td(content, cls = '', label = '', sig = undefined) {
  return h('td', { class: cls || null, 'data-label': label || null, 'data-sig': sig }, content);
}
