// Elements are built with the DOM API, never from HTML strings: what the API answers is always text, never markup.

/** An element: h('p', { class: 'x', onclick: fn }, 'text', child, [more]). null/false children are left out. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) {
      continue;
    }
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
    } else if (name === 'class') {
      el.className = value;
    } else if (name === 'text') {
      el.textContent = value;
    } else if (value === true) {
      el.setAttribute(name, '');
    } else {
      el.setAttribute(name, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    if (Array.isArray(child)) {
      append(el, child);
    } else {
      el.append(child instanceof Node ? child : String(child));
    }
  }
}

let fieldCount = 0;

/** A labelled form field: the label names the input (for/id), a hint and an error are tied to it by aria-describedby. */
export function field(label, input, hint) {
  const id = input.id || `f${++fieldCount}`;
  input.id = id;
  const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null;
  if (hintEl) {
    input.setAttribute('aria-describedby', hintEl.id);
  }
  return h('div', { class: 'field' }, h('label', { for: id }, label), hintEl, input);
}

/** Says `message` to screen readers through the page's live region. */
export function announce(message) {
  const region = document.getElementById('announcer');
  region.textContent = '';
  // A fresh text node after a tick, so the same message twice is read twice.
  setTimeout(() => (region.textContent = message), 50);
}

/** An alert box (role=alert) for an error, or a status box for a success. */
export function notice(message, kind = 'error') {
  return h('p', { class: `notice notice-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, message);
}

/** Adds children (elements, text, arrays of them) at the end of `el`. */
export function add(el, ...children) {
  append(el, children);
}

/** Replaces what `el` shows. */
export function show(el, ...children) {
  el.replaceChildren();
  append(el, children);
}
