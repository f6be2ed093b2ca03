// The page's small DOM kit: h() builds a node, fill() and arrange() set children, keyedNodes()
// keeps a list's nodes while what they show is unchanged (so a click is not lost to a redraw).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "html") el.innerHTML = v;
    else if (k in el && typeof v !== "string") el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Children as given to h(): nested arrays flattened, the absent ones dropped. */
function present(children) {
  return children
    .flat(Number.POSITIVE_INFINITY)
    .filter((c) => c !== undefined && c !== null && c !== false);
}

/** replaceChildren that takes nested arrays, as h() does. */
export function fill(el, ...children) {
  el.replaceChildren(...present(children));
}

/**
 * Makes `children` (nodes, nested arrays as h() takes) the children of `el`, in order, moving or
 * removing only what is not already in place: a node that stays where it is is never taken out,
 * so a click on it (button down, then up) is not lost to a redraw of what is around it.
 */
export function arrange(el, ...children) {
  const want = present(children).map((c) =>
    typeof c === "string" ? document.createTextNode(c) : c,
  );
  const wanted = new Set(want);
  for (const c of [...el.childNodes]) if (!wanted.has(c)) c.remove();
  // What is left is in `want` already; new nodes go in before it, kept ones stay put unless
  // their order changed.
  let cursor = el.firstChild;
  for (const node of want) {
    if (node === cursor) {
      cursor = cursor.nextSibling;
      continue;
    }
    el.insertBefore(node, cursor);
  }
}

/**
 * A list drawn by key: `entries` are `{ key, make }`, where the key says everything the node
 * shows. A key drawn last time keeps its node (from `cache`, a Map the caller holds across
 * draws); only new keys are made. Returns the nodes, in order, for arrange(); `cache` then holds
 * exactly these keys.
 */
export function keyedNodes(entries, cache) {
  const nodes = [];
  const kept = new Map();
  for (const { key, make } of entries) {
    // A key given twice gets a node of its own the second time (a node has one place).
    const node = kept.has(key) ? make() : (cache.get(key) ?? make());
    if (!kept.has(key)) kept.set(key, node);
    nodes.push(node);
  }
  cache.clear();
  for (const [k, n] of kept) cache.set(k, n);
  return nodes;
}
