/**
 * @module The page's only way to make DOM nodes: from data, with textContent and attributes only, never innerHTML,
 * so nothing a store holds (a topic name, an error message) can ever become markup on the page.
 */

export type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

function apply(element: Element, attributes: Attributes): void {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
}

function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  apply(element, attributes);
  append(element, children);
  return element;
}

const SVG = 'http://www.w3.org/2000/svg';

export function s(tag: string, attributes: Attributes = {}, ...children: Child[]): SVGElement {
  const element = document.createElementNS(SVG, tag);
  apply(element, attributes);
  append(element, children);
  return element;
}

/** Replaces an element's children. */
export function fill(element: Element, ...children: Child[]): void {
  element.replaceChildren();
  append(element, children);
}

/** A table with a header row; `empty` is shown in a single cell when there are no rows. */
export function table(headers: readonly string[], rows: readonly HTMLTableRowElement[], empty: string) {
  return h(
    'table',
    {},
    h('thead', {}, h('tr', {}, ...headers.map((title) => h('th', {}, title)))),
    h(
      'tbody',
      {},
      ...(rows.length > 0
        ? rows
        : [h('tr', { class: 'empty' }, h('td', { colspan: headers.length }, empty))]),
    ),
  );
}
