// A tiny element builder: h('button', {class: 'x', onclick: f}, 'text').

type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, unknown>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key.startsWith('on') && typeof value === 'function') {
        el.addEventListener(key.slice(2), value as EventListener);
      } else if (key === 'class') {
        el.className = String(value);
      } else if (key in el && typeof value !== 'string') {
        (el as unknown as Record<string, unknown>)[key] = value;
      } else {
        el.setAttribute(key, value === true ? '' : String(value));
      }
    }
  }
  append(el, children);
  return el;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

// Replaces the content of `container`, giving focus back to the element with the same
// data-focus-key when the old content had it (re-renders must not throw keyboard users out).
export function replaceContent(container: Element, ...children: Child[]): void {
  const active = document.activeElement;
  const key = active && container.contains(active) ? active.getAttribute('data-focus-key') : null;
  container.replaceChildren();
  append(container, children);
  if (key) {
    const again = container.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(key)}"]`);
    again?.focus();
  }
}

// An SVG element (no children helper: SVG content here is built in a loop).
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {},
): SVGElementTagNameMap[K] {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  return el;
}
